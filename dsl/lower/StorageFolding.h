// Storage folding: a Func stored outside the serial loop it is computed in,
// whose region in one dimension is a window of constant size c moving
// forward with that loop, needs only c rows live at a time; its storage in
// that dimension becomes a circular buffer of the next power of two >= c.
//
//   blur_x.store_root().compute_at(out, y)   (window of 3 rows)
//     realize blur_x([x0, w], [y0, h])  ->  realize blur_x([x0, w], [y0, h] folded by 4)
//     and storage flattening indexes that dimension by (y mod 4)
//
// Precondition: the region lets are still right inside the compute loop
// (sliding_window keeps them there; run before simplification).
#pragma once
#include "RealizationOrder.h"

namespace kiln {
namespace internal {

Stmt storage_folding(const Stmt &s, const Environment &env);

}  // namespace internal
}  // namespace kiln
