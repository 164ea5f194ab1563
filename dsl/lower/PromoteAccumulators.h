// Keep a reduction's accumulator in a local while its loop runs: an
// innermost serial loop whose body stores into one element (or one vector)
// of a pipeline allocation that does not move with the loop, reading it
// only there, accumulates into a one-element stack allocation instead,
// loaded before the loop and stored after it.
//
//   for (r.x, 0, w) {                        if (0 < w) {
//     sum[y] = sum[y] + in[y * s + r.x]        allocate sum.acc.0[1]
//   }                                   ->     sum.acc.0[0] = sum[y]
//                                              for (r.x, 0, w) { sum.acc.0[0] = sum.acc.0[0] + in[y * s + r.x] }
//                                              sum[y] = sum.acc.0[0]
//                                            }
//
// Why: the C++ compiler must assume that a store through `float *sum` may
// change the floats `in` points to, so it stores and reloads sum[y] in
// every iteration, a chain through memory of ~5 cycles per term (a row
// sum of layernorm's backward pass ran 5x slower than Halide's, which
// tells LLVM the buffers do not alias). A stack array whose address is
// never taken is a register to it, and with fast_math (reassociation
// allowed) it vectorizes the sum.
//
// Only where the answer cannot change: the body is lets and one Store into
// a heap allocation in scope (which no input, output or other allocation
// overlaps; a small one of constant size is a local array already); its index uses neither the loop variable nor a let of the
// body; every Load of that allocation in the body is of the same index and
// type. Vector stores (a vectorized update over an RVar loop) promote to a
// vector-sized allocation.
//
// A loop whose body is lets and several such stores (a register block's
// unrolled update) promotes each stored element or vector to its own
// local, when every store's index is the same in every iteration (with the
// body's loop-invariant lets in scope), no two stored elements overlap
// (their starts differ by a constant of at least the vector width, or by
// k rows of the Func's storage, k != 0, with the offset a constant), and
// every load of those allocations is of a stored element:
//
//   for (r.x, 0, w) {                          acc.0 = f[ramp(i0, 1, 16)]; acc.1 = f[ramp(i0 + E, 1, 16)]
//     let i0 = (y - f.min.1) * E + c           for (r.x, 0, w) { acc.0 = acc.0 + ..; acc.1 = acc.1 + .. }
//     f[ramp(i0, 1, 16)] += ..           ->    f[ramp(i0, 1, 16)] = acc.0; f[ramp(i0 + E, 1, 16)] = acc.1
//     f[ramp(i0 + E, 1, 16)] += .. }           (E: f's row, f.extent.0)
//
// Run after hoist_invariant_loads; `env` tells each Func's storage order.
#pragma once
#include "RealizationOrder.h"
#include "ir/IR.h"

namespace kiln {
namespace internal {

Stmt promote_accumulators(const Stmt &s, const Environment &env);

}  // namespace internal
}  // namespace kiln
