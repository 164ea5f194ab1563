// Give an allocation whose size is known only at run time a constant size
// when a constant upper bound of it is proven (analysis/ConstantBound.h)
// and small enough for the stack: host code then puts it on the stack
// instead of taking a heap block each time its scope is entered. A Func
// computed per tile of a split, whose region is clamped to its consumer's
// region at the end, is the usual case:
//
//   for (g.s0.y.y, 0, g.s0.y.y.loop_extent) {
//    let f.s0.y.min = max(g.s0.y.min + g.s0.y.y*2, g.s0.y.min)
//    let f.s0.y.max = min(g.s0.y.min + g.s0.y.y*2 + 1, g.s0.y.max)
//    let f.extent.1 = (f.s0.y.max - f.s0.y.min) + 1
//    allocate f[int16 * (f.extent.1 * 64)]      ->   allocate f[int16 * 128]
//
// Only the size changes: the strides and indexing still follow the run-time
// extents, so every access stays inside the first f.extent.0 * f.extent.1
// * ... elements, at most the bound. Each extent is bounded on its own, and
// one bounded below zero counts as zero: an access means every extent is at
// least 1. A size with no provable constant bound,
// or a bound past stack_allocation_bytes, is left as it was (a heap block
// of the exact size), as is an allocation that may be an output's buffer
// and one outside every loop (taken once a call).
//
// Precondition: flattened (an Allocate's size is the product of its
// extents), loops partitioned and simplified: a tile in a steady loop
// has its exact extent (64, not min(x*64 + 63, max) - x*64 + 1), while
// the partitioned tail's tile may stay on the heap. The lets that define
// the extents are read where the simplifier left them. Host targets only:
// the NPU places its buffers itself.
#pragma once
#include <cstdint>

#include "ir/IR.h"

namespace kiln {
namespace internal {

// The largest allocation host code puts on the stack (thread stacks are
// MiBs); a larger or non-constant one is a heap block.
constexpr int64_t stack_allocation_bytes = 64 * 1024;

// Whether host code puts this allocation on the stack.
bool allocation_on_stack(const Allocate *op);

Stmt bound_allocations(const Stmt &s);

}  // namespace internal
}  // namespace kiln
