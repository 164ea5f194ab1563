// Buffer constraints and output-buffer Exprs against Halide 14 with the
// same program: the output's bounds fixed by set_bounds, the input's row
// stride by set_stride, a split by a quarter of the output's width, and a
// bound() of the output's own buffer fields. The constraints change what
// lowering knows, not the values, so the outputs must be equal.
#include "diff.h"

TEST_CASE("differential: set_bounds and set_stride with a split by the output's width",
          "[differential][buffer_constraints]") {
    kiln::Buffer<int32_t> input = kt::random_image<int32_t>(64, 48, 0, 0, -1000, 1000, 4);
    kd::Out<int32_t> out("out", {64, 32});
    kd::run(
        [&](auto lib) {
            using L = decltype(lib);
            typename L::ImageParam in(L::i32, 2, "in");
            L::set(in, input);
            typename L::Var x("x"), y("y"), xo("xo"), xi("xi");
            typename L::Func g("g"), out("out");
            g(x, y) = in(x, y) * 5 - in(x, y + 1) / 3;
            out(x, y) = g(x, y) + g(x, y + 8);
            in.dim(0).set_bounds(0, 64).dim(1).set_stride(64);
            out.output_buffer().dim(0).set_bounds(0, 64).dim(1).set_bounds(0, 32);
            out.split(x, xo, xi, out.output_buffer().width() / 4).vectorize(xi, 8);
            g.compute_at(out, xo);
            return typename L::Pipeline(out);
        },
        {out.pair()});
    kd::compare(out);
}

TEST_CASE("differential: bound() of the output buffer's fields", "[differential][buffer_constraints]") {
    kiln::Buffer<float> input = kt::random_image<float>(50, 30, -3, -2, -10, 10, 8);
    kd::Out<float> out("out", {41, 23}, {-1, 2});
    kd::run(
        [&](auto lib) {
            using L = decltype(lib);
            typename L::ImageParam in(L::f32, 2, "in");
            L::set(in, input);
            typename L::Var x("x"), y("y");
            typename L::Func out("out");
            out(x, y) = in(x - 1, y) * 0.5f + in(x + 1, y - 1);
            out.bound(x, out.output_buffer().dim(0).min(), out.output_buffer().width());
            return typename L::Pipeline(out);
        },
        {out.pair()});
    kd::compare(out);
}
