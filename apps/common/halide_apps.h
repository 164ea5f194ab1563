// Halide 14 twins of some of Kiln's generators: Halide's own apps
// generators/camera_pipe.cpp, generators/local_laplacian.cpp,
// generators/harris.cpp, generators/max_filter.cpp,
// generators/hist_equalize.cpp and generators/iir_blur.cpp, and
// generators/attention.cpp's two-pass algorithm, with the same algorithm and
// the same Func and Var names, so that a schedule file of
// schedules/<generator>/ applies to them through halide_apply()
// (halide_schedule.h). The differential tier compares their outputs with
// Kiln's; apps/bench times them as the anchor.
//
//   kd::halide_apply(file, app.funcs, {}, {}, app.images);
//   app.output.realize(out);
#pragma once
#include <Halide.h>

#include <cmath>
#include <limits>
#include <map>
#include <string>
#include <vector>

namespace kiln_halide {

// A pipeline before scheduling: its output, its Funcs by name, and its input
// images (ImageParams bound to the buffers given), which a schedule may name.
struct HalideApp {
    Halide::Func output;
    std::map<std::string, Halide::Func> funcs;
    std::map<std::string, Halide::ImageParam> images;
    std::map<std::string, Halide::RVar> rvars;  // the RDoms' dimensions a schedule may name
};

namespace detail {

inline Halide::Expr avg(Halide::Expr a, Halide::Expr b) {
    Halide::Type t = a.type();
    return Halide::cast(t, (Halide::cast(t.with_bits(t.bits() * 2), a) + b + 1) / 2);
}

}  // namespace detail

// generators/camera_pipe.cpp: `input` a Bayer mosaic, the matrices 4x3.
inline HalideApp camera_pipe(Halide::Buffer<uint16_t> input_buffer, Halide::Buffer<float> matrix_3200_buffer,
                             Halide::Buffer<float> matrix_7000_buffer, float color_temp, float gamma, float contrast,
                             float sharpen_strength, int black_level, int white_level) {
    using namespace Halide;
    using detail::avg;
    Var x("x"), y("y"), c("c");
    HalideApp app;
    auto named = [&](const char *name) { return app.funcs.emplace(name, Func(name)).first->second; };
    // Scalar arguments as Params, as the generator's are: nothing is folded at compile time.
    auto param = [](auto value, const char *name) {
        Param<decltype(value)> p(name);
        p.set(value);
        p.set_estimate(value);  // Adams2019 asks every Param for one
        return Expr(p);
    };
    ImageParam input(UInt(16), 2, "input"), matrix_3200(Float(32), 2, "matrix_3200"),
        matrix_7000(Float(32), 2, "matrix_7000");
    input.set(input_buffer);
    matrix_3200.set(matrix_3200_buffer);
    matrix_7000.set(matrix_7000_buffer);
    Func shifted = named("shifted"), denoised = named("denoised"), deinterleaved = named("deinterleaved");
    shifted(x, y) = input(x + 16, y + 12);
    denoised(x, y) = clamp(shifted(x, y), 0, max(shifted(x - 2, y), shifted(x + 2, y), shifted(x, y - 2), shifted(x, y + 2)));
    deinterleaved(x, y, c) = mux(c, {denoised(2 * x, 2 * y), denoised(2 * x + 1, 2 * y), denoised(2 * x, 2 * y + 1),
                                     denoised(2 * x + 1, 2 * y + 1)});

    Func g_gr = named("g_gr"), r_r = named("r_r"), b_b = named("b_b"), g_gb = named("g_gb");
    g_gr(x, y) = deinterleaved(x, y, 0);
    r_r(x, y) = deinterleaved(x, y, 1);
    b_b(x, y) = deinterleaved(x, y, 2);
    g_gb(x, y) = deinterleaved(x, y, 3);
    Func g_r = named("g_r"), g_b = named("g_b");
    g_r(x, y) = select(absd(g_gr(x + 1, y), g_gr(x, y)) < absd(g_gb(x, y - 1), g_gb(x, y)),
                       avg(g_gr(x + 1, y), g_gr(x, y)), avg(g_gb(x, y - 1), g_gb(x, y)));
    g_b(x, y) = select(absd(g_gb(x - 1, y), g_gb(x, y)) < absd(g_gr(x, y + 1), g_gr(x, y)),
                       avg(g_gb(x - 1, y), g_gb(x, y)), avg(g_gr(x, y + 1), g_gr(x, y)));
    Func r_gr = named("r_gr"), b_gr = named("b_gr"), r_gb = named("r_gb"), b_gb = named("b_gb");
    r_gr(x, y) = g_gr(x, y) - avg(g_r(x, y), g_r(x - 1, y)) + avg(r_r(x - 1, y), r_r(x, y));
    b_gr(x, y) = g_gr(x, y) - avg(g_b(x, y), g_b(x, y - 1)) + avg(b_b(x, y), b_b(x, y - 1));
    r_gb(x, y) = g_gb(x, y) - avg(g_r(x, y), g_r(x, y + 1)) + avg(r_r(x, y), r_r(x, y + 1));
    b_gb(x, y) = g_gb(x, y) - avg(g_b(x, y), g_b(x + 1, y)) + avg(b_b(x, y), b_b(x + 1, y));
    Func r_b = named("r_b"), b_r = named("b_r");
    // The smoother diagonal, corrected by the green of the same sites.
    r_b(x, y) = select(absd(r_r(x, y), r_r(x - 1, y + 1)) < absd(r_r(x - 1, y), r_r(x, y + 1)),
                       g_b(x, y) - avg(g_r(x, y), g_r(x - 1, y + 1)) + avg(r_r(x, y), r_r(x - 1, y + 1)),
                       g_b(x, y) - avg(g_r(x - 1, y), g_r(x, y + 1)) + avg(r_r(x - 1, y), r_r(x, y + 1)));
    b_r(x, y) = select(absd(b_b(x, y), b_b(x + 1, y - 1)) < absd(b_b(x + 1, y), b_b(x, y - 1)),
                       g_r(x, y) - avg(g_b(x, y), g_b(x + 1, y - 1)) + avg(b_b(x, y), b_b(x + 1, y - 1)),
                       g_r(x, y) - avg(g_b(x + 1, y), g_b(x, y - 1)) + avg(b_b(x + 1, y), b_b(x, y - 1)));
    auto by_x = [&](Func a, Func b) { return select(x % 2 == 0, a(x / 2, y), b(x / 2, y)); };
    auto by_site = [&](Func gr_row_even, Func gr_row_odd, Func gb_row_even, Func gb_row_odd) {
        Func top, bottom;
        top(x, y) = by_x(gr_row_even, gr_row_odd);
        bottom(x, y) = by_x(gb_row_even, gb_row_odd);
        return select(y % 2 == 0, top(x, y / 2), bottom(x, y / 2));
    };
    Func demosaiced = named("demosaiced");
    demosaiced(x, y, c) = cast<int16_t>(mux(c, {by_site(r_gr, r_r, r_b, r_gb), by_site(g_gr, g_r, g_b, g_gb),
                                                by_site(b_gr, b_r, b_b, b_gb)}));

    Func matrix = named("matrix"), corrected = named("corrected");
    Expr t = (1.0f / param(color_temp, "color_temp") - 1.0f / 3200) / (1.0f / 7000 - 1.0f / 3200);
    matrix(x, y) = cast<int16_t>((matrix_3200(x, y) * t + matrix_7000(x, y) * (1 - t)) * 256.0f);
    Expr ir = cast<int32_t>(demosaiced(x, y, 0)), ig = cast<int32_t>(demosaiced(x, y, 1)),
         ib = cast<int32_t>(demosaiced(x, y, 2));
    auto row = [&](int i) {
        return cast<int16_t>((matrix(3, i) + matrix(0, i) * ir + matrix(1, i) * ig + matrix(2, i) * ib) / 256);
    };
    corrected(x, y, c) = mux(c, {row(0), row(1), row(2)});

    Func curve = named("curve"), curved = named("curved");
    Expr lo = 0 + param(black_level, "black_level"), hi = param(white_level, "white_level");
    Expr cb = 2.0f - pow(2.0f, param(contrast, "contrast") / 100.0f), ca = 2.0f - 2.0f * cb;
    Expr g = pow(clamp(cast<float>(x - lo) * (1.0f / (hi - lo)), 0.0f, 1.0f), 1.0f / param(gamma, "gamma"));
    Expr z = select(g > 0.5f, 1.0f - (ca * (1.0f - g) * (1.0f - g) + cb * (1.0f - g)), ca * g * g + cb * g);
    curve(x) = select(x <= lo, 0, select(x > hi, 255, cast<uint8_t>(clamp(z * 255.0f + 0.5f, 0.0f, 255.0f))));
    curved(x, y, c) = curve(clamp(corrected(x, y, c), 0, 1023));

    Func strength = named("sharpen_strength_x32"), unsharp_y = named("unsharp_y"), unsharp = named("unsharp"),
         mask = named("mask");
    strength() = saturating_cast<uint8_t>(param(sharpen_strength, "sharpen_strength") * 32);
    unsharp_y(x, y, c) = avg(avg(curved(x, y - 1, c), curved(x, y + 1, c)), curved(x, y, c));
    unsharp(x, y, c) = avg(avg(unsharp_y(x - 1, y, c), unsharp_y(x + 1, y, c)), unsharp_y(x, y, c));
    mask(x, y, c) = cast<int16_t>(curved(x, y, c)) - cast<int16_t>(unsharp(x, y, c));
    app.output = named("processed");
    app.output(x, y, c) = saturating_cast<uint8_t>(curved(x, y, c) + (mask(x, y, c) * strength()) / 32);
    app.images = {{"input", input}, {"matrix_3200", matrix_3200}, {"matrix_7000", matrix_7000}};
    return app;
}

// generators/local_laplacian.cpp with `pyramid_levels` levels.
inline HalideApp local_laplacian(Halide::Buffer<uint16_t> input_buffer, int levels, float alpha, float beta,
                                 int pyramid_levels) {
    using namespace Halide;
    Var x("x"), y("y"), c("c"), k("k");
    ImageParam input(UInt(16), 3, "input");
    input.set(input_buffer);
    const int J = pyramid_levels;
    HalideApp app;
    auto named = [&](const std::string &name) { return app.funcs.emplace(name, Func(name)).first->second; };
    auto pyramid = [&](const std::string &base) {
        std::vector<Func> fs;
        for (int j = 0; j < J; j++) fs.push_back(named(base + "_" + std::to_string(j)));
        return fs;
    };
    auto downsample = [&](Func f) {
        Func dx, dy;
        dx(x, y, _) = (f(2 * x - 1, y, _) + 3.0f * (f(2 * x, y, _) + f(2 * x + 1, y, _)) + f(2 * x + 2, y, _)) / 8.0f;
        dy(x, y, _) = (dx(x, 2 * y - 1, _) + 3.0f * (dx(x, 2 * y, _) + dx(x, 2 * y + 1, _)) + dx(x, 2 * y + 2, _)) / 8.0f;
        return dy;
    };
    auto upsample = [&](Func f) {
        Func ux, uy;
        ux(x, y, _) = lerp(f((x + 1) / 2, y, _), f((x - 1) / 2, y, _), ((x % 2) * 2 + 1) / 4.0f);
        uy(x, y, _) = lerp(ux(x, (y + 1) / 2, _), ux(x, (y - 1) / 2, _), ((y % 2) * 2 + 1) / 4.0f);
        return uy;
    };
    Param<int> L("levels");
    Param<float> a("alpha"), b("beta");
    L.set(levels);
    a.set(alpha);
    b.set(beta);
    L.set_estimate(levels);  // Adams2019 asks every Param for one
    a.set_estimate(alpha);
    b.set_estimate(beta);
    Func remap = named("remap"), floating = named("floating"), gray = named("gray"), color = named("color");
    Expr fx = cast<float>(x) / 256.0f;
    remap(x) = a * fx * exp(-fx * fx / 2.0f);
    Func clamped = BoundaryConditions::repeat_edge(input);
    floating(x, y, c) = clamped(x, y, c) / 65535.0f;
    gray(x, y) = 0.299f * floating(x, y, 0) + 0.587f * floating(x, y, 1) + 0.114f * floating(x, y, 2);

    std::vector<Func> gP = pyramid("gPyramid"), lP = pyramid("lPyramid"), inG = pyramid("inGPyramid"),
                      outL = pyramid("outLPyramid"), outG = pyramid("outGPyramid");
    Expr level = k * (1.0f / (L - 1));
    Expr idx = clamp(cast<int>(gray(x, y) * cast<float>(L - 1) * 256.0f), 0, (L - 1) * 256);
    gP[0](x, y, k) = b * (gray(x, y) - level) + level + remap(idx - 256 * k);
    for (int j = 1; j < J; j++) gP[j](x, y, k) = downsample(gP[j - 1])(x, y, k);
    lP[J - 1](x, y, k) = gP[J - 1](x, y, k);
    for (int j = J - 2; j >= 0; j--) lP[j](x, y, k) = gP[j](x, y, k) - upsample(gP[j + 1])(x, y, k);
    inG[0](x, y) = gray(x, y);
    for (int j = 1; j < J; j++) inG[j](x, y) = downsample(inG[j - 1])(x, y);
    for (int j = 0; j < J; j++) {
        Expr lv = inG[j](x, y) * cast<float>(L - 1);
        Expr li = clamp(cast<int>(lv), 0, L - 2);
        Expr lf = lv - cast<float>(li);
        outL[j](x, y) = (1.0f - lf) * lP[j](x, y, li) + lf * lP[j](x, y, li + 1);
    }
    outG[J - 1](x, y) = outL[J - 1](x, y);
    for (int j = J - 2; j >= 0; j--) outG[j](x, y) = upsample(outG[j + 1])(x, y) + outL[j](x, y);
    color(x, y, c) = outG[0](x, y) * (floating(x, y, c) + 0.01f) / (gray(x, y) + 0.01f);
    app.output = named("output");
    app.output(x, y, c) = cast<uint16_t>(clamp(color(x, y, c), 0.0f, 1.0f) * 65535.0f);
    app.images = {{"input", input}};
    return app;
}

// generators/harris.cpp: `input` an RGB image (x, y, c), edges repeated in x
// and y. As a generator's, the image's sizes and `k` are known at run time
// only (an ImageParam, with the buffer's extents as its estimates for
// Halide's autoschedulers, and a Param); with `sizes_compiled_in` the buffer
// itself is the input, so its width and height enter the pipeline as
// constants, as when a JIT user captures an image (docs/performance.md,
// "harris: the sliding window (session 52)").
inline HalideApp harris(Halide::Buffer<float> input_buffer, float k_value, bool sizes_compiled_in = false) {
    using namespace Halide;
    Var x("x"), y("y");
    HalideApp app;
    auto named = [&](const char *name) { return app.funcs.emplace(name, Func(name)).first->second; };
    Param<float> k("k");
    k.set(k_value);
    k.set_estimate(k_value);  // Adams2019 asks every Param for one
    Func clamped;
    if (sizes_compiled_in) {
        clamped = BoundaryConditions::repeat_edge(
            input_buffer, {{0, input_buffer.width()}, {0, input_buffer.height()}, {Expr(), Expr()}});
    } else {
        ImageParam input(Float(32), 3, "input");
        input.set(input_buffer);
        input.set_estimates({{0, input_buffer.width()}, {0, input_buffer.height()}, {0, input_buffer.channels()}});
        app.images.emplace("input", input);
        clamped = BoundaryConditions::repeat_edge(input, {{0, input.width()}, {0, input.height()}, {Expr(), Expr()}});
    }
    Func gray = named("gray"), Ix = named("Ix"), Iy = named("Iy"), Ixx = named("Ixx"), Iyy = named("Iyy"),
         Ixy = named("Ixy"), Sxx = named("Sxx"), Syy = named("Syy"), Sxy = named("Sxy"), output = named("output");
    gray(x, y) = 0.299f * clamped(x, y, 0) + 0.587f * clamped(x, y, 1) + 0.114f * clamped(x, y, 2);
    Ix(x, y) = (-1.0f / 12) * gray(x - 1, y - 1) + (1.0f / 12) * gray(x + 1, y - 1) + (-2.0f / 12) * gray(x - 1, y) +
               (2.0f / 12) * gray(x + 1, y) + (-1.0f / 12) * gray(x - 1, y + 1) + (1.0f / 12) * gray(x + 1, y + 1);
    Iy(x, y) = (-1.0f / 12) * gray(x - 1, y - 1) + (1.0f / 12) * gray(x - 1, y + 1) + (-2.0f / 12) * gray(x, y - 1) +
               (2.0f / 12) * gray(x, y + 1) + (-1.0f / 12) * gray(x + 1, y - 1) + (1.0f / 12) * gray(x + 1, y + 1);
    Ixx(x, y) = Ix(x, y) * Ix(x, y);
    Iyy(x, y) = Iy(x, y) * Iy(x, y);
    Ixy(x, y) = Ix(x, y) * Iy(x, y);
    // The sum over the 3x3 neighbourhood, rows in order.
    auto box3x3 = [&](Func f) {
        Expr sum;
        for (int dy = -1; dy <= 1; dy++)
            for (int dx = -1; dx <= 1; dx++) sum = sum.defined() ? sum + f(x + dx, y + dy) : f(x + dx, y + dy);
        return sum;
    };
    Sxx(x, y) = box3x3(Ixx);
    Syy(x, y) = box3x3(Iyy);
    Sxy(x, y) = box3x3(Ixy);
    Expr det = Sxx(x, y) * Syy(x, y) - Sxy(x, y) * Sxy(x, y);
    Expr trace = Sxx(x, y) + Syy(x, y);
    output(x, y) = det - k * trace * trace;
    app.output = output;
    return app;
}

// generators/max_filter.cpp with radius `radius`.
inline HalideApp max_filter(Halide::Buffer<float> input_buffer, int radius) {
    using namespace Halide;
    Var x("x"), y("y"), c("c"), t("t");
    ImageParam input(Float(32), 3, "input");
    input.set(input_buffer);
    HalideApp app;
    auto named = [&](const char *name) { return app.funcs.emplace(name, Func(name)).first->second; };
    const int R = radius;
    const int slices = (int)std::ceil(std::log2((double)R)) + 1;
    Func clamped = BoundaryConditions::repeat_edge(input);
    Func vert_log = named("vert_log");
    vert_log(x, y, c, t) = clamped(x, y, c);
    RDom r(-R, input.height() + R, 1, slices - 1, "r");
    Expr step = clamp(Expr(1) << (r.y - 1), 0, 2 * R);
    vert_log(x, r.x, c, r.y) = max(vert_log(x, r.x, c, r.y - 1), vert_log(x, r.x + step, c, r.y - 1));
    Func slice_for_radius = named("slice_for_radius");
    slice_for_radius(t) = cast<int>(floor(log(cast<float>(2 * t + 1)) / std::log(2.0f)));
    Func vert = named("vert");
    Expr slice = clamp(slice_for_radius(t), 0, slices);
    vert(x, y, c, t) = max(vert_log(x, y - t, c, slice),
                           vert_log(x, y + t + 1 - clamp(Expr(1) << slice, 0, 2 * R), c, slice));
    Func filter_height = named("filter_height");
    RDom dy(0, R + 1, "dy");
    const float edge = (R + 0.25f) * (R + 0.25f);
    filter_height(x) = sum(select(cast<float>(x * x + dy * dy) < edge, 1, 0));
    RDom dx(-R, 2 * R + 1, "dx");
    app.output = named("output");
    app.output(x, y, c) = maximum(vert(x + dx, y, c, clamp(filter_height(dx), 0, R + 1)));
    app.images = {{"input", input}};
    app.rvars = {{"r.x", r.x}, {"r.y", r.y}};
    return app;
}

// generators/hist_equalize.cpp.
inline HalideApp hist_equalize(Halide::Buffer<uint8_t> input_buffer) {
    using namespace Halide;
    Var x("x"), y("y"), c("c");
    ImageParam input(UInt(8), 3, "input");
    input.set(input_buffer);
    HalideApp app;
    auto named = [&](const char *name) { return app.funcs.emplace(name, Func(name)).first->second; };
    Expr R = cast<float>(input(x, y, 0)), G = cast<float>(input(x, y, 1)), B = cast<float>(input(x, y, 2));
    Func Y = named("Y"), Cr = named("Cr"), Cb = named("Cb");
    Y(x, y) = 0.299f * R + 0.587f * G + 0.114f * B;
    Cr(x, y) = (R - Y(x, y)) * 0.713f + 128.0f;
    Cb(x, y) = (B - Y(x, y)) * 0.564f + 128.0f;
    Func hist_rows = named("hist_rows"), hist = named("hist"), cdf = named("cdf");
    hist_rows(x, y) = 0;
    RDom rx(0, input.width(), "rx");
    hist_rows(cast<int>(clamp(Y(rx, y), 0.0f, 255.0f)), y) += 1;
    hist(x) = 0;
    RDom ry(0, input.height(), "ry");
    hist(x) += hist_rows(x, ry);
    cdf(x) = hist(0);
    RDom b(1, 255, "b");
    cdf(b) = cdf(b - 1) + hist(b);
    Func eq = named("equalize");
    Expr bin = cast<uint8_t>(clamp(Y(x, y), 0.0f, 255.0f));
    Expr scale = 255.0f / cast<float>(input.width() * input.height());
    eq(x, y) = clamp(cast<float>(cdf(bin)) * scale, 0.0f, 255.0f);
    auto u8 = [](Expr v) { return cast<uint8_t>(clamp(v, 0.0f, 255.0f)); };
    Expr cr = Cr(x, y) - 128.0f, cb = Cb(x, y) - 128.0f;
    Expr red = u8(eq(x, y) + cr * 1.4f);
    Expr green = u8(eq(x, y) - 0.343f * cb - 0.711f * cr);
    Expr blue = u8(eq(x, y) + 1.765f * cb);
    app.output = named("output");
    app.output(x, y, c) = select(c == 0, red, c == 1, green, blue);
    app.images = {{"input", input}};
    app.rvars = {{"rx", rx}, {"ry", ry}, {"b", b}};
    return app;
}

// generators/iir_blur.cpp.
inline HalideApp iir_blur(Halide::Buffer<float> input_buffer, float alpha_value) {
    using namespace Halide;
    Var x("x"), y("y"), c("c");
    ImageParam input(Float(32), 3, "input");
    input.set(input_buffer);
    Param<float> alpha("alpha");
    alpha.set(alpha_value);
    alpha.set_estimate(alpha_value);  // Adams2019 asks every Param for one
    HalideApp app;
    auto named = [&](const char *name) { return app.funcs.emplace(name, Func(name)).first->second; };
    RDom ry;
    auto blur_columns_transposed = [&](Func in, Expr height, Func blur, Func transposed) {
        blur(x, y, c) = undef<float>();
        blur(x, 0, c) = in(x, 0, c);
        ry = RDom(1, height - 1, "ry");
        blur(x, ry, c) = (1 - alpha) * blur(x, ry - 1, c) + alpha * in(x, ry, c);
        Expr up = height - ry - 1;
        blur(x, up, c) = (1 - alpha) * blur(x, up + 1, c) + alpha * blur(x, up, c);
        transposed(x, y, c) = blur(y, x, c);
    };
    Func in = named("in"), transposed_cols = named("transposed_cols");
    in(x, y, c) = input(x, y, c);
    blur_columns_transposed(in, input.height(), named("blur_cols"), transposed_cols);
    app.output = named("output");
    blur_columns_transposed(transposed_cols, input.width(), named("blur_rows"), app.output);
    app.images = {{"input", input}};
    app.rvars = {{"ry", ry}};  // both passes' RDoms are named ry: a schedule finds either by the name
    return app;
}

// generators/attention.cpp, algorithm=two_pass: O = softmax(Q Kᵀ / √d) V for
// one head, Q, K, V and O as (d, seq), d and the number of keys taken from the
// buffers as constants (as Kiln's generator gets them through dim= and
// seq=). Its RDoms are rd (over d) and rk (over the keys), as a schedule
// file names them.
struct HalideAttention {
    Halide::Func output;
    std::map<std::string, Halide::Func> funcs;
    std::map<std::string, Halide::RVar> rvars;
};

inline HalideAttention attention(Halide::Buffer<float> Q, Halide::Buffer<float> K, Halide::Buffer<float> V) {
    using namespace Halide;
    Var c("c"), i("i"), j("j"), r("r");
    const int d = Q.dim(0).extent(), keys = K.dim(1).extent();
    RDom rd(0, d, "rd"), rk(0, keys, "rk");
    Func key_t("key_t"), scores("scores"), row_max("row_max"), probs("probs"), row_sum("row_sum"),
        weighted("weighted"), output("output");
    key_t(j, r) = K(r, j);
    scores(j, i) = 0.0f;
    scores(j, i) += Q(rd, i) * key_t(j, rd);
    row_max(i) = std::numeric_limits<float>::lowest();
    row_max(i) = max(row_max(i), scores(rk, i));
    Expr inv_sqrt_d = 1.0f / sqrt(cast<float>(d));
    probs(j, i) = exp((scores(j, i) - row_max(i)) * inv_sqrt_d);
    row_sum(i) = 0.0f;
    row_sum(i) += probs(rk, i);
    weighted(c, i) = 0.0f;
    weighted(c, i) += probs(rk, i) * V(c, rk);
    output(c, i) = weighted(c, i) / row_sum(i);
    return {output,
            {{"key_t", key_t}, {"scores", scores}, {"row_max", row_max}, {"probs", probs}, {"row_sum", row_sum},
             {"weighted", weighted}, {"output", output}},
            {{"rd", rd}, {"rk", rk}}};
}

}  // namespace kiln_halide
