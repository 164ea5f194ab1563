// reorder_storage against Halide 14 with the same schedule: a transposed
// intermediate read along its outer dimension, a 3-D Func stored channel-
// innermost under a tiled, vectorized consumer, and a reordered Func that is
// also folded (sliding window). The layout changes nothing but addresses, so
// the outputs must be equal.
#include "diff.h"

TEST_CASE("differential: reorder_storage of a transposed intermediate", "[differential][reorder_storage]") {
    kiln::Buffer<int32_t> input = kt::random_image<int32_t>(70, 50, -2, -3, -1000, 1000, 21);
    for (int vectorized = 0; vectorized < 2; vectorized++) {
        INFO("vectorized " << vectorized);
        kd::Out<int32_t> out("out", {37, 29}, {1, -2});
        kd::run(
            [&](auto lib) {
                using L = decltype(lib);
                typename L::ImageParam in(L::i32, 2, "in");
                L::set(in, input);
                typename L::Var x("x"), y("y");
                typename L::Func t("t"), out("out");
                t(x, y) = in(y, x) * 3 - in(y + 1, x);  // t is in transposed
                out(x, y) = t(y, x) + t(y + 1, x) * 2;
                t.compute_root().reorder_storage(y, x);
                if (vectorized) {
                    t.vectorize(x, 8);
                    out.vectorize(x, 8);
                }
                return typename L::Pipeline(out);
            },
            {out.pair()});
        kd::compare(out);
    }
}

TEST_CASE("differential: reorder_storage of a 3-D Func, channels innermost", "[differential][reorder_storage]") {
    kiln::Buffer<float> input = kt::random_image<float>(45, 40, 0, 0, -10, 10, 5);
    kd::Out<float> out("out", {41, 33});
    kd::run(
        [&](auto lib) {
            using L = decltype(lib);
            typename L::ImageParam in(L::f32, 2, "in");
            L::set(in, input);
            typename L::Var x("x"), y("y"), c("c"), xo("xo"), yo("yo"), xi("xi"), yi("yi");
            typename L::Func f("f"), out("out");
            f(x, y, c) = in(x + c, y) * (c + 1.0f);
            out(x, y) = f(x, y, 0) + f(x, y + 1, 1) - f(x, y, 2) * 0.5f;
            out.tile(x, y, xo, yo, xi, yi, 16, 8).vectorize(xi, 8).parallel(yo);
            f.compute_at(out, xo).reorder_storage(c, x, y).bound(c, 0, 3).vectorize(x, 8);
            return typename L::Pipeline(out);
        },
        {out.pair()});
    kd::compare(out);
}

TEST_CASE("differential: reorder_storage with a sliding window and a fold", "[differential][reorder_storage]") {
    kiln::Buffer<int32_t> input = kt::random_image<int32_t>(60, 80, -1, -2, -500, 500, 9);
    kd::Out<int32_t> out("out", {48, 64});
    kd::run(
        [&](auto lib) {
            using L = decltype(lib);
            typename L::ImageParam in(L::i32, 2, "in");
            L::set(in, input);
            typename L::Var x("x"), y("y");
            typename L::Func g("g"), out("out");
            g(x, y) = in(x, y) * 2 + in(x + 1, y);
            out(x, y) = g(x, y - 1) + g(x, y) * 3 + g(x, y + 1);
            g.store_root().compute_at(out, y).reorder_storage(y, x);
            return typename L::Pipeline(out);
        },
        {out.pair()});
    kd::compare(out);
}
