// Boundary conditions on images whose min is not zero, read far outside
// (a hundred rows away, at twice the coordinate), inlined or materialized
// under several schedules, on a 1-pixel-wide image, and on a Func with an
// explicit region that bounds one dimension only.
#include "check.h"

using namespace kiln;

namespace {

using Coord = int (*)(int, int, int);  // (x, min, extent) -> a coordinate inside

// out(x, y) = bc(x, y) + 3 * bc(2x + 1, y - 100), over two inputs and outputs:
// 13x9 at (5, -3) into 97x61 at (-40, -30), and 1x4 at (-2, 7) into 21x11 at (3, 3).
// outside(v) is what the reference reads at a point outside the image.
struct BoundaryTest {
    ImageParam in{Int(32), 2, "in"};
    Var x{"x"}, y{"y"}, xi{"xi"}, yi{"yi"};
    Func bc, out{"out"};

    template<typename Wrap>
    explicit BoundaryTest(Wrap wrap) {
        bc = wrap(in);
        out(x, y) = bc(x, y) + 3 * bc(2 * x + 1, y - 100);
    }

    void run(Coord coord, bool constant = false) {
        auto read = [&](const Buffer<int> &a, int px, int py) {
            int x0 = a.dim(0).min(), w = a.dim(0).extent(), y0 = a.dim(1).min(), h = a.dim(1).extent();
            bool inside = px >= x0 && px < x0 + w && py >= y0 && py < y0 + h;
            if (constant) return inside ? a(px, py) : -7;
            return a(coord(px, x0, w), coord(py, y0, h));
        };
        auto one = [&](const Buffer<int> &a, Buffer<int> o) {
            in.set(a);
            out.realize(o);
            kt::check(o, [&](int px, int py) { return read(a, px, py) + 3 * read(a, 2 * px + 1, py - 100); });
        };
        one(kt::random_image<int>(13, 9, 5, -3, -500, 500, 11), kt::output<int>(97, 61, -40, -30));
        one(kt::random_image<int>(1, 4, -2, 7, -500, 500, 12), kt::output<int>(21, 11, 3, 3));
    }
};

// Realizes `out` over 3 rows of each region {input width, its min, output
// width, its min} from random values of `in` (min 0 in y), and checks it
// against want(a, x, y), a the input's buffer, exactly.
template<typename Want>
void check_regions(ImageParam &in, Func out, const std::vector<std::array<int, 4>> &regions, int seed, Want want) {
    for (const auto &r : regions) {
        Buffer<float> a = kt::random_image<float>(r[0], 3, r[1], 0, -500, 500, seed);
        in.set(a);
        Buffer<float> o = kt::output<float>(r[2], 3, r[3], 0);
        out.realize(o);
        kt::check(o, [&](int px, int py) { return want(a, px, py); }, 0.0);
    }
}

// a at (x, y), x clamped to its columns (repeat_edge).
float edge_at(const Buffer<float> &a, int x, int y) {
    return a(kt::edge_coord(x, a.dim(0).min(), a.dim(0).extent()), y);
}

}  // namespace

TEST_CASE("boundary: repeat_edge, inlined into a vectorized consumer", "[boundary]") {
    BoundaryTest t([](const ImageParam &im) { return BoundaryConditions::repeat_edge(im); });
    t.out.vectorize(t.x, 8);
    t.run(kt::edge_coord);
}

TEST_CASE("boundary: a clamped stencil's first and last column blocks share one body", "[boundary][partition]") {
    // Read 2 left and 3 right of x by vectors of 8, the rows inside the
    // blocks of 8 columns: partition_loops gives the loop over the blocks
    // a prologue and an epilogue (the clamped loads), which the emitted C++
    // runs through one function, the steady state's loop between its two
    // calls (codegen_cpp; docs/compiler.md).
    ImageParam in(Float(32), 2, "sin");
    Var x("x"), y("y"), xo("xo"), xi("xi");
    Func bc = BoundaryConditions::repeat_edge(in);
    Func out("shared_edges");
    out(x, y) = bc(x - 2, y) * 0.5f + bc(x, y) + bc(x + 3, y) * 2.0f;
    out.split(x, xo, xi, 8).vectorize(xi).reorder(xi, y, xo);
    std::string src = Pipeline(out).compile_to_cpp_source("shared_edges");
    CHECK(src.find("auto shared_edges_s0_x_xo_edges = [=](") != std::string::npos);
    // {input width, its min, output width, its min}: edges on both sides,
    // none, the whole row an edge, a 1-pixel input.
    check_regions(in, out, {{13, 5, 40, -10}, {100, 0, 90, 2}, {9, 0, 8, 0}, {1, 3, 24, 0}}, 5,
                  [](const Buffer<float> &a, int px, int py) {
                      return edge_at(a, px - 2, py) * 0.5f + edge_at(a, px, py) + edge_at(a, px + 3, py) * 2.0f;
                  });
}

