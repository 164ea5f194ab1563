// Funcs given the same name: the pipeline renames all but the first-made
// (blur, blur$1, ...; lower/UniqueNames.h), and every reference follows:
// calls, compute_at/store_at levels, compute_with, updates calling
// themselves, wrappers, .sched files and the emitted C++.
#include "check.h"

using namespace kiln;

namespace {

// A helper a user calls twice: both Funcs are named "blur".
Func blur_of(Func in, Var x) {
    Func b("blur");
    b(x) = in(x - 1) + in(x) + in(x + 1);
    return b;
}

struct TwoBlurs {
    ImageParam in{Int(32), 1, "in"};
    Var x{"x"}, xo{"xo"}, xi{"xi"};
    Func src{"src"}, first, second, out{"out"};
    Buffer<int> im = kt::image1<int>(200, -40, [](int px) { return kt::noise(px, 0, -500, 500); });
    TwoBlurs() {
        src(x) = in(x) * 2;
        first = blur_of(src, x);
        second = blur_of(first, x);
        out(x) = second(x) - first(x);
        in.set(im);
    }
    int ref(int px) const {
        auto s = [&](int q) { return im(q) * 2; };
        auto b1 = [&](int q) { return s(q - 1) + s(q) + s(q + 1); };
        return b1(px - 1) + b1(px) + b1(px + 1) - b1(px);
    }
    void run() {
        for (auto r : std::vector<std::array<int, 2>>{{100, -17}, {33, 5}}) {
            Buffer<int> o(r[0]);
            o.set_min(r[1]);
            out.realize(o);
            kt::check(o, [&](int px) { return ref(px); });
        }
    }
};

}  // namespace

TEST_CASE("unique names: the later of two Funcs named blur becomes blur$1", "[unique_names]") {
    TwoBlurs p;
    CHECK(p.first.name() == "blur");
    CHECK(p.second.name() == "blur");  // renamed when a pipeline is formed
    p.run();
    CHECK(p.first.name() == "blur");
    CHECK(p.second.name() == "blur$1");
    auto funcs = Pipeline(p.out).functions();
    CHECK(funcs.count("blur"));
    CHECK(funcs.count("blur$1"));
    CHECK(funcs.at("blur$1").contents() == p.second.contents());
}

TEST_CASE("unique names: levels and compute_with made from the Func objects follow the renaming", "[unique_names]") {
    ImageParam in(Int(32), 1, "in");
    Var x("x"), xo("xo"), xi("xi");
    Func a = blur_of(in, x), b = blur_of(a, x), out("out");
    out(x) = b(x) * 3;
    out.split(x, xo, xi, 8);
    a.compute_at(b, x);  // a level of the Func that becomes blur$1
    b.compute_at(out, xo);
    std::string s = out.lowered_stmt();
    INFO(s);
    CHECK(s.find("for (blur$1.s0.x,") != std::string::npos);
    CHECK(s.find("produce blur {") > s.find("for (blur$1.s0.x,"));
    Buffer<int> im = kt::image1<int>(80, -10, [](int px) { return kt::noise(px, 0, -50, 50); });
    in.set(im);
    auto ref = [&](int px) {
        auto b1 = [&](int q) { return im(q - 1) + im(q) + im(q + 1); };
        return (b1(px - 1) + b1(px) + b1(px + 1)) * 3;
    };
    Buffer<int> o(60);
    o.set_min(-5);
    out.realize(o);
    kt::check(o, ref);

    // Two sibling blurs of one Func, fused: the compute_with target is the one
    // that stays "blur".
    Func c = blur_of(in, x), d = blur_of(in, x), sum("sum");
    sum(x) = c(x) * 10 + d(x);
    c.compute_root();
    d.compute_root();
    d.compute_with(c, x);
    Buffer<int> o2(40);
    sum.realize(o2);
    kt::check(o2, [&](int px) { return (im(px - 1) + im(px) + im(px + 1)) * 11; });
    CHECK(d.name() == "blur$1");  // unique within its pipeline
}

TEST_CASE("unique names: three Funcs of one name, an update calling itself, a wrapper", "[unique_names]") {
    Var x("x");
    Func a("f"), b("f"), c("f"), out("out");
    a(x) = x;
    b(x) = a(x) * 10;
    b(x) = b(x) + 1;  // the update's call of itself is renamed with it
    c(x) = b(x) + a(x);
    out(x) = c(x) * 2;
    a.compute_root();
    b.compute_root();
    Func w = b.in();
    w.compute_root();
    Buffer<int> o(16);
    out.realize(o);
    kt::check(o, [](int px) { return ((px * 10 + 1) + px) * 2; });
    CHECK(a.name() == "f");
    CHECK(b.name() == "f$1");
    CHECK(c.name() == "f$2");
    CHECK(out.lowered_stmt().find("produce f_in") != std::string::npos);
}

TEST_CASE("unique names: a .sched file names the renamed Funcs", "[unique_names]") {
    TwoBlurs p;
    Pipeline pipe(p.out);
    ScheduleFile::parse("blur$0: compute_root()\n"
                        "blur$1: compute_root() vectorize(x, 4)\n")
        .apply(pipe);
    std::string s = p.out.lowered_stmt();
    INFO(s);
    CHECK(s.find("produce blur {") != std::string::npos);
    CHECK(s.find("blur$1[ramp(") != std::string::npos);
    p.run();
}

TEST_CASE("unique names: generated C++ spells blur$1 as a C identifier", "[unique_names]") {
    TwoBlurs p;
    p.first.compute_root();
    p.second.compute_root();
    std::string cpp = Pipeline(p.out).compile_to_cpp_source("two_blurs", Target::host());
    CHECK(cpp.find("blur__1") != std::string::npos);
    CHECK(cpp.find("blur$1_") == std::string::npos);
    CHECK(cpp.find("'blur$1'") != std::string::npos);  // messages keep the name the user sees
}
