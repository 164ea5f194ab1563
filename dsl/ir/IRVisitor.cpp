#include "IRVisitor.h"

namespace kiln {
namespace internal {

void IRVisitor::include(const Expr &e) {
    if (!e.defined()) return;
    switch (e->node_type) {
#define KILN_CASE(N) \
    case IRNodeType::N: visit(static_cast<const N *>(e.get())); break;
        KILN_FOR_EACH_EXPR_NODE(KILN_CASE)
#undef KILN_CASE
    default: internal_error << "statement node in expression";
    }
}

void IRVisitor::include(const Stmt &s) {
    if (!s.defined()) return;
    switch (s->node_type) {
#define KILN_CASE(N) \
    case IRNodeType::N: visit(static_cast<const N *>(s.get())); break;
        KILN_FOR_EACH_STMT_NODE(KILN_CASE)
#undef KILN_CASE
    default: internal_error << "expression node in statement";
    }
}

void IRVisitor::visit(const IntImm *) {}
void IRVisitor::visit(const UIntImm *) {}
void IRVisitor::visit(const FloatImm *) {}
void IRVisitor::visit(const StringImm *) {}
void IRVisitor::visit(const Variable *) {}
void IRVisitor::visit(const Cast *op) { include(op->value); }
#define KILN_BIN(N)                       \
    void IRVisitor::visit(const N *op) { \
        include(op->a);                   \
        include(op->b);                   \
    }
KILN_BIN(Add) KILN_BIN(Sub) KILN_BIN(Mul) KILN_BIN(Div) KILN_BIN(Mod) KILN_BIN(Min) KILN_BIN(Max)
KILN_BIN(EQ) KILN_BIN(NE) KILN_BIN(LT) KILN_BIN(LE) KILN_BIN(GT) KILN_BIN(GE) KILN_BIN(And) KILN_BIN(Or)
#undef KILN_BIN
void IRVisitor::visit(const Not *op) { include(op->a); }
void IRVisitor::visit(const Select *op) {
    include(op->condition);
    include(op->true_value);
    include(op->false_value);
}
void IRVisitor::visit(const Load *op) { include(op->index); }
void IRVisitor::visit(const Ramp *op) {
    include(op->base);
    include(op->stride);
}
void IRVisitor::visit(const Broadcast *op) { include(op->value); }
void IRVisitor::visit(const Call *op) {
    for (const auto &a : op->args) include(a);
}
void IRVisitor::visit(const Let *op) {
    include(op->value);
    include(op->body);
}
void IRVisitor::visit(const LetStmt *op) {
    include(op->value);
    include(op->body);
}
void IRVisitor::visit(const AssertStmt *op) {
    include(op->condition);
    for (const auto &m : op->message) include(m);
}
void IRVisitor::visit(const ProducerConsumer *op) { include(op->body); }
void IRVisitor::visit(const For *op) {
    include(op->min);
    include(op->extent);
    include(op->body);
}
void IRVisitor::visit(const Store *op) {
    include(op->value);
    include(op->index);
}
void IRVisitor::visit(const Provide *op) {
    for (const auto &v : op->values) include(v);
    for (const auto &a : op->args) include(a);
}
void IRVisitor::visit(const Allocate *op) {
    include(op->size);
    if (op->in_place.defined()) include(op->in_place);
    include(op->body);
}
void IRVisitor::visit(const Realize *op) {
    for (const auto &r : op->bounds) {
        include(r.min);
        include(r.extent);
    }
    if (op->in_place.defined()) include(op->in_place);
    include(op->body);
}
void IRVisitor::visit(const Block *op) {
    include(op->first);
    include(op->rest);
}
void IRVisitor::visit(const IfThenElse *op) {
    include(op->condition);
    include(op->then_case);
    include(op->else_case);
}
void IRVisitor::visit(const Evaluate *op) { include(op->value); }

// ---- IRMutator ----

Expr IRMutator::mutate(const Expr &e) {
    if (!e.defined()) return e;
    switch (e->node_type) {
#define KILN_CASE(N) \
    case IRNodeType::N: return visit(static_cast<const N *>(e.get()));
        KILN_FOR_EACH_EXPR_NODE(KILN_CASE)
#undef KILN_CASE
    default: internal_error << "statement node in expression";
    }
    return Expr();
}

Stmt IRMutator::mutate(const Stmt &s) {
    if (!s.defined()) return s;
    switch (s->node_type) {
#define KILN_CASE(N) \
    case IRNodeType::N: return visit(static_cast<const N *>(s.get()));
        KILN_FOR_EACH_STMT_NODE(KILN_CASE)
#undef KILN_CASE
    default: internal_error << "expression node in statement";
    }
    return Stmt();
}

Expr IRMutator::visit(const IntImm *op) { return Expr(op); }
Expr IRMutator::visit(const UIntImm *op) { return Expr(op); }
Expr IRMutator::visit(const FloatImm *op) { return Expr(op); }
Expr IRMutator::visit(const StringImm *op) { return Expr(op); }
Expr IRMutator::visit(const Variable *op) { return Expr(op); }
Expr IRMutator::visit(const Cast *op) {
    Expr v = mutate(op->value);
    return v.same_as(op->value) ? Expr(op) : Cast::make(op->type, v);
}
#define KILN_BIN(N)                                               \
    Expr IRMutator::visit(const N *op) {                          \
        Expr a = mutate(op->a), b = mutate(op->b);                \
        if (a.same_as(op->a) && b.same_as(op->b)) return Expr(op); \
        return N::make(a, b);                                     \
    }
KILN_BIN(Add) KILN_BIN(Sub) KILN_BIN(Mul) KILN_BIN(Div) KILN_BIN(Mod) KILN_BIN(Min) KILN_BIN(Max)
KILN_BIN(EQ) KILN_BIN(NE) KILN_BIN(LT) KILN_BIN(LE) KILN_BIN(GT) KILN_BIN(GE) KILN_BIN(And) KILN_BIN(Or)
#undef KILN_BIN
Expr IRMutator::visit(const Not *op) {
    Expr a = mutate(op->a);
    return a.same_as(op->a) ? Expr(op) : Not::make(a);
}
Expr IRMutator::visit(const Select *op) {
    Expr c = mutate(op->condition), t = mutate(op->true_value), f = mutate(op->false_value);
    if (c.same_as(op->condition) && t.same_as(op->true_value) && f.same_as(op->false_value)) return Expr(op);
    return Select::make(c, t, f);
}
Expr IRMutator::visit(const Load *op) {
    Expr i = mutate(op->index);
    if (i.same_as(op->index)) return Expr(op);
    return Load::make(op->type.with_lanes(i.type().lanes()), op->name, i);
}
Expr IRMutator::visit(const Ramp *op) {
    Expr b = mutate(op->base), s = mutate(op->stride);
    if (b.same_as(op->base) && s.same_as(op->stride)) return Expr(op);
    return Ramp::make(b, s, op->lanes);
}
Expr IRMutator::visit(const Broadcast *op) {
    Expr v = mutate(op->value);
    return v.same_as(op->value) ? Expr(op) : Broadcast::make(v, op->lanes);
}
bool IRMutator::mutate_all(const std::vector<Expr> &in, std::vector<Expr> &out) {
    bool changed = false;
    for (const auto &e : in) {
        out.push_back(mutate(e));
        changed |= !out.back().same_as(e);
    }
    return changed;
}

Expr IRMutator::visit(const Call *op) {
    std::vector<Expr> args;
    if (!mutate_all(op->args, args)) return Expr(op);
    Type t = op->type;
    // A pure call's lanes follow its first argument's, in the same ratio
    // (interleave_vectors has twice its arguments' lanes).
    if (op->call_type == Call::PureExtern && !args.empty())
        t = op->type.with_lanes(op->type.lanes() / op->args[0].type().lanes() * args[0].type().lanes());
    return Call::make(t, op->name, args, op->call_type, op->func, op->param, op->value_index);
}
Expr IRMutator::visit(const Let *op) {
    Expr v = mutate(op->value), b = mutate(op->body);
    if (v.same_as(op->value) && b.same_as(op->body)) return Expr(op);
    return Let::make(op->name, v, b);
}
Stmt IRMutator::visit(const LetStmt *op) {
    Expr v = mutate(op->value);
    Stmt b = mutate(op->body);
    if (v.same_as(op->value) && b.same_as(op->body)) return Stmt(op);
    return LetStmt::make(op->name, v, b);
}
Stmt IRMutator::visit(const AssertStmt *op) {
    Expr c = mutate(op->condition);
    std::vector<Expr> msg;
    bool changed = mutate_all(op->message, msg) || !c.same_as(op->condition);
    return changed ? AssertStmt::make(c, op->error_code, msg) : Stmt(op);
}
Stmt IRMutator::visit(const ProducerConsumer *op) {
    Stmt b = mutate(op->body);
    return b.same_as(op->body) ? Stmt(op) : ProducerConsumer::make(op->name, op->is_producer, b);
}
Stmt IRMutator::visit(const For *op) {
    Expr mn = mutate(op->min), ex = mutate(op->extent);
    Stmt b = mutate(op->body);
    if (mn.same_as(op->min) && ex.same_as(op->extent) && b.same_as(op->body)) return Stmt(op);
    return For::make(op->name, mn, ex, op->for_type, b);
}
Stmt IRMutator::visit(const Store *op) {
    Expr v = mutate(op->value), i = mutate(op->index);
    if (v.same_as(op->value) && i.same_as(op->index)) return Stmt(op);
    return Store::make(op->name, v, i);
}
Stmt IRMutator::visit(const Provide *op) {
    std::vector<Expr> v, args;
    bool changed = mutate_all(op->values, v);
    changed |= mutate_all(op->args, args);
    return changed ? Provide::make(op->name, v, args) : Stmt(op);
}
Stmt IRMutator::visit(const Allocate *op) {
    Expr sz = mutate(op->size);
    Expr c = op->in_place.defined() ? mutate(op->in_place) : Expr();
    Stmt b = mutate(op->body);
    if (sz.same_as(op->size) && c.same_as(op->in_place) && b.same_as(op->body)) return Stmt(op);
    return Allocate::make(op->name, op->type, sz, b, op->in_output, c);
}
Stmt IRMutator::visit(const Realize *op) {
    bool changed = false;
    std::vector<Range> bounds;
    for (const auto &r : op->bounds) {
        Range n{mutate(r.min), mutate(r.extent)};
        changed |= !n.min.same_as(r.min) || !n.extent.same_as(r.extent);
        bounds.push_back(n);
    }
    Expr c = op->in_place.defined() ? mutate(op->in_place) : Expr();
    Stmt b = mutate(op->body);
    changed |= !b.same_as(op->body) || !c.same_as(op->in_place);
    return changed ? Realize::make(op->name, op->types, bounds, b, op->fold_factors, op->in_output, c) : Stmt(op);
}
Stmt IRMutator::visit(const Block *op) {
    Stmt f = mutate(op->first), r = mutate(op->rest);
    if (f.same_as(op->first) && r.same_as(op->rest)) return Stmt(op);
    return Block::make(f, r);
}
Stmt IRMutator::visit(const IfThenElse *op) {
    Expr c = mutate(op->condition);
    Stmt t = mutate(op->then_case), e = mutate(op->else_case);
    if (c.same_as(op->condition) && t.same_as(op->then_case) && e.same_as(op->else_case)) return Stmt(op);
    return IfThenElse::make(c, t, e);
}
Stmt IRMutator::visit(const Evaluate *op) {
    Expr v = mutate(op->value);
    return v.same_as(op->value) ? Stmt(op) : Evaluate::make(v);
}

}  // namespace internal
}  // namespace kiln
