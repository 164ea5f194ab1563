// Tuple-valued Funcs against Halide 14: a per-row argmax (a Tuple update of
// a value and its index, vectorized and parallel over rows) and a Tuple
// update whose elements read each other (repeated complex multiplication,
// computed at root and consumed by two outputs), on sizes that are not
// multiples of the vector width.
#include "diff.h"

TEST_CASE("tuples: a per-row argmax, vectorized and parallel over rows", "[tuple]") {
    kiln::Buffer<float> image = kt::random_image<float>(53, 41, 0, -3, -200, 200, 11);
    kd::Out<float> mx("am.0", {37}, {-2});
    kd::Out<int32_t> idx("am.1", {37}, {-2});
    kd::run(
        [&](auto lib) {
            using L = decltype(lib);
            typename L::ImageParam in(L::f32, 2, "in");
            L::set(in, image);
            typename L::Var y("y");
            typename L::RDom r(0, 53, "r");
            typename L::Func am("am");
            am(y) = typename L::Tuple(in(0, y), 0);
            typename L::Expr v = in(r, y + 1);
            am(y) = tuple_select(v > am(y)[0], typename L::Tuple(v, r), typename L::Tuple(am(y)));
            am.vectorize(y, 8);
            am.update(0).vectorize(y, 8, L::GuardWithIf).parallel(y);
            return typename L::Pipeline(am);
        },
        {mx.pair(), idx.pair()});
    kd::compare(mx);
    kd::compare(idx);
}

TEST_CASE("tuples: an update whose elements read each other (complex powers)", "[tuple][update]") {
    kiln::Buffer<float> image = kt::random_image<float>(30, 2, 0, 0, -100, 100, 5);
    kd::Out<float> re("re", {30}), im("im", {30});
    kd::run(
        [&](auto lib) {
            using L = decltype(lib);
            typename L::ImageParam in(L::f32, 2, "in");
            L::set(in, image);
            typename L::Var x("x");
            typename L::RDom r(0, 5, "r");
            typename L::Func z("z"), out_re("re"), out_im("im");
            typename L::Expr step = cast(L::f32, typename L::Expr(r)) * 0.01f;
            typename L::Expr a = in(x, 0) / 100.0f + step, b = in(x, 1) / 100.0f - step;
            z(x) = typename L::Tuple(1.0f, 0.0f);
            z(x) = typename L::Tuple(z(x)[0] * a - z(x)[1] * b, z(x)[0] * b + z(x)[1] * a);
            out_re(x) = z(x)[0];
            out_im(x) = z(x)[1];
            z.compute_root().vectorize(x, 4);
            z.update(0).vectorize(x, 4, L::GuardWithIf);
            return typename L::Pipeline({out_re, out_im});
        },
        {re.pair(), im.pair()});
    // Halide contracts a * b - c * d into FMAs on the host (and its StrictFloat
    // target computes this Tuple update wrongly in Halide 14), so a few ulps
    // of the values' scale apart.
    kd::compare(re, 16, 1.0);
    kd::compare(im, 16, 1.0);
}
