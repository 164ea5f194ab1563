// Horizontal fusion (compute_with): two stages in one loop nest, checked
// against plain references — two outputs of one pipeline, outputs of
// different sizes (the fused loop covers both), the alignment strategies,
// tiles, a shared producer computed once per fused iteration, and two
// intermediates fused inside their consumer.
#include "check.h"

using namespace kiln;

namespace {

// t = in * 3 + 1; z1 = t + 2; z2 = t(x, y + 1) - 5.
struct Twins {
    ImageParam in{Int(32), 2, "in"};
    Var x{"x"}, y{"y"}, xo{"xo"}, yo{"yo"}, xi{"xi"}, yi{"yi"};
    Func t{"t"}, z1{"z1"}, z2{"z2"};
    Buffer<int> im = kt::random_image<int>(90, 70, -5, -5, -1000, 1000);
    Twins() {
        t(x, y) = in(x, y) * 3 + 1;
        z1(x, y) = t(x, y) + 2;
        z2(x, y) = t(x, y + 1) - 5;
        in.set(im);
    }
    int tv(int px, int py) const { return im(px, py) * 3 + 1; }
    // Realizes both outputs, z1 over w1 x h1 at (m1, m1), z2 over w2 x h2 at (m2, m2).
    void run(int w1, int h1, int m1, int w2, int h2, int m2) {
        Buffer<int> o1 = kt::output<int>(w1, h1, m1, m1), o2 = kt::output<int>(w2, h2, m2, m2);
        Pipeline({z1, z2}).realize_raw({o1.raw_buffer(), o2.raw_buffer()});
        kt::check(o1, [&](int px, int py) { return tv(px, py) + 2; });
        kt::check(o2, [&](int px, int py) { return tv(px, py + 1) - 5; });
    }
};

}  // namespace

TEST_CASE("compute_with: two outputs in one loop nest, the shared producer once per row", "[compute_with]") {
    Twins p;
    p.z2.compute_with(p.z1, p.y);
    p.t.compute_at(p.z1, p.y);
    std::string s = Pipeline({p.z1, p.z2}).lowered_stmt();
    // One loop over y for both outputs; inside it, t and then z1 and z2.
    CHECK(s.find("for (z2.s0.y") == std::string::npos);
    CHECK(s.find("produce t") < s.find("z1[("));
    CHECK(s.find("z1[(") < s.find("z2[("));
    p.run(64, 48, 0, 64, 48, 0);
    p.run(30, 20, 3, 41, 9, -2);  // different regions: the fused loop covers both
}

TEST_CASE("compute_with: compute_at the child's name of a fused loop", "[compute_with]") {
    Twins p;
    p.z2.compute_with(p.z1, p.y);
    p.t.compute_at(p.z2, p.y);  // the same loop as z1's y
    p.run(33, 17, 0, 33, 17, 1);
}

TEST_CASE("compute_with: AlignStart and AlignEnd", "[compute_with]") {
    for (LoopAlignStrategy a : {LoopAlignStrategy::AlignStart, LoopAlignStrategy::AlignEnd, LoopAlignStrategy::NoAlign}) {
        Twins p;
        p.z2.compute_with(p.z1, p.y, a);
        p.t.compute_root();
        INFO(to_string(a));
        p.run(20, 11, 0, 25, 30, 4);
    }
}

TEST_CASE("compute_with: tiles fused at the tile loop, vectorized inside", "[compute_with]") {
    Twins p;
    for (Func *f : {&p.z1, &p.z2}) f->tile(p.x, p.y, p.xo, p.yo, p.xi, p.yi, 16, 8).vectorize(p.xi, 8);
    p.z2.compute_with(p.z1, p.xo);
    p.t.compute_at(p.z1, p.xo);
    p.run(64, 48, 0, 64, 48, 0);
    p.run(50, 37, 2, 61, 20, -1);
}

TEST_CASE("compute_with: parallel fused loop", "[compute_with]") {
    Twins p;
    p.z1.parallel(p.y);
    p.z2.parallel(p.y);
    p.z2.compute_with(p.z1, p.y);
    p.t.compute_at(p.z1, p.y);
    p.run(40, 40, 0, 40, 40, 0);
}

