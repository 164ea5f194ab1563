// The simplifier: constant folding, algebraic rules and bounds-aware rules.
//
//   (x + 3) - (x - 1)                       ->  4
//   (xo*8 + xi + 7) / 8   with xi in [0, 8) ->  xo + (xi + 7)/8  ... and with
//                                                 constant bounds on xi it folds further
//   min(y + 1, y - 1)                       ->  y - 1
//   select(true, a, b)                      ->  a
//   for (x, 0, 1) { s }                     ->  let x = 0 in s
//   let a = (n / 2) * 2 - 1 in (a + 64 * i) % 2  ->  1   (residues through lets)
//   let a = m * 4 in ((a + 3) / 4) * 4      ->  a         (rounding down, residue known)
//
// Int32/Int64 sums are put in a canonical linear form (terms sorted, one
// constant), which is what makes bounds expressions cancel; as in Halide, the
// simplifier assumes signed index arithmetic does not overflow. Float
// arithmetic is only constant-folded, never reassociated. Loop variables with
// constant bounds are tracked, so comparisons and min/max over them fold.
#pragma once
#include <map>
#include <string>

#include "IR.h"

namespace kiln {
namespace internal {

Expr simplify(const Expr &e);
Stmt simplify(const Stmt &s);
// Simplify knowing that each named variable lies in a constant range.
Expr simplify(const Expr &e, const std::map<std::string, std::pair<int64_t, int64_t>> &var_ranges);

// Can the simplifier prove e is true (false when unsure)?
bool can_prove(const Expr &e);

}  // namespace internal
}  // namespace kiln
