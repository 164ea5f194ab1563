// The local Laplacian filter of generators/local_laplacian.cpp as a
// function, so that the generator and the lowering benchmark
// (apps/lowering/pyramids.cpp) build the same algorithm from one text.
#pragma once
#include <kiln/kiln.h>

#include <vector>

namespace kiln_apps {

// The Funcs a schedule places, each a vector of one Func per pyramid level
// (index j), named `<pyramid>_<j>`: gPyramid_j (x, y, k) the processed
// Gaussian pyramids, one per intensity level k; lPyramid_j their Laplacian
// pyramids; inGPyramid_j (x, y) the input's Gaussian pyramid; outLPyramid_j
// and outGPyramid_j the output's Laplacian and Gaussian pyramids.
struct LocalLaplacianStages {
    kiln::Func remap, floating, gray, color;
    std::vector<kiln::Func> gPyramid, lPyramid, inGPyramid, outLPyramid, outGPyramid;
};

// Defines `output` (x, y, c), uint16, as the local Laplacian filter of
// `input` (uint16, 3-D) with `pyramid_levels` levels (>= 1), `levels`
// intensity levels (>= 2), detail gain `alpha` and tone gain `beta`.
LocalLaplacianStages define_local_laplacian(const kiln::ImageParam &input, kiln::Expr levels, kiln::Expr alpha,
                                            kiln::Expr beta, int pyramid_levels, kiln::Func output);

}  // namespace kiln_apps
