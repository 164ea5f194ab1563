// Whole pipelines: the 4-stage elementwise chain log(exp(x) + 1) with its
// intermediates inlined, at the root, per row and per tile; two outputs
// sharing an intermediate; and the life of a compiled kernel: reused across
// realize() calls with other buffers, sizes and mins, recompiled after a
// reschedule or a new definition, compiled ahead of them by compile_jit().
#include <cstdlib>

#include "check.h"

using namespace kiln;

namespace {

// a = in, b = exp(a), c = b + 1, d = log(c).
struct Chain {
    ImageParam in{Float(32), 2, "in"};
    Var x{"x"}, y{"y"}, xi{"xi"}, yi{"yi"};
    Func a{"a"}, b{"b"}, c{"c"}, d{"d"};
    Chain() {
        a(x, y) = in(x, y);
        b(x, y) = exp(a(x, y));
        c(x, y) = b(x, y) + 1.0f;
        d(x, y) = log(c(x, y));
    }
    // The input is exactly the size of the first output.
    void run() {
        Buffer<float> im = kt::image<float>(67, 45, -3, 4, [](int px, int py) { return kt::noise(px, py, -4000, 4000) / 1000.0f; });
        in.set(im);
        kt::realize_and_check<float>(d, {{67, 45, -3, 4}, {9, 40, 50, 5}},
                                     [&](int px, int py) { return std::log(std::exp(im(px, py)) + 1.0f); });
    }
};

}  // namespace

TEST_CASE("pipeline: log(exp(x) + 1), every stage inlined", "[pipeline][chain]") {
    Chain ch;
    ch.d.vectorize(ch.x, 8);
    ch.run();
}

TEST_CASE("pipeline: log(exp(x) + 1), every intermediate compute_root", "[pipeline][chain]") {
    Chain ch;
    ch.a.compute_root();
    ch.b.compute_root().vectorize(ch.x, 8);
    ch.c.compute_root().parallel(ch.y);
    ch.run();
}

TEST_CASE("pipeline: log(exp(x) + 1), root, inline and per-row mixed", "[pipeline][chain]") {
    Chain ch;
    ch.a.compute_at(ch.b, ch.y);
    ch.b.compute_root();
    ch.c.compute_root().compute_inline();  // back to inline
    ch.d.parallel(ch.y).vectorize(ch.x, 4);
    ch.run();
}

TEST_CASE("pipeline: log(exp(x) + 1), per tile, with sliding storage", "[pipeline][chain]") {
    Chain ch;
    ch.d.tile(ch.x, ch.y, ch.xi, ch.yi, 8, 8, TailStrategy::GuardWithIf).vectorize(ch.xi);
    ch.c.compute_at(ch.d, ch.x).vectorize(ch.x, 8, TailStrategy::GuardWithIf);
    ch.b.store_at(ch.d, ch.y).compute_at(ch.d, ch.x);
    ch.a.store_root().compute_at(ch.d, ch.y);
    ch.run();
}

TEST_CASE("pipeline: two outputs sharing a root intermediate", "[pipeline]") {
    ImageParam in(Int(16), 2, "in");
    Var x("x"), y("y");
    Func g("g"), o1("o1"), o2("o2");
    g(x, y) = cast<int>(in(x, y)) * 5;
    o1(x, y) = g(x, y) + 1;
    o2(x, y) = g(x + 1, y - 1) * 2;
    g.compute_root();
    o2.vectorize(x, 4);
    Pipeline p({o1, o2});
    Buffer<int16_t> im = kt::random_image<int16_t>(40, 40, -5, -5, -2000, 2000);
    in.set(im);
    Buffer<int> b1 = kt::output<int>(30, 20, -5, -4), b2 = kt::output<int>(13, 11, 10, 20);
    p.realize_raw({b1.raw_buffer(), b2.raw_buffer()});
    kt::check(b1, [&](int px, int py) { return im(px, py) * 5 + 1; });
    kt::check(b2, [&](int px, int py) { return im(px + 1, py - 1) * 10; });
}

TEST_CASE("pipeline: an output that reads another output, listed first", "[pipeline]") {
    // o2 reads o1's buffer: o1 is produced first whatever the order given.
    ImageParam in(Int(32), 2, "in");
    Var x("x"), y("y");
    Func o1("o1"), o2("o2");
    o1(x, y) = in(x, y) * 3;
    o2(x, y) = o1(x, y) + 1;
    o2.vectorize(x, 4).parallel(y);
    Pipeline p({o2, o1});
    Buffer<int> im = kt::random_image<int>(24, 9, 0, 0, -100, 100);
    in.set(im);
    Buffer<int> b1 = kt::output<int>(24, 9, 0, 0), b2 = kt::output<int>(24, 9, 0, 0);
    p.realize_raw({b2.raw_buffer(), b1.raw_buffer()});
    kt::check(b1, [&](int px, int py) { return im(px, py) * 3; });
    kt::check(b2, [&](int px, int py) { return im(px, py) * 3 + 1; });
}

