#include "EmulateFloat16.h"

#include "ir/IRVisitor.h"

namespace kiln {
namespace internal {

namespace {

bool is_16(const Type &t) { return t.is_float16_or_bfloat16(); }
Type f32_of(const Type &t) { return Float(32, t.lanes()); }

// e as float32 (exact), if it is a 16-bit float.
Expr widen(const Expr &e) { return is_16(e.type()) ? Cast::make(f32_of(e.type()), e) : e; }

class EmulateFloat16 : public IRMutator {
    using IRMutator::visit;

    // An operation on 16-bit operands: on their float32 values, rounded to t.
    template<typename Node>
    Expr binary(const Node *op) {
        Expr e = IRMutator::visit(op);
        const Node *n = e.template as<Node>();
        if (!n || !is_16(n->a.type())) return e;
        Expr wide = Node::make(widen(n->a), widen(n->b));
        return is_16(n->type) ? Cast::make(n->type, wide) : wide;  // a comparison stays Bool
    }
    Expr visit(const Add *op) override { return binary(op); }
    Expr visit(const Sub *op) override { return binary(op); }
    Expr visit(const Mul *op) override { return binary(op); }
    Expr visit(const Div *op) override { return binary(op); }
    Expr visit(const Mod *op) override { return binary(op); }
    Expr visit(const Min *op) override { return binary(op); }
    Expr visit(const Max *op) override { return binary(op); }
    Expr visit(const EQ *op) override { return binary(op); }
    Expr visit(const NE *op) override { return binary(op); }
    Expr visit(const LT *op) override { return binary(op); }
    Expr visit(const LE *op) override { return binary(op); }
    Expr visit(const GT *op) override { return binary(op); }
    Expr visit(const GE *op) override { return binary(op); }

    Expr visit(const Select *op) override {
        Expr e = IRMutator::visit(op);
        const Select *s = e.as<Select>();
        if (!s || !is_16(s->type)) return e;
        return Cast::make(s->type, Select::make(s->condition, widen(s->true_value), widen(s->false_value)));
    }

    Expr visit(const Cast *op) override {
        Expr v = mutate(op->value);
        Type from = v.type(), to = op->type;
        if (is_16(from) && to != f32_of(from) && to != from) return Cast::make(to, widen(v));
        if (is_16(to) && from.is_int_or_uint()) return Cast::make(to, Cast::make(Float(64, to.lanes()), v));
        if (is_16(to) && is_16(from) && from != to) return Cast::make(to, widen(v));
        return v.same_as(op->value) ? Expr(op) : Cast::make(to, v);
    }

    // Math functions (exp, sqrt, ...): of the float32 values.
    Expr visit(const Call *op) override {
        Expr e = IRMutator::visit(op);
        const Call *c = e.as<Call>();
        if (!c || c->call_type != Call::PureExtern || c->name == "undef") return e;
        bool any = is_16(c->type);
        std::vector<Expr> args;
        for (const Expr &a : c->args) {
            any |= is_16(a.type());
            args.push_back(widen(a));
        }
        if (!any) return e;
        Type t = is_16(c->type) ? f32_of(c->type) : c->type;
        Expr wide = Call::make(t, c->name, args, Call::PureExtern);
        return is_16(c->type) ? Cast::make(c->type, wide) : wide;
    }
};

}  // namespace

Stmt emulate_float16(const Stmt &s) { return EmulateFloat16().mutate(s); }

}  // namespace internal
}  // namespace kiln
