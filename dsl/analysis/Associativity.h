// Associativity: is an update definition an associative reduction, and with
// which operator? The test rfactor() makes before splitting a reduction, as
// Halide does: the update f(args) = e must combine f's current value at
// args with a term that does not read f, through an operator it recognizes:
//
//   f(x) = f(x) + g(r)            ->  x + y      (also y + x, x - y = x + (-y)), identity 0
//   f(x) = f(x) * g(r)            ->  x * y      identity 1
//   f(x) = min(f(x), g(r))        ->  min(x, y)  identity the type's largest value (+inf)
//   f(x) = max(f(x), g(r))        ->  max(x, y)  identity the type's smallest value (-inf)
//   f(x) = f(x) && g(r)           ->  x && y     identity true   (|| : identity false)
//   f(x) = Tuple(f(x)[0] + a, max(f(x)[1], b))   each element on its own
//   f(x) = select(g(r) > f(x)[0], Tuple(g(r), r), Tuple(f(x)))      an argmax
//        (any comparison of the incoming first element with the current
//        one picks every element; identity -inf for max-like, +inf for
//        min-like). Associative but not commutative: which of equal values
//        wins depends on the order.
//   f(x) = Tuple(max(f(x)[0], g(r)), select(f(x)[0] < g(r), r, f(x)[1]))
//        the same argmax as Halide spells it (max or min for the value).
//
// Float + and * are treated as associative, as Halide does (rfactor then
// reassociates them). Anything else (f(x) * 2 + g(r), f read at other
// coordinates, f inside the incoming term, the online-softmax update) is
// not recognized, and `why` says what was found.
#pragma once
#include <string>
#include <vector>

#include "ir/IR.h"

namespace kiln {
namespace internal {

struct AssociativeOp {
    bool found = false;
    std::string why;  // when not found: what breaks the pattern
    bool commutative = true;
    // The operator over placeholders: values[i] in terms of the Variables
    // named x_names[i] (f's current element i) and y_names[i] (the incoming
    // element i).
    std::vector<Expr> values;
    std::vector<std::string> x_names, y_names;
    std::vector<Expr> incoming;    // the incoming term of each element (reads no f)
    std::vector<Expr> identities;  // y = identity leaves x unchanged
    std::string description;       // "+", "min", "argmax", ...
};

// `values` are the update's right-hand sides (one per Tuple element), `args`
// its left-hand side; self-calls are Calls named `func`.
AssociativeOp find_associative_op(const std::string &func, const std::vector<Expr> &args,
                                  const std::vector<Expr> &values);

}  // namespace internal
}  // namespace kiln
