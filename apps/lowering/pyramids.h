// Two pyramid pipelines of Halide's example apps, ported to Kiln with their
// CPU schedules, for measuring how lowering scales with the number of
// pyramid levels (lowering-bench).
#pragma once
#include <kiln/kiln.h>

namespace kiln_lowering {

// Halide's apps/interpolate: an RGBA float image premultiplied by alpha,
// downsampled `levels` times, then upsampled level by level with each level's
// holes (alpha < 1) filled from the coarser one, and normalized by alpha.
// levels >= 2.
kiln::Pipeline make_interpolate(int levels, const kiln::Target &t);

// Halide's apps/local_laplacian: a local Laplacian filter of a uint16 RGB
// image with `levels` pyramid levels (Params levels, alpha, beta as in the
// app). levels >= 2.
kiln::Pipeline make_local_laplacian(int levels, const kiln::Target &t);

}  // namespace kiln_lowering
