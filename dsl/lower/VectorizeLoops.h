// Vectorization: a loop marked vectorized with constant extent n becomes
// one copy of its body in which the loop variable is the vector
// ramp(min, 1, n); scalars combined with vectors are broadcast.
//
//   vectorized for (x, 0, 8) { f[x + 16] = g[x] * 2 }
//     ->  f[ramp(16, 1, 8)] = g[ramp(0, 1, 8)] * x8(2)
//
// A guard inside the loop that depends on x (a GuardWithIf tail, an RDom
// where()) is affine in x in practice; then the vector body runs when the
// guard holds at the first and the last lane, and a scalar loop otherwise:
//
//   if (x.min + 7 <= f.s0.x.loop_max) { vector body } else { lanes for (x, ...) { scalar body } }
//
// The scalar loop is a ForType::LaneFallback loop: it runs once per tail, so
// the host code generator prints it with `#pragma GCC unroll 1` (g++ -O3
// would otherwise unroll it completely, a guarded copy of the body per lane:
// 30% of softmax's compile time in its two rfactor tails).
//
// Guards that are not affine, or inner loops whose bounds depend on x, make
// the loop scalar. A load through a clamped ramp (boundary conditions) also
// gets a dense fast path: select(lo <= b && b + 7 <= hi, dense load, gather).
// Precondition: storage flattening and unrolling have run, simplified.
// A vectorized loop of non-constant extent is a user error naming the loop,
// its Func and variable and the fix (LoopSources.h), prefixed with the
// .sched directive's "file:line:col: " if a schedule file set the type.
#pragma once
#include "LoopSources.h"
#include "ir/IR.h"

namespace kiln {
namespace internal {

Stmt vectorize_loops(const Stmt &s, const LoopSources &sources = {});

}  // namespace internal
}  // namespace kiln
