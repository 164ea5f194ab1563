// Inline reductions, as in Halide: sum, product, maximum, minimum, argmax and
// argmin of an expression over the RDom it uses. Each makes an anonymous
// Func of the expression's free Vars (in the order they first appear), with
// a pure definition (the reduction's identity) and one update over the
// RDom, and returns a call to it:
//
//   RDom r(-1, 3);
//   blur(x, y) = sum(in(x + r, y)) / 3;
//     ==  Func s("sum"); s(x, y) = 0; s(x, y) += in(x + r, y); blur(x, y) = s(x, y) / 3;
//
// The Func is named after the reduction ("sum", "sum_1", ... in a process;
// or the name given) and may be scheduled like any Func once found by that
// name (Pipeline::functions(), .sched files). A sum accumulates in the
// expression's type (cast first to widen: sum(cast<int>(u8))). argmax and
// argmin return (the RDom's coordinates..., the value) of the first extreme
// point in the RDom's order.
#pragma once
#include <string>

#include "Expr.h"
#include "Tuple.h"

namespace kiln {

Expr sum(Expr e, const std::string &name = "");
Expr product(Expr e, const std::string &name = "");
Expr maximum(Expr e, const std::string &name = "");
Expr minimum(Expr e, const std::string &name = "");
Tuple argmax(Expr e, const std::string &name = "");
Tuple argmin(Expr e, const std::string &name = "");

}  // namespace kiln