TEST_CASE("compute_with: two intermediates fused inside their consumer", "[compute_with]") {
    ImageParam in{Float(32), 2, "in"};
    Var x("x"), y("y");
    Func a("a"), b("b"), out("out");
    a(x, y) = in(x, y) * 2.0f;
    b(x, y) = in(x, y + 1) + 1.0f;
    out(x, y) = a(x - 1, y) + b(x + 1, y);
    a.compute_at(out, y);
    b.compute_at(out, y);
    b.compute_with(a, y);
    Buffer<float> im = kt::random_image<float>(50, 50, 0, 0, -100, 100);
    in.set(im);
    kt::realize_and_check<float>(out, {{40, 30, 1, 0}}, [&](int px, int py) {
        return im(px - 1, py) * 2.0f + (im(px + 1, py + 1) + 1.0f);
    });
}

TEST_CASE("compute_with: a Func computed per row inside the fused loop, of one row", "[compute_with]") {
    // f is computed at the fused loop over y and read by z1 only: its
    // region is z1's row, clamped to z1's range (bounds inference keeps the
    // guarded loop variable one point), where the fused loop also runs
    // rows of z2 alone.
    Twins p;
    Func f("f");
    f(p.x, p.y) = p.in(p.x, p.y) * 7 - 3;
    p.z1 = Func("z1");
    p.z1(p.x, p.y) = f(p.x, p.y) + p.t(p.x, p.y) - p.in(p.x, p.y) * 7 + 5;  // = tv + 2, through f
    p.z1.vectorize(p.x, 8);
    p.z2.compute_with(p.z1, p.y);
    p.t.compute_at(p.z1, p.y);
    f.compute_at(p.z1, p.y).vectorize(p.x, 8);
    std::string s = Pipeline({p.z1, p.z2}).lowered_stmt();
    CHECK(s.find("allocate f[int32 * f.extent.0]") != std::string::npos);
    p.run(64, 48, 0, 64, 48, 0);
    p.run(30, 20, 3, 41, 9, -2);    // z2's rows around z1's
    p.run(37, 50, -4, 12, 13, 20);  // z1's rows around z2's
}

TEST_CASE("compute_with: a stage with an update fused into another Func", "[compute_with]") {
    ImageParam in{Int(32), 1, "in"};
    Var x("x");
    Func f("f"), g("g");
    f(x) = in(x);
    f(x) += 10;
    g(x) = in(x) * 2;
    f.update(0).compute_with(g, x);
    Buffer<int> im = kt::image1<int>(40, 0, [](int i) { return i * 7 - 3; });
    in.set(im);
    Buffer<int> of(40), og(40);
    Pipeline({g, f}).realize_raw({og.raw_buffer(), of.raw_buffer()});
    kt::check(of, [&](int i) { return im(i) + 10; });
    kt::check(og, [&](int i) { return im(i) * 2; });
}

TEST_CASE("compute_with: a strategy per fused loop", "[compute_with]") {
    // Tiles fused at xo: rows of tiles aligned at their ends, columns of
    // tiles at their starts; and the opposite; and one strategy left Auto.
    using A = LoopAlignStrategy;
    const std::vector<std::vector<std::pair<A, A>>> cases = {{{A::AlignEnd, A::AlignStart}},
                                                             {{A::AlignStart, A::AlignEnd}},
                                                             {{A::NoAlign, A::Auto}}};
    for (const auto &c : cases) {
        Twins p;
        for (Func *f : {&p.z1, &p.z2}) f->tile(p.x, p.y, p.xo, p.yo, p.xi, p.yi, 8, 4);
        p.z2.compute_with(p.z1, p.xo, {{p.yo, c[0].first}, {p.xo, c[0].second}});
        p.t.compute_root();
        INFO(to_string(c[0].first) << " " << to_string(c[0].second));
        std::string s = Pipeline({p.z1, p.z2}).lowered_stmt();
        CHECK(s.find("for (z2.s0.y.yo") == std::string::npos);
        p.run(35, 21, 0, 26, 30, 3);
        p.run(64, 48, -2, 64, 48, -2);
    }
}

