// Specializations: run-time dispatch between schedules of one stage, against
// plain references, on both sides of each condition.
#include "check.h"

using namespace kiln;

namespace {

// out(x, y) = (in(x - 1, y) + in(x + 1, y)) * k, with `in` repeat-edged.
struct Scaled {
    ImageParam in{Float(32), 2, "in"};
    Param<int> k{"k", 3};
    Var x{"x"}, y{"y"}, xo{"xo"}, xi{"xi"};
    Func g{"g"}, out{"out"};
    Buffer<float> im;
    Scaled() {
        Func c = BoundaryConditions::repeat_edge(in);
        g(x, y) = c(x - 1, y) + c(x + 1, y);
        out(x, y) = g(x, y) * cast<float>(k);
    }
    // An input of w x h and an output of the same size.
    void run(int w, int h) {
        im = kt::random_image<float>(w, h, 0, 0, -100, 100);
        in.set(im);
        kt::realize_and_check<float>(out, {{w, h, 0, 0}}, [&](int px, int py) {
            return (kt::at_edge(im, px - 1, py) + kt::at_edge(im, px + 1, py)) * (float)k.get();
        });
    }
};

}  // namespace

TEST_CASE("specialize: a vectorized path for wide images, the plain loop otherwise", "[specialize]") {
    Scaled p;
    p.g.compute_at(p.out, p.y);  // inside both variants' loop over y
    p.out.specialize(p.in.width() >= 16).vectorize(p.x, 8);
    std::string s = p.out.lowered_stmt();
    CHECK(s.find("if ((in.extent.0 >= 16))") != std::string::npos);
    CHECK(s.find("ramp(") != std::string::npos);
    p.run(64, 10);
    p.run(6, 5);  // narrower than one vector: only the fallback is correct here
}

TEST_CASE("specialize: chained conditions are tested in order", "[specialize]") {
    Scaled p;
    p.out.specialize(p.k == 1).parallel(p.y);
    p.out.specialize(p.in.width() >= 32).split(p.x, p.xo, p.xi, 16).vectorize(p.xi, 4);
    p.g.compute_root();
    std::string s = p.out.lowered_stmt();
    CHECK(s.find("if ((k == 1))") < s.find("if ((in.extent.0 >= 32))"));
    for (int k : {1, 3}) {
        p.k.set(k);
        p.run(40, 9);
        p.run(20, 9);
    }
}

TEST_CASE("specialize: the same condition returns the same specialization", "[specialize]") {
    Scaled p;
    p.out.specialize(p.k == 2).vectorize(p.x, 4);
    p.out.specialize(p.k == 2).parallel(p.y);
    std::string s = p.out.lowered_stmt(Target::host().with(Target::NoAsserts));
    CHECK(s.find("if ((k == 2))") == s.rfind("if ((k == 2))"));  // one branch, vectorized and parallel
    CHECK(s.find("parallel for") != std::string::npos);
    p.k.set(2);
    p.run(30, 7);
}

TEST_CASE("specialize: an update stage", "[specialize]") {
    ImageParam in(Int(32), 1, "in");
    Param<int> n("n", 0);
    Var x("x");
    RDom r(0, 3, "r");
    Func f("f");
    f(x) = 0;
    f(x) += in(x + r);
    f.update(0).specialize(n > 0).vectorize(x, 4, TailStrategy::GuardWithIf);
    Buffer<int> im = kt::image1<int>(50, 0, [](int i) { return i * i - 7; });
    in.set(im);
    for (int v : {0, 1}) {
        n.set(v);
        Buffer<int> o(45);
        f.realize(o);
        kt::check(o, [&](int i) { return im(i) + im(i + 1) + im(i + 2); });
    }
}

TEST_CASE("specialize: specialize_fail stops a run no specialization covers", "[specialize]") {
    Scaled p;
    p.out.specialize(p.k > 0).vectorize(p.x, 4);
    p.out.specialize_fail("k must be positive");
    p.run(20, 4);
    p.k.set(-1);
    Buffer<float> o(20, 4);
    try {
        p.out.realize(o);
        FAIL("no error");
    } catch (const RuntimeError &e) {
        CHECK(e.code == -14);
        CHECK(std::string(e.what()).find("out: k must be positive") != std::string::npos);
    }
}
