// fold_storage(): circular buffers of several sizes, from the smallest legal
// one (the window the consumers need at once) up, against a plain reference.
// Stored at the root and in parallel strips, folded forward and backward,
// through a chain, with an update definition, with a producer whose split
// tail writes past the window, with a window of run-time size, and in x.
#include "check.h"

using namespace kiln;

namespace {

// Input rows [-40, 160) and columns [-8, 72).
Buffer<int> tall_input() { return kt::random_image<int>(80, 200, -8, -40, -1000, 1000, 11); }

template<typename Ref>
void run_twice(Func out, Ref ref) {
    kt::realize_and_check<int>(out, {{61, 45, 0, 0}, {19, 23, -3, 11}}, ref);
}

// out reads g over rows [y - 2, y + 2]: a window of 5.
struct Stencil5 {
    ImageParam in{Int(32), 2, "in"};
    Var x{"x"}, y{"y"}, yo{"yo"}, yi{"yi"};
    Func g{"g"}, out{"out"};
    Buffer<int> a = tall_input();
    Stencil5() {
        g(x, y) = in(x, y) * 3 + 1;
        out(x, y) = g(x, y - 2) + g(x, y - 1) * 2 + g(x, y) - g(x, y + 1) + g(x, y + 2) * 5;
        in.set(a);
    }
    int ref(int px, int py) const {
        auto gr = [&](int qy) { return a(px, qy) * 3 + 1; };
        return gr(py - 2) + gr(py - 1) * 2 + gr(py) - gr(py + 1) + gr(py + 2) * 5;
    }
};

}  // namespace

TEST_CASE("fold_storage: store_root, factors from the window of 5 up", "[fold_storage]") {
    for (int factor : {5, 6, 7, 8, 13}) {
        INFO("fold_storage(y, " << factor << ")");
        Stencil5 p;
        p.g.store_root().compute_at(p.out, p.y).fold_storage(p.y, factor);
        run_twice(p.out, [&](int px, int py) { return p.ref(px, py); });
    }
}

TEST_CASE("fold_storage: store_at in parallel strips", "[fold_storage][parallel]") {
    for (int factor : {5, 6, 8}) {
        INFO("fold_storage(y, " << factor << ")");
        Stencil5 p;
        p.out.split(p.y, p.yo, p.yi, 8).parallel(p.yo);
        p.g.store_at(p.out, p.yo).compute_at(p.out, p.yi).fold_storage(p.y, factor);
        run_twice(p.out, [&](int px, int py) { return p.ref(px, py); });
    }
}

TEST_CASE("fold_storage: a region moving toward smaller y folds backward", "[fold_storage]") {
    for (int factor : {3, 4}) {
        INFO("fold_storage(y, " << factor << ", false)");
        ImageParam in(Int(32), 2, "in");
        Var x("x"), y("y");
        Func g("g"), out("out");
        g(x, y) = in(x, y) * 2 - 7;
        out(x, y) = g(x, 20 - y) + g(x, 21 - y) * 3 + g(x, 22 - y);
        g.store_root().compute_at(out, y).fold_storage(y, factor, false);
        Buffer<int> a = tall_input();
        in.set(a);
        auto gr = [&](int px, int py) { return a(px, py) * 2 - 7; };
        run_twice(out, [&](int px, int py) { return gr(px, 20 - py) + gr(px, 21 - py) * 3 + gr(px, 22 - py); });
    }
}

TEST_CASE("fold_storage: every stage of a chain at its smallest fold", "[fold_storage][parallel]") {
    for (int strips = 0; strips < 2; strips++) {
        INFO((strips ? "store_at(out, yo), parallel strips" : "store_root"));
        ImageParam in(Int(32), 2, "in");
        Var x("x"), y("y"), yo("yo"), yi("yi");
        Func g1("g1"), g2("g2"), out("out");
        g1(x, y) = in(x, y) + 3;
        g2(x, y) = g1(x, y - 1) - g1(x, y + 2);
        out(x, y) = g2(x, y - 1) * 2 + g2(x, y + 1);
        // Windows of 3 rows of g2, and of 6 of g1 (what the first row of out
        // needs, before anything has slid).
        if (strips) {
            out.split(y, yo, yi, 8).parallel(yo);
            g1.store_at(out, yo).compute_at(out, yi).fold_storage(y, 6);
            g2.store_at(out, yo).compute_at(out, yi).fold_storage(y, 3);
        } else {
            g1.store_root().compute_at(out, y).fold_storage(y, 6);
            g2.store_root().compute_at(out, y).fold_storage(y, 3);
        }
        Buffer<int> a = tall_input();
        in.set(a);
        auto r1 = [&](int px, int py) { return a(px, py) + 3; };
        auto r2 = [&](int px, int py) { return r1(px, py - 1) - r1(px, py + 2); };
        run_twice(out, [&](int px, int py) { return r2(px, py - 1) * 2 + r2(px, py + 1); });
    }
}

