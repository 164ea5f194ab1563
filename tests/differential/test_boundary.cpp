// Boundary conditions with an explicit region {{0, w}, {0, h}} (as in
// Halide's BoundaryConditions on a Func), read far outside the image, each
// placed differently; and an unsharp mask in float, whose
// `in + (in - blur) * amount` is where an FMA contraction would show.
#include "diff.h"

TEST_CASE("boundary: constant_exterior, mirror_image and mirror_interior of a bounded Func", "[boundary]") {
    // A 13x9 image, and a 1x4 one (a single column: mirror_interior's period
    // in x is 0).
    kiln::Buffer<int32_t> image = kt::random_image<int32_t>(13, 9, 0, 0, -500, 500, 11),
                          column = kt::random_image<int32_t>(1, 4, 0, 0, -500, 500, 12);
    const std::vector<std::string> names = {"constant_exterior", "mirror_image", "mirror_interior"};
    auto o = kd::outs<int32_t>(names, {97, 61}, {-40, -30});
    auto thin = kd::outs<int32_t>({names[0] + "_1x4", names[1] + "_1x4", names[2] + "_1x4"}, {97, 61}, {-40, -30});
    kd::run(
        [&](auto lib) {
            using L = decltype(lib);
            typename L::Var x("x"), y("y");
            std::vector<typename L::Func> bcs, outs;
            for (const auto *buf : {&image, &column}) {
                typename L::ImageParam in(L::i32, 2, buf == &image ? "in" : "column");
                L::set(in, *buf);
                typename L::Func f = in;
                typename L::Region bounds = {{0, in.width()}, {0, in.height()}};
                bcs.push_back(L::bounded(kd::Boundary::ConstantExterior, f, bounds, -7));
                bcs.push_back(L::bounded(kd::Boundary::MirrorImage, f, bounds));
                bcs.push_back(L::bounded(kd::Boundary::MirrorInterior, f, bounds));
            }
            for (auto &bc : bcs) {
                outs.emplace_back();
                outs.back()(x, y) = bc(x, y) + 3 * bc(2 * x + 1, y - 100);
                outs.back().vectorize(x, 8).parallel(y);
            }
            // constant_exterior stays inlined; the mirrors are materialized.
            // (The wrappers' own Vars are args(), not x and y.)
            for (int i : {1, 4}) bcs[i].compute_root();
            for (int i : {2, 5}) bcs[i].compute_at(outs[i], y).vectorize(bcs[i].args()[0], 8);
            return typename L::Pipeline(outs);
        },
        kd::pairs(o, thin));
    kd::compare(o);
    kd::compare(thin);
}

TEST_CASE("boundary: unsharp mask in float, tiled", "[boundary][float]") {
    kiln::Buffer<float> image =
        kt::image<float>(71, 49, 0, 0, [](int x, int y) { return kt::noise(x, y, 0, 255000) / 1000.0; });
    kd::Out<float> o("unsharp", {71, 49}), strict("unsharp_strict_float", {71, 49});
    auto build = [&](auto lib) {
        using L = decltype(lib);
        typename L::ImageParam in(L::f32, 2, "in");
        L::set(in, image);
        typename L::Var x("x"), y("y"), xo("xo"), yo("yo"), xi("xi"), yi("yi");
        typename L::Func f = in;
        typename L::Func clamped = L::bounded(kd::Boundary::MirrorImage, f, {{0, in.width()}, {0, in.height()}});
        typename L::Func blur_x("blur_x"), blur_y("blur_y"), sharp("sharp");
        blur_x(x, y) = (clamped(x - 1, y) + clamped(x, y) * 2.0f + clamped(x + 1, y)) * 0.25f;
        blur_y(x, y) = (blur_x(x, y - 1) + blur_x(x, y) * 2.0f + blur_x(x, y + 1)) / 4;
        typename L::Expr v = clamped(x, y);
        sharp(x, y) = clamp(v + (v - blur_y(x, y)) * 1.5f, 0.0f, 255.0f);
        sharp.tile(x, y, xo, yo, xi, yi, 32, 16).vectorize(xi, 8).parallel(yo);
        blur_y.compute_at(sharp, xo).vectorize(x, 8);
        blur_x.compute_at(sharp, xo).vectorize(x, 8);
        return typename L::Pipeline(sharp);
    };
    // Halide's JIT contracts the multiply-adds into FMAs on an FMA host:
    // within 2 ulps of 256 (differences after cancellation count in those).
    kd::run(build, {o.pair()});
    kd::compare(o, 2, 256);
    // With strict_float, Halide computes exactly what Kiln does.
    kd::run(build, {strict.pair()}, kd::H::strict_float());
    kd::compare(strict);
}