TEST_CASE("compute_with: a compute_root Func fused into an output, read by a later output", "[compute_with]") {
    // The pattern of a backward pass: a row-parallel output (scaled) and
    // column sums of the same producer (colsum), split into row bands
    // whose partial sums (bands) are computed in the output's band loop,
    // so the producer is computed once per band and read by both.
    ImageParam in{Int(32), 2, "in"};
    Var x("x"), y("y"), yo("yo"), yi("yi"), u("u");
    Func t("t"), scaled("scaled"), colsum("colsum");
    t(x, y) = in(x, y) * 3 + 1;
    scaled(x, y) = t(x, y) * 2;
    RDom r(in.dim(1).min(), in.dim(1).extent(), "r");
    colsum(x) = 0;
    colsum(x) += t(x, r);
    RVar ro("ro"), ri("ri");
    scaled.split(y, yo, yi, 8).parallel(yo).vectorize(x, 8);
    Func bands = colsum.update(0).split(r.x, ro, ri, 8).rfactor(ro, yo, "bands");
    bands.compute_root().parallel(yo);
    bands.update(0).reorder(x, ri, yo).vectorize(x, 8).parallel(yo).compute_with(scaled, yo);
    t.compute_at(scaled, yo);
    std::string s = Pipeline({scaled, colsum}).lowered_stmt();
    // t once per band, inside the fused band loop; no second loop over the bands.
    CHECK(s.find("parallel for (bands.s1.yo") == std::string::npos);
    CHECK(s.find("produce bands") < s.find("produce t"));
    CHECK(s.find("produce t") < s.find("consume bands"));
    for (int h : {64, 61, 9}) {  // whole bands, a partial last band (scaled shifts it inwards)
        Buffer<int> im = kt::random_image<int>(37, h, 0, 2, -1000, 1000);
        in.set(im);
        Buffer<int> o1 = kt::output<int>(37, h, 0, 2), o2(37);
        Pipeline({scaled, colsum}).realize_raw({o1.raw_buffer(), o2.raw_buffer()});
        INFO("height " << h);
        kt::check(o1, [&](int px, int py) { return (im(px, py) * 3 + 1) * 2; });
        for (int px = 0; px < 37; px++) {
            int want = 0;
            for (int py = 2; py < 2 + h; py++) want += im(px, py) * 3 + 1;
            CHECK(o2(px) == want);
        }
    }
}

// The pattern of a backward pass's transposed copy (gemm_grad's
// A.in(B_adjoint)) fused into the loop of another Func at the root: the
// image's wrapper belongs to the environment of every pipeline that reads
// the image, also one (the forward pass) without its consumer or its
// compute_with parent. There it is not computed, and its compute_with is
// not checked ("h is not part of this pipeline" before).
TEST_CASE("compute_with: an image's wrapper fused into a Func of one pipeline, the image read by another",
          "[compute_with][wrappers]") {
    ImageParam in{Int(32), 2, "in"};
    Var x("x"), y("y"), _0("_0"), _1("_1");
    Func first("first"), g("g"), h("h"), second("second");
    first(x, y) = in(x, y) + 1;      // the other pipeline's output: reads in itself
    g(x, y) = in(y, x) * 2;          // reads in transposed, through its wrapper
    h(_0, _1) = _0 * 100 + _1;       // reads nothing; its loops have the wrapper's names
    second(x, y) = g(x, y) + h(x, y);
    h.compute_root();
    in.in(g).compute_root().compute_with(h, _1);
    Buffer<int> im = kt::random_image<int>(23, 23, 0, 0, -1000, 1000);
    in.set(im);
    // The pipeline of `first` neither computes the wrapper nor fuses it.
    std::string s1 = first.lowered_stmt();
    CHECK(s1.find("in_in_g") == std::string::npos);
    Buffer<int> o1 = kt::output<int>(19, 17, 2, 3);
    first.realize(o1);
    kt::check(o1, [&](int px, int py) { return im(px, py) + 1; });
    // The pipeline of `second` computes the copy in h's loop over _1.
    std::string s2 = second.lowered_stmt();
    CHECK(s2.find("for (in_in_g.s0._1") == std::string::npos);
    CHECK(s2.find("produce in_in_g") != std::string::npos);
    Buffer<int> o2 = kt::output<int>(21, 18, 1, 2);
    second.realize(o2);
    kt::check(o2, [&](int px, int py) { return im(py, px) * 2 + px * 100 + py; });
}

