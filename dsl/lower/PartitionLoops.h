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
// IfThenElses are partitioned the same way: the guard that vectorize_loops
// puts around a vectorized loop with a guarded tail (all lanes in range ->
// one vector, else the scalar loop over the lanes), as an rfactor split or
// GuardWithIf makes, is decided outside the steady state:
//
//   for (ro, 0, (n + 7) / 8) { if (ro*8 + 7 < n) { acc[ramp(0, 1, 8)] += in[ramp(ro*8, 1, 8)] }
//                              else { for (u, 0, 8) { if (ro*8 + u < n) { acc[u] += in[ro*8 + u] } } } }
//     ->  for (ro, ro.steady_min, ...) { acc[ramp(0, 1, 8)] += in[ramp(ro*8, 1, 8)] }  + the tail loops
//
// so the steady state holds no scalar access to a small accumulator, which
// the C++ compiler then keeps in a register.
//
// An int32 min/max with the loop variable in one operand, in the loop's own
// body (not inside an inner loop), is that operand in the steady state:
//
//   for (x.x, 0, n) { out[ramp(min(x.x * 8, w - 8), 1, 8)] = ... }
//     ->  for (x.x, 0, x.x.steady_max + 1) { out[ramp(x.x * 8, 1, 8)] = ... }  + the last vector
//
// Around a loop nest (a tile loop whose last tile is shifted inwards) the
// min/max gives values computed once per iteration, and a steady state would
// copy the whole nest for them, which doubled the C++ compiler's time on
// harris, unsharp and the GEMM: a loop with inner loops is partitioned on
// its mins and maxes only when the steady state, simplified, holds fewer
// loops and starts at the first iteration, and only on those mins and
// maxes that need no invariant condition. That is a tile of a RoundUp split
// with producers computed per tile: their region is the tile clamped to the
// consumer's region, so every tile computed them over a run-time extent,
// though only the last one is cut (their one-iteration vector loops vanish
// in the steady state):
//
//   for (c.x.xo, 0, n) {                          for (c.x.xo, 0, c.x.xo.steady_max + 1) {
//     let f.x.min = max(c.min + c.x.xo * 64,        let f.x.min = c.min + c.x.xo * 64
//                       c.min)                      let f.x.max = c.min + c.x.xo * 64 + 63
//     let f.x.max = min(c.min + c.x.xo * 64   ->    <f's loops over 64 columns: constant extents>
//                       + 63, c.max)              }
//     <f's loops over f.x.max - f.x.min + 1>      for (c.x.xo, c.x.xo.steady_max + 1, ...) { <as before> }
//   }
//
// (camera_pipe's demosaic and colour matrix, computed per 64 x 2 tile of
// the curved image). A lower bound at or below the loop's first iteration
// (max(c.min + c.x.xo * 64, c.min) holds from c.x.xo = 0 on) is dropped;
// any other would need a prologue, a third copy of the nest.
//
// A vector Select whose condition holds in every lane together when a
// scalar affine condition does (a conjunction of broadcast scalars and of
// ramps compared with broadcasts: autodiff's zero outside an adjoint's
// region) is its true value in the steady state too:
//
//   select(ramp(x*8, 1, 8) >= x8(m) && ramp(x*8, 1, 8) <= x8(M), g[ramp(x*8, 1, 8)], x8(0))
//     -> steady state (x*8 >= m && x*8 + 7 <= M): g[ramp(x*8, 1, 8)]
//
// A short innermost loop of a constant extent (at most 16 iterations, what
// g++ unrolls whole) with Selects or IfThenElses decided in the steady
// state is copied once more, whole: where the tests hold from its first
// iteration to its last (a row of a producer computed per tile, in the
// tiles inside the image) it runs that copy, with the tests decided and its
// constant extent kept, which the C++ compiler unrolls; elsewhere the
// partitioned loops:
//
//   for (g.x.x, 0, 9) {                            if (m <= g.x.min && g.x.min + 71 <= M) {
//     g[ramp(min(g.x.x * 8, 60), 1, 8)] =            for (g.x.x, 0, 9) { g[ramp(min(g.x.x * 8, 60), 1, 8)] = dense }
//       select(m <= g.x.min + min(g.x.x * 8, 60)  -> } else {
//              && ..., dense, gather)                let g.x.x.steady_min = ..., g.x.x.steady_max = ...
//   }                                                <the three loops, as above>
//                                                  }
//
// The test is sufficient, not exact (each min's operands both in range).
// Outer loops are not partitioned on it: that would copy a tile loop's
// whole nest for the edge tiles.
//
// Otherwise only scalar-conditioned Selects, and IfThenElses with an else case, whose
// condition is a conjunction of comparisons affine in the loop variable
// (after substituting the body's lets) are used (an IfThenElse with another
// condition, or a guard without an else, stays as it is); the partitioned
// loop must be serial (ForType::Serial: a vector tail's per-lane loop,
// ForType::LaneFallback, runs at most once per tail and is left whole, as
// its copies would cost the C++ compiler far more than they save). So is a
// loop over a clamp's tail that autodiff sums at an edge (LoopSource::
// boundary_tail, from `sources`): it runs over the reader's overhang beyond
// the input, a stencil's reach, and its steady state is empty unless the
// output reaches two points past the input, while each copy of its body
// (every tap guarded by the adjoint's region) cost g++ as much as the
// whole interior (blur3x3_grad host_tiled's edge and corner sums: its
// kernel 453 -> 266 KB of C++, g++ -S 21.6 -> 6.8 s of CPU on a loaded
// machine; docs/performance.md, "Compile time (session 43)"):
//
//   for (f.s1.y, ...) { for (f.s1.f_r1.x, d_out.min.0 - 1, input.min.0 - d_out.min.0 + 1) { f(0, y) += <9 taps> } }
//     ->  unchanged (no steady_min / steady_max, one copy of the taps)
//
// The prologue and the epilogue hold the same body, which the host code
// generator emits once, as a local function both call, when the loop
// holds a loop or the body is large (CodeGen_C::emit_shared_edges); a
// change that makes them differ costs the C++ compiler a copy of it.
//
// Runs after vectorize_loops, before the final simplification.
#pragma once
#include "LoopSources.h"
#include "ir/IR.h"

namespace kiln {
namespace internal {

Stmt partition_loops(const Stmt &s, const LoopSources &sources);

}  // namespace internal
}  // namespace kiln
