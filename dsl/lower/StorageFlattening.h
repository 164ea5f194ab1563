// Storage flattening: multi-dimensional Realize/Provide/Call become a flat
// Allocate with Store/Load at computed offsets.
//
//   realize f([x0, 10], [y0, 4]) { f(x, y) = ...; ... f(x, y + 1) }
//     ->  let f.min.0 = x0; let f.stride.1 = 10; ...
//         allocate f[float32 * 40] { f[(x - f.min.0) + (y - f.min.1)*f.stride.1] = ... }
//
// A dimension folded by k (storage folding) is indexed by (y mod k). Images
// and outputs use their buffer's min and stride variables ("in.min.0",
// "in.stride.1", ...). Postcondition: no Realize, Provide or Func/Image Call.
#pragma once
#include "ir/IR.h"

namespace kiln {
namespace internal {

Stmt storage_flattening(const Stmt &s);

}  // namespace internal
}  // namespace kiln
