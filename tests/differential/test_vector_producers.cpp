// A max filter as Halide's apps write it (an inline maximum() under a
// vectorized, parallel consumer) and a Func computed at a vectorized loop,
// against Halide 14 with the same schedules: Kiln vectorizes the producer
// with its consumer's lanes, as Halide does; values must be identical.
#include "diff.h"

TEST_CASE("differential: Funcs computed per vector of their consumer", "[differential][vectorize]") {
    kiln::Buffer<float> input = kt::random_image<float>(140, 60, -4, -4, -100, 100);
    auto build = [&](auto lib) {
        using L = decltype(lib);
        typename L::ImageParam in(L::f32, 2, "in");
        L::set(in, input);
        typename L::Var x("x"), y("y"), xo("xo"), xi("xi");
        typename L::RDom r(-3, 7, "r");
        typename L::Func vert("vert"), filtered("filtered"), g("g"), other("other");
        vert(x, y) = maximum(in(x, y + r));
        filtered(x, y) = maximum(vert(x + r, y));
        vert.compute_at(filtered, y).vectorize(x, 8);
        filtered.vectorize(x, 8).parallel(y);
        g(x, y) = in(x, y) * 3.0f - in(x + 2, y);
        other(x, y) = g(x, y) + g(x + 1, y);
        other.split(x, xo, xi, 16).vectorize(xi);
        g.compute_at(other, xi);
        return typename L::Pipeline({filtered, other});
    };
    std::vector<kd::Out<float>> out;
    out.emplace_back("filtered", std::vector<int>{117, 45}, std::vector<int>{-1, 0});
    out.emplace_back("other", std::vector<int>{117, 45}, std::vector<int>{-1, 0});
    kd::run(build, kd::pairs(out));
    for (auto &o : out) kd::compare(o);
}
