// Storage flattening: multi-dimensional Realize/Provide/Call become a flat
// Allocate with Store/Load at computed offsets.
//
//   realize f([x0, 10], [y0, 4]) { f(x, y) = ...; ... f(x, y + 1) }
//     ->  let f.min.0 = x0; let f.stride.1 = 10; ...
//         allocate f[float32 * 40] { f[(x - f.min.0) + (y - f.min.1)*f.stride.1] = ... }
//
// A dimension folded by k (storage folding) is indexed by (y mod k). A Func
// scheduled reorder_storage(y, x) gets its strides in that order instead:
//
//     ->  let f.stride.1 = 1; let f.stride.0 = f.stride.1 * f.extent.1; ...
//         f[(x - f.min.0)*f.stride.0 + (y - f.min.1)] = ...
//
// Images
// and outputs use their buffer's min and stride variables ("in.min.0",
// "in.stride.1", ...). A Func returning a Tuple has one buffer per element,
// "f.0", "f.1", ... (its element types may differ); its Provide computes
// every value before storing any:
//
//   f(x) = {select(v > f(x)[0], v, f(x)[0]), select(v > f(x)[0], r, f(x)[1])}
//     ->  let f.0.value = select(v > f.0[x - f.0.min.0], ...)
//         let f.1.value = select(v > f.0[x - f.0.min.0], r, f.1[x - f.1.min.0])
//         f.0[x - f.0.min.0] = f.0.value
//         f.1[x - f.1.min.0] = f.1.value
//
// A realization that is an output's buffer when a condition holds at run
// time (realize_into_outputs) takes that buffer's strides then, chosen
// when it starts; the producer is emitted once and addresses either:
//
//   realize f([x0, w], [y0, h]) in out if (f.in_place) { ... }
//     ->  let f.stride.1 = select(f.in_place, out.stride.1, f.stride.0 * f.extent.0) ...
//         allocate f[float32 * (f.extent.0 * f.extent.1)] in out if (f.in_place) { ... }
//
// `env` tells which Funcs are Tuples. Postcondition: no Realize, Provide or
// Func/Image Call.
#pragma once
#include "RealizationOrder.h"
#include "ir/IR.h"

namespace kiln {
namespace internal {

Stmt storage_flattening(const Stmt &s, const Environment &env = {});

}  // namespace internal
}  // namespace kiln
