// Common subexpressions of a store, named once: each subexpression that a
// Store's value and index compute more than once (a load read by two taps,
// the index arithmetic of a shifted tile) becomes a let before the store.
//
//   out[ramp(min(x*8, w - 8) + r, 1, 8)] = in[ramp(min(x*8, w - 8) + r, 1, 8)] * in[ramp(min(x*8, w - 8) + r, 1, 8)]
//     ->  let cse.0 = min(x*8, w - 8) + r
//         let cse.1 = in[ramp(cse.0, 1, 8)]
//         out[ramp(cse.0, 1, 8)] = cse.1 * cse.1
//
// Why: the emitted C++ is what the C++ compiler parses, inlines and then
// deduplicates itself; a stencil's store (harris: 177 vector loads of 48
// distinct ones, each index repeating the tile's shifted first column) cost
// it most of its time. The kernel computes the same values in the same
// order: every named subexpression is one the store evaluated anyway.
//
// What is never named: leaves, ramps and broadcasts (the code generator
// reads a load's ramp index to emit a dense load), integer and bool
// vectors (indices and masks keep their form), calls other than pure
// externs (Func and image calls do not reach here), and nothing inside the
// branches of a Select or either side of a scalar && or || (evaluated only
// on one path) or inside a Let (its names are bound there).
//
// Across stores: consecutive stores (an update unrolled over a channel, a
// Tuple's elements) are taken together, and what they compute alike is
// named once before the first of them:
//
//   h[((int32(v * 8.0f) * 2) + 0)] = (h[...] + v)      let cse.0 = max(min(in[r], 1.0f), 0.0f)
//   h[((int32(v * 8.0f) * 2) + 1)] = (h[...] + 1.0f) -> let cse.1 = (int32(cse.0 * 8.0f) * 2)
//     (v = max(min(in[r], 1.0f), 0.0f))                  h[cse.1] = (h[cse.1] + cse.0)
//                                                        h[(cse.1 + 1)] = (h[(cse.1 + 1)] + 1.0f)
//
// Why: the C++ compiler cannot share them itself, as a store through a
// `float *` may change the input it reads (bilateral_grid's splat loaded,
// clamped and converted each pixel twice). What moves before the first
// store is what every store evaluates anyway, minus what could read
// something a store writes: nothing that loads a stored buffer, and no load
// at all unless every store writes one of the pipeline's own allocations
// (which overlap nothing else).
//
// Runs last (the simplifier would substitute the lets back); host only.
#pragma once
#include "ir/IR.h"

namespace kiln {
namespace internal {

Stmt eliminate_common_subexpressions(const Stmt &s);

}  // namespace internal
}  // namespace kiln
