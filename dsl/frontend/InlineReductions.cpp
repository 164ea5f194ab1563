// sum, product, maximum, minimum, argmax, argmin (kiln/InlineReductions.h):
// the free Vars and the one RDom of the expression, then a Func with the
// identity as its pure definition and the reduction as its update. And
// lambda (kiln/Func.h), the same naming for a pure Func.
#include "kiln/InlineReductions.h"

#include <algorithm>
#include <map>
#include <mutex>

#include "ir/Error.h"
#include "ir/IRVisitor.h"
#include "kiln/Func.h"

namespace kiln {

using namespace internal;

namespace {

class FreeVars : public IRVisitor {
public:
    std::vector<Var> vars;  // first-use order
    std::vector<std::shared_ptr<ReductionDomainContents>> rdoms;

protected:
    using IRVisitor::visit;
    void visit(const Variable *op) override {
        if (op->param) return;
        if (op->rdom) {
            if (std::find(rdoms.begin(), rdoms.end(), op->rdom) == rdoms.end()) rdoms.push_back(op->rdom);
            return;
        }
        for (const Var &v : vars)
            if (v.name() == op->name) return;
        vars.push_back(Var(op->name));
    }
};

std::string func_name(const std::string &given, const char *kind) {
    return given.empty() ? anonymous_func_name(kind) : given;
}

struct Reduction {
    Func f;
    std::vector<Expr> args;
    std::shared_ptr<ReductionDomainContents> rdom;

    Reduction(const Expr &e, const std::string &name, const char *kind) : f(func_name(name, kind)) {
        FreeVars free;
        free.include(e);
        user_assert(free.rdoms.size() == 1)
            << kind << "(" << e << ") "
            << (free.rdoms.empty() ? "uses no RDom; an inline reduction runs over the RDom its expression uses, e.g. "
                                     "RDom r(0, 3); sum(in(x + r))"
                                   : "uses " + std::to_string(free.rdoms.size()) +
                                         " RDoms; an inline reduction runs over one (make one RDom of several "
                                         "dimensions)");
        rdom = free.rdoms[0];
        for (const Var &v : free.vars) args.push_back(v);
    }
    FuncRef call() const { return f(args); }
};

// e's type, checking that e is defined.
Type type_of(const Expr &e, const char *kind) {
    user_assert(e.defined()) << kind << "(): the expression is undefined";
    return e.type();
}

Expr fold(Expr e, const std::string &name, const char *kind, Expr (*identity)(Type), Expr (*step)(Expr, Expr)) {
    Expr start = identity(type_of(e, kind));
    Reduction r(e, name, kind);
    r.call() = start;
    r.call() = step(r.call(), e);
    return r.call();
}

Tuple arg_extreme(Expr e, const std::string &name, const char *kind, bool largest) {
    Type t = type_of(e, kind);
    Reduction r(e, name, kind);
    std::vector<Expr> init, better;
    for (size_t i = 0; i < r.rdom->vars.size(); i++) {
        init.push_back(r.rdom->vars[i].min);
        better.push_back(RVar(r.rdom, (int)i));
    }
    init.push_back(largest ? type_min(t) : type_max(t));
    better.push_back(e);
    r.call() = Tuple(init);
    Tuple now(r.call());
    const Expr &value = now[now.size() - 1];
    r.call() = select(largest ? e > value : e < value, Tuple(better), now);
    return Tuple(r.call());
}

}  // namespace

Expr sum(Expr e, const std::string &name) {
    return fold(e, name, "sum", make_zero, [](Expr a, Expr b) { return a + b; });
}
Expr product(Expr e, const std::string &name) {
    return fold(e, name, "product", make_one, [](Expr a, Expr b) { return a * b; });
}
Expr maximum(Expr e, const std::string &name) {
    return fold(e, name, "maximum", type_min, [](Expr a, Expr b) { return max(a, b); });
}
Expr minimum(Expr e, const std::string &name) {
    return fold(e, name, "minimum", type_max, [](Expr a, Expr b) { return min(a, b); });
}
Tuple argmax(Expr e, const std::string &name) { return arg_extreme(e, name, "argmax", true); }

Func lambda(const std::vector<Var> &vars, const Expr &e) {
    user_assert(e.defined()) << "lambda(): the expression is undefined";
    Func f(func_name("", "lambda"));
    std::vector<Expr> args(vars.begin(), vars.end());
    f(args) = e;
    return f;
}
Tuple argmin(Expr e, const std::string &name) { return arg_extreme(e, name, "argmin", false); }

}  // namespace kiln
