// Loop-shaping directives alone and combined, on sizes the factors do not
// divide: the four tail strategies (RoundUp on an intermediate), nested
// splits, split factors from a Param, tile, fuse, reorder, unroll, bound,
// parallel with a task size, serial, and a 3-D Func with an unrolled
// innermost channel loop.
#include "check.h"

using namespace kiln;

namespace {

// out(x, y) = g(x - 1, y) + g(x + 1, y + 1) - y with g(x, y) = 3 in(x, y) + x
// and repeat_edge on the input; realized over several output regions.
struct Stencil {
    ImageParam in{Int(32), 2, "in"};
    Var x{"x"}, y{"y"}, xo{"xo"}, yo{"yo"}, xi{"xi"}, yi{"yi"}, t{"t"};
    Func g{"g"}, out{"out"};
    Buffer<int> a = kt::random_image<int>(50, 40, -3, 2, -1000, 1000, 13);
    Stencil() {
        Func clamped = BoundaryConditions::repeat_edge(in);
        g(x, y) = clamped(x, y) * 3 + x;
        out(x, y) = g(x - 1, y) + g(x + 1, y + 1) - y;
        in.set(a);
    }
    int ref(int px, int py) const {
        auto gr = [&](int qx, int qy) { return kt::at_edge(a, qx, qy) * 3 + qx; };
        return gr(px - 1, py) + gr(px + 1, py + 1) - py;
    }
    // Realizes each {w, h, min_x, min_y} region in turn.
    void run(const std::vector<std::array<int, 4>> &regions = {{67, 45, 0, 0}, {19, 9, -30, 33}}) {
        kt::realize_and_check<int>(out, regions, [&](int px, int py) { return ref(px, py); });
    }
};

}  // namespace

TEST_CASE("loops: split GuardWithIf + vectorize, outputs narrower than the factor", "[loops][tail]") {
    Stencil s;
    s.out.split(s.x, s.xo, s.xi, 8, TailStrategy::GuardWithIf).vectorize(s.xi);
    s.run({{67, 45, 0, 0}, {5, 3, -2, -2}, {1, 1, 7, 7}});
}

TEST_CASE("loops: vectorize with ShiftInwards (explicit) and an exact multiple", "[loops][tail]") {
    Stencil s;
    s.out.vectorize(s.x, 8, TailStrategy::ShiftInwards);
    s.g.compute_at(s.out, s.y).vectorize(s.x, 8, TailStrategy::ShiftInwards);
    s.run({{67, 45, 0, 0}, {16, 3, -8, 1}, {8, 2, 3, 3}});
}

TEST_CASE("loops: RoundUp on an intermediate computed past what is needed", "[loops][tail]") {
    Stencil s;
    s.g.compute_root().split(s.x, s.xo, s.xi, 8, TailStrategy::RoundUp).vectorize(s.xi);
    s.g.split(s.y, s.yo, s.yi, 3, TailStrategy::RoundUp);
    s.run();
}

TEST_CASE("loops: RoundUp at compute_at, Auto tails elsewhere", "[loops][tail]") {
    Stencil s;
    s.out.split(s.x, s.xo, s.xi, 7).unroll(s.xi);  // Auto: ShiftInwards for a pure definition
    s.g.compute_at(s.out, s.xo).split(s.x, s.xo, s.xi, 4, TailStrategy::RoundUp).vectorize(s.xi);
    s.run();
}

TEST_CASE("loops: nested splits and a 2-D tile with GuardWithIf", "[loops][tail]") {
    Stencil s;
    Var xii("xii"), xio("xio");
    s.out.tile(s.x, s.y, s.xo, s.yo, s.xi, s.yi, 16, 8, TailStrategy::GuardWithIf)
        .split(s.xi, xio, xii, 4, TailStrategy::GuardWithIf)
        .vectorize(xii)
        .parallel(s.yo);
    s.g.compute_at(s.out, s.xo);
    s.run({{67, 45, 0, 0}, {5, 3, 11, -4}});
}

// The Param is also read by the algorithm (see the hidden test below).
TEST_CASE("loops: split by a Param factor", "[loops][param]") {
    Stencil s;
    Param<int> factor("factor");
    Func out2("out2");
    out2(s.x, s.y) = s.out(s.x, s.y) + factor;
    out2.split(s.x, s.xo, s.xi, factor, TailStrategy::GuardWithIf);
    s.g.compute_at(out2, s.xo);
    for (int f : {3, 8, 100}) {
        factor.set(f);
        kt::realize_and_check<int>(out2, {{29, 5, -4, 0}}, [&](int px, int py) { return s.ref(px, py) + f; });
    }
}

// BUG: a Param used only by the schedule (here a split factor) is not an
// argument of the kernel: the emitted C++ uses an undeclared `factor`, and
// realize() throws InternalError "JIT compilation of kernel 'jit_out'
// failed". Expected: the Param becomes an argument, as when the algorithm
// reads it.
TEST_CASE("loops: split by a Param used only in the schedule", "[regression][loops][param]") {
    Stencil s;
    Param<int> factor("factor");
    s.out.split(s.x, s.xo, s.xi, factor, TailStrategy::GuardWithIf);
    factor.set(8);
    s.run({{29, 5, -4, 0}});
}

TEST_CASE("loops: fuse the split x with y, parallel over the fused loop", "[loops]") {
    Stencil s;
    s.out.split(s.x, s.xo, s.xi, 4, TailStrategy::GuardWithIf).fuse(s.xo, s.y, s.t).parallel(s.t).vectorize(s.xi);
    s.g.compute_root().fuse(s.x, s.y, s.t).vectorize(s.t, 8, TailStrategy::GuardWithIf);
    s.run();
}