TEST_CASE("fold_storage: a Func with an update, recomputed whole in 3 rows", "[fold_storage]") {
    ImageParam in(Int(32), 2, "in");
    Var x("x"), y("y");
    Func g("g"), out("out");
    g(x, y) = in(x, y);
    g(x, y) += x - 2 * y;
    out(x, y) = g(x, y - 1) + g(x, y + 1) * 3 + g(x, y);
    g.store_root().compute_at(out, y).fold_storage(y, 3);
    Buffer<int> a = tall_input();
    in.set(a);
    auto gr = [&](int px, int py) { return a(px, py) + px - 2 * py; };
    run_twice(out, [&](int px, int py) { return gr(px, py - 1) + gr(px, py + 1) * 3 + gr(px, py); });
}

TEST_CASE("fold_storage: a producer split with RoundUp keeps the rows it writes", "[fold_storage][tail]") {
    // Rows are computed 4 at a time for a window of 3: 4 is the smallest fold.
    for (int factor : {4, 5}) {
        INFO("fold_storage(y, " << factor << ")");
        ImageParam in(Int(32), 2, "in");
        Var x("x"), y("y"), yo("yo"), yi("yi");
        Func g("g"), out("out");
        g(x, y) = in(x, y) * 5;
        out(x, y) = g(x, y - 1) + g(x, y) * 2 + g(x, y + 1) * 7;
        g.store_root().compute_at(out, y).split(y, yo, yi, 4, TailStrategy::RoundUp).fold_storage(y, factor);
        Buffer<int> a = tall_input();
        in.set(a);
        run_twice(out, [&](int px, int py) { return a(px, py - 1) * 5 + a(px, py) * 10 + a(px, py + 1) * 35; });
    }
}

TEST_CASE("fold_storage: a window whose size a Param sets, checked at run time", "[fold_storage]") {
    ImageParam in(Int(32), 2, "in");
    Param<int> k("k");
    Var x("x"), y("y");
    Func g("g"), out("out");
    g(x, y) = in(x, y) - 9;
    out(x, y) = g(x, y - 1) + g(x, y + k) * 4;
    g.store_root().compute_at(out, y).fold_storage(y, 4);
    Buffer<int> a = tall_input();
    in.set(a);
    for (int kv : {0, 1, 2}) {  // windows of 2, 3 and 4 rows
        INFO("k = " << kv);
        k.set(kv);
        run_twice(out, [&](int px, int py) { return a(px, py - 1) - 9 + (a(px, py + kv) - 9) * 4; });
    }
}

TEST_CASE("fold_storage: 1-D, sliding and folded in x", "[fold_storage]") {
    for (int factor : {3, 4}) {
        INFO("fold_storage(x, " << factor << ")");
        ImageParam in(Int(32), 1, "in");
        Var x("x");
        Func g("g"), out("out");
        g(x) = in(x) * in(x) + 1;
        out(x) = g(x - 1) - g(x) * 2 + g(x + 1);
        g.store_root().compute_at(out, x).fold_storage(x, factor);
        Buffer<int> a = kt::image1<int>(300, -50, [](int i) { return kt::noise(i, 3, -100, 100); });
        in.set(a);
        auto gr = [&](int i) { return a(i) * a(i) + 1; };
        Buffer<int> o(101);
        o.set_min(-20);
        out.realize(o);
        kt::check(o, [&](int i) { return gr(i - 1) - gr(i) * 2 + gr(i + 1); });
    }
}
