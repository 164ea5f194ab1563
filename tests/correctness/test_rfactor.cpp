// rfactor: a sum made parallel (factoring the outer RVar of a split) and
// vectorized (the inner one), chained; a row max vectorized inside each row;
// an argmax Tuple factored over contiguous blocks; a 2-D RDom factored over
// one dimension; a histogram made parallel; an RDom with where(). Sizes are
// not multiples of the split factors.
#include "check.h"

using namespace kiln;

namespace {

// A 1-D int input of n values in [-1000, 1000].
struct Vec {
    ImageParam in{Int(32), 1, "in"};
    Buffer<int> a;
    explicit Vec(int n) : a(kt::image1<int>(n, 0, [](int x) { return kt::noise(x, 0, -1000, 1000, 9); })) {
        in.set(a);
    }
    int n() const { return a.width(); }
    int64_t total() const {
        int64_t s = 0;
        for (int x = 0; x < n(); x++) s += a(x);
        return s;
    }
};

int realize_scalar(Func f) {
    Buffer<int> out = Buffer<int>::make_scalar();
    f.realize(out);
    return out();
}

}  // namespace

TEST_CASE("rfactor: a parallel sum (the outer RVar of a split factored)", "[rfactor]") {
    Vec v(1003);
    RDom r(0, v.n(), "r");
    Func sum("sum");
    sum() = 0;
    sum() += v.in(r);
    RVar ro("ro"), ri("ri");
    Var u("u");
    sum.update(0).split(r, ro, ri, 64);
    Func intm = sum.update(0).rfactor(ro, u);
    CHECK(intm.name() == "sum_intm");
    CHECK(intm.dimensions() == 1);
    intm.compute_root().update(0).parallel(u);
    CHECK(realize_scalar(sum) == v.total());
}

TEST_CASE("rfactor: a vectorized sum (the inner RVar), then parallel over blocks (chained)", "[rfactor]") {
    Vec v(1001);
    RDom r(0, v.n(), "r");
    Func sum("sum");
    sum() = 0;
    sum() += v.in(r);
    RVar ro("ro"), ri("ri"), rio("rio"), rii("rii");
    Var u("u"), w("w");
    sum.update(0).split(r, ro, ri, 32);
    Func blocks = sum.update(0).rfactor(ro, u, "blocks");  // blocks(u) = sum of 32 values
    blocks.update(0).split(ri, rio, rii, 8);
    Func lanes = blocks.update(0).rfactor(rii, w, "lanes");  // lanes(u, w): 8 lanes per block
    blocks.compute_root().update(0).parallel(u);
    lanes.compute_at(blocks, u).vectorize(w).update(0).vectorize(w);
    CHECK(realize_scalar(sum) == v.total());
    CHECK_THAT(sum.lowered_stmt(), Catch::Contains("parallel for (blocks.s1.u"));
}

TEST_CASE("rfactor: a row max vectorized across each row (float, ragged width)", "[rfactor]") {
    ImageParam in(Float(32), 2, "in");
    Buffer<float> a = kt::random_image<float>(77, 19, 0, 0, -500, 500, 4);
    in.set(a);
    Var y("y"), u("u");
    RDom r(0, 77, "r");
    RVar ro("ro"), ri("ri");
    Func rmax("rmax");
    rmax(y) = -std::numeric_limits<float>::infinity();
    rmax(y) = max(rmax(y), in(r, y));
    rmax.update(0).split(r, ro, ri, 8);
    Func intm = rmax.update(0).rfactor(ri, u);
    CHECK(intm.args()[0].name() == "y");
    CHECK(intm.args()[1].name() == "u");
    intm.compute_at(rmax, y).vectorize(u).update(0).vectorize(u);
    rmax.update(0).parallel(y);
    Buffer<float> out(19);
    rmax.realize(out);
    kt::check(out, [&](int yy) {
        float m = a(0, yy);
        for (int x = 1; x < 77; x++) m = std::max(m, a(x, yy));
        return m;
    });
}

TEST_CASE("rfactor: an argmax Tuple factored over contiguous blocks keeps the first maximum", "[rfactor][tuple]") {
    Vec v(203);
    for (int x = 0; x < 203; x++) v.a(x) = kt::noise(x, 1, 0, 20, 3);  // many ties
    RDom r(0, v.n(), "r");
    Func am("am");
    am() = Tuple(v.in(0), 0);
    am() = select(v.in(r) > am()[0], Tuple(v.in(r), r), Tuple(am()));
    RVar ro("ro"), ri("ri");
    Var u("u");
    am.update(0).split(r, ro, ri, 16);
    Func intm = am.update(0).rfactor(ro, u);
    intm.compute_root().update(0).parallel(u);
    Realization out = am.realize({});
    Buffer<int> mx = out[0], idx = out[1];
    int best = 0;
    for (int x = 1; x < 203; x++)
        if (v.a(x) > v.a(best)) best = x;
    CHECK(mx() == v.a(best));
    CHECK(idx() == best);
}

TEST_CASE("rfactor: one dimension of a 2-D RDom, with where()", "[rfactor]") {
    ImageParam in(Int(32), 2, "in");
    Buffer<int> a = kt::random_image<int>(30, 20, 0, 0, -50, 50, 8);
    in.set(a);
    Var x("x"), u("u");
    RDom r(0, 30, 0, 20, "r");
    r.where((r.x + r.y) % 3 != 0);
    Func f("f");
    f(x) = x;
    f(x) += in(r.x, r.y) * (x + 1);
    Func intm = f.update(0).rfactor(r.y, u);
    intm.compute_root().update(0).parallel(u);
    f.update(0).vectorize(x, 4);
    Buffer<int> out(13);
    f.realize(out);
    kt::check(out, [&](int xx) {
        int s = xx;
        for (int ry = 0; ry < 20; ry++)
            for (int rx = 0; rx < 30; rx++)
                if ((rx + ry) % 3 != 0) s += a(rx, ry) * (xx + 1);
        return s;
    });
}

TEST_CASE("rfactor: a histogram made parallel over rows", "[rfactor]") {
    ImageParam in(UInt(8), 2, "in");
    Buffer<uint8_t> a = kt::random_image<uint8_t>(45, 33, 0, 0, 0, 15, 6);
    in.set(a);
    Var b("b"), u("u");
    RDom r(0, 45, 0, 33, "r");
    Func hist("hist");
    hist(b) = 0;
    hist(clamp(cast<int>(in(r.x, r.y)), 0, 15)) += 1;
    Func intm = hist.update(0).rfactor(r.y, u);
    intm.compute_root().update(0).parallel(u);
    Buffer<int> out(16);
    hist.realize(out);
    kt::check(out, [&](int bin) {
        int n = 0;
        for (int y = 0; y < 33; y++)
            for (int x = 0; x < 45; x++) n += a(x, y) == bin;
        return n;
    });
}
