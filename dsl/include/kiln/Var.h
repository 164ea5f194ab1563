// Var: a named pure dimension of a Func.
#pragma once
#include <string>

#include "Expr.h"

namespace kiln {

class Var {
public:
    Var();  // a fresh unique name
    explicit Var(const std::string &name) : name_(name) {}
    const std::string &name() const { return name_; }
    operator Expr() const;
    bool same_as(const Var &o) const { return name_ == o.name_; }

    // The i-th implicit Var, "_i": what `_` stands for.
    static Var implicit(int i) { return Var("_" + std::to_string(i)); }
    bool is_implicit() const;              // "_0", "_1", ...
    bool is_placeholder() const { return name_ == "_"; }

private:
    std::string name_;
};

// `_` as an argument of a Func or image call stands for the dimensions the
// other arguments leave, as implicit Vars: for a 3-D g, g(x, _) is
// g(x, _0, _1). A pure definition whose right-hand side uses implicit Vars
// gets them on its left-hand side, where its own `_` is or else at the end:
// f(_) = g(_) + 1 and f() = g(_) + 1 both define f(_0, _1, _2), and an update
// f(_) += ... covers f's implicit dimensions.
extern const Var _;
extern const Var _0, _1, _2, _3, _4, _5, _6, _7, _8, _9;

}  // namespace kiln
