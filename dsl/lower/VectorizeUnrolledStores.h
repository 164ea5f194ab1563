// An unrolled loop whose copies are the lanes of one vector is computed as
// that vector: a loop marked unrolled with a constant extent n (a power of
// two, at most 64) whose body stores one element per buffer, at an index
// that moves by one with the loop variable, and reads no element another
// copy writes, becomes a vectorized loop, if its widest stored vector
// would be at least 16 bytes (a register; two floats stay two copies).
//
//   unrolled for (x, 0, 8) { eq[x] = min(float32(cdf[int32(Y[i + x])]) * s, 255.0f) }
//     ->  vectorized for (x, 0, 8) { ... }  ->  (vectorize_loops)
//         eq[ramp(0, 1, 8)] = min(float32x8(cdf[int32x8(Y[ramp(i, 1, 8)])]) * x8(s), x8(255.0f))
//
// Why: the copies compute the same expression on consecutive elements, so
// they are one vector's lanes; what LLVM's SLP vectorizer makes of Halide's
// unrolled copies. g++ does not find it: hist_equalize's `equalize`
// (unroll(x) per vector of the output, eight cdf lookups) stayed eight
// scalar conversions and clamps with branches and eight inserts into the
// vector the output reads, 1.6x the samples of the whole output stage that
// Halide's vector code takes (docs/performance.md).
//
// Each copy computes what it computed before, in the same order within the
// copy, and no copy reads what another writes (a load of a stored buffer
// must be at the store's own index: f[x] = f[x] + g[x]), so the lanes
// are independent and the values are the unrolled loop's. Left alone (and
// unrolled by unroll_loops): a body with a loop, an if, an allocation or an
// assertion in it, a store whose index does not move by exactly one, two
// stores to one buffer, a loop inside a vectorized loop, an extent that is
// not a constant power of two. These are also the cases where
// vectorize_loops would fall back to a scalar loop, so a loop this pass
// marks is always vectorized. Precondition: flattened and simplified,
// before split_wide_vectors (which then splits a vector wider than two
// registers) and unroll_loops.
#pragma once
#include "ir/IR.h"

namespace kiln {
namespace internal {

Stmt vectorize_unrolled_stores(const Stmt &s);

}  // namespace internal
}  // namespace kiln
