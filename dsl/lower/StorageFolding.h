// Storage folding: a Func stored outside the serial loop it is computed in,
// whose region in one dimension is a window of constant size c moving
// forward with that loop, needs only c rows live at a time; its storage in
// that dimension becomes a circular buffer of the next power of two >= c.
//
//   blur_x.store_root().compute_at(out, y)   (window of 3 rows)
//     realize blur_x([x0, w], [y0, h])  ->  realize blur_x([x0, w], [y0, h] folded by 4)
//     and storage flattening indexes that dimension by (y mod 4)
//
// fold_storage(y, n) asks for a fold of n rows instead, in any dimension
// whose region moves monotonically with the compute loop (forward, or
// backward with fold_forward = false). The rows live in one iteration are
// the window its consumers read and any rows its producer writes past it (a
// split's tail). More than n of them is a CompileError when their number is
// a constant, else checked by the kernel at the top of the compute loop:
//
//   blur_x.store_root().compute_at(out, y).fold_storage(y, 3)  ->  ... [y0, h] folded by 3)
//   g(x, y + k) read, k a Param, fold_storage(y, 4)  ->  for (out.s0.y, ...) { let ...; assert((k <= 3), "...") ...
//
// A fold_storage on a Func with no storage of its own (inlined, an output),
// stored where it is computed, or whose region moves both ways is a
// CompileError. `reports` (if given) gets each fold of the Funcs that
// sliding_window reported on.
//
// Precondition: the region lets are still right inside the compute loop
// (sliding_window keeps them there; run before simplification).
#pragma once
#include "RealizationOrder.h"
#include "SlidingWindow.h"

namespace kiln {
namespace internal {

Stmt storage_folding(const Stmt &s, const Environment &env, SlidingReports *reports = nullptr);

}  // namespace internal
}  // namespace kiln
