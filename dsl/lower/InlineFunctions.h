// Substitute every inlined Func's definition into its callers.
//
//   g(x) = f(x - 1) + f(x + 1);  f(x) = in(x) * 2   (f inlined)
//     ->  g(x) = in(x - 1) * 2 + in(x + 1) * 2
//
// Precondition: env from find_environment. A Func left at the default
// schedule that has update definitions cannot be inlined; like Halide, it is
// computed at the innermost loop of its consumer instead (schedule_functions
// places it). Afterwards no Call refers to an inlined Func.
#pragma once
#include "RealizationOrder.h"

namespace kiln {
namespace internal {

// Is f computed in place (inlined) under its schedule?
bool is_inlined(const FunctionContents &f, bool is_output);

void inline_functions(Environment &env, const std::vector<std::string> &outputs);

}  // namespace internal
}  // namespace kiln
