// Decide a specialization nested in another one with the same condition.
//
// A specialization's condition (of Params and buffer fields) is fixed for
// the whole run, so inside `if (c) A else B` a nested `if (c)` is decided: its
// then-branch in A, its else-branch in B. Each conjunct of c is also known
// to be true in A. This is what lets a producer computed inside a specialized
// consumer be specialized on the same condition:
//
//   output.specialize(big)...   matmul.compute_at(output, yo)   matmul.specialize(big).unroll(x)
//
//   if (big) {                                     if (big) {
//     for (output.s0.x.xo ...) {                     for (output.s0.x.xo ...) {
//       if (big) { unrolled matmul }                   unrolled matmul
//       else { matmul loops } ...            ->        ...
//   } else {                                       } else {
//     for (output.s0.x.xo ...) {                     for (output.s0.x.xo ...) {
//       if (big) { unrolled matmul }                   matmul loops
//       else { matmul loops } ...                      ...
//
// Without it the unrolled copy in the fallback (whose extents are not
// constants there) would be rejected by unroll_loops, although it never runs.
// Likewise a bool expression equal to a known condition becomes a constant:
// bounds inference gives the producer one region for both copies,
// select(big, <tile>, <fallback's region>), which is the constant tile inside
// `if (big)` once simplified. Conditions are compared structurally; run after
// the loop nests are built and again after bounds inference, before
// simplification and unroll_loops.
#pragma once
#include "ir/IR.h"

namespace kiln {
namespace internal {

Stmt decide_specializations(const Stmt &s);

}  // namespace internal
}  // namespace kiln
