// Replace free occurrences of variables by expressions.
//
//   substitute("x", y + 1, x * x + z)   ->   (y + 1) * (y + 1) + z
//
// Lets that rebind a name shadow the replacement inside their bodies.
#pragma once
#include <functional>
#include <map>
#include <string>

#include "IR.h"

namespace kiln {
namespace internal {

Expr substitute(const std::string &name, const Expr &replacement, const Expr &e);
Stmt substitute(const std::string &name, const Expr &replacement, const Stmt &s);
Expr substitute(const std::map<std::string, Expr> &m, const Expr &e);
Stmt substitute(const std::map<std::string, Expr> &m, const Stmt &s);

// Does e (or s) refer to variable `name`?
bool expr_uses_var(const Expr &e, const std::string &name);
bool stmt_uses_var(const Stmt &s, const std::string &name);
// Does e refer to a variable whose name satisfies pred?
bool expr_uses_var_if(const Expr &e, const std::function<bool(const std::string &)> &pred);
// Does e load a buffer whose name satisfies pred?
bool expr_loads_if(const Expr &e, const std::function<bool(const std::string &)> &pred);

// e with the RVars of `dom` holding no owning pointer to it: for a
// predicate stored in dom itself (RDom::where(), rfactor), which would
// otherwise keep dom alive through its own RVars (a reference cycle, a
// leak). Lowering finds the RVars of a predicate by name.
Expr without_rdom_owner(const Expr &e, const ReductionDomainContents *dom);

// Structural equality and a total order (for canonical sorting).
bool equal(const Expr &a, const Expr &b);

}  // namespace internal
}  // namespace kiln
