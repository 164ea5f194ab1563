// The fusion vocabulary against Halide 14 with equivalent schedules:
// horizontal fusion (compute_with) of two outputs sharing a producer,
// wrappers (Func::in, ImageParam::in) staged per row, a clone (clone_in)
// of a Func with an update, and specializations
// on both sides of their condition. Sizes are not multiples of the tiles.
#include "diff.h"

TEST_CASE("differential: compute_with of two outputs sharing a producer", "[differential][compute_with]") {
    kiln::Buffer<int32_t> input = kt::random_image<int32_t>(90, 70, -3, -3, -1000, 1000);
    // Fused per row; per tile with AlignStart; per tile with a strategy per
    // fused loop, over outputs of different sizes so that the strategies differ.
    for (int mode = 0; mode < 3; mode++) {
        auto build = [&](auto lib) {
            using L = decltype(lib);
            using A = typename L::LoopAlignStrategy;
            typename L::ImageParam in(L::i32, 2, "in");
            L::set(in, input);
            typename L::Var x("x"), y("y"), xo("xo"), yo("yo"), xi("xi"), yi("yi");
            typename L::Func t("t"), z1("z1"), z2("z2");
            t(x, y) = in(x, y) * 3 + in(x + 1, y);
            z1(x, y) = t(x, y) + t(x, y + 1);
            z2(x, y) = t(x, y) - 7;
            if (mode == 0) {
                z2.compute_with(z1, y);
                t.compute_at(z1, y);
            } else if (mode == 1) {
                z1.tile(x, y, xo, yo, xi, yi, 16, 8).vectorize(xi, 4);
                z2.tile(x, y, xo, yo, xi, yi, 16, 8).vectorize(xi, 4);
                z2.compute_with(z1, xo, A::AlignStart);
                t.compute_at(z1, xo);
            } else {
                z1.tile(x, y, xo, yo, xi, yi, 8, 4);
                z2.tile(x, y, xo, yo, xi, yi, 8, 4);
                std::vector<std::pair<typename L::VarOrRVar, A>> align = {{yo, A::AlignEnd}, {xo, A::AlignStart}};
                z2.compute_with(z1, xo, align);
                t.compute_root();
            }
            return typename L::Pipeline({z1, z2});
        };
        std::vector<kd::Out<int32_t>> out;
        out.emplace_back("z1", std::vector<int>{67, 45}, std::vector<int>{1, -2});
        out.emplace_back("z2", mode < 2 ? std::vector<int>{67, 45} : std::vector<int>{29, 31}, std::vector<int>{1, -2});
        kd::run(build, kd::pairs(out));
        for (auto &o : out) kd::compare(o);
    }
}

TEST_CASE("differential: clone_in of a Func with an update", "[differential][wrappers][clone_in]") {
    kiln::Buffer<int32_t> input = kt::random_image<int32_t>(80, 60, -2, -3, -1000, 1000);
    auto build = [&](auto lib) {
        using L = decltype(lib);
        typename L::ImageParam in(L::i32, 2, "in");
        L::set(in, input);
        typename L::Var x("x"), y("y");
        typename L::Func f("f"), g("g"), h("h"), out("out");
        f(x, y) = in(x, y) * 3;
        f(x, y) += in(x + 1, y);
        g(x, y) = f(x - 1, y) + f(x + 1, y);
        h(x, y) = f(x, y - 1) * 2 - f(x, y + 1);
        out(x, y) = g(x, y) + h(x, y);
        f.compute_root();
        g.compute_at(out, y);
        f.clone_in(h).compute_at(out, y).vectorize(x, 8);
        return typename L::Pipeline(out);
    };
    kd::Out<int32_t> out("out", {61, 43}, {1, 0});
    kd::run(build, {out.pair()});
    kd::compare(out);
}

TEST_CASE("differential: wrappers of a Func and of an input image", "[differential][wrappers]") {
    kiln::Buffer<float> input = kt::random_image<float>(70, 50, 0, 0, -100, 100);
    auto build = [&](auto lib) {
        using L = decltype(lib);
        typename L::ImageParam in(L::f32, 2, "in");
        L::set(in, input);
        typename L::Var x("x"), y("y"), v0("_0");
        typename L::Func f("f"), g("g"), out("out");
        f(x, y) = in(x, y) * 2.0f;
        g(x, y) = f(x - 1, y) + f(x + 1, y + 1);
        out(x, y) = g(x, y) - f(x, y);
        f.compute_root();
        g.compute_at(out, y);
        f.in(g).compute_at(out, y).vectorize(x, 8);
        in.in().compute_at(f, y).vectorize(v0, 4);
        return typename L::Pipeline(out);
    };
    kd::Out<float> out("out", {61, 43}, {1, 0});
    kd::run(build, {out.pair()});
    kd::compare(out);
}

TEST_CASE("differential: specializations on both sides of their conditions", "[differential][specialize]") {
    kiln::Buffer<int16_t> input = kt::random_image<int16_t>(64, 40, 0, 0, -300, 300);
    for (int k : {1, 5}) {
        auto build = [&](auto lib) {
            using L = decltype(lib);
            typename L::ImageParam in(L::i16, 2, "in");
            L::set(in, input);
            typename L::template Param<int> scale("scale");
            scale.set(k);
            typename L::Var x("x"), y("y"), xo("xo"), xi("xi");
            typename L::Func out("out");
            out(x, y) = in(x, y) * cast(L::i16, scale) + in(x, y + 1);
            out.specialize(scale > 2).vectorize(x, 8).parallel(y);
            out.specialize(in.width() >= 32).split(x, xo, xi, 16);
            return typename L::Pipeline(out);
        };
        kd::Out<int16_t> out("out", {59, 39});
        kd::run(build, {out.pair()});
        kd::compare(out);
    }
}
