// One read's contribution to an adjoint Func, as a definition of that Func.
//
// A stage of Func f reads g at args A(x, r) (x f's pure Vars in f's region,
// r the stage's RVars), and reverse accumulation gave that read the adjoint
// c(x, r). The adjoint of g receives c at A(x, r) for every (x, r): a
// scatter, which is turned into a gather, a definition at g's own Vars u,
// by solving A(x, r) = u for the variables, one argument at a time:
//
//   g(x - 1)        ->  g_adj(u) = c[x -> u + 1]
//   g(2 * x)        ->  g_adj(u) = select(u % 2 == 0, c[x -> u / 2], 0)
//   g(x / 2)        ->  g_adj(u) = c[x -> 2 * u] + c[x -> 2 * u + 1]
//   g(r, y)         ->  g_adj(u, v) = select(u in r's range, c[r -> u, y -> v], 0)
//   g(x)  in f(x, y) ->  g_adj(u) += c[y -> ry]  over an RDom ry spanning f's region in y
//   g(x + r.x)       ->  g_adj(u) += c[x -> u - rr, r.x -> rr]  over an RDom rr spanning r.x
//
// An argument of several variables (a convolution's tap) is solved for one
// of them, a pure Var rather than an RVar, only when no argument of one
// variable is left; the others are summed over, so the gather costs what
// the forward stage did.
//
// A clamped read (repeat_edge) is a gather inside the clamp's range and,
// for each end, an update at that end summing the points clamped to it:
//
//   g(clamp(x, 0, w - 1))  ->  g_adj(u) = select(0 <= u <= w - 1, c[x -> u], 0)
//                              g_adj(0) += c[x -> rx]       rx over [f.min, -1]
//                              g_adj(w - 1) += c[x -> rx]   rx over [w, f.max]
//
// Clamped in several dimensions, each end of each clamp is one update, in
// which the clamps of the dimensions before are inside and those after
// run over the reader's whole range, written at their clamp: 2n updates
// in n dimensions, the corners summed with the first dimension's ends:
//
//   g(clamp(x, 0, w - 1), clamp(y, 0, h - 1))
//     ->  g_adj(0, clamp(ry, 0, h - 1)) += c[x -> rx, y -> ry]     rx over [f.min.x, -1], ry over [f.min.y, f.max.y]
//         g_adj(u, 0) += select(0 <= u <= w - 1, c[x -> u, y -> ry], 0)    ry over [f.min.y, -1]
//         (and the same at w - 1 and at h - 1)
//
// A read no solution inverts (a data-dependent index, two Vars in one
// argument, the select of a mirrored boundary) becomes a general scatter,
// an update over an RDom spanning the variables it leaves:
//
//   g(idx(x))  ->  g_adj(idx(rx)) += c[x -> rx]   (rx over f's region)
//
// Forward reads inside c are clamped to f's region (and r's range), so an
// adjoint never reads the forward pipeline where it did not compute; the
// adjoint of f itself is read unclamped (it is zero outside f's region).
#pragma once
#include <string>
#include <vector>

#include "analysis/Bounds.h"
#include "ir/IR.h"

namespace kiln {
namespace internal {

// The stage whose read is differentiated.
struct ReadingStage {
    std::string what;                     // "blur_x", "f.update(0)", for messages
    std::vector<std::string> pure_vars;   // its pure Vars
    std::vector<Interval> pure_ranges;    // their ranges (f's region; unbounded ends undefined)
    std::vector<ReductionVariable> rvars;  // its RDom's variables
    Expr predicate;                        // its RDom's where() condition, or undefined
};

// A definition of the adjoint Func receiving the contribution.
struct AdjointTerm {
    std::vector<Expr> lhs;  // the arguments of the definition: g's Vars for a gather
    Expr value;             // the contribution, with its RDom's RVars if it sums or scatters
    bool scatter = false;   // some argument of lhs is not a bare Var
};

// `target` names the adjoint Func (for its RDom's name and messages),
// `target_vars` are its pure Vars; `contribution` is c, in which the
// Variable `seed_name` stands for `seed` (the adjoint of the reading
// stage's value, read unclamped).
std::vector<AdjointTerm> gather_or_scatter(const std::string &target, const std::vector<std::string> &target_vars,
                                           const std::vector<Expr> &access_args, const Expr &contribution,
                                           const std::string &seed_name, const Expr &seed, const ReadingStage &stage);

}  // namespace internal
}  // namespace kiln
