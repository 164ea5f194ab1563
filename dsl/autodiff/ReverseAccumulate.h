// Reverse accumulation over one expression: given the adjoint of an
// expression's value (`seed`), the adjoint of every leaf that carries a
// gradient — each float read of a Func or image, each float Param — by the
// chain rule applied node by node from the root to the leaves. Shared
// subexpressions are visited once, after all their parents.
//
//   value  f(x - 1) * exp(g(x)),  seed S
//     ->   f(x - 1): S * exp(g(x))        g(x): (S * f(x - 1)) * exp(g(x))
//
// Integer and boolean nodes carry no gradient (a comparison, an index, a
// cast to an integer): nothing flows through them. Min, max and select send
// the adjoint to the side that was picked; floor, ceil and round have
// derivative zero. An operation with no derivative on floats is a
// CompileError naming `what` (the Func and stage being differentiated).
#pragma once
#include <string>
#include <vector>

#include "ir/IR.h"

namespace kiln {
namespace internal {

struct LeafAdjoint {
    Expr leaf;     // a Call (Func or Image) or a Param's Variable
    Expr adjoint;  // in terms of the seed
};

// `self`, if defined, reads `value` back (its Func's call at the stage's
// own Vars): a derivative that is the value itself (exp, and tanh, sqrt,
// pow, a quotient through it) reads it there instead of computing it again,
//
//   exps(x) = exp(in(x) - m)   ->   in(x): S * exps(x)     (not S * exp(in(x) - m))
//
// so a backward pass whose forward Func is computed (vectorized, once)
// does not evaluate the function a second time per point.
std::vector<LeafAdjoint> reverse_accumulate(const Expr &value, const Expr &seed, const std::string &what,
                                            const Expr &self = Expr());

// e with every Let substituted into its body.
Expr inline_lets(const Expr &e);

}  // namespace internal
}  // namespace kiln