TEST_CASE("loops: reorder to column-major, vectorized along y", "[loops]") {
    Stencil s;
    s.out.reorder(s.y, s.x).vectorize(s.y, 4, TailStrategy::GuardWithIf);
    s.g.compute_at(s.out, s.x);
    s.run();
}

TEST_CASE("loops: bound() makes extents constant for a whole-loop vectorize and unroll", "[loops][bound]") {
    Stencil s;
    s.out.bound(s.x, -4, 16).bound(s.y, 3, 5).vectorize(s.x).unroll(s.y);
    s.run({{16, 5, -4, 3}});
}

TEST_CASE("loops: unroll with GuardWithIf, parallel with a task size, serial", "[loops]") {
    Stencil s;
    s.out.unroll(s.x, 3, TailStrategy::GuardWithIf).parallel(s.y, 4, TailStrategy::GuardWithIf);
    s.g.compute_root().parallel(s.y).serial(s.y).unroll(s.x, 2);
    s.run({{67, 45, 0, 0}, {2, 1, 0, 0}});
}

TEST_CASE("loops: 3-D Func, channels innermost and unrolled", "[loops]") {
    ImageParam in(UInt(8), 3, "in");
    Var x("x"), y("y"), c("c");
    Func out("out");
    out(x, y, c) = cast<uint8_t>(in(x, y, c) * 2 + c * 10 + x);  // wraps
    out.reorder(c, x, y).bound(c, 0, 3).unroll(c).vectorize(x, 8).parallel(y);
    Buffer<uint8_t> a(20, 9, 3);
    a.set_min(-5, 2, 0);
    a.for_each_element([&](int px, int py, int pc) { a(px, py, pc) = (uint8_t)kt::noise(px, py * 3 + pc, 0, 255); });
    in.set(a);
    Buffer<uint8_t> o(19, 7, 3);
    o.set_min(-4, 3, 0);
    out.realize(o);
    kt::check(o, [&](int px, int py, int pc) { return (uint8_t)(a(px, py, pc) * 2 + pc * 10 + px); });
}

// Regression (found at 4d6d549): with g computed inside the outer loop of a
// split, the loop over g's region was bounded with its min and extent taken
// apart, so for 20 outputs in tiles of 8 the entry check asked for in[0, 35]
// (GuardWithIf) or in[0, 31] (ShiftInwards). The other tests here read the
// input through repeat_edge, which would hide this.
TEST_CASE("loops: compute_at the outer loop of a split, input of the exact size", "[loops][tail]") {
    for (TailStrategy tail : {TailStrategy::GuardWithIf, TailStrategy::ShiftInwards}) {
        ImageParam in(Int(32), 1, "in");
        Var x("x"), xo("xo"), xi("xi");
        Func g("g"), out("out");
        g(x) = in(x) * 2;
        out(x) = g(x) + 1;
        out.split(x, xo, xi, 8, tail);
        g.compute_at(out, xo);
        Buffer<int> a = kt::image1<int>(20, 0, [](int i) { return i * 3; });
        in.set(a);
        Buffer<int> o(20);
        REQUIRE_NOTHROW(out.realize(o));
        kt::check(o, [](int i) { return i * 6 + 1; });
    }
}

// An unrolled loop whose copies are the lanes of one vector is computed as
// that vector (lower/VectorizeUnrolledStores.h): hist_equalize's equalize,
// a lookup through a table computed per vector of the output and unrolled,
// and an update unrolled over x that reads its own element. The values are
// the unrolled copies' (a gather with clamped float indices, a
// float-to-int truncation, lanes past a ShiftInwards tail recomputed).
TEST_CASE("loops: unrolled copies of a lookup computed as one vector", "[loops][unroll][vectorize]") {
    ImageParam in(Float(32), 1, "in"), table(Int(32), 1, "table");
    Var x("x"), xo("xo"), xi("xi");
    Func eq("eq"), acc("acc"), out("out");
    eq(x) = cast<float>(table(cast<int>(clamp(in(x), 0.0f, 15.0f)))) * 0.5f;
    acc(x) = eq(x);
    acc(x) += cast<float>(x);
    out(x) = eq(x) + acc(x);
    out.split(x, xo, xi, 8).vectorize(xi);
    eq.compute_at(out, xo).unroll(x);
    acc.compute_at(out, xo).unroll(x);
    acc.update(0).unroll(x);
    Buffer<float> a = kt::image1<float>(45, -3, [](int i) { return (float)kt::noise(i, 3, -40, 200) / 10; });
    Buffer<int> t = kt::image1<int>(16, 0, [](int i) { return i * i - 7; });
    in.set(a);
    table.set(t);
    std::string s = out.lowered_stmt(Target::host().with(Target::NoAsserts));
    CHECK_THAT(s, Catch::Contains("eq[ramp(0, 1, 8)] = "));
    CHECK_THAT(s, Catch::Contains("acc[ramp(0, 1, 8)] = (acc[ramp(0, 1, 8)] + "));
    CHECK_THAT(s, !Catch::Contains("eq[1] = "));
    Buffer<float> o = kt::image1<float>(42, -2, [](int) { return 0.0f; });
    out.realize(o);
    kt::check(o, [&](int i) {
        float e = (float)t((int)std::min(std::max(a(i), 0.0f), 15.0f)) * 0.5f;
        return e + (e + (float)i);
    });
}
