// Sliding windows and storage folding: a producer stored outside the loop
// it is computed in. Vertical stencils of several shapes, strided and
// reversed consumers (where sliding must not apply or must step), chains of
// slid stages, a 1-D slide along x, splits with tails around the compute
// loop, and a producer with an update (not slid, still correct).
#include "check.h"

using namespace kiln;

namespace {

// Input rows [-40, 160) and columns [-8, 72): more than any schedule here
// reads (the last test uses an input of the exact size).
Buffer<int> tall_input() {
    return kt::random_image<int>(80, 200, -8, -40, -1000, 1000, 7);
}

// Realizes `out` twice (different mins and sizes) and compares with ref.
template<typename Ref>
void run_twice(Func out, Ref ref) {
    kt::realize_and_check<int>(out, {{61, 45, 0, 0}, {19, 23, -3, 11}}, ref);
}

}  // namespace

TEST_CASE("sliding: 5-tap vertical stencil, store_root().compute_at(out, y)", "[sliding]") {
    ImageParam in(Int(32), 2, "in");
    Var x("x"), y("y");
    Func g("g"), out("out");
    g(x, y) = in(x, y) * 3 + 1;
    out(x, y) = g(x, y - 2) + g(x, y - 1) * 2 + g(x, y) - g(x, y + 1) + g(x, y + 2);
    g.store_root().compute_at(out, y);
    Buffer<int> a = tall_input();
    in.set(a);
    auto gr = [&](int px, int py) { return a(px, py) * 3 + 1; };
    run_twice(out, [&](int px, int py) {
        return gr(px, py - 2) + gr(px, py - 1) * 2 + gr(px, py) - gr(px, py + 1) + gr(px, py + 2);
    });
}

TEST_CASE("sliding: a stride-2 consumer slides by two rows", "[sliding]") {
    ImageParam in(Int(32), 2, "in");
    Var x("x"), y("y");
    Func g("g"), out("out");
    g(x, y) = in(x, y) - 5;
    out(x, y) = g(x, 2 * y) + g(x, 2 * y + 1) * 3 + g(x, 2 * y + 2);
    g.store_root().compute_at(out, y);
    Buffer<int> a = tall_input();
    in.set(a);
    auto gr = [&](int px, int py) { return a(px, py) - 5; };
    run_twice(out, [&](int px, int py) { return gr(px, 2 * py) + gr(px, 2 * py + 1) * 3 + gr(px, 2 * py + 2); });
}

TEST_CASE("sliding: a consumer reading upward (decreasing rows) is not slid wrongly", "[sliding]") {
    ImageParam in(Int(32), 2, "in");
    Var x("x"), y("y");
    Func g("g"), out("out");
    g(x, y) = in(x, y) * 2;
    out(x, y) = g(x, 20 - y) + g(x, 21 - y);
    g.store_root().compute_at(out, y);
    Buffer<int> a = tall_input();
    in.set(a);
    run_twice(out, [&](int px, int py) { return a(px, 20 - py) * 2 + a(px, 21 - py) * 2; });
}

TEST_CASE("sliding: two slid stages in a chain", "[sliding]") {
    ImageParam in(Int(32), 2, "in");
    Var x("x"), y("y");
    Func g1("g1"), g2("g2"), out("out");
    g1(x, y) = in(x, y) + 1;
    g2(x, y) = g1(x, y - 1) + g1(x, y + 1);
    out(x, y) = g2(x, y - 1) - g2(x, y + 1) + g2(x, y);
    g1.store_root().compute_at(out, y);
    g2.store_root().compute_at(out, y);
    Buffer<int> a = tall_input();
    in.set(a);
    auto r1 = [&](int px, int py) { return a(px, py) + 1; };
    auto r2 = [&](int px, int py) { return r1(px, py - 1) + r1(px, py + 1); };
    run_twice(out, [&](int px, int py) { return r2(px, py - 1) - r2(px, py + 1) + r2(px, py); });
}

