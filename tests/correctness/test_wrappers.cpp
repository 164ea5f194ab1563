// Wrappers (Func::in, ImageParam::in): calls redirected to a copy of the
// wrapped values that is scheduled on its own, against plain references.
#include "check.h"

using namespace kiln;

namespace {

struct TwoUsers {
    ImageParam in{Int(32), 2, "in"};
    Var x{"x"}, y{"y"}, xi{"xi"}, yi{"yi"};
    Func f{"f"}, g{"g"}, h{"h"}, out{"out"};
    Buffer<int> im = kt::random_image<int>(80, 60, -2, -3, -1000, 1000);
    TwoUsers() {
        f(x, y) = in(x, y) * 3 + 1;
        g(x, y) = f(x - 1, y) + f(x + 1, y);
        h(x, y) = f(x, y - 1) - f(x, y + 1);
        out(x, y) = g(x, y) + 2 * h(x, y);
        in.set(im);
    }
    void run() {
        auto fr = [&](int px, int py) { return im(px, py) * 3 + 1; };
        kt::realize_and_check<int>(out, {{70, 50, 0, -1}, {32, 16, 5, 9}}, [&](int px, int py) {
            return fr(px - 1, py) + fr(px + 1, py) + 2 * (fr(px, py - 1) - fr(px, py + 1));
        });
    }
};

}  // namespace

TEST_CASE("wrappers: f.in(g) returns the same wrapper every time", "[wrappers]") {
    TwoUsers p;
    Func a = p.f.in(p.g), b = p.f.in(p.g), c = p.f.in(), d = p.f.in(p.h);
    CHECK(a.name() == "f_in_g");
    CHECK(b.contents() == a.contents());
    CHECK(c.name() == "f_in");
    CHECK(d.contents() != a.contents());
    CHECK(p.f.in({p.g}).contents() == a.contents());
    CHECK(a.args().size() == 2);
    CHECK(a.args()[0].name() == "x");
}

TEST_CASE("wrappers: a per-consumer wrapper computed per row of its consumer", "[wrappers]") {
    TwoUsers p;
    p.f.compute_root();
    p.g.compute_root();
    p.f.in(p.g).compute_at(p.g, p.y).vectorize(p.x, 4);
    std::string s = p.out.lowered_stmt();
    CHECK(s.find("produce f_in_g") != std::string::npos);
    p.run();
}

TEST_CASE("wrappers: a global wrapper and a custom one side by side", "[wrappers]") {
    TwoUsers p;
    p.f.compute_root();
    Func global = p.f.in(), custom = p.f.in(p.g);
    global.compute_at(p.out, p.y);  // h's calls
    custom.compute_at(p.out, p.y);  // g's calls
    p.out.tile(p.x, p.y, p.xi, p.yi, 16, 8);
    std::string s = p.out.lowered_stmt();
    // Names are unique in the process: f_in, or f_in_1 after an earlier
    // test's pipeline when the cases run in one process.
    CHECK(global.name().rfind("f_in", 0) == 0);
    CHECK(custom.name().rfind("f_in_g", 0) == 0);
    CHECK(s.find("produce " + global.name() + " {") != std::string::npos);
    CHECK(s.find("produce " + custom.name() + " {") != std::string::npos);
    p.run();
}

TEST_CASE("wrappers: one wrapper shared by two consumers", "[wrappers]") {
    TwoUsers p;
    p.f.in({p.g, p.h}).compute_at(p.out, p.x);
    p.out.split(p.x, p.x, p.xi, 8);
    CHECK(p.out.lowered_stmt().find("produce f_in_g_h") != std::string::npos);
    p.run();
}

TEST_CASE("wrappers: an input image staged per tile by image.in()", "[wrappers]") {
    TwoUsers p;
    p.out.tile(p.x, p.y, p.xi, p.yi, 16, 8);
    Func staged = p.in.in();  // f, g and h inlined: the tile's input window, read 6 times per point
    staged.compute_at(p.out, p.x).vectorize(Var("_0"), 4, TailStrategy::GuardWithIf);
    std::string s = p.out.lowered_stmt();
    CHECK(s.find("produce in_in {") != std::string::npos);
    p.run();
}

// With `through_func`, f and out read the image through a Func made from
// it (Func(in), as a generator passes an Input to a helper taking a Func):
// that Func stands for the image, so in.in(f) takes f's calls to it too.
static void image_in_f(bool through_func) {
    ImageParam in(Float(32), 1, "in");
    Var x("x");
    Func as_func = in;
    auto read = [&](Expr e) { return through_func ? as_func(e) : in(e); };
    Func f("f"), out("out");
    f(x) = read(x) * 2.0f;
    out(x) = f(x) + read(x + 1);
    f.compute_root();
    in.in(f).compute_root();
    Buffer<float> im = kt::image1<float>(40, 0, [](int i) { return i * 0.5f; });
    in.set(im);
    std::string s = out.lowered_stmt();
    CHECK(s.find("produce in_in_f") != std::string::npos);
    Buffer<float> o(39);
    out.realize(o);
    kt::check(o, [&](int i) { return im(i) * 2.0f + im(i + 1); });
}

