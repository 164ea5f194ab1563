// Forward values an adjoint needs that no Func of the pipeline holds: the
// value of a Func after an earlier stage (its final value overwrites it),
// and which point of a min or max reduction won.
//
//   f(x) = g(x);  f(x) = f(x) * f(x);          stage_value(f, 0):  f_0_value(x) = g(x)
//     (the update's derivative 2 * f(x) must read f before the update)
//
//   m(y) = 0;  m(y) = max(m(y), in(r, y));     winner(m, 1, m_0_value, m):
//     m_1_argmax(y) = select(m_0_value(y) == m(y), -1, INT_MAX);   // m_0_value = stage_value(m, 0)
//     m_1_argmax(y) = min(m_1_argmax(y), select(in(r, y) == m(y), r - r.min, INT_MAX));
//     (-1: the value before the reduction won; ties go to the first point in
//     iteration order, as a serial max that replaces only on > would pick)
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

// For update `stage` of f, f(vars) = max(f(vars), incoming) (or min), with
// `before` and `after` the values of f before and after it
// (stage_value(f, stage - 1), and f itself or stage_value(f, stage)): which
// point won, "<f>_<stage>_argmax", a Func of f's Vars. Its value is the
// winning point's winner_index(), -1 when the value before won, and the
// type's largest value when nothing equals the result (a NaN). A min
// reduction of integers: rfactor() splits it into vector lanes exactly.
Func winner(const std::shared_ptr<FunctionContents> &f, int stage, const Func &before, const Func &after,
            const Expr &incoming);

// The position of an RDom point in its iteration order (r.x innermost):
// (r.x - r.x.min) + r.x.extent * ((r.y - r.y.min) + ...). Int(32) for one
// RVar, Int(64) for several.
Expr winner_index(const std::shared_ptr<ReductionDomainContents> &rdom);

}  // namespace internal
}  // namespace kiln
