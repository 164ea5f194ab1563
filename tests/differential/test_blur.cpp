// The 3x3 blur with repeat_edge, its intermediate placed four ways: at the
// root, per row of the consumer, per tile of a tiled, vectorized and
// parallel consumer, and stored at the root but computed per row (a sliding
// window, folded storage). The output (67x45 at (-5, 3)) reads past every
// edge of the input (71x49 at (3, -2)), and no tile or vector size divides it.
#include "diff.h"

namespace {

// Runs the blur of T values with `schedule(blur_x, blur_y, x, y)` applied in
// both libraries; the outputs must be equal, floats too.
template<typename T, typename Schedule>
void blur(Schedule schedule) {
    kiln::Buffer<T> input = kt::image<T>(71, 49, 3, -2, [](int x, int y) {
        int v = kt::noise(x, y, 0, 65535);
        return std::is_floating_point<T>::value ? (double)v / 7.0 : (double)v;
    });
    kd::Out<T> out("blur_y", {67, 45}, {-5, 3});
    kd::run(
        [&](auto lib) {
            using L = decltype(lib);
            typename L::ImageParam in(L::template type<T>(), 2, "in");
            L::set(in, input);
            typename L::Var x("x"), y("y");
            typename L::Func clamped = L::repeat_edge(in), blur_x("blur_x"), blur_y("blur_y");
            blur_x(x, y) = (clamped(x - 1, y) + clamped(x, y) + clamped(x + 1, y)) / 3;
            blur_y(x, y) = (blur_x(x, y - 1) + blur_x(x, y) + blur_x(x, y + 1)) / 3;
            schedule(blur_x, blur_y, x, y);
            return typename L::Pipeline(blur_y);
        },
        {out.pair()});
    kd::compare(out);
}

}  // namespace

// Float division by the constant 3 is a multiplication by its reciprocal in both.
TEST_CASE("blur: float, blur_x compute_root, both vectorized", "[blur]") {
    blur<float>([](auto &blur_x, auto &blur_y, auto x, auto y) {
        blur_x.compute_root().vectorize(x, 8);
        blur_y.vectorize(x, 8).parallel(y);
    });
}

TEST_CASE("blur: uint16 (sums wrap), blur_x compute_at(blur_y, y) of a parallel y", "[blur]") {
    blur<uint16_t>([](auto &blur_x, auto &blur_y, auto x, auto y) {
        blur_y.parallel(y).vectorize(x, 16);
        blur_x.compute_at(blur_y, y).vectorize(x, 16);
    });
}

TEST_CASE("blur: uint16, tile + vectorize + parallel over fused tiles, blur_x per tile", "[blur]") {
    blur<uint16_t>([](auto &blur_x, auto &blur_y, auto x, auto y) {
        using Var = std::decay_t<decltype(x)>;
        Var xo("xo"), yo("yo"), xi("xi"), yi("yi"), tile("tile");
        blur_y.tile(x, y, xo, yo, xi, yi, 32, 8).fuse(xo, yo, tile).parallel(tile).vectorize(xi, 8).unroll(yi, 2);
        blur_x.compute_at(blur_y, tile).vectorize(x, 8);
    });
}

TEST_CASE("blur: uint16, store_root().compute_at(blur_y, y): sliding window", "[blur][sliding]") {
    blur<uint16_t>([](auto &blur_x, auto &blur_y, auto x, auto y) {
        blur_y.vectorize(x, 8);
        blur_x.store_root().compute_at(blur_y, y).vectorize(x, 8);
    });
}