TEST_CASE("wrappers: image.in(f) only for f's reads", "[wrappers]") {
    image_in_f(false);
    image_in_f(true);
}

TEST_CASE("wrappers: a vectorized image wrapper per panel of a split loop needs only the panels' columns",
          "[wrappers][regression]") {
    // The GEMM's packing of B: in.in(out) computed per panel xo (shifted
    // inwards at the edge), its columns in vectors. The kernel once asked
    // for columns far left of the first panel and rejected an input that
    // covers exactly what is read (kiln_error_input_too_small).
    ImageParam in(Float(32), 2, "in");
    Var x("x"), y("y"), xo("xo"), xi("xi");
    Func out("out");
    out(x, y) = in(x, y) * 2.0f + in(x, y + 1);
    out.split(x, xo, xi, 16).vectorize(xi, 8).parallel(xo);
    in.in(out).compute_at(out, xo).vectorize(Var("_0"), 8);
    for (int w : {16, 40, 64}) {
        Buffer<float> im = kt::image<float>(w, 9, 3, -1, [](int px, int py) { return px * 0.5f + py; });
        in.set(im);
        Buffer<float> o = kt::output<float>(w, 8, 3, -1);
        out.realize(o);
        kt::check(o, [&](int px, int py) { return im(px, py) * 2.0f + im(px, py + 1); });
    }
}

// f with an update, so that a clone must copy both definitions.
struct Updated {
    ImageParam in{Int(32), 2, "in"};
    Var x{"x"}, y{"y"};
    Func f{"f"}, g{"g"}, h{"h"}, out{"out"};
    Buffer<int> im = kt::random_image<int>(80, 60, -2, -3, -1000, 1000);
    Updated() {
        f(x, y) = in(x, y) * 3;
        f(x, y) += 1;
        g(x, y) = f(x - 1, y) + f(x + 1, y);
        h(x, y) = f(x, y - 1) * 2 - f(x, y + 1);
        out(x, y) = g(x, y) + h(x, y);
        in.set(im);
    }
    void run() {
        auto fr = [&](int px, int py) { return im(px, py) * 3 + 1; };
        kt::realize_and_check<int>(out, {{70, 50, 0, -1}, {31, 17, 5, 9}}, [&](int px, int py) {
            return fr(px - 1, py) + fr(px + 1, py) + fr(px, py - 1) * 2 - fr(px, py + 1);
        });
    }
};

TEST_CASE("clone_in: the consumer computes its own copy of the whole definition", "[wrappers][clone_in]") {
    Updated p;
    p.f.compute_root();
    p.g.compute_root();
    Func c = p.f.clone_in(p.h);
    CHECK(c.name() == "f_clone_in_h");
    CHECK(p.f.clone_in(p.h).contents() == c.contents());  // asked again: the same clone
    CHECK(c.num_update_definitions() == 1);
    c.compute_at(p.out, p.y);
    std::string s = p.out.lowered_stmt();
    INFO(s);
    // The clone runs both of f's definitions per row of out, from the input;
    // f itself stays at the root, for g.
    CHECK(s.find("produce f_clone_in_h") != std::string::npos);
    CHECK(s.find("f_clone_in_h[") != std::string::npos);
    CHECK(s.find("produce f {") < s.find("for (out.s0.y"));
    CHECK(s.find("produce f_clone_in_h") > s.find("for (out.s0.y"));
    p.run();
}

TEST_CASE("clone_in: the clone's own updates are scheduled apart from f's", "[wrappers][clone_in]") {
    Updated p;
    Var xi("xi");
    p.f.compute_root().vectorize(p.x, 8);
    Func c = p.f.clone_in({p.g, p.h});
    CHECK(c.name() == "f_clone_in_g_h");
    c.compute_at(p.out, p.y);
    c.update(0).split(p.x, p.x, xi, 4).vectorize(xi);
    std::string s = p.out.lowered_stmt();
    INFO(s);
    // g and h both read the clone; f, read by nobody, is not computed.
    CHECK(s.find("produce f {") == std::string::npos);
    CHECK(s.find("for (f_clone_in_g_h.s1.x.x,") != std::string::npos);  // the clone's update, split by 4
    p.run();
}

TEST_CASE("clone_in: a clone keeps the schedule f had when it was made", "[wrappers][clone_in]") {
    Updated p;
    p.f.compute_at(p.out, p.y);
    Func c = p.f.clone_in(p.g);
    p.f.compute_root();  // f's later schedule is f's alone
    std::string s = p.out.lowered_stmt();
    INFO(s);
    CHECK(s.find("produce f_clone_in_g") > s.find("for (out.s0.y"));
    CHECK(s.find("produce f {") < s.find("for (out.s0.y"));
    p.run();
}
