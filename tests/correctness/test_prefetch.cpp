// prefetch() end to end: a prefetch changes no value, whatever it
// prefetches (a Func, an image, an output written), where (split, parallel
// and unrolled loops, a loop around the one prefetched from) and with
// which bound strategy; and the kernel's C++ has the prefetch instructions.
#include "check.h"

using namespace kiln;
using Catch::Contains;

namespace {

struct Blur {
    ImageParam in{Int(32), 2, "in"};
    Var x{"x"}, y{"y"}, xo{"xo"}, xi{"xi"}, yo{"yo"}, yi{"yi"};
    Func f{"f"}, g{"g"};
    Buffer<int> im = kt::random_image<int>(90, 70, -3, -2, -1000, 1000);
    Blur() {
        f(x, y) = in(x, y) * 3 - in(x + 1, y);
        g(x, y) = f(x, y - 1) + f(x, y) * 2 + f(x + 2, y + 1);
        in.set(im);
    }
    void run() {
        auto fr = [&](int px, int py) { return im(px, py) * 3 - im(px + 1, py); };
        kt::realize_and_check<int>(g, {{80, 60, -2, 0}, {17, 5, 3, 7}}, [&](int px, int py) {
            return fr(px, py - 1) + fr(px, py) * 2 + fr(px + 2, py + 1);
        });
    }
};

}  // namespace

TEST_CASE("prefetch: a Func and an image, every strategy, values unchanged", "[prefetch]") {
    for (PrefetchBoundStrategy s :
         {PrefetchBoundStrategy::GuardWithIf, PrefetchBoundStrategy::Clamp, PrefetchBoundStrategy::NonFaulting}) {
        INFO(to_string(s));
        Blur p;
        p.f.compute_root();
        p.g.prefetch(p.f, p.y, p.y, 2, s);
        p.f.prefetch(p.in, p.x, p.y, 1, s);
        p.run();
    }
}

TEST_CASE("prefetch: at split, vectorized-inside, parallel and unrolled loops", "[prefetch]") {
    Blur p;
    p.f.compute_root().split(p.y, p.yo, p.yi, 8).parallel(p.yo).prefetch(p.in, p.yi, p.yi, 4);
    p.g.tile(p.x, p.y, p.xo, p.yo, p.xi, p.yi, 16, 4).vectorize(p.xi, 8).unroll(p.yi);
    p.g.prefetch(p.f, p.yi, p.xo, 1, PrefetchBoundStrategy::Clamp);
    p.run();
}

TEST_CASE("prefetch: a Func computed at a tile, and the output prefetched", "[prefetch]") {
    Blur p;
    p.f.compute_at(p.g, p.yo).prefetch(p.in, p.y, p.y, 3);
    p.g.split(p.y, p.yo, p.yi, 8, TailStrategy::GuardWithIf).prefetch(p.f, p.yi, p.yi, 1).prefetch(p.g, p.yi, p.yi, 1);
    p.run();
}

TEST_CASE("prefetch: an offset from a Param", "[prefetch]") {
    Blur p;
    Param<int> ahead{"ahead", 5};
    p.f.compute_root();
    p.g.prefetch(p.f, p.x, p.x, ahead * 4, PrefetchBoundStrategy::NonFaulting);
    p.run();
}

TEST_CASE("prefetch: the kernel's C++ prefetches each cache line", "[prefetch]") {
    Blur p;
    p.f.compute_root();
    p.g.prefetch(p.f, p.y, p.y, 2);
    const std::string src = Pipeline(p.g).compile_to_cpp_source("blur_pf", Target("x86-64-linux"));
    CHECK_THAT(src, Contains("__builtin_prefetch(c + b);"));  // the prologue's kiln_prefetch
    CHECK_THAT(src, Contains("kiln_prefetch(f + "));
    Blur q;
    q.f.compute_root();
    CHECK_THAT(Pipeline(q.g).compile_to_cpp_source("blur", Target("x86-64-linux")), !Contains("kiln_prefetch(f"));
}
