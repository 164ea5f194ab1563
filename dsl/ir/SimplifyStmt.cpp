// Simplifier rules for lets and statements: trivial lets substituted, the
// constant bounds and values of lets and loop variables tracked for the
// expression rules, and statements that do nothing removed:
//   let x = 4 in x + y          ->  4 + y
//   if (true) { s } else { t }  ->  s
#include "SimplifyInternal.h"

namespace kiln {
namespace internal {
namespace simplifier {

namespace {
bool uses_name(const Expr &e, const std::string &n) { return expr_uses_var(e, n); }
bool uses_name(const Stmt &s, const std::string &n) { return stmt_uses_var(s, n); }
}  // namespace

// Trivial lets (constants, variables) are substituted away.
template<typename T, typename Body>
Body Simplifier::visit_let(const T *op, const Body &body) {
    Expr v = mutate(op->value);
    if (is_const(v) || v.template as<Variable>()) {
        // Put in as the body is simplified, not substituted first: that
        // rebuilt the whole body once per such let (camera_pipe's lowered
        // statement has hundreds, each over the rest of the pipeline).
        push_replacement(op->name, v);
        Body b = mutate(body);
        pop_replacement(op->name);
        return b;
    }
    bool shadowed = shadows(op->name);
    if (shadowed) push_replacement(op->name, Expr());
    int64_t lo, hi;
    bool bounded = !v.type().is_float() && v.type().is_scalar() && const_bounds(v, lo, hi);
    bool indexed = is_index_type(v.type()) && v.type().is_scalar();
    if (bounded) ranges[op->name].push_back({lo, hi});
    if (indexed) {
        let_values[op->name].push_back(v);
        alignment[op->name].push_back(modulus_remainder(v));
    }
    auto b = mutate(body);
    if (indexed) {
        let_values[op->name].pop_back();
        alignment[op->name].pop_back();
    }
    if (bounded) ranges[op->name].pop_back();
    if (shadowed) pop_replacement(op->name);
    if (!uses_name(b, op->name)) return b;
    if (v.same_as(op->value) && b.same_as(body)) return Body(op);
    return T::make(op->name, v, b);
}

Expr Simplifier::visit(const Variable *op) {
    auto it = replacements.find(op->name);
    if (it == replacements.end() || !it->second.back().defined()) return Expr(op);
    return it->second.back();
}

Expr Simplifier::visit(const Let *op) { return visit_let(op, op->body); }
Stmt Simplifier::visit(const LetStmt *op) { return visit_let(op, op->body); }

Stmt Simplifier::visit(const For *op) {
    Expr mn = mutate(op->min), ex = mutate(op->extent);
    if (is_zero(ex) || (as_const_int(ex) && *as_const_int(ex) < 0)) return Stmt();
    if (is_one(ex) && op->for_type != ForType::Parallel) {
        return mutate(LetStmt::make(op->name, mn, op->body));
    }
    int64_t ml, mh, el, eh;
    bool bounded = const_bounds(mn, ml, mh) && const_bounds(ex, el, eh);
    if (bounded) ranges[op->name].push_back({ml, mh + eh - 1});
    bool shadowed = shadows(op->name);
    if (shadowed) push_replacement(op->name, Expr());
    Stmt b = mutate(op->body);
    if (shadowed) pop_replacement(op->name);
    if (bounded) ranges[op->name].pop_back();
    if (!b.defined()) return Stmt();
    if (mn.same_as(op->min) && ex.same_as(op->extent) && b.same_as(op->body)) return Stmt(op);
    return For::make(op->name, mn, ex, op->for_type, b);
}

Stmt Simplifier::visit(const IfThenElse *op) {
    Expr c = mutate(op->condition);
    if (is_one(c)) return mutate(op->then_case);
    if (is_zero(c)) return op->else_case.defined() ? mutate(op->else_case) : Stmt();
    Stmt t = mutate(op->then_case), e = mutate(op->else_case);
    if (!t.defined() && !e.defined()) return Stmt();
    if (!t.defined()) return IfThenElse::make(mutate(Not::make(c)), e);
    if (c.same_as(op->condition) && t.same_as(op->then_case) && e.same_as(op->else_case)) return Stmt(op);
    return IfThenElse::make(c, t, e);
}

// The message's values are printed as they are, not simplified; only the
// trivial lets around them are put in.
Stmt Simplifier::visit(const AssertStmt *op) {
    Expr c = mutate(op->condition);
    if (is_one(c)) return Stmt();
    std::map<std::string, Expr> values;
    for (const auto &r : replacements)
        if (r.second.back().defined()) values[r.first] = r.second.back();
    std::vector<Expr> message = op->message;
    bool changed = !c.same_as(op->condition);
    if (!values.empty()) {
        for (Expr &m : message) {
            Expr put = substitute(values, m);
            changed |= !put.same_as(m);
            m = put;
        }
    }
    return changed ? AssertStmt::make(c, op->error_code, message) : Stmt(op);
}

Stmt Simplifier::visit(const ProducerConsumer *op) {
    Stmt b = mutate(op->body);
    if (!b.defined()) return Stmt();
    return b.same_as(op->body) ? Stmt(op) : ProducerConsumer::make(op->name, op->is_producer, b);
}

Stmt Simplifier::visit(const Realize *op) {
    Stmt body = mutate(op->body);
    if (!body.defined()) return Stmt();  // nothing uses the storage
    std::vector<Range> bounds;
    bool changed = !body.same_as(op->body);
    for (const auto &r : op->bounds) {
        bounds.push_back({mutate(r.min), mutate(r.extent)});
        changed |= !bounds.back().min.same_as(r.min) || !bounds.back().extent.same_as(r.extent);
    }
    Expr c = op->in_place.defined() ? mutate(op->in_place) : Expr();
    changed |= !c.same_as(op->in_place);
    return changed ? Realize::make(op->name, op->types, bounds, body, op->fold_factors, op->in_output, c) : Stmt(op);
}

Stmt Simplifier::visit(const Allocate *op) {
    Expr sz = mutate(op->size);
    Expr c = op->in_place.defined() ? mutate(op->in_place) : Expr();
    Stmt b = mutate(op->body);
    if (!b.defined()) return Stmt();
    if (sz.same_as(op->size) && c.same_as(op->in_place) && b.same_as(op->body)) return Stmt(op);
    return Allocate::make(op->name, op->type, sz, b, op->in_output, c);
}

}  // namespace simplifier
}  // namespace internal
}  // namespace kiln