// A Func at the root that reads another output of the pipeline is produced
// after that output, not before every output (it read a before a was written).
TEST_CASE("pipeline: a Func at the root reading another output is produced after it", "[pipeline][outputs]") {
    ImageParam in(Float(32), 1, "in");
    Var x("x");
    Func a("a"), b("b"), c("c");
    a(x) = in(x) + 1;
    b(x) = a(x) * 2;
    c(x) = b(x) + b(x + 1);
    b.compute_root().vectorize(x, 8);
    Buffer<float> input(40), oa(33), oc(32);  // c reads a over [0, 32]
    for (int i = 0; i < 40; i++) input(i) = 0.5f * i;
    in.set(input);
    Pipeline({a, c}).realize_raw({oa.raw_buffer(), oc.raw_buffer()});
    for (int i = 0; i < 32; i++) {
        CHECK(oa(i) == input(i) + 1);
        CHECK(oc(i) == (input(i) + 1) * 2 + (input(i + 1) + 1) * 2);
    }
    std::string s = Pipeline({a, c}).lowered_stmt();
    CHECK(s.find("produce a") < s.find("produce b"));
    CHECK(s.find("produce b") < s.find("produce c"));
    // A chain of two: d and e both read a; d goes right after a, before e.
    Func d("d"), e("e"), g("g");
    d(x) = a(x) + 1;
    e(x) = d(x) + a(x + 1);
    g(x) = e(x) * 3;
    d.compute_root();
    e.compute_root();
    Buffer<float> ga(33), gg(32);
    Pipeline({a, g}).realize_raw({ga.raw_buffer(), gg.raw_buffer()});
    for (int i = 0; i < 32; i++) CHECK(gg(i) == ((input(i) + 2) + (input(i + 1) + 1)) * 3);
    // d2 reads h, an output produced after a; e2 reads d2 and a: both go
    // after h, d2 first. And a Func at the root reading no output itself,
    // only one placed after an output (k reads j, which reads a), goes
    // after it too.
    Func h("h"), d2("d2"), e2("e2"), g2("g2"), j("j"), k("k"), m("m");
    h(x) = in(x) * 5;
    d2(x) = h(x) + 1;
    e2(x) = d2(x) + a(x);
    g2(x) = e2(x) * 3;
    d2.compute_root();
    e2.compute_root();
    j(x) = a(x) * 4;
    k(x) = j(x) - 1;
    m(x) = k(x) + 2;
    j.compute_root();
    k.compute_root();
    Buffer<float> ha(32), hh(32), hg(32), ma(32), mm(32);
    Pipeline({a, h, g2}).realize_raw({ha.raw_buffer(), hh.raw_buffer(), hg.raw_buffer()});
    Pipeline({a, m}).realize_raw({ma.raw_buffer(), mm.raw_buffer()});
    for (int i = 0; i < 32; i++) {
        CHECK(hg(i) == ((input(i) * 5 + 1) + (input(i) + 1)) * 3);
        CHECK(mm(i) == ((input(i) + 1) * 4 - 1) + 2);
    }
    std::string t = Pipeline({a, m}).lowered_stmt();
    CHECK(t.find("produce a") < t.find("produce j"));
    CHECK(t.find("produce j") < t.find("produce k"));
}

TEST_CASE("compute_with: an update fused into another Func's update, two row sums in one loop", "[compute_with]") {
    // The pattern of a backward row pass: two sums over each row of the same
    // inputs (s1 of a * b, s2 of a), computed per row of their consumer;
    // s2's update runs in s1's update loop over the row, so the row is read
    // once for both sums.
    ImageParam a{Float(32), 2, "a"}, b{Float(32), 2, "b"};
    Var x("x"), y("y");
    Func s1("s1"), s2("s2"), out("out");
    RDom r(a.dim(0).min(), a.dim(0).extent(), "r");
    s1(y) = 0.0f;
    s1(y) += a(r, y) * b(r, y);
    s2(y) = 1.0f;
    s2(y) += a(r, y);
    out(x, y) = a(x, y) * s1(y) + s2(y);
    s1.compute_at(out, y);
    s2.compute_at(out, y);
    s2.update(0).compute_with(s1.update(0), r.x);
    std::string s = Pipeline(out).lowered_stmt();
    // One loop over the row for both sums; s2's pure definition before it.
    CHECK(s.find("for (s2.s1.r") == std::string::npos);
    CHECK(s.find("for (s1.s1.r") != std::string::npos);
    CHECK(s.find("s2[") < s.find("for (s1.s1.r"));
    for (int w : {37, 16}) {
        Buffer<float> ia = kt::random_image<float>(w, 11, 1, -1, -4, 4), ib = kt::random_image<float>(w, 11, 1, -1, -4, 4, 2);
        a.set(ia);
        b.set(ib);
        Buffer<float> o = kt::output<float>(w, 11, 1, -1);
        Pipeline(out).realize_raw({o.raw_buffer()});
        INFO("width " << w);
        kt::check(o, [&](int px, int py) {
            float t1 = 0.0f, t2 = 1.0f;
            for (int k = 1; k < 1 + w; k++) t1 += ia(k, py) * ib(k, py), t2 += ia(k, py);
            return ia(px, py) * t1 + t2;
        });
    }
}
