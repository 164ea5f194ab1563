// Under fast_math, a float sum into a local accumulator in an innermost
// serial loop is split over k vector accumulators, so that the adds of one
// iteration do not wait for the previous one's. One accumulator is one
// chain of dependent adds: g++ vectorizes the loop below into one vector
// register and is then bound by the add's latency (3 cycles on Zen 4, which
// could start two adds a cycle); k = 4 independent vectors keep the adder
// busier. Each of the k accumulators is L lanes of 32 bytes (8
// floats), or the target's vector if it is narrower (SplitFloatSums.cpp
// says why not 64):
//
//   for (r, m, n) {                           let r.n = max(n, 0)
//     let t = ..                              if (4 * L <= r.n) {
//     s[i] = s[i] + f(r, t)                     allocate s.parts.0[float32 * 4L], s.lanes.0[float32 * L]
//   }                                  ->       s.parts.0[ramp(jL, 1, L)] = xL(0)       (j = 0..3)
//                                               for (r.o, 0, r.n / 4L) {
//                                                 let t = ..(r = m + r.o * 4L + jL + ramp(0, 1, L))
//                                                 s.parts.0[ramp(jL, 1, L)] += f(..)   (j = 0..3)
//                                               }
//                                               s.lanes.0[ramp(0, 1, L)] = (p0 + p1) + (p2 + p3)
//                                               s[i] = s[i] + ((l0 + l1) + ...)   (a tree over the L lanes)
//                                             }
//                                             for (r, m + (r.n / 4L) * 4L, r.n - (r.n / 4L) * 4L) { as before }
//
// The main part is built as loops and lowered by the passes that lower a
// schedule's loops: an outer serial loop over an unrolled loop over the k
// accumulators over a vectorized one (unroll_loops, vectorize_loops), so
// the k vectors are one array of vectors, whose slots g++ keeps in
// registers (codegen/VectorSlots.h). The remainder keeps the loop as it
// was, and runs the terms after the main part's in their order.
//
// The sum's value changes (its terms are added in another order), so only
// for targets with fast_math, which allows reassociation; lower() does not
// run the pass otherwise, and without fast_math every result stays that of
// the serial order. A sum qualifies when the store is into a
// constant-size allocation in scope (a local: promote_accumulators' or a
// small Func's), of a scalar float32 or float64 at an index the loop does
// not change, and its value is a sum (Add nodes) with exactly one term
// the accumulator's element at that index and no other read of the
// allocation in the body. Left alone: a loop of constant extent below one
// block (4L terms), one whose vectorized terms are not all dense loads
// (a strided sum would gather), and one whose terms divide floats or call
// a function (bound by that work, not by the adds). Run after promote_accumulators, whose
// locals it splits.
#pragma once
#include "ir/IR.h"
#include "kiln/Target.h"

namespace kiln {
namespace internal {

Stmt split_float_sums(const Stmt &s, const Target &target);

}  // namespace internal
}  // namespace kiln
