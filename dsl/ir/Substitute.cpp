#include "Substitute.h"

#include <functional>

#include "ExprKey.h"
#include "IRPrinter.h"
#include "IRVisitor.h"

namespace kiln {
namespace internal {

namespace {

class Substituter : public IRMutator {
public:
    explicit Substituter(const std::map<std::string, Expr> &m) : repl(m) {}

protected:
    const std::map<std::string, Expr> &repl;
    std::map<std::string, int> shadowed;

    bool active(const std::string &n) const {
        auto it = shadowed.find(n);
        return repl.count(n) && (it == shadowed.end() || it->second == 0);
    }
    Expr visit(const Variable *op) override {
        if (active(op->name)) {
            const Expr &r = repl.at(op->name);
            if (r.type() == op->type) return r;
            return Cast::make(op->type, r);
        }
        return Expr(op);
    }
    template<typename T, typename B>
    auto visit_let(const T *op, const B &body) {
        Expr v = mutate(op->value);
        shadowed[op->name]++;
        auto b = mutate(body);
        shadowed[op->name]--;
        if (v.same_as(op->value) && b.same_as(body)) return decltype(b)(op);
        return T::make(op->name, v, b);
    }
    Expr visit(const Let *op) override { return visit_let(op, op->body); }
    Stmt visit(const LetStmt *op) override { return visit_let(op, op->body); }
    Stmt visit(const For *op) override {
        Expr mn = mutate(op->min), ex = mutate(op->extent);
        shadowed[op->name]++;
        Stmt b = mutate(op->body);
        shadowed[op->name]--;
        if (mn.same_as(op->min) && ex.same_as(op->extent) && b.same_as(op->body)) return Stmt(op);
        return For::make(op->name, mn, ex, op->for_type, b);
    }
};

// Stops at the first use found: the simplifier asks this of every let's
// body, which in a fused pipeline is most of the statement, while the
// name is mostly used near its top.
class UsesVar : public IRVisitor {
public:
    explicit UsesVar(const std::function<bool(const std::string &)> &p) : pred(p) {}
    bool result = false;
    void include(const Expr &e) override {
        if (!result) IRVisitor::include(e);
    }
    void include(const Stmt &s) override {
        if (!result) IRVisitor::include(s);
    }

protected:
    const std::function<bool(const std::string &)> &pred;
    void visit(const Variable *op) override { result = result || pred(op->name); }
};

class LoadsIf : public IRVisitor {
public:
    explicit LoadsIf(const std::function<bool(const std::string &)> &p) : pred(p) {}
    bool result = false;

protected:
    const std::function<bool(const std::string &)> &pred;
    void visit(const Load *op) override {
        result = result || pred(op->name);
        IRVisitor::visit(op);
    }
};

class DropRDomOwner : public IRMutator {
public:
    explicit DropRDomOwner(const ReductionDomainContents *d) : dom(d) {}

protected:
    const ReductionDomainContents *dom;
    Expr visit(const Variable *op) override {
        if (op->rdom.get() != dom) return Expr(op);
        return Variable::make(op->type, op->name, op->param, nullptr);
    }
};

}  // namespace

Expr substitute(const std::map<std::string, Expr> &m, const Expr &e) {
    if (m.empty()) return e;
    return Substituter(m).mutate(e);
}
Stmt substitute(const std::map<std::string, Expr> &m, const Stmt &s) {
    if (m.empty()) return s;
    return Substituter(m).mutate(s);
}
Expr substitute(const std::string &name, const Expr &replacement, const Expr &e) {
    return substitute(std::map<std::string, Expr>{{name, replacement}}, e);
}
Stmt substitute(const std::string &name, const Expr &replacement, const Stmt &s) {
    return substitute(std::map<std::string, Expr>{{name, replacement}}, s);
}

bool expr_uses_var(const Expr &e, const std::string &name) {
    return expr_uses_var_if(e, [&](const std::string &n) { return n == name; });
}
bool expr_uses_var_if(const Expr &e, const std::function<bool(const std::string &)> &pred) {
    UsesVar u(pred);
    u.include(e);
    return u.result;
}
bool expr_loads_if(const Expr &e, const std::function<bool(const std::string &)> &pred) {
    LoadsIf l(pred);
    l.include(e);
    return l.result;
}
bool stmt_uses_var(const Stmt &s, const std::string &name) {
    std::function<bool(const std::string &)> pred = [&](const std::string &n) { return n == name; };
    UsesVar u(pred);
    u.include(s);
    return u.result;
}

bool equal(const Expr &a, const Expr &b) {
    if (a.same_as(b)) return true;
    if (!a.defined() || !b.defined()) return false;
    if (a.type() != b.type() || a->node_type != b->node_type) return false;
    ExprKey ka = expr_key(a), kb = expr_key(b);
    return ka == kb || *ka == *kb;
}

Expr without_rdom_owner(const Expr &e, const ReductionDomainContents *dom) {
    return e.defined() ? DropRDomOwner(dom).mutate(e) : e;
}

}  // namespace internal
}  // namespace kiln