TEST_CASE("pipeline: a kernel reused across realize() calls, recompiled after changes", "[pipeline][reuse]") {
    ImageParam in(Int(32), 2, "in");
    Var x("x"), y("y");
    Func g("g"), out("out");
    g(x, y) = in(x, y) + in(x, y + 1);
    out(x, y) = g(x, y) * (x + 1);
    out.vectorize(x, 4, TailStrategy::GuardWithIf);
    Buffer<int> a = kt::random_image<int>(80, 60, -10, -10, -99, 99, 21);
    Buffer<int> b = kt::random_image<int>(8, 4, 100, 200, -99, 99, 22);
    auto ref = [&](const Buffer<int> &im) {
        return [&im](int px, int py) { return (im(px, py) + im(px, py + 1)) * (px + 1); };
    };

    in.set(a);
    Buffer<int> r1 = out.realize({67, 45});  // the untyped result of realize(sizes)
    REQUIRE(r1.dimensions() == 2);
    kt::check(r1, ref(a));
    kt::realize_and_check<int>(out, {{3, 1, -10, 20}}, ref(a));

    in.set(b);  // another input, size and min
    kt::realize_and_check<int>(out, {{8, 3, 100, 200}}, ref(b));

    g.compute_root();  // reschedule: a new kernel
    in.set(a);
    kt::realize_and_check<int>(out, {{60, 49, -10, -10}}, ref(a));

    out(x, y) += 1;  // a new definition: a new kernel again
    kt::realize_and_check<int>(out, {{11, 7, 0, 3}}, [&](int px, int py) { return ref(a)(px, py) + 1; });
}

TEST_CASE("pipeline: compile_jit() compiles before any buffer is given", "[pipeline][reuse]") {
    ImageParam in(Int(32), 2, "in");
    Var x("x"), y("y");
    Func g("g"), out("out"), other("other");
    g(x, y) = in(x, y) * 2;
    out(x, y) = g(x, y) + g(x + 1, y);
    other(x, y) = in(x, y) - 1;
    Pipeline p(out);
    p.compile_jit();
    other.compile_jit();
    // With no C++ compiler left, realize() runs the kernels compile_jit()
    // made (a compiler named otherwise would be a new cache key on disk).
    const char *cxx = std::getenv("CXX");
    const std::string saved = cxx ? cxx : "";
    setenv("CXX", "false", 1);
    Buffer<int> a = kt::random_image<int>(40, 12, 0, 0, -99, 99, 5);
    in.set(a);
    Buffer<int> o = kt::output<int>(39, 12), q = kt::output<int>(40, 12);
    p.realize(o);
    other.realize(q);
    // A rescheduled Func is a new kernel: compiling it now fails.
    g.compute_root();
    CHECK_THROWS(p.compile_jit());
    if (cxx)
        setenv("CXX", saved.c_str(), 1);
    else
        unsetenv("CXX");
    kt::check(o, [&](int px, int py) { return a(px, py) * 2 + a(px + 1, py) * 2; });
    kt::check(q, [&](int px, int py) { return a(px, py) - 1; });
    p.realize(o);  // compiled again, with the compiler back
    kt::check(o, [&](int px, int py) { return a(px, py) * 2 + a(px + 1, py) * 2; });
}

TEST_CASE("pipeline: one pipeline compiled for several targets", "[pipeline][target]") {
    ImageParam in(UInt(8), 2, "in");
    Var x("x"), y("y");
    Func g("g"), out("out");
    g(x, y) = cast<int16_t>(in(x, y)) * 3 - 200;
    out(x, y) = cast<uint8_t>(clamp((g(x, y) + g(x + 1, y)) / 7 + (g(x, y) % 5), 0, 255));
    out.vectorize(x, 16, TailStrategy::GuardWithIf);
    g.compute_at(out, y).vectorize(x, 16);
    Buffer<uint8_t> a = kt::random_image<uint8_t>(68, 9, 0, 0, 0, 255);
    in.set(a);
    auto ref = [&](int px, int py) {
        auto gr = [&](int qx) { return a(qx, py) * 3 - 200; };
        return kt::clampi((int)(kt::div_euclid(gr(px) + gr(px + 1), 7) + kt::mod_euclid(gr(px), 5)), 0, 255);
    };
    for (const char *t : {"x86-64-linux", "x86-64-linux-sse41", "x86-64-linux-avx2", "host-no_asserts"}) {
        INFO("target " << t);
        Buffer<uint8_t> o = kt::output<uint8_t>(67, 9);
        out.realize(o, Target(t));
        kt::check(o, ref);
    }
}
