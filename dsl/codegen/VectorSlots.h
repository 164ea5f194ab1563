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
// only.
//
// Scalar accesses at constant indices are lanes of the slots
// (`equalize[0][3]`): a Func computed per vector of its consumer and
// unrolled writes its lanes one by one and is read as one vector
// (hist_equalize's equalize), which from a scalar array is eight stores and
// a vector load that waits for all of them (the store buffer cannot forward
// them), and from a slot is a vector g++ builds in a register.
//
// vector_slot_lanes(alloc) is that vector width, or 0 when there is no
// vector access, or any access is of another width, at a non-constant or
// unaligned offset (a scalar one: at a non-constant index).
//
// scalars_at_constant_indices(alloc): every access is one element at a
// constant index (a row's scalar statistic, `row_sum_adjoint[0]`), so g++
// keeps the elements in registers as long as nothing takes the array's
// address; a copy of it is then made element by element (CodeGen_C's
// shared edges), never with memcpy.
#pragma once
#include "ir/IR.h"

namespace kiln {
namespace internal {

int vector_slot_lanes(const Allocate *alloc);
bool scalars_at_constant_indices(const Allocate *alloc);

}  // namespace internal
}  // namespace kiln
