// kiln-lab's link between images and a generator's Inputs and Outputs:
// finding the ImageParam or Param behind an Input (Generator.h gives them
// only on the typed Input<...> members, so we try each element type and
// dimension count), and converting float images in [0, 1] to and from
// buffers of any element type.
//
// Integer element types hold images at a "full scale" value: uint8 255,
// int8 127, uint16 65535, int16 32767, any other integer 65535; floats
// (float16 and bfloat16 too) hold [0, 1] as is.
#pragma once
#include <kiln/Generator.h>

#include <cstdint>
#include <string>
#include <vector>

namespace kiln_lab {

// The ImageParam of a buffer Input (a handle sharing its state, so set() on
// it binds the Input), or a CompileError if the Input is not a buffer of an
// element type and dimension count (up to 8) that Kiln supports.
kiln::ImageParam image_param(const kiln::GeneratorInputBase &input);

// Set a scalar Input from text ("0.5", "3"); false if the text is not a
// value of its type. A CompileError if the Input is not a scalar.
bool set_scalar(const kiln::GeneratorInputBase &input, const std::string &text);

double full_scale(const halide_type_t &t);

// A planar float image (x, y, c) in [0, 1] as a buffer of element type t
// and `dims` dimensions (1: row 0 of channel 0; 2: channel 0 only; 3: every channel), scaled to
// full_scale(t) and rounded for integer types.
Halide::Runtime::Buffer<void> from_unit_float(const Halide::Runtime::Buffer<const float, 3> &image,
                                              const halide_type_t &t, int dims);
// A buffer of element type t and these extents filled with reproducible
// pseudo-random values (a fixed seed per `seed`): floats uniform in [-1, 1),
// integers over [-full_scale, full_scale] (signed) or [0, full_scale].
Halide::Runtime::Buffer<void> random_buffer(const halide_type_t &t, const std::vector<int> &extents, uint32_t seed);
// Any buffer as doubles, 3-D (x, y, c), values as stored: a row as one row,
// dimensions 2 and up of a 4-D or larger buffer as one dimension c.
Halide::Runtime::Buffer<double, 3> to_double(const Halide::Runtime::Buffer<const void> &b);

}  // namespace kiln_lab
