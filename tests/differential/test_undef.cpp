// undef() against Halide 14: a pure definition that the update overwrites
// everywhere (nothing computed for it), and a Tuple update that leaves one
// element alone, scalar and vectorized.
#include "diff.h"

TEST_CASE("differential: undef pure definitions and Tuple elements", "[differential][undef]") {
    kiln::Buffer<int32_t> input = kt::random_image<int32_t>(50, 40, 0, 0, -1000, 1000, 51);
    for (int vectorized = 0; vectorized < 2; vectorized++) {
        INFO("vectorized " << vectorized);
        auto out = kd::outs<int32_t>({"o1", "o2"}, {45, 33});
        kd::run(
            [&](auto lib) {
                using L = decltype(lib);
                typename L::ImageParam in(L::i32, 2, "in");
                L::set(in, input);
                typename L::Var x("x"), y("y");
                typename L::Func f("f"), h("h"), o1("o1"), o2("o2");
                f(x, y) = undef(L::i32);
                f(x, y) = in(x, y) * 2;
                f(x, y) += 1;
                h(x, y) = typename L::Tuple(in(x, y), in(x, y) * 3);
                h(x, y) = typename L::Tuple(h(x, y)[0] + 5, undef(L::i32));
                o1(x, y) = f(x, y) + f(x + 1, y);
                o2(x, y) = h(x, y)[0] - h(x, y)[1];
                f.compute_root();
                h.compute_root();
                if (vectorized) {
                    f.vectorize(x, 8);
                    f.update(0).vectorize(x, 8);
                    h.update(0).vectorize(x, 8);
                }
                return typename L::Pipeline({o1, o2});
            },
            kd::pairs(out));
        for (auto &o : out) kd::compare(o);
    }
}
