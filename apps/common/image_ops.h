// Small image operations the apps share: fitting an image to what a kernel
// takes (channel count, size) and a deterministic synthetic "photo".
// Images are planar float buffers (x, y, c) with values in [0, 1] (see
// png_io.h for the conversion from and to PNG).
#pragma once
#include <HalideBuffer.h>

#include <cstdint>

namespace kiln_apps {

// The image with `channels` channels (1 or 3 make sense for kernels):
//   to 1: the luma (0.299 R + 0.587 G + 0.114 B) of an RGB(A) image, else channel 0;
//   to 3: RGB as is, the alpha channel dropped, gray repeated;
//   otherwise channel c is the source's channel min(c, channels - 1).
Halide::Runtime::Buffer<float, 3> with_channels(const Halide::Runtime::Buffer<const float, 3> &image, int channels);

// The image repeated, mirrored at every edge, to width x height (a crop when
// smaller): a larger test input with the same content.
Halide::Runtime::Buffer<float, 3> mirror_tile(const Halide::Runtime::Buffer<const float, 3> &image, int width,
                                              int height);

// A synthetic photo-like image: a sky gradient, a sun, hills, a few shapes
// with hard and soft edges, fine texture and noise. Deterministic in `seed`;
// channels 1 (luma of the same scene), 3 (RGB) or 4 (RGBA, alpha a vignette).
Halide::Runtime::Buffer<float, 3> synthetic_photo(int width, int height, int channels, uint32_t seed = 1);

}  // namespace kiln_apps
