// Replace each loop marked unrolled by copies of its body.
//
//   unrolled for (x, 0, 3) { f[x] = g[x] }   ->   f[0] = g[0]; f[1] = g[1]; f[2] = g[2]
//
// Precondition: simplified, so that the extent is a constant if it can be;
// a non-constant extent is a user error naming the loop, its Func and
// variable and the fix (LoopSources.h), prefixed with the .sched
// directive's "file:line:col: " if a schedule file asked for the unrolling.
#pragma once
#include "LoopSources.h"
#include "ir/IR.h"

namespace kiln {
namespace internal {

Stmt unroll_loops(const Stmt &s, const LoopSources &sources = {});

}  // namespace internal
}  // namespace kiln
