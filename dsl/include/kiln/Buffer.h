// Host-side buffers: Kiln uses Halide's runtime buffer (header-only) so that
// Kiln kernels and Halide kernels take the same halide_buffer_t arguments.
#pragma once
#include <HalideBuffer.h>

namespace kiln {
template<typename T = void, int Dims = Halide::Runtime::AnyDims>
using Buffer = Halide::Runtime::Buffer<T, Dims>;
}  // namespace kiln