TEST_CASE("boundary: a wide clamped stencil's first and last vectors share one body", "[boundary][partition]") {
    // 15 taps of x by vectors of 8: the vector loop is innermost, and its
    // prologue and epilogue (15 clamped loads each) print to more than 2 KB
    // of C++, so the emitted C++ runs them through one function too
    // (codegen_cpp; docs/compiler.md).
    ImageParam in(Float(32), 2, "win");
    Var x("x"), y("y");
    Func bc = BoundaryConditions::repeat_edge(in);
    Func out("wide_edges");
    const int reach = 7;
    Expr e;
    for (int k = -reach; k <= reach; k++) {
        Expr tap = bc(x + k, y) * (float)(k + reach + 1);
        e = e.defined() ? e + tap : tap;
    }
    out(x, y) = e;
    out.vectorize(x, 8);
    std::string src = Pipeline(out).compile_to_cpp_source("wide_edges");
    CHECK(src.find("auto wide_edges_s0_x_x_edges = [=](") != std::string::npos);
    check_regions(in, out, {{40, 5, 64, -10}, {100, 0, 90, 2}, {9, 0, 8, 0}, {1, 3, 24, 0}}, 6,
                  [&](const Buffer<float> &a, int px, int py) {
                      float sum = 0.0f;
                      for (int k = -reach; k <= reach; k++) {
                          float tap = edge_at(a, px + k, py) * (float)(k + reach + 1);
                          sum = k == -reach ? tap : sum + tap;
                      }
                      return sum;
                  });
}

TEST_CASE("boundary: constant_exterior, materialized at the root", "[boundary]") {
    BoundaryTest t([](const ImageParam &im) { return BoundaryConditions::constant_exterior(im, -7); });
    t.bc.compute_root();
    t.out.tile(t.x, t.y, t.xi, t.yi, 8, 8, TailStrategy::GuardWithIf);
    t.run(kt::edge_coord, true);
}

TEST_CASE("boundary: mirror_image, computed per row of a parallel consumer", "[boundary]") {
    BoundaryTest t([](const ImageParam &im) { return BoundaryConditions::mirror_image(im); });
    t.out.parallel(t.y);
    t.bc.compute_at(t.out, t.y).vectorize(t.bc.args()[0], 4);  // the wrapper's Vars are _0, _1
    t.run(kt::mirror_image_coord);
}

TEST_CASE("boundary: mirror_interior, inlined", "[boundary]") {
    BoundaryTest t([](const ImageParam &im) { return BoundaryConditions::mirror_interior(im); });
    t.run(kt::mirror_interior_coord);
}

TEST_CASE("boundary: mirror_image of a Func bounded in x only", "[boundary]") {
    Var x("x"), y("y");
    Func f("f"), out("out");
    f(x, y) = x * 100 + y;
    Func m = BoundaryConditions::mirror_image(f, {{Expr(2), Expr(5)}, {Expr(), Expr()}});
    out(x, y) = m(x, y) - m(x - 13, -y);
    Buffer<int> o = kt::output<int>(40, 7, -17, -3);
    out.realize(o);
    auto ref = [](int px, int py) { return kt::mirror_image_coord(px, 2, 5) * 100 + py; };
    kt::check(o, [&](int px, int py) { return ref(px, py) - ref(px - 13, -py); });
}

// Regression (found at 4d6d549): both wrappers named their Funcs after the
// image ("in_im_repeat_edge"; constant_exterior wraps a repeat_edge of its
// own), and realize() threw "Two different Funcs are named in_im_repeat_edge".
TEST_CASE("boundary: two boundary conditions of the same image in one pipeline", "[boundary]") {
    ImageParam in(Int(32), 2, "in");
    Var x("x"), y("y");
    Func a = BoundaryConditions::repeat_edge(in);
    Func b = BoundaryConditions::constant_exterior(in, 0);
    Func out("out");
    out(x, y) = a(x, y) + b(x, y);
    Buffer<int> img = kt::random_image<int>(6, 5, 1, 1, -9, 9);
    in.set(img);
    Buffer<int> o = kt::output<int>(10, 9);
    REQUIRE_NOTHROW(out.realize(o));
    kt::check(o, [&](int px, int py) {
        bool inside = px >= 1 && px < 7 && py >= 1 && py < 6;
        return kt::at_edge(img, px, py) + (inside ? img(px, py) : 0);
    });
}

// Regression: derived names came from one counter per process, so the
// second build of the same algorithm named its Funcs in_im_1_repeat_edge, ...
// and a .sched naming in_im_repeat_edge applied to the first build only.
TEST_CASE("boundary: the Funcs boundary conditions make are named alike in every build", "[boundary][regression]") {
    auto build = [] {
        auto in = std::make_shared<ImageParam>(Int(32), 2, "in");
        Var x("x"), y("y");
        Func a = BoundaryConditions::repeat_edge(*in);
        Func b = BoundaryConditions::constant_exterior(*in, 0);
        Func out("out");
        out(x, y) = a(x, y) + b(x, y);
        return std::make_pair(std::vector<std::string>{a.name(), b.name()}, Pipeline(out));
    };
    auto first = build().first, second = build().first;
    CHECK(first == std::vector<std::string>{"in_im_repeat_edge", "in_im_1_constant_exterior"});
    CHECK(second == first);
    // A schedule file naming them applies to a later build too.
    for (int i = 0; i < 2; i++)
        CHECK_NOTHROW(ScheduleFile::parse("in_im_repeat_edge: compute_root()\nin_im_1_constant_exterior: compute_root()")
                          .apply(build().second));
}
