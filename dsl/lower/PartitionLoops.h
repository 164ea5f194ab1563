// Loop partitioning: a loop whose body picks between a fast and a safe path
// with a condition affine in the loop variable (the dense fast path that
// vectorize_loops puts on clamped loads) is split into a prologue, a steady
// state where the condition is known to hold, and an epilogue.
//
//   for (x, 0, n) { f[x] = select(0 <= x*8 - 1 && x*8 + 8 <= w, dense(x), gather(x)) }
//     ->  let x.steady_min = ..., x.steady_max = ...
//         for (x, 0, x.steady_min) { ...select... }
//         for (x, x.steady_min, x.steady_max - x.steady_min + 1) { f[x] = dense(x) }
//         for (x, x.steady_max + 1, ...) { ...select... }
//
// Only scalar-conditioned Selects whose condition is a conjunction of
// comparisons affine in the loop variable (after substituting the body's
// lets) are used; the partitioned loop must be serial. Runs after
// vectorize_loops, before the final simplification.
#pragma once
#include "ir/IR.h"

namespace kiln {
namespace internal {

Stmt partition_loops(const Stmt &s);

}  // namespace internal
}  // namespace kiln
