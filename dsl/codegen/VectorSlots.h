// Which stack allocations the C++ code generator declares as arrays of
// vectors rather than arrays of scalars (an analysis: nothing is rewritten).
//
// A register block of accumulators (a Func computed at a tile, its update
// unrolled and vectorized) is a small constant-size allocation read and
// written only by whole vectors at constant offsets:
//
//   allocate matmul[float32 * 256]
//   for (k) { matmul[ramp(0, 1, 16)] = matmul[ramp(0, 1, 16)] + ...
//             matmul[ramp(16, 1, 16)] = ...                        ... }
//
// Emitted as `float matmul[256]` with memcpy loads and stores, g++ keeps the
// accumulators in registers but copies each one once per iteration (store
// motion gives every slot a second live value) and spills past ~8 slots.
// Emitted as `float32x16 matmul[16]`, indexed `matmul[0]`, `matmul[1]`, ...,
// each slot is an ordinary vector variable and the loop is FMAs and loads
// only. vector_slot_lanes(alloc) is that vector width, or 0 when any access
// is scalar, of another width, at a non-constant or unaligned offset.
#pragma once
#include "ir/IR.h"

namespace kiln {
namespace internal {

int vector_slot_lanes(const Allocate *alloc);

}  // namespace internal
}  // namespace kiln
