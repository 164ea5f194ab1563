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
// Runs last (the simplifier would substitute the lets back); host only.
#pragma once
#include "ir/IR.h"

namespace kiln {
namespace internal {

Stmt eliminate_common_subexpressions(const Stmt &s);

}  // namespace internal
}  // namespace kiln
