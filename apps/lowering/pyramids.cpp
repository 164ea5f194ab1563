// The interpolate and local Laplacian pipelines of Halide's apps, algorithm
// and CPU schedule, as of Halide 14 (the release Kiln is compared with). The
// local Laplacian algorithm is the local_laplacian generator's
// (generators/local_laplacian.h); only its schedule, for any number of
// levels, is written here.
// Where Halide has a feature Kiln lacks, the nearest Kiln equivalent is used
// and a comment beginning "Kiln:" says what differs.
#include "pyramids.h"

#include "local_laplacian.h"

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
    Func output("output");
    kiln_apps::LocalLaplacianStages s = kiln_apps::define_local_laplacian(input, num_levels, alpha, beta, J, output);
    Func remap = s.remap, gray = s.gray;
    std::vector<Func> &gPyramid = s.gPyramid, &inGPyramid = s.inGPyramid, &outGPyramid = s.outGPyramid;
    Var x("x"), y("y"), c("c"), k("k");

    // The app's CPU schedule.
    remap.compute_root();
    Var yo("yo");
    output.reorder(c, x, y).split(y, yo, y, 64).parallel(yo).vectorize(x, 8);
    gray.compute_root().parallel(y, 32).vectorize(x, 8);
    // Kiln: the app schedules levels 1 to 4 whatever J is; here only those
    // that exist.
    for (int j = 1; j < std::min(5, J); j++) {
        inGPyramid[j].compute_root().parallel(y, 32).vectorize(x, 8);
        gPyramid[j].compute_root().reorder_storage(x, k, y).reorder(k, y).parallel(y, 8).vectorize(x, 8);
        outGPyramid[j].store_at(output, yo).compute_at(output, y).fold_storage(y, 4).vectorize(x, 8);
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
