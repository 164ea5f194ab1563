// prefetch() against Halide 14 with the same schedule: prefetches change
// no value, so the outputs must be equal.
#include "diff.h"

TEST_CASE("differential: prefetch of a Func and of an image", "[differential][prefetch]") {
    kiln::Buffer<int32_t> input = kt::random_image<int32_t>(80, 60, 0, 0, -1000, 1000, 3);
    for (int strategy = 0; strategy < 3; strategy++) {
        INFO("strategy " << strategy);
        kd::Out<int32_t> out("out", {64, 48});
        kd::run(
            [&](auto lib) {
                using L = decltype(lib);
                using P = typename L::PrefetchBoundStrategy;
                const P ways[] = {P::Clamp, P::GuardWithIf, P::NonFaulting};
                typename L::ImageParam in(L::i32, 2, "in");
                L::set(in, input);
                typename L::Var x("x"), y("y"), xo("xo"), xi("xi"), yo("yo"), yi("yi");
                typename L::Func f("f"), out("out");
                f(x, y) = in(x, y) * 3 - in(x + 1, y + 2);
                out(x, y) = f(x, y) + f(x + 3, y + 1) * 2;
                f.compute_root().prefetch(in, x, y, 2, ways[strategy]);
                out.tile(x, y, xo, yo, xi, yi, 16, 8).vectorize(xi, 8);
                out.prefetch(f, yi, yo, 1, ways[strategy]);
                return typename L::Pipeline(out);
            },
            {out.pair()});
        kd::compare(out);
    }
}
