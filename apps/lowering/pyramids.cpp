// The interpolate and local Laplacian pipelines of Halide's apps, algorithm
// and CPU schedule, as of Halide 14 (the release Kiln is compared with).
// Where Halide has a feature Kiln lacks, the nearest Kiln equivalent is used
// and a comment beginning "Kiln:" says what differs.
#include "pyramids.h"

#include <algorithm>
#include <string>
#include <vector>

namespace kiln_lowering {

using namespace kiln;

namespace {

std::vector<Func> named_funcs(const std::string &base, int n) {
    std::vector<Func> fs;
    for (int i = 0; i < n; i++) fs.emplace_back(base + "_" + std::to_string(i));
    return fs;
}

// f's arguments: (x', y') followed by f's remaining dimensions as `rest`.
// Kiln: no implicit Vars (Halide's `_`), so the pyramid helpers below pass
// the extra dimension (the local Laplacian's k) explicitly.
std::vector<Expr> with_rest(Expr x, Expr y, const std::vector<Var> &rest) {
    std::vector<Expr> args{std::move(x), std::move(y)};
    for (const Var &v : rest) args.push_back(v);
    return args;
}

// Kiln: no lerp(); this is Halide's lowering of lerp for float values.
Expr lerp_float(Expr zero, Expr one, Expr weight) { return zero * (1.0f - weight) + one * weight; }

}  // namespace

Pipeline make_interpolate(int levels, const Target &t) {
    ImageParam input(Float(32), 3, "input");
    Var x("x"), y("y"), c("c");
    // Kiln: no input.dim(2).set_bounds(0, 4); the four channels are only
    // checked on entry, through the region the pipeline reads.

    std::vector<Func> downsampled = named_funcs("downsampled", levels);
    std::vector<Func> downx = named_funcs("downx", levels);
    std::vector<Func> interpolated = named_funcs("interpolated", levels);
    std::vector<Func> upsampled = named_funcs("upsampled", levels);
    std::vector<Func> upsampledx = named_funcs("upsampledx", levels);
    Func clamped = BoundaryConditions::repeat_edge(input);

    // Premultiply the colour by alpha.
    downsampled[0](x, y, c) = select(c < 3, clamped(x, y, c) * clamped(x, y, 3), clamped(x, y, 3));
    for (int l = 1; l < levels; l++) {
        Func prev = downsampled[l - 1];
        if (l == 4) {
            // As in the app: clamp again at a middle level, so that the
            // coarse levels do not read far outside the image.
            // Kiln: no lambda(); an unscheduled (so inlined) Func instead.
            Expr w = input.width() / (1 << (l - 1)), h = input.height() / (1 << (l - 1));
            Func clamped_level("clamped_level_" + std::to_string(l));
            clamped_level(x, y, c) = prev(clamp(x, 0, w), clamp(y, 0, h), c);
            prev = clamped_level;
        }
        downx[l](x, y, c) = (prev(x * 2 - 1, y, c) + 2.0f * prev(x * 2, y, c) + prev(x * 2 + 1, y, c)) * 0.25f;
        downsampled[l](x, y, c) =
            (downx[l](x, y * 2 - 1, c) + 2.0f * downx[l](x, y * 2, c) + downx[l](x, y * 2 + 1, c)) * 0.25f;
    }
    interpolated[levels - 1](x, y, c) = downsampled[levels - 1](x, y, c);
    for (int l = levels - 2; l >= 0; l--) {
        upsampledx[l](x, y, c) = (interpolated[l + 1](x / 2, y, c) + interpolated[l + 1]((x + 1) / 2, y, c)) / 2.0f;
        upsampled[l](x, y, c) = (upsampledx[l](x, y / 2, c) + upsampledx[l](x, (y + 1) / 2, c)) / 2.0f;
        Expr alpha = 1.0f - downsampled[l](x, y, 3);
        interpolated[l](x, y, c) = downsampled[l](x, y, c) + alpha * upsampled[l](x, y, c);
    }
    Func normalize("normalize");
    normalize(x, y, c) = interpolated[0](x, y, c) / interpolated[0](x, y, 3);

    // The app's CPU schedule.
    Var xo("xo"), xi("xi"), yo("yo"), yi("yi");
    const int vec = t.natural_vector_size(Float(32));
    // Kiln: at levels == 2 the app's loop leaves downsampled[1] inlined, and
    // the clone below, placed inside it, would be refused (in Halide too);
    // downsampled[1] is then scheduled like the other levels.
    for (int l = 1; l < std::max(levels - 1, 2); l++)
        downsampled[l].compute_root().reorder(x, c, y).split(y, yo, yi, 8).parallel(yo).vectorize(x, vec);
    // downsampled[0] is recomputed per row of downsampled[1] rather than
    // stored whole. Kiln: no clone_in(); the wrapper in() gives downx[1] its
    // own copy of downsampled[0], which stays inlined into the wrapper.
    downsampled[0]
        .in(downx[1])
        .store_at(downsampled[1], yo)
        .compute_at(downsampled[1], yi)
        .reorder(c, x, y)
        .unroll(c)
        .vectorize(x, vec);
    normalize.bound(x, 0, input.width())
        .bound(y, 0, input.height())
        .bound(c, 0, 3)
        .split(x, xo, xi, vec)
        .split(y, yo, yi, 32)
        .reorder(xi, c, xo, yi, yo)
        .unroll(c)
        .vectorize(xi)
        .parallel(yo);
    for (int l = 1; l < levels; l++)
        interpolated[l].store_at(normalize, yo).compute_at(normalize, yi).vectorize(x, vec);
    return Pipeline(normalize);
}

Pipeline make_local_laplacian(int levels, const Target &) {
    const int J = levels;
    ImageParam input(UInt(16), 3, "input");
    Param<int> num_levels("levels");  // intensity levels of the processed pyramids
    Param<float> alpha("alpha"), beta("beta");
    Var x("x"), y("y"), c("c"), k("k");

    // Downsample with a 1 3 3 1 filter, in x then in y.
    auto downsample = [&](const Func &f, const std::vector<Var> &rest) {
        Func dx, dy;
        dx(with_rest(x, y, rest)) = (f(with_rest(2 * x - 1, y, rest)) +
                                     3.0f * (f(with_rest(2 * x, y, rest)) + f(with_rest(2 * x + 1, y, rest))) +
                                     f(with_rest(2 * x + 2, y, rest))) /
                                    8.0f;
        dy(with_rest(x, y, rest)) = (dx(with_rest(x, 2 * y - 1, rest)) +
                                     3.0f * (dx(with_rest(x, 2 * y, rest)) + dx(with_rest(x, 2 * y + 1, rest))) +
                                     dx(with_rest(x, 2 * y + 2, rest))) /
                                    8.0f;
        return dy;
    };
    // Upsample by bilinear interpolation.
    auto upsample = [&](const Func &f, const std::vector<Var> &rest) {
        Func ux, uy;
        ux(with_rest(x, y, rest)) = lerp_float(f(with_rest((x + 1) / 2, y, rest)), f(with_rest((x - 1) / 2, y, rest)),
                                               ((x % 2) * 2 + 1) / 4.0f);
        uy(with_rest(x, y, rest)) = lerp_float(ux(with_rest(x, (y + 1) / 2, rest)), ux(with_rest(x, (y - 1) / 2, rest)),
                                               ((y % 2) * 2 + 1) / 4.0f);
        return uy;
    };

    // The remapping function as a lookup table.
    Func remap("remap");
    Expr fx = cast<float>(x) / 256.0f;
    remap(x) = alpha * fx * exp(-fx * fx / 2.0f);

    Func clamped = BoundaryConditions::repeat_edge(input);
    Func floating("floating");
    floating(x, y, c) = clamped(x, y, c) / 65535.0f;
    Func gray("gray");
    gray(x, y) = 0.299f * floating(x, y, 0) + 0.587f * floating(x, y, 1) + 0.114f * floating(x, y, 2);

    // The processed Gaussian pyramids, one per intensity level k, through a
    // lookup table with 256 entries per level.
    std::vector<Func> gPyramid = named_funcs("gPyramid", J);
    Expr level = k * (1.0f / (num_levels - 1));
    Expr idx = gray(x, y) * cast<float>(num_levels - 1) * 256.0f;
    idx = clamp(cast<int>(idx), 0, (num_levels - 1) * 256);
    gPyramid[0](x, y, k) = beta * (gray(x, y) - level) + level + remap(idx - 256 * k);
    for (int j = 1; j < J; j++) gPyramid[j](x, y, k) = downsample(gPyramid[j - 1], {k})(x, y, k);

    // Their Laplacian pyramids.
    std::vector<Func> lPyramid = named_funcs("lPyramid", J);
    lPyramid[J - 1](x, y, k) = gPyramid[J - 1](x, y, k);
    for (int j = J - 2; j >= 0; j--)
        lPyramid[j](x, y, k) = gPyramid[j](x, y, k) - upsample(gPyramid[j + 1], {k})(x, y, k);

    // The Gaussian pyramid of the input.
    std::vector<Func> inGPyramid = named_funcs("inGPyramid", J);
    inGPyramid[0](x, y) = gray(x, y);
    for (int j = 1; j < J; j++) inGPyramid[j](x, y) = downsample(inGPyramid[j - 1], {})(x, y);

    // The output's Laplacian pyramid: each level interpolates between the two
    // processed pyramids nearest the input's intensity there.
    std::vector<Func> outLPyramid = named_funcs("outLPyramid", J);
    for (int j = 0; j < J; j++) {
        Expr lv = inGPyramid[j](x, y) * cast<float>(num_levels - 1);
        Expr li = clamp(cast<int>(lv), 0, num_levels - 2);
        Expr lf = lv - cast<float>(li);
        outLPyramid[j](x, y) = (1.0f - lf) * lPyramid[j](x, y, li) + lf * lPyramid[j](x, y, li + 1);
    }

    // The output's Gaussian pyramid, collapsed to the finest level.
    std::vector<Func> outGPyramid = named_funcs("outGPyramid", J);
    outGPyramid[J - 1](x, y) = outLPyramid[J - 1](x, y);
    for (int j = J - 2; j >= 0; j--)
        outGPyramid[j](x, y) = upsample(outGPyramid[j + 1], {})(x, y) + outLPyramid[j](x, y);

    // Colour back in, and back to 16 bits.
    Func color("color"), output("output");
    const float eps = 0.01f;
    color(x, y, c) = outGPyramid[0](x, y) * (floating(x, y, c) + eps) / (gray(x, y) + eps);
    output(x, y, c) = cast<uint16_t>(clamp(color(x, y, c), 0.0f, 1.0f) * 65535.0f);

    // The app's CPU schedule.
    remap.compute_root();
    Var yo("yo");
    output.reorder(c, x, y).split(y, yo, y, 64).parallel(yo).vectorize(x, 8);
    gray.compute_root().parallel(y, 32).vectorize(x, 8);
    // Kiln: the app schedules levels 1 to 4 whatever J is; here only those
    // that exist.
    for (int j = 1; j < std::min(5, J); j++) {
        inGPyramid[j].compute_root().parallel(y, 32).vectorize(x, 8);
        // Kiln: no reorder_storage(x, k, y); the storage keeps (x, y, k).
        gPyramid[j].compute_root().reorder(k, y).parallel(y, 8).vectorize(x, 8);
        // Kiln: no fold_storage(y, 4); storage folding is left to Kiln's own pass.
        outGPyramid[j].store_at(output, yo).compute_at(output, y).vectorize(x, 8);
    }
    outGPyramid[0].compute_at(output, y).vectorize(x, 8);
    for (int j = 5; j < J; j++) {
        inGPyramid[j].compute_root();
        gPyramid[j].compute_root().parallel(k);
        outGPyramid[j].compute_root();
    }
    return Pipeline(output);
}

}  // namespace kiln_lowering
