// local_laplacian: a local Laplacian filter of a uint16 RGB image (Paris,
// Hasinoff and Kautz, SIGGRAPH 2011; the algorithm of Halide 14's
// apps/local_laplacian). Detail is boosted by `alpha` and tone compressed
// by `beta` without halos: the gray image is remapped once per intensity
// level k (of `levels`), each remapped image is decomposed into a Laplacian
// pyramid, and the output's pyramid takes, at every pixel and level, the
// coefficients of the two remapped pyramids whose intensities bracket the
// input's there. Collapsing that pyramid gives the new gray image; the
// colour is put back by the ratio of each channel to the old gray.
//
//   remap(i)             alpha * f * exp(-f^2 / 2), f = i / 256: a table
//   gray(x, y)           0.299 r + 0.587 g + 0.114 b of the input / 65535
//   gPyramid_j(x, y, k)  level 0: the gray image remapped around k / (levels-1);
//                        level j: level j-1 downsampled (1 3 3 1, in x then y)
//   lPyramid_j           gPyramid_j minus gPyramid_{j+1} upsampled (bilinear)
//   inGPyramid_j(x, y)   the Gaussian pyramid of gray
//   outLPyramid_j(x, y)  lPyramid_j at the two k around inGPyramid_j, lerped
//   outGPyramid_j(x, y)  the collapse: outGPyramid_{j+1} upsampled + outLPyramid_j
//   output(x, y, c)      outGPyramid_0 * (channel + 0.01) / (gray + 0.01), to uint16
//
// The image's edges repeat. pyramid_levels is fixed when the kernel is
// generated (the schedules name each level's Funcs); levels, alpha and beta
// are arguments.
#include "local_laplacian.h"

#include <kiln/Generator.h>

#include <string>

using namespace kiln;

namespace kiln_apps {

namespace {

std::vector<Func> level_funcs(const std::string &base, int n) {
    std::vector<Func> fs;
    for (int j = 0; j < n; j++) fs.emplace_back(base + "_" + std::to_string(j));
    return fs;
}

Var x("x"), y("y"), c("c"), k("k");

// Halves f in x and y with a 1 3 3 1 filter, x first; f's further
// dimensions pass through.
Func downsample(const Func &f) {
    Func dx, dy;
    dx(x, y, _) = (f(2 * x - 1, y, _) + 3.0f * (f(2 * x, y, _) + f(2 * x + 1, y, _)) + f(2 * x + 2, y, _)) / 8.0f;
    dy(x, y, _) = (dx(x, 2 * y - 1, _) + 3.0f * (dx(x, 2 * y, _) + dx(x, 2 * y + 1, _)) + dx(x, 2 * y + 2, _)) / 8.0f;
    return dy;
}

// Doubles f in x and y by bilinear interpolation, x first.
Func upsample(const Func &f) {
    Func ux, uy;
    ux(x, y, _) = lerp(f((x + 1) / 2, y, _), f((x - 1) / 2, y, _), ((x % 2) * 2 + 1) / 4.0f);
    uy(x, y, _) = lerp(ux(x, (y + 1) / 2, _), ux(x, (y - 1) / 2, _), ((y % 2) * 2 + 1) / 4.0f);
    return uy;
}

}  // namespace

LocalLaplacianStages define_local_laplacian(const ImageParam &input, Expr levels, Expr alpha, Expr beta,
                                            int pyramid_levels, Func output) {
    const int J = pyramid_levels;
    LocalLaplacianStages s{Func("remap"), Func("floating"), Func("gray"), Func("color"),
                           level_funcs("gPyramid", J), level_funcs("lPyramid", J), level_funcs("inGPyramid", J),
                           level_funcs("outLPyramid", J), level_funcs("outGPyramid", J)};

    // The remapping function, a table of 256 entries per intensity level.
    Expr fx = cast<float>(x) / 256.0f;
    s.remap(x) = alpha * fx * exp(-fx * fx / 2.0f);

    Func clamped = BoundaryConditions::repeat_edge(input);
    s.floating(x, y, c) = clamped(x, y, c) / 65535.0f;
    s.gray(x, y) = 0.299f * s.floating(x, y, 0) + 0.587f * s.floating(x, y, 1) + 0.114f * s.floating(x, y, 2);

    // One processed Gaussian pyramid per intensity level k.
    Expr level = k * (1.0f / (levels - 1));
    Expr idx = clamp(cast<int>(s.gray(x, y) * cast<float>(levels - 1) * 256.0f), 0, (levels - 1) * 256);
    s.gPyramid[0](x, y, k) = beta * (s.gray(x, y) - level) + level + s.remap(idx - 256 * k);
    for (int j = 1; j < J; j++) s.gPyramid[j](x, y, k) = downsample(s.gPyramid[j - 1])(x, y, k);

    s.lPyramid[J - 1](x, y, k) = s.gPyramid[J - 1](x, y, k);
    for (int j = J - 2; j >= 0; j--)
        s.lPyramid[j](x, y, k) = s.gPyramid[j](x, y, k) - upsample(s.gPyramid[j + 1])(x, y, k);

    s.inGPyramid[0](x, y) = s.gray(x, y);
    for (int j = 1; j < J; j++) s.inGPyramid[j](x, y) = downsample(s.inGPyramid[j - 1])(x, y);

    // Each output coefficient lerps between the two processed pyramids
    // whose intensities bracket the input's.
    for (int j = 0; j < J; j++) {
        Expr lv = s.inGPyramid[j](x, y) * cast<float>(levels - 1);
        Expr li = clamp(cast<int>(lv), 0, levels - 2);
        Expr lf = lv - cast<float>(li);
        s.outLPyramid[j](x, y) = (1.0f - lf) * s.lPyramid[j](x, y, li) + lf * s.lPyramid[j](x, y, li + 1);
    }

    s.outGPyramid[J - 1](x, y) = s.outLPyramid[J - 1](x, y);
    for (int j = J - 2; j >= 0; j--)
        s.outGPyramid[j](x, y) = upsample(s.outGPyramid[j + 1])(x, y) + s.outLPyramid[j](x, y);

    const float eps = 0.01f;
    s.color(x, y, c) = s.outGPyramid[0](x, y) * (s.floating(x, y, c) + eps) / (s.gray(x, y) + eps);
    output(x, y, c) = cast<uint16_t>(clamp(s.color(x, y, c), 0.0f, 1.0f) * 65535.0f);
    return s;
}

}  // namespace kiln_apps

class LocalLaplacian : public Generator<LocalLaplacian> {
public:
    GeneratorParam<int> pyramid_levels{"pyramid_levels", 8, 1, 20};
    Input<Buffer<uint16_t, 3>> input{"input"};
    Input<int> levels{"levels", 8, 2, 256};
    Input<float> alpha{"alpha", 1.0f};
    Input<float> beta{"beta", 1.0f};
    Output<Buffer<uint16_t, 3>> output{"output"};

    void generate() {
        kiln_apps::define_local_laplacian(input, levels, alpha, beta, pyramid_levels, output);
        // The sizes -s auto assumes without --estimate: Halide's app's.
        input.set_estimates({{0, 1536}, {0, 2560}, {0, 3}});
        output.set_estimates({{0, 1536}, {0, 2560}, {0, 3}});
    }
};

KILN_REGISTER_GENERATOR(LocalLaplacian, local_laplacian)
