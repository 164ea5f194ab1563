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

private:
    std::string name_;
};

}  // namespace kiln
