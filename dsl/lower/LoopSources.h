// Where each loop of a lowered statement came from: the Func, the stage and
// the name the user gave its variable, and the .sched directive (if any)
// that set its type. unroll_loops and vectorize_loops run long after the
// Funcs are gone from the statement; with this table their errors name the
// Func and the variable and give a fix the user can paste:
//
//   Loop out.s0.x is scheduled vectorize(), but its extent n is not a
//   constant; split off a constant-size loop with vectorize(x, 8) on out
//   (C++: out.vectorize(x, 8); .sched: out: vectorize(x, 8)), or give out a
//   constant size in x with bound(x, 0, N) on out, N the size it always has
//
// (a split's inner loop: "or split by a constant factor instead of n"; an
// RVar: "or give the RDom of r.x a constant extent").
#pragma once
#include <map>
#include <string>

#include "RealizationOrder.h"

namespace kiln {
namespace internal {

struct LoopSource {
    std::string origin;  // "file:line:col: " of the .sched directive, or ""
    std::string func;
    int stage = 0;
    std::string var;     // Dim::user_name: "xi", "r.x"
    bool is_rvar = false;
    // The Func's argument whose size the loop's extent follows ("y" for
    // y.yo), which bound() can make constant; "" if none.
    std::string sized_by;
    // The factor of the split that made the loop, if the loop is the
    // split's inner one (its extent is the factor); undefined otherwise.
    Expr split_factor;
    // The loop runs over a clamp's tail that autodiff sums at an edge
    // (ReductionVariable::boundary_tail), or over a split of it.
    bool boundary_tail = false;
};

using LoopSources = std::map<std::string, LoopSource>;  // by loop name ("out.s0.x.xi")

LoopSources loop_sources(const Environment &env);

// The error for loop `loop`, scheduled `directive` ("vectorize" or
// "unroll"), whose extent is not a constant: the origin, the loop and
// the fix. Without an entry for the loop, the fix is generic.
std::string non_constant_extent_error(const LoopSources &sources, const std::string &loop, const Expr &extent,
                                      const std::string &directive);

}  // namespace internal
}  // namespace kiln
