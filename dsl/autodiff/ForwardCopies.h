// Forward values an adjoint needs that no Func of the pipeline holds: the
// value of a Func after an earlier stage (its final value overwrites it),
// and which point of a min or max reduction won.
//
//   f(x) = g(x);  f(x) = f(x) * f(x);          stage_value(f, 0):  f_0_value(x) = g(x)
//     (the update's derivative 2 * f(x) must read f before the update)
//
//   m(y) = 0;  m(y) = max(m(y), in(r, y));     winner(m, 1):
//     m_1_argmax(y) = Tuple(m_0_value(y), r.min - 1);    // m_0_value = stage_value(m, 0)
//     m_1_argmax(y) = select(in(r, y) > m_1_argmax(y)[0], Tuple(in(r, y), r), Tuple(m_1_argmax(y)));
//     (index r.min - 1: the value before the reduction won; ties keep the first)
//
// Both are ordinary Funcs, scheduled like any other; those with updates
// start compute_root() (at the innermost loop of each consumer, the default
// of a Func with updates, they would be recomputed for every point).
#pragma once
#include <memory>

#include "ir/Function.h"
#include "kiln/Func.h"

namespace kiln {
namespace internal {

// e with f's calls to itself (kept without a pointer) made calls to `to`.
Expr redirect_self_calls(const Expr &e, const std::string &f, const Func &to);

// A copy of f's definitions 0..stage, named "<f>_<stage>_value".
Func stage_value(const std::shared_ptr<FunctionContents> &f, int stage);

// For update `stage` of f, f(vars) = max(f(vars), incoming) (min when
// !is_max), with `before` the value of f before it (stage_value(f, stage - 1)),
// a Func of f's Vars whose element 0 is the reduced value and
// elements 1.. the RVars of the point that gave it, named
// "<f>_<stage>_argmax".
Func winner(const std::shared_ptr<FunctionContents> &f, int stage, const Func &before, const Expr &incoming,
            bool is_max);

}  // namespace internal
}  // namespace kiln
