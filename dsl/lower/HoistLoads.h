// Hoist a loop-invariant scalar load out of an innermost loop that stores
// only into one of the pipeline's own allocations.
//
//   for (j.j, 0, n) {                             if (0 < n) {
//     scores[ramp(j.j * 16, 1, 16)] =               let Q.hoisted.0 = Q[(i * Q.stride.1) + rd]
//       scores[ramp(j.j * 16, 1, 16)]         ->    for (j.j, 0, n) {
//       + x16(Q[(i * Q.stride.1) + rd])               scores[ramp(j.j * 16, 1, 16)] = scores[ramp(j.j * 16, 1, 16)]
//         * key_t[ramp(j.j * 16, 1, 16)]                + x16(Q.hoisted.0) * key_t[ramp(j.j * 16, 1, 16)]
//   }                                               } }
//
// Why: the C++ compiler must assume that a store through a `float *` may
// change any float it could reach, so it reloads (and re-broadcasts) such a
// load in every iteration, and in a large parallel body the pointer it
// reloads from is then kept in a spilled register (attention's Q K^T and
// P V loops: 13 instructions per vector instead of 7, docs/performance.md).
//
// Only where the answer cannot change:
// - the loop's body is a Store (after its lets) into a buffer allocated
//   inside the pipeline (an Allocate in scope), which cannot overlap an
//   input, an output or another allocation, and the load reads another buffer;
// - the load is scalar, its index uses neither the loop variable nor a let of
//   the body, and every iteration executes it (not under a Select, the right
//   operand of && or ||, or a let);
// - it is read once before the loop, only if the loop runs at all.
// Run last, after the final simplify (which would substitute the lets back).
#pragma once
#include "ir/IR.h"

namespace kiln {
namespace internal {

Stmt hoist_invariant_loads(const Stmt &s);

}  // namespace internal
}  // namespace kiln
