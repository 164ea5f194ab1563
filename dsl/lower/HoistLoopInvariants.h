// Loop-invariant code motion: what a loop's body computes the same way in
// every iteration is computed once, in lets before the loop.
//
//   for (x.x.x, 0, 32) {                            let licm.0 = (t / c.extent)
//     for (dx, -26, 53) {                           let licm.1 = ((min((licm.0 * 256), w) + o.min) - v.min)
//       m[ramp(0, 1, 8)] = max(m[ramp(0, 1, 8)],    for (x.x.x, 0, 32) {
//         v[ramp(((fh[dx] * 308) + dx)          ->    let licm.2 = ((x.x.x * 8) + licm.1)
//                + (min(((t / c.extent) * 256),       for (dx, -26, 53) {
//                       w) + o.min)                     m[ramp(0, 1, 8)] = max(m[ramp(0, 1, 8)],
//                + (x.x.x * 8)) - v.min, 1, 8)])          v[ramp(((fh[dx] * 308) + dx) + licm.2, 1, 8)])
//     }                                               }
//     out[..] = m[ramp(0, 1, 8)]                      out[..] = m[ramp(0, 1, 8)]
//   }                                               }
//
// Loops are taken innermost first; for each:
// - a LetStmt of the body whose value is invariant (names nothing the body
//   binds, reads no memory) moves before the loop, with its name;
// - a sum of integers (+ and -) with two or more invariant terms among
//   varying ones is regrouped, its invariant terms added first and named:
//   ((a + x) + b) - c  ->  (a + x) + licm.0, licm.0 = b - c (x varies);
// - every other maximal invariant scalar subexpression worth a name is
//   named: an operation of operations, a division or modulo (by anything
//   but a power of two), a call. Operations of leaves (x * 8, a + b) are
//   left to the C++ compiler, which hoists them itself.
// An invariant let or name before a loop is invariant in the loop around it
// too, so it moves on outwards when that loop is taken; names of one value
// met there become one (and so do the licm.N lets left at the head of the
// loop's body that its regrouping made alike). Between a parallel
// loop and a parallel loop nested directly in it, over a range that does not
// depend on it, nothing is left: the lets go inside the inner loop, so that
// the code generator still makes the two one OpenMP loop.
//
// Why: g++ does not hoist an integer division out of a loop: kiln_div
// branches on a zero divisor and a negative remainder, and a division it
// would move past the branch may trap (max_filter's fused `t` loop divided
// three times per output vector, docs/performance.md). Nor does it
// reassociate signed sums to group their invariant terms (they may
// overflow in C++; in the IR their overflow is undefined, IR.h).
//
// Safe: no expression of the IR traps (a division by zero is zero, IR.h),
// and nothing that reads memory or has an effect (prefetch) moves, so a
// value computed before a loop that runs zero times, or under a condition
// that would not have held, is computed and not used. Vectors are not
// named (their scalar parts are). A lowered pipeline never shadows a name
// but its sibling statements may repeat one (unrolled copies, Lower.h): a
// let whose name the loops' bodies bind twice, or that is also bound
// around the loops, stays where it is, so a moved let shadows nothing.
//
// Runs last (the simplifier would substitute the lets back); host only (the
// NPU's instruction selection matches loop bodies as they are).
#pragma once
#include "ir/IR.h"

namespace kiln {
namespace internal {

Stmt hoist_loop_invariants(const Stmt &s);

}  // namespace internal
}  // namespace kiln
