// The printed text of an expression, as a key for comparing and ordering
// expressions, remembered per node and per subexpression.
//
// The simplifier orders the atoms of linear sums by their text and compares
// expressions (equal()) by it. Bounds inference builds large min/max trees
// that share most of their subexpressions, and printing each new tree from
// scratch dominated lowering (harris: 35% of all instructions were stream
// output). expr_key prints a node's operands once, however many new parents
// they gain:
//
//   a = max(x + 1, y)            expr_key(a)   prints "max((x + 1), y)"
//   b = min(a, z)                expr_key(b)   reuses the text of a: prints
//                                              only "min(", ", z)" around it
//
// The text is exactly to_string(e), so orders built on it do not change.
#pragma once
#include <memory>
#include <string>

#include "IR.h"

namespace kiln {
namespace internal {

// to_string(e), printed once per node and kept in it; the key shares
// ownership of the node (copying a key copies a pointer, not the text).
using ExprKey = std::shared_ptr<const std::string>;
ExprKey expr_key(const Expr &e);

}  // namespace internal
}  // namespace kiln
