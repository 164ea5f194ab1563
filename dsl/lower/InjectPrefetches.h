// Prefetches: each prefetch(f, at, from, offset, strategy) of a stage
// (Stage::prefetch) becomes, at the top of every iteration of the stage's
// loop `at`, a prefetch of the box of f (a Func or an image) that the
// iteration would read or write if loop `from` (at or outside `at`) were
// `offset` iterations further on. Values are unchanged; the host code
// generator emits __builtin_prefetch for every cache line of the box.
//
//   g.prefetch(f, x, y, 2):   for (g.s0.y) for (g.s0.x) { g(x, y) = f(x, y) * 2 }
//   ->  for (g.s0.y) for (g.s0.x) { if (<box inside f>) prefetch(f(g.s0.x, g.s0.y + 2), 1, 1)
//                                    g(x, y) = f(x, y) * 2 }
//
// The box is guarded (GuardWithIf: no prefetch when it leaves f's buffer),
// clamped to f's buffer (Clamp), or left alone (NonFaulting). Runs after
// bounds inference, sliding window and storage folding, so a prefetch
// widens no region, and before storage flattening, which turns
// prefetch(f(coordinates), extents...) into prefetch("f", index, extent,
// stride, ...). A loop or Func that does not fit (no such loop, `from`
// inside `at`, a vectorized `at`, f computed inside `at`, f not accessed
// there) is a CompileError naming the stage and the directive.
#pragma once
#include "RealizationOrder.h"

namespace kiln {
namespace internal {

Stmt inject_prefetches(const Stmt &s, const Environment &env, const std::vector<std::string> &outputs);

}  // namespace internal
}  // namespace kiln
