// Simplifier rules for min and max: decided from the constant bounds of
// the difference, constants gathered, common operands pulled out, and chains
// pruned to the operands that can win:
//   min(max(x, 0), max(y, 0))  ->  max(min(x, y), 0)
//   min(min(e, x - 1), x)      ->  min(e, x - 1)
//   max(min(e, 0) + m, m)      ->  m
//   min(max(x, a), a)          ->  a
//   min(max(min(w, h), l), h)  ->  min(max(w, l), h)

#include "SimplifyInternal.h"

namespace kiln {
namespace internal {
namespace simplifier {

namespace {

// Whether e is x op y (for an Op node), binding x and y.
template<typename Op>
bool match(const Expr &e, Expr &x, Expr &y) {
    const Op *n = e.as<Op>();
    if (n) x = n->a, y = n->b;
    return n;
}

// Whether a is x op c and b is y op c with equal c's, binding x, y and c (a's).
template<typename Op>
bool match_common(const Expr &a, const Expr &b, Expr &x, Expr &y, Expr &c) {
    const Op *na = a.as<Op>(), *nb = b.as<Op>();
    if (!na || !nb || !equal(na->b, nb->b)) return false;
    x = na->a, y = nb->a, c = na->b;
    return true;
}

bool is_positive_const(const Expr &e) {
    const int64_t *c = as_const_int(e);
    return c && *c > 0;
}

// The operands of a chain of Op nodes, appended to ops (more than 16: stops).
template<typename Op>
void flatten_chain(const Expr &e, std::vector<Expr> &ops) {
    if (ops.size() > 16) return;
    if (const Op *n = e.as<Op>()) flatten_chain<Op>(n->a, ops), flatten_chain<Op>(n->b, ops);
    else ops.push_back(e);
}

}  // namespace

// A chain of mins (or maxes) whose operands are ordered by a constant
// bound on their difference keeps only the operands that can win:
//
//   min(min(e, x - 1), x)      ->  min(e, x - 1)
//   min(min(x, e), x - 1)      ->  min(e, x - 1)
//
// Unions of the regions a stencil's taps read are such chains (harris:
// hundreds of taps of Ix per tile); without this they grew with every
// tap. Survivors keep their order. Chains longer than 16 are left alone
// (the pairwise test is quadratic).
template<typename Op>
Expr Simplifier::prune_chain(const Expr &a, const Expr &b) {
    // The value of an int let that is a chain of the same kind (else undefined).
    auto chain_value = [&](const Expr &e) {
        const auto *v = e.as<Variable>();
        auto it = v ? let_values.find(v->name) : let_values.end();
        return it == let_values.end() || it->second.empty() || !it->second.back().as<Op>() ? Expr()
                                                                                           : it->second.back();
    };
    if (!a.as<Op>() && !b.as<Op>() && !chain_value(a).defined() && !chain_value(b).defined()) return Expr();
    constexpr bool is_min = Op::node_kind == IRNodeType::Min;
    std::vector<Expr> ops;
    flatten_chain<Op>(a, ops);
    flatten_chain<Op>(b, ops);
    if (ops.size() > 16) return Expr();
    std::vector<bool> dead(ops.size(), false);
    bool any = false;
    // A let whose value is a chain of the same kind is at least as small
    // (large) as each of its operands, so those operands named again beside
    // it cannot win: with m = min(a, b) in scope, min(min(m, a), b) -> m
    // (a storage box that joins a stage's region m with what its tile reads).
    for (size_t i = 0; i < ops.size(); i++) {
        Expr value = chain_value(ops[i]);
        if (!value.defined()) continue;
        std::vector<Expr> inner;
        flatten_chain<Op>(value, inner);
        for (size_t j = 0; j < ops.size(); j++) {
            if (j == i || dead[j]) continue;
            for (const Expr &e : inner) {
                if (!equal(e, ops[j])) continue;
                dead[j] = any = true;
                break;
            }
        }
    }
    for (size_t i = 0; i < ops.size(); i++) {
        for (size_t j = i + 1; j < ops.size() && !dead[i]; j++) {
            int64_t lo, hi;
            if (dead[j] || !diff_bounds(ops[i], ops[j], lo, hi)) continue;
            // ops[i] <= ops[j]: a min drops j, a max drops i; and conversely.
            if (hi <= 0) dead[is_min ? j : i] = true;
            else if (lo >= 0) dead[is_min ? i : j] = true;
            else continue;
            any = true;
        }
    }
    if (!any) return Expr();
    Expr r;
    for (size_t i = 0; i < ops.size(); i++) {
        if (dead[i]) continue;
        r = r.defined() ? Op::make(r, ops[i]) : ops[i];
    }
    return r;
}

// min(a, b) and max(a, b) (Op: Min or Max); the rules are written for min.
template<typename Op>
Expr Simplifier::visit_minmax(const Expr &orig, Expr a, Expr b) {
    constexpr IRNodeType k = Op::node_kind;
    constexpr bool is_min = k == IRNodeType::Min;
    Type t = orig.type();
    Expr out;
    if (try_fold(t, a, b, k, out)) return out;
    if (t.is_vector() && vector_rule(a, b, k, out)) return out;
    if (equal(a, b)) return a;
    if (t.is_float()) return Op::make(a, b);
    int64_t lo, hi;
    if (diff_bounds(a, b, lo, hi)) {
        if (hi <= 0) return is_min ? a : b;  // a <= b
        if (lo >= 0) return is_min ? b : a;  // a >= b
    }
    Expr x, y, c;
    // min(min(x, c1), c2) -> min(x, min(c1, c2))
    if (is_const(b) && match<Op>(a, x, c) && is_const(c)) return mutate(Op::make(x, Op::make(c, b)));
    // Common outer operand: min(max(x, l), max(y, l)) -> max(min(x, y), l), and
    // min(min(x, l), min(y, l)) -> min(min(x, y), l); this merges the clamps
    // of boundary conditions.
    if (match_common<Max>(a, b, x, y, c)) return mutate(Max::make(Op::make(x, y), c));
    if (match_common<Min>(a, b, x, y, c)) return mutate(Min::make(Op::make(x, y), c));
    // Division by a positive constant rounds down, so it is monotonic, as
    // multiplication is where it cannot overflow:
    //   min(a / 2, (a + 1) / 2)  ->  min(a, a + 1) / 2  ->  a / 2
    // (an upsampled level's region; without it each level of a pyramid
    // names the last one twice).
    if (t.is_scalar() && match_common<Div>(a, b, x, y, c) && is_positive_const(c))
        return mutate(Div::make(Op::make(x, y), c));
    if (is_index_type(t) && match_common<Mul>(a, b, x, y, c) && is_positive_const(c))
        return mutate(Mul::make(Op::make(x, y), c));
    // min(a, min(a, b)) -> min(a, b), either way round
    if (match<Op>(b, x, y) && (equal(x, a) || equal(y, a))) return b;
    if (match<Op>(a, x, y) && (equal(x, b) || equal(y, b))) return a;
    // Absorption: min(max(x, a), a) -> a, either way round, and max(min(x, a), a) -> a
    // (a fused loop's extent, max(f.loop_max, g.loop_max), clamped to g's own)
    using Dual = std::conditional_t<is_min, Max, Min>;
    if (match<Dual>(a, x, y) && (equal(x, b) || equal(y, b))) return b;
    if (match<Dual>(b, x, y) && (equal(x, a) || equal(y, a))) return a;
    // A clamp of a value clamped at the same top: min(max(min(w, h), l), h)
    // -> min(max(w, l), h) (both are h where w > h, or where l > h). A
    // clamped loop variable (bounds inference's point of a guarded one)
    // clamped again when its scope is resolved is such a value.
    if (is_min) {
        Expr inner, l, w, h;
        if (match<Max>(a, inner, l) && match<Min>(inner, w, h) && equal(h, b))
            return mutate(Min::make(Max::make(w, l), b));
    }
    if (Expr pruned = prune_chain<Op>(a, b); pruned.defined()) return pruned;
    if (is_index_type(t) && t.is_scalar()) {
        // One end of the difference may decide it where both are not known:
        //   max(min(e, 0) + m, m)  ->  m  (the difference, min(e, 0), is at most 0)
        Linear l = linearize(a);
        l.add(linearize(b), -1);
        l.normalize();
        Expr d = delinearize(l, t);
        if (const_bound(d, true, hi) && hi <= 0) return is_min ? a : b;
        if (const_bound(d, false, lo) && lo >= 0) return is_min ? b : a;
    }
    if (is_const(a) && !is_const(b)) std::swap(a, b);
    return Op::make(a, b);
}


Expr Simplifier::visit(const Min *op) { return visit_minmax<Min>(Expr(op), mutate(op->a), mutate(op->b)); }
Expr Simplifier::visit(const Max *op) { return visit_minmax<Max>(Expr(op), mutate(op->a), mutate(op->b)); }

}  // namespace simplifier
}  // namespace internal
}  // namespace kiln