TEST_CASE("sliding: 1-D, store_root().compute_at(out, x)", "[sliding]") {
    ImageParam in(Float(32), 1, "in");
    Var x("x");
    Func g("g"), out("out");
    g(x) = sqrt(in(x) + 2.0f);
    out(x) = g(x - 1) + g(x) + g(x + 1);
    g.store_root().compute_at(out, x);
    Buffer<float> a = kt::image1<float>(300, -50, [](int i) { return (float)kt::noise(i, 0, 0, 100) / 7.0f; });
    in.set(a);
    auto gr = [&](int i) { return std::sqrt(a(i) + 2.0f); };
    auto ref = [&](int i) { return gr(i - 1) + gr(i) + gr(i + 1); };
    Buffer<float> o1(101);
    out.realize(o1);
    kt::check(o1, ref);
    Buffer<float> o2(37);
    o2.set_min(-20);
    out.realize(o2);
    kt::check(o2, ref);
}

TEST_CASE("sliding: store_at(out, yo).compute_at(out, yi), y split with GuardWithIf", "[sliding][tail]") {
    ImageParam in(Int(32), 2, "in");
    Var x("x"), y("y"), yo("yo"), yi("yi");
    Func g("g"), out("out");
    g(x, y) = in(x, y) * in(x, y);
    out(x, y) = g(x, y - 1) + g(x, y + 1);
    out.split(y, yo, yi, 8, TailStrategy::GuardWithIf);
    g.store_at(out, yo).compute_at(out, yi);
    Buffer<int> a = tall_input();
    in.set(a);
    auto gr = [&](int px, int py) { return a(px, py) * a(px, py); };
    run_twice(out, [&](int px, int py) { return gr(px, py - 1) + gr(px, py + 1); });
}

TEST_CASE("sliding: store_at(out, yo).compute_at(out, yi), y split with ShiftInwards", "[sliding][tail]") {
    ImageParam in(Int(32), 2, "in");
    Var x("x"), y("y"), yo("yo"), yi("yi");
    Func g("g"), out("out");
    g(x, y) = in(x, y) + 100;
    out(x, y) = g(x, y - 1) * g(x, y + 1) + g(x, y);
    out.split(y, yo, yi, 7, TailStrategy::ShiftInwards);
    g.store_at(out, yo).compute_at(out, yi);
    Buffer<int> a = tall_input();
    in.set(a);
    auto gr = [&](int px, int py) { return a(px, py) + 100; };
    run_twice(out, [&](int px, int py) { return gr(px, py - 1) * gr(px, py + 1) + gr(px, py); });
}

TEST_CASE("sliding: a producer with an update definition stored at the root", "[sliding]") {
    ImageParam in(Int(32), 2, "in");
    Var x("x"), y("y");
    Func g("g"), out("out");
    g(x, y) = in(x, y);
    g(x, y) += x - y;
    out(x, y) = g(x, y - 1) + g(x, y + 1);
    g.store_root().compute_at(out, y);
    Buffer<int> a = tall_input();
    in.set(a);
    auto gr = [&](int px, int py) { return a(px, py) + px - py; };
    run_twice(out, [&](int px, int py) { return gr(px, py - 1) + gr(px, py + 1); });
}

// Regression (found at 4d6d549): the slid region was over-estimated to twice
// the output height, so an input of exactly the needed size was rejected
// with RuntimeError -6.
TEST_CASE("sliding: an input of exactly the size a slid stencil reads", "[sliding]") {
    ImageParam in(Int(32), 2, "in");
    Var x("x"), y("y");
    Func g("g"), out("out");
    g(x, y) = in(x, y) * 2;
    out(x, y) = g(x, y - 1) + g(x, y) + g(x, y + 1);
    g.store_root().compute_at(out, y);
    Buffer<int> a = kt::random_image<int>(10, 12, 0, -1, -100, 100);
    in.set(a);
    Buffer<int> o = kt::output<int>(10, 10);
    REQUIRE_NOTHROW(out.realize(o));
    kt::check(o, [&](int px, int py) { return 2 * (a(px, py - 1) + a(px, py) + a(px, py + 1)); });
}

