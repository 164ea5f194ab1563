// Tuple-valued Funcs: a per-row argmax (a Tuple update with elements of
// different types, vectorized and parallel), a Tuple intermediate under
// every placement (inlined, root, compute_at, sliding window with folding),
// an update that swaps its elements (all values read before any is stored),
// the online-softmax running max and rescaled sum, += on a Tuple, and a
// pipeline with a Tuple output beside an ordinary one.
#include "check.h"

using namespace kiln;

namespace {

// A w x h float input, values in [-50, 50] with ties.
struct RowInput {
    ImageParam in{Float(32), 2, "in"};
    Buffer<float> a;
    Var y{"y"};
    RowInput(int w, int h) : a(kt::random_image<float>(w, h, 0, 0, -50, 50, 7)) { in.set(a); }
    int width() const { return a.width(); }
};

// arg_max(y) = (the largest in(r, y), the first r where it occurs).
Func row_argmax(RowInput &s) {
    RDom r(0, s.width(), "r");
    Func am("am");
    am(s.y) = Tuple(s.in(0, s.y), 0);
    am(s.y) = select(s.in(r, s.y) > am(s.y)[0], Tuple(s.in(r, s.y), r), Tuple(am(s.y)));
    return am;
}

void check_row_argmax(Func am, const RowInput &s, int h, int min_y) {
    Buffer<float> mx(h);
    Buffer<int> idx(h);
    mx.set_min(min_y);
    idx.set_min(min_y);
    Realization out({Buffer<>(mx), Buffer<>(idx)});
    am.realize(out);
    kt::check(mx, [&](int y) {
        float m = s.a(0, y);
        for (int x = 1; x < s.width(); x++) m = std::max(m, s.a(x, y));
        return m;
    });
    kt::check(idx, [&](int y) {
        int best = 0;
        for (int x = 1; x < s.width(); x++)
            if (s.a(x, y) > s.a(best, y)) best = x;
        return best;
    });
}

}  // namespace

TEST_CASE("tuples: a per-row argmax, a Tuple update of a float and an int", "[tuple][update]") {
    RowInput s(37, 29);
    Func am = row_argmax(s);
    CHECK(am.outputs() == 2);
    CHECK(am.types() == std::vector<Type>{Float(32), Int(32)});
    check_row_argmax(am, s, 29, 0);
    check_row_argmax(am, s, 11, 9);
}

TEST_CASE("tuples: the argmax update vectorized and parallel over rows (tails)", "[tuple][update][vectorize]") {
    RowInput s(23, 45);
    Func am = row_argmax(s);
    am.vectorize(s.y, 8);
    am.update(0).parallel(s.y, 16).vectorize(s.y, 4);
    check_row_argmax(am, s, 45, 0);
    check_row_argmax(am, s, 13, 5);
}

TEST_CASE("tuples: realize(sizes) returns one buffer per element", "[tuple]") {
    RowInput s(16, 8);
    Func am = row_argmax(s);
    Realization r = am.realize({8});
    REQUIRE(r.size() == 2);
    Buffer<float> mx = r[0];
    Buffer<int> idx = r[1];
    for (int y = 0; y < 8; y++) CHECK(s.a(idx(y), y) == mx(y));
}

TEST_CASE("tuples: a Tuple intermediate inlined, at root, at a consumer loop, and sliding", "[tuple][schedule]") {
    ImageParam in(Int(32), 2, "in");
    Buffer<int> a = kt::random_image<int>(70, 60, -5, -5, -1000, 1000, 2);
    in.set(a);
    auto ref = [&](int x, int y) {
        int lo = std::min(a(x, y), a(x + 1, y + 1)), hi = std::max(a(x, y), a(x + 1, y + 1));
        int lo1 = std::min(a(x, y + 1), a(x + 1, y + 2)), hi1 = std::max(a(x, y + 1), a(x + 1, y + 2));
        return (hi - lo) * 3 + hi1 + lo1;
    };
    for (int variant = 0; variant < 4; variant++) {
        Var x("x"), y("y");
        Func mm("mm"), out("out");
        mm(x, y) = Tuple(min(in(x, y), in(x + 1, y + 1)), max(in(x, y), in(x + 1, y + 1)));
        out(x, y) = (mm(x, y)[1] - mm(x, y)[0]) * 3 + mm(x, y + 1)[1] + mm(x, y + 1)[0];
        if (variant == 1) mm.compute_root().vectorize(x, 8);
        if (variant == 2) {
            out.vectorize(x, 8);
            mm.compute_at(out, y).vectorize(x, 4);
        }
        if (variant == 3) mm.store_root().compute_at(out, y);  // slides over y, folded to 2 rows
        INFO("variant " << variant);
        kt::realize_and_check<int>(out, {{61, 50, -3, -4}, {9, 7, 10, 20}}, ref);
        if (variant == 3) CHECK_THAT(out.lowered_stmt(), Catch::Contains("allocate mm.1[int32 * "));
    }
}

TEST_CASE("tuples: an update that swaps its elements reads both before storing", "[tuple][update]") {
    Var x("x");
    Func f("f");
    f(x) = Tuple(x, x * 2);
    f(x) = Tuple(f(x)[1], f(x)[0]);
    f(x) = Tuple(f(x)[0] + f(x)[1], f(x)[0] - f(x)[1]);
    Realization r = f.realize({20});
    Buffer<int> a = r[0], b = r[1];
    kt::check(a, [](int x) { return 3 * x; });
    kt::check(b, [](int x) { return x; });
}

TEST_CASE("tuples: online softmax's running max and rescaled sum", "[tuple][update]") {
    RowInput s(41, 17);
    RDom r(0, s.width(), "r");
    Func ms("ms");
    Expr v = s.in(r, s.y);
    ms(s.y) = Tuple(Expr(-std::numeric_limits<float>::infinity()), 0.0f);
    Expr m = ms(s.y)[0], sum = ms(s.y)[1], m2 = max(m, v);
    ms(s.y) = Tuple(m2, sum * exp(m - m2) + exp(v - m2));
    ms.update(0).vectorize(s.y, 8);
    Realization out = ms.realize({17});
    Buffer<float> mx = out[0], total = out[1];
    kt::check(mx, [&](int y) {
        float m = s.a(0, y);
        for (int x = 1; x < s.width(); x++) m = std::max(m, s.a(x, y));
        return m;
    });
    kt::check(total, [&](int y) {
        double m = mx(y), t = 0;
        for (int x = 0; x < s.width(); x++) t += std::exp(s.a(x, y) - m);
        return t;
    }, 1e-5);
}

TEST_CASE("tuples: += on a Tuple, and a Tuple output beside an ordinary one", "[tuple][pipeline]") {
    Var x("x");
    RDom r(0, 5, "r");
    Func stats("stats"), twice("twice");
    stats(x) += Tuple(x + r, cast<float>(r) * 0.5f);  // starts from (0, 0.0f)
    twice(x) = stats(x)[0] * 2;
    Pipeline p({stats, twice});
    std::vector<Argument> args = p.infer_arguments();
    REQUIRE(args.size() == 3);
    CHECK(args[0].name == "stats.0");
    CHECK(args[1].name == "stats.1");
    CHECK(args[1].type == Float(32));
    Buffer<int> s0(10), t(10);
    Buffer<float> s1(10);
    p.realize_raw({s0.raw_buffer(), s1.raw_buffer(), t.raw_buffer()});
    kt::check(s0, [](int x) { return 5 * x + 10; });
    kt::check(s1, [](int) { return 5.0; });
    kt::check(t, [](int x) { return 10 * x + 20; });
}
