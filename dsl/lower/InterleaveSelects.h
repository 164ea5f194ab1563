// Turn a vector select on the parity of the lanes into an interleave of two
// half-width vectors, one per parity, each computing only the side its
// lanes pick. A demosaic writes its full-resolution image from
// half-resolution ones as select(x % 2 == 0, a(x / 2), b(x / 2)); under
// vectorize that evaluates both sides in every lane, each read as a
// repeated-lane load (every element twice). The even lanes have x =
// ramp(x0, 2, N/2), where x % 2 is the one value x0 % 2 and x / 2 is the
// dense ramp(x0 / 2, 1, N/2); the odd lanes are the same from x0 + 1:
//
//   out[ramp(x0, 1, 16)] =                    out[ramp(x0, 1, 16)] = interleave_vectors(
//     select(ramp(x0, 1, 16) % x16(2)            select((x0 % 2) == 0, a[ramp(x0 / 2, 1, 8)], b[ramp(x0 / 2, 1, 8)]),
//              == x16(0),                 ->     select(((x0 + 1) % 2) == 0, a[ramp((x0 + 1) / 2, 1, 8)],
//            a[ramp(x0, 1, 16) / x16(2)],                                    b[ramp((x0 + 1) / 2, 1, 8)]))
//            b[ramp(x0, 1, 16) / x16(2)])
//
// A scalar condition evaluates only the side it picks (IR.h), so each half
// computes one side, with dense loads. interleave_vectors(a, b) is a pure
// call of N lanes from two of N/2: a[0], b[0], a[1], b[1], ...
// (CodeGen_C emits the prologue's kiln_interleave).
//
// Only selects of non-bool values with a power-of-two lane count of at least
// 4 change, whose condition is the same in all even lanes and in all odd
// ones (after simplification), whose sides read no vector let, and where
// the halves read fewer elements lane by lane (gathers, strided or
// repeated-lane loads) than the select did: a select between two dense
// loads stays, as each half would read them with strided loads. Run on
// simplified, vectorized host code (after the simplify that follows
// partition_loops), before unswitch_dense_loads.
#pragma once
#include "ir/IR.h"

namespace kiln {
namespace internal {

Stmt interleave_parity_selects(const Stmt &s);

}  // namespace internal
}  // namespace kiln
