// Simplifier rules for comparisons and booleans: comparisons folded or
// decided from the constant bounds of a - b; && || ! with a constant side;
// select with a constant condition or equal sides:
//   x < x + 1                     ->  true
//   xi < 8       with xi in [0, 8) ->  true
//   x4(x % 2) == x4(0)            ->  x4((x % 2) == 0)
#include "SimplifyInternal.h"

namespace kiln {
namespace internal {
namespace simplifier {

namespace {

// a k b for a comparison k.
template<typename T>
bool compare(IRNodeType k, T a, T b) {
    switch (k) {
    case IRNodeType::EQ: return a == b;
    case IRNodeType::NE: return a != b;
    case IRNodeType::LT: return a < b;
    case IRNodeType::LE: return a <= b;
    case IRNodeType::GT: return a > b;
    default: return a >= b;
    }
}

// When a - b lies in [lo, hi], a k b is true if `holds`, false if `fails`
// (neither: unknown).
struct Decided {
    bool holds, fails;
};
Decided decide(IRNodeType k, int64_t lo, int64_t hi) {
    const bool apart = lo > 0 || hi < 0, same = lo == 0 && hi == 0;
    switch (k) {
    case IRNodeType::EQ: return {same, apart};
    case IRNodeType::NE: return {apart, same};
    case IRNodeType::LT: return {hi < 0, lo >= 0};
    case IRNodeType::LE: return {hi <= 0, lo > 0};
    case IRNodeType::GT: return {lo > 0, hi <= 0};
    default: return {lo >= 0, hi < 0};
    }
}

}  // namespace

// a == b, a != b, a < b, ... (Op: EQ, NE, LT, LE, GT or GE).
template<typename Op>
Expr Simplifier::visit_cmp(const Expr &orig, Expr a, Expr b) {
    constexpr IRNodeType k = Op::node_kind;
    Type t = orig.type();
    const int64_t *ia = as_const_int(a), *ib = as_const_int(b);
    const double *fa = as_const_float(a), *fb = as_const_float(b);
    if (ia && ib && a.type().is_scalar()) {
        bool r = a.type().is_uint() ? compare<uint64_t>(k, *ia, *ib) : compare(k, *ia, *ib);
        return make_bool(r, t.lanes());
    }
    if (fa && fb && a.type().is_scalar()) return make_bool(compare(k, *fa, *fb), t.lanes());
    // The same comparison in every lane: one scalar comparison, broadcast.
    const auto *ba = a.as<Broadcast>(), *bb = b.as<Broadcast>();
    if (ba && bb) return Broadcast::make(mutate(Op::make(ba->value, bb->value)), t.lanes());
    int64_t lo, hi;
    if (!a.type().is_float() && a.type().is_scalar() && diff_bounds(a, b, lo, hi)) {
        Decided d = decide(k, lo, hi);
        if (d.holds) return make_bool(true, t.lanes());
        if (d.fails) return make_bool(false, t.lanes());
    }
    return Op::make(a, b);
}


Expr Simplifier::visit(const EQ *op) { return visit_cmp<EQ>(Expr(op), mutate(op->a), mutate(op->b)); }
Expr Simplifier::visit(const NE *op) { return visit_cmp<NE>(Expr(op), mutate(op->a), mutate(op->b)); }
Expr Simplifier::visit(const LT *op) { return visit_cmp<LT>(Expr(op), mutate(op->a), mutate(op->b)); }
Expr Simplifier::visit(const LE *op) { return visit_cmp<LE>(Expr(op), mutate(op->a), mutate(op->b)); }
Expr Simplifier::visit(const GT *op) { return visit_cmp<GT>(Expr(op), mutate(op->a), mutate(op->b)); }
Expr Simplifier::visit(const GE *op) { return visit_cmp<GE>(Expr(op), mutate(op->a), mutate(op->b)); }

Expr Simplifier::visit(const And *op) {
    Expr a = mutate(op->a), b = mutate(op->b);
    if (is_one(a)) return b;
    if (is_one(b)) return a;
    if (is_zero(a)) return a;
    if (is_zero(b)) return b;
    if (equal(a, b)) return a;
    return And::make(a, b);
}

Expr Simplifier::visit(const Or *op) {
    Expr a = mutate(op->a), b = mutate(op->b);
    if (is_one(a)) return a;
    if (is_one(b)) return b;
    if (is_zero(a)) return b;
    if (is_zero(b)) return a;
    if (equal(a, b)) return a;
    return Or::make(a, b);
}

Expr Simplifier::visit(const Not *op) {
    Expr a = mutate(op->a);
    if (is_const(a)) return make_bool(is_zero(a), op->type.lanes());
    if (const auto *n = a.as<Not>()) return n->a;
    return Not::make(a);
}

Expr Simplifier::visit(const Select *op) {
    Expr c = mutate(op->condition), t = mutate(op->true_value), f = mutate(op->false_value);
    if (is_one(c)) return t;
    if (is_zero(c)) return f;
    if (equal(t, f)) return t;
    if (c.same_as(op->condition) && t.same_as(op->true_value) && f.same_as(op->false_value)) return Expr(op);
    return Select::make(c, t, f);
}

}  // namespace simplifier
}  // namespace internal
}  // namespace kiln
