// PNG files <-> planar Halide buffers, for Kiln's image apps and the lab.
//
// A loaded image is a 3-D buffer (x, y, c), planar (dimension 0 dense, then
// rows, then channels), of uint8_t or uint16_t as stored in the file: 1 to 4
// channels (gray, gray+alpha, RGB, RGBA). Palette and low-bit-depth gray
// files are expanded to 8 bits, a tRNS chunk to an alpha channel.
//
//   Halide::Runtime::Buffer<void, 3> png = kiln_apps::load_png("in.png");   // uint8 or uint16
//   Halide::Runtime::Buffer<float, 3> f = kiln_apps::to_float(png);         // values in [0, 1]
//   ... process f ...
//   kiln_apps::save_png("out.png", kiln_apps::from_float(f, 8));            // rounded, clamped
//
// Every failure (missing file, not a PNG, truncated or corrupt data, a
// buffer that cannot be written) is a std::runtime_error whose message names
// the file and the reason: `load_png("x.png"): cannot open: No such file or directory`.
#pragma once
#include <HalideBuffer.h>

#include <cstdint>
#include <string>

namespace kiln_apps {

// The file's pixels, planar (x, y, c); its type is uint8 or uint16 (the
// file's bit depth, 16 only for 16-bit files).
Halide::Runtime::Buffer<void, 3> load_png(const std::string &path);

// Write a uint8 or uint16 buffer of 2 dimensions (gray) or 3 (1 to 4
// channels: gray, gray+alpha, RGB, RGBA) as an 8- or 16-bit PNG. The buffer
// may have any strides and mins; dimension 0 is x.
void save_png(const std::string &path, const Halide::Runtime::Buffer<const void> &image);

// uint8 / 255 or uint16 / 65535: values in [0, 1], same shape.
Halide::Runtime::Buffer<float, 3> to_float(const Halide::Runtime::Buffer<const void, 3> &image);
// Back to integers of `bits` (8 or 16): v * (2^bits - 1), rounded to nearest,
// clamped to the range (NaN becomes 0). A uint8 or uint16 buffer.
Halide::Runtime::Buffer<void, 3> from_float(const Halide::Runtime::Buffer<const float, 3> &image, int bits);

}  // namespace kiln_apps
