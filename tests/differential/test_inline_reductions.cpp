// Inline reductions against Halide 14: sum, product, maximum, minimum over
// 1-D and 2-D RDoms (one with a where() condition), argmax and argmin, with
// the reductions' Funcs left at their default placement and, vectorized,
// computed at the consumer's loop.
#include "diff.h"

TEST_CASE("differential: sum, product, maximum, minimum", "[differential][inline_reduction]") {
    kiln::Buffer<int32_t> input = kt::random_image<int32_t>(80, 50, -3, -3, -500, 500, 23);
    kiln::Buffer<float> small = kt::random_image<float>(80, 50, -3, -3, -2, 2, 24);
    for (int scheduled = 0; scheduled < 2; scheduled++) {
        INFO("scheduled " << scheduled);
        auto ints = kd::outs<int32_t>({"s", "mx", "mn"}, {61, 37});
        auto floats = kd::outs<float>({"pr"}, {61, 37});
        kd::run(
            [&](auto lib) {
                using L = decltype(lib);
                typename L::ImageParam in(L::i32, 2, "in"), fin(L::f32, 2, "fin");
                L::set(in, input);
                L::set(fin, small);
                typename L::Var x("x"), y("y");
                typename L::RDom r(-1, 3, "r"), box(-2, 5, -2, 5, "box");
                box.where(box.x * box.x + box.y * box.y <= 5);  // a disc
                typename L::Func s("s"), mx("mx"), mn("mn"), pr("pr");
                s(x, y) = sum(in(x + r, y) * 2) + sum(in(x, y + r), "column");
                mx(x, y) = maximum(in(x + box.x, y + box.y));
                mn(x, y) = minimum(in(x + box.x, y + box.y) - x);
                pr(x, y) = product(fin(x + r, y) * 0.5f + 1.0f);
                if (scheduled)
                    for (auto *f : {&s, &mx, &mn, &pr}) f->vectorize(x, 8);
                return typename L::Pipeline({s, mx, mn, pr});
            },
            kd::pairs(ints, floats));
        for (auto &o : ints) kd::compare(o);
        for (auto &o : floats) kd::compare(o);
    }
}

TEST_CASE("differential: argmax and argmin of each row", "[differential][inline_reduction]") {
    kiln::Buffer<int32_t> input = kt::random_image<int32_t>(40, 30, 0, 0, 0, 20, 25);  // many ties
    auto out = kd::outs<int32_t>({"at_max", "max_value", "at_min", "min_value"}, {30});
    kd::run(
        [&](auto lib) {
            using L = decltype(lib);
            typename L::ImageParam in(L::i32, 2, "in");
            L::set(in, input);
            typename L::Var y("y");
            typename L::RDom r(0, 40, "r");
            typename L::Func at_max("at_max"), max_value("max_value"), at_min("at_min"), min_value("min_value");
            auto hi = argmax(in(r, y));
            auto lo = argmin(in(r, y) * 3 - r);
            at_max(y) = hi[0];
            max_value(y) = hi[1];
            at_min(y) = lo[0];
            min_value(y) = lo[1];
            return typename L::Pipeline({at_max, max_value, at_min, min_value});
        },
        kd::pairs(out));
    for (auto &o : out) kd::compare(o);
}
