// Simplifier rules for min and max: decided from the constant bounds of
// the difference, constants gathered, common operands pulled out, and chains
// pruned to the operands that can win:
//   min(max(x, 0), max(y, 0))  ->  max(min(x, y), 0)
//   min(min(e, x - 1), x)      ->  min(e, x - 1)
#include <functional>

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
    if (!a.as<Op>() && !b.as<Op>()) return Expr();
    constexpr bool is_min = Op::node_kind == IRNodeType::Min;
    std::vector<Expr> ops;
    std::function<void(const Expr &)> flatten = [&](const Expr &e) {
        if (ops.size() > 16) return;
        if (const Op *n = e.as<Op>()) flatten(n->a), flatten(n->b);
        else ops.push_back(e);
    };
    flatten(a);
    flatten(b);
    if (ops.size() > 16) return Expr();
    std::vector<bool> dead(ops.size(), false);
    bool any = false;
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
    if (Expr pruned = prune_chain<Op>(a, b); pruned.defined()) return pruned;
    if (is_const(a) && !is_const(b)) std::swap(a, b);
    return Op::make(a, b);
}


Expr Simplifier::visit(const Min *op) { return visit_minmax<Min>(Expr(op), mutate(op->a), mutate(op->b)); }
Expr Simplifier::visit(const Max *op) { return visit_minmax<Max>(Expr(op), mutate(op->a), mutate(op->b)); }

}  // namespace simplifier
}  // namespace internal
}  // namespace kiln
