// The 3x3 blur (repeat_edge) under every placement of its intermediate:
// inlined, compute_root, compute_at a row, compute_at a tile, tiled with
// vectors and threads, sliding windows with folded storage, and storage per
// parallel strip. Each schedule is realized twice (different input and
// output sizes and mins), so the compiled kernel is reused.
#include "check.h"

using namespace kiln;

namespace {

template<typename T>
struct Blur {
    ImageParam in{type_of<T>(), 2, "in"};
    Var x{"x"}, y{"y"}, xo{"xo"}, yo{"yo"}, xi{"xi"}, yi{"yi"};
    Func clamped, blur_x{"blur_x"}, out{"blur_y"};
    Blur() {
        clamped = BoundaryConditions::repeat_edge(in);
        blur_x(x, y) = (clamped(x - 1, y) + clamped(x, y) + clamped(x + 1, y)) / 3;
        out(x, y) = (blur_x(x, y - 1) + blur_x(x, y) + blur_x(x, y + 1)) / 3;
    }

    // Realizes 67x45 at (0, 0) from a larger input, then 37x29 at (-12, 5)
    // from an input that covers only part of what it reads.
    void run() {
        int hi = std::is_floating_point<T>::value ? 1000 : 20000;
        Buffer<T> a = kt::random_image<T>(71, 49, 3, -2, 0, hi, 1);
        in.set(a);
        Buffer<T> o1 = kt::output<T>(67, 45);
        out.realize(o1);
        kt::check(o1, [&](int px, int py) { return kt::blur3x3(a, px, py); });

        Buffer<T> b = kt::random_image<T>(20, 13, -10, 7, 0, hi, 2);
        in.set(b);
        Buffer<T> o2 = kt::output<T>(37, 29, -12, 5);
        out.realize(o2);
        kt::check(o2, [&](int px, int py) { return kt::blur3x3(b, px, py); });
    }
};

}  // namespace

TEST_CASE("blur: everything inlined", "[blur]") {
    Blur<uint16_t> b;
    b.run();
}

TEST_CASE("blur: blur_x compute_root", "[blur]") {
    Blur<uint16_t> b;
    b.blur_x.compute_root();
    b.run();
}

TEST_CASE("blur: blur_x compute_at(blur_y, y)", "[blur]") {
    Blur<uint16_t> b;
    b.blur_x.compute_at(b.out, b.y);
    b.run();
}

TEST_CASE("blur: compute_at(blur_y, y) with a parallel y", "[blur]") {
    Blur<uint16_t> b;
    b.out.parallel(b.y);
    b.blur_x.compute_at(b.out, b.y);
    b.run();
}

TEST_CASE("blur: tile, blur_x compute_at(blur_y, x)", "[blur]") {
    Blur<uint16_t> b;
    b.out.tile(b.x, b.y, b.xi, b.yi, 16, 8);
    b.blur_x.compute_at(b.out, b.x);
    b.run();
}

TEST_CASE("blur: tile + vectorize + parallel, blur_x per tile and vectorized", "[blur]") {
    Blur<uint16_t> b;
    b.out.tile(b.x, b.y, b.xo, b.yo, b.xi, b.yi, 16, 8).vectorize(b.xi, 8).parallel(b.yo);
    b.blur_x.compute_at(b.out, b.xo).vectorize(b.x, 8);
    b.run();
}

TEST_CASE("blur: float, tile + vectorize + parallel", "[blur]") {
    Blur<float> b;
    b.out.tile(b.x, b.y, b.xo, b.yo, b.xi, b.yi, 32, 4).vectorize(b.xi, 8).parallel(b.yo);
    b.blur_x.compute_at(b.out, b.xo).vectorize(b.x, 4);
    b.run();
}

TEST_CASE("blur: store_root().compute_at(blur_y, y): sliding window and folding", "[blur][sliding]") {
    Blur<uint16_t> b;
    b.blur_x.store_root().compute_at(b.out, b.y);
    b.run();
}

TEST_CASE("blur: sliding window with vectorized rows", "[blur][sliding]") {
    Blur<uint16_t> b;
    b.out.vectorize(b.x, 8);
    b.blur_x.store_root().compute_at(b.out, b.y).vectorize(b.x, 8);
    b.run();
}

TEST_CASE("blur: store_at(blur_y, yo).compute_at(blur_y, yi) with a parallel yo", "[blur][sliding]") {
    Blur<uint16_t> b;
    b.out.split(b.y, b.yo, b.yi, 8).parallel(b.yo).vectorize(b.x, 8);
    b.blur_x.store_at(b.out, b.yo).compute_at(b.out, b.yi).vectorize(b.x, 8);
    b.run();
}

TEST_CASE("blur: the boundary Func materialized too", "[blur]") {
    Blur<uint16_t> b;
    b.clamped.compute_root();
    b.blur_x.compute_at(b.out, b.y);
    b.run();
}
