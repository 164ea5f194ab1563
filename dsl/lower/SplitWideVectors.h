// Split a vectorized loop whose vectors would be wider than two of the
// target's registers into an unrolled loop of one-register vectors: the
// loop of constant extent n whose widest value loaded or stored is of b
// bytes becomes n / k vectors of k = (register bytes) / b lanes.
//
//   vectorized for (x, 0, 64) { f[x + i] = f[x + i - 64] * a + g[x + j] }          (float32, AVX-512: k = 16)
//     ->  unrolled for (x_reg, 0, 4) {
//           vectorized for (x_lane, 0, 16) { let x = x_reg * 16 + x_lane
//                                            f[x + i] = f[x + i - 64] * a + g[x + j] } }
//
// Why: g++ has no machine mode for a vector wider than the widest register
// (a float32 x 64 is 2048 bits), so it computes one in memory, piece by
// piece: the IIR blur's recurrence down 64 columns a vector (Halide's
// schedule: vectorize(x) over a strip of 4 x natural_vector_size columns)
// spent a third of its samples reloading spilled pieces and ran 2.2x slower
// than in four 16-lane vectors, which is what Halide's LLVM legalizes such
// a vector to. Vectors of two registers (camera_pipe's 64 lanes of uint16)
// are left as the schedule wrote them; the code generator splits their
// compares and selects itself (docs/compiler.md).
//
// Lanes of a vectorized loop are independent, so any order of them
// computes the same values. Only loops of a constant extent of at most 64
// that k divides and with no vectorized loop inside are split; the others
// are left to vectorize_loops, whose user errors (a non-constant extent,
// more than 64 lanes, nested vectorized loops) then name the loops as the
// schedule made them. Precondition: simplified, before unroll_loops.
#pragma once
#include "ir/IR.h"

namespace kiln {
namespace internal {

Stmt split_wide_vectors(const Stmt &s, int register_bytes);

}  // namespace internal
}  // namespace kiln
