// Host-side buffers: Kiln uses Halide's runtime buffer (header-only) so that
// Kiln kernels and Halide kernels take the same halide_buffer_t arguments.
#pragma once
#include <HalideBuffer.h>

#include "Type.h"

namespace kiln {
template<typename T = void, int Dims = Halide::Runtime::AnyDims>
using Buffer = Halide::Runtime::Buffer<T, Dims>;

// The halide_type_t of a scalar Type (Kiln's type codes are Halide's), e.g.
// for a Buffer<void> of a Func's or an argument's element type.
inline halide_type_t to_halide_type(const Type &t) { return halide_type_t((halide_type_code_t)t.code(), t.bits()); }
}  // namespace kiln