// Regression: a producer's region named its consumer's only through the
// expanded values, so only the first stage of a chain slid; the others were
// recomputed over their whole window every row. Three slid stages, stored
// at the root and in parallel strips (report figures: tests/lower/test_report.cpp).
TEST_CASE("sliding: three stages of a chain slide, at the root and in parallel strips", "[sliding][regression]") {
    for (int strips = 0; strips < 2; strips++) {
        INFO((strips ? "store_at(out, yo), parallel strips" : "store_root"));
        ImageParam in(Int(32), 2, "in");
        Var x("x"), y("y"), yo("yo"), yi("yi");
        Func g1("g1"), g2("g2"), g3("g3"), out("out");
        g1(x, y) = in(x, y) * 2 + 1;
        g2(x, y) = g1(x - 1, y) + g1(x + 1, y) - g1(x, y);
        g3(x, y) = g2(x, y - 2) + g2(x, y - 1) + g2(x, y) + g2(x, y + 1) * 3 + g2(x, y + 2);
        out(x, y) = g3(x, y - 1) - g3(x, y + 1);
        if (strips) {
            out.split(y, yo, yi, 8).parallel(yo);
            for (Func *f : {&g1, &g2, &g3}) f->store_at(out, yo).compute_at(out, yi);
        } else {
            for (Func *f : {&g1, &g2, &g3}) f->store_root().compute_at(out, y);
        }
        Buffer<int> a = tall_input();
        in.set(a);
        auto r1 = [&](int px, int py) { return a(px, py) * 2 + 1; };
        auto r2 = [&](int px, int py) { return r1(px - 1, py) + r1(px + 1, py) - r1(px, py); };
        auto r3 = [&](int px, int py) {
            return r2(px, py - 2) + r2(px, py - 1) + r2(px, py) + r2(px, py + 1) * 3 + r2(px, py + 2);
        };
        run_twice(out, [&](int px, int py) { return r3(px, py - 1) - r3(px, py + 1); });
    }
}

// A producer computed per yo of a split consumer: the ShiftInwards tail
// clamps the last yo's rows (min(yo * 2, extent - 2)), so the region does
// not move by a constant step, but it never moves down, and each yo
// computes only the new rows its two yi rows need (it used to compute all
// four again). Halide's camera_pipe schedule has this shape
// (schedules/camera_pipe/host_tiled.sched).
TEST_CASE("sliding: a producer computed per yo of a split consumer slides over yo", "[sliding][regression]") {
    ImageParam in(Int(32), 2, "in");
    Var x("x"), y("y"), yo("yo"), yi("yi");
    Func g("g"), out("out");
    g(x, y) = in(x, y) * 2;
    out(x, y) = g(x, y - 1) + g(x, y + 1);
    out.split(y, yo, yi, 2);
    g.store_root().compute_at(out, yo);
    PipelineReport r = Pipeline(out).report({{"out", {64, 64}}, {"in", {64, 66}}}, Target::host());
    for (const FuncReport &f : r.funcs) {
        if (f.name != "g") continue;
        INFO(f.sliding);
        CHECK(f.sliding.rfind("slides over out.yo", 0) == 0);
        CHECK(f.recompute < 1.1);
    }
}

// A producer split with RoundUp computes whole tiles of rows. Slid, its new
// rows start a whole number of tiles from the window's min, so that its
// last tile ends where the unslid window's does (inside its storage, and
// reading its own producer only where the window does); the window of 4
// rows moving one row at a time then computes 2 new rows per row.
TEST_CASE("sliding: a producer split with RoundUp slides in whole tiles", "[sliding][tail]") {
    ImageParam in(Int(32), 2, "in");
    Var x("x"), y("y"), yo("yo"), yi("yi");
    Func f("f"), g("g"), out("out");
    f(x, y) = in(x, y) * 5 - 3;
    g(x, y) = f(x, y - 1) + f(x, y + 1);
    out(x, y) = g(x, y - 1) * 2 + g(x, y + 2);
    g.store_root().compute_at(out, y).split(y, yo, yi, 2, TailStrategy::RoundUp);
    f.store_root().compute_at(out, y);
    PipelineReport r = Pipeline(out).report({{"out", {64, 63}}, {"in", {64, 70}}}, Target::host());
    for (const FuncReport &fr : r.funcs) {
        if (fr.name != "g") continue;
        INFO(fr.sliding);
        CHECK(fr.sliding.rfind("slides over out.y", 0) == 0);
        CHECK(fr.recompute < 2.1);
    }
    Buffer<int> a = tall_input();
    in.set(a);
    auto fr = [&](int px, int py) { return a(px, py) * 5 - 3; };
    auto gr = [&](int px, int py) { return fr(px, py - 1) + fr(px, py + 1); };
    run_twice(out, [&](int px, int py) { return gr(px, py - 1) * 2 + gr(px, py + 2); });
}
