// Remove stop_gradient() marks: they matter only to propagate_adjoints, which
// runs on the Funcs' definitions before lowering; the value is its operand.
//
//   probs(j, i) = exp(scores(j, i) - stop_gradient(row_max(i)))
//     ->  probs(j, i) = exp(scores(j, i) - row_max(i))
//
// Run right after schedule_functions(), so that no later pass (bounds,
// vectorization, code generation) sees the call.
#pragma once
#include "ir/IR.h"

namespace kiln {
namespace internal {

Stmt strip_stop_gradient(const Stmt &s);

}  // namespace internal
}  // namespace kiln
