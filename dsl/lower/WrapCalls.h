// Redirect calls to wrapped Funcs and images to their wrappers (Func::in(),
// ImageParam::in()).
//
//   f.in(g) = f_in_g, f.in() = f_in:
//     g(x) = f(x) + f(x + 1);  h(x) = f(x) * 2;  f_in_g(x) = f(x);  f_in(x) = f(x)
//       ->  g(x) = f_in_g(x) + f_in_g(x + 1);  h(x) = f_in(x) * 2;  (the wrappers still call f)
//
// A consumer with its own wrapper (in(g)) uses it; every other caller uses
// the global wrapper (in()) if there is one, except the wrappers themselves
// and f's own updates. The wrappers' definitions, which name the wrapped Func
// or image without owning it, are relinked to it.
// Precondition: env holds the lowering copies of every reachable Func,
// wrappers included (find_environment calls this last).
#pragma once
#include "RealizationOrder.h"

namespace kiln {
namespace internal {

void wrap_calls(Environment &env);

}  // namespace internal
}  // namespace kiln
