// Take a loop's vector-load range tests out of the loop: vectorization
// reads a clamped index (a boundary condition, or an autodiff gather's
// clamp of the point it solved for) as a dense load when every lane is
// inside the clamp, else as a gather (VectorizeLoops.cpp, dense_fast_path).
// Where that test does not change inside a serial loop, the loop is copied
// once: a copy that reads every such load densely, run when all the tests
// hold, and the original, which keeps them, run otherwise.
//
//   for (r.x, 0, k) {                            if (0 <= x.min && x.min + 15 <= w - 1) {
//     acc = acc + b[r.x] * select(0 <= x.min       for (r.x, 0, k) { acc = acc + b[r.x] * B[ramp(r.x * w + x.min, 1, 16)] }
//            && x.min + 15 <= w - 1,        ->   } else {
//            B[ramp(r.x * w + x.min, 1, 16)],      for (r.x, 0, k) { <as before> }
//            B[<clamped ramp>])                  }
//   }
//
// Why: the C++ compiler evaluates the test for every load in every
// iteration (g++ does not unswitch a loop body that large), a compare and
// branch per tap of a register block: a third of the time of gemm_grad's
// blocked d_A = g Bᵀ, which reads B at the clamped index it solved for.
//
// Only the selects this applies to change: a scalar condition that reads
// neither the loop's variable, nor a name bound inside the loop, nor
// memory (which the loop may write), choosing a dense vector load when
// true. Only selects directly in the loop's body are
// considered (not inside a nested loop: those are its business), so the
// copies are of innermost loops with such loads, each copied once with all
// its tests joined. Run after the last simplify, before
// hoist_invariant_loads.
#pragma once
#include "ir/IR.h"

namespace kiln {
namespace internal {

Stmt unswitch_dense_loads(const Stmt &s);

}  // namespace internal
}  // namespace kiln
