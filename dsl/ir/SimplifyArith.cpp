// Simplifier rules for arithmetic: constant folding, the linear form of
// int sums, division and modulo by positive constants, casts, and vector
// index math kept as ramps (Simplify.h has more examples):
//   ramp(x, 1, 8) + broadcast(2, 8)  ->  ramp(x + 2, 1, 8)
//   ramp(x, 2, 8) / broadcast(2, 8)  ->  ramp(x / 2, 1, 8)
#include <cmath>

#include "SimplifyInternal.h"

namespace kiln {
namespace internal {
namespace simplifier {

namespace {

// a k b in T (float or double), as the target computes it; % rounds down.
template<typename T>
T fold_float(IRNodeType k, T a, T b) {
    switch (k) {
    case IRNodeType::Add: return a + b;
    case IRNodeType::Sub: return a - b;
    case IRNodeType::Mul: return a * b;
    case IRNodeType::Div: return a / b;
    case IRNodeType::Mod: return a - b * std::floor(a / b);
    case IRNodeType::Min: return a < b ? a : b;
    case IRNodeType::Max: return a > b ? a : b;
    default: return 0;
    }
}

// a k b in t's integer arithmetic: + - * wrap; signed / and % are Euclidean,
// unsigned ones by zero give 0.
int64_t fold_int(Type t, int64_t a, int64_t b, IRNodeType k) {
    const bool u = t.is_uint();
    const uint64_t ua = (uint64_t)a, ub = (uint64_t)b;
    switch (k) {
    case IRNodeType::Add: return (int64_t)(ua + ub);
    case IRNodeType::Sub: return (int64_t)(ua - ub);
    case IRNodeType::Mul: return (int64_t)(ua * ub);
    case IRNodeType::Div: return u ? (int64_t)(ub ? ua / ub : 0) : floor_div(a, b);
    case IRNodeType::Mod: return u ? (int64_t)(ub ? ua % ub : 0) : floor_mod(a, b);
    case IRNodeType::Min: return u ? (int64_t)std::min(ua, ub) : std::min(a, b);
    case IRNodeType::Max: return u ? (int64_t)std::max(ua, ub) : std::max(a, b);
    default: return 0;
    }
}

}  // namespace

// Constant-fold a binary arithmetic node if both sides are constants.
bool try_fold(Type t, const Expr &a, const Expr &b, IRNodeType k, Expr &out) {
    if (t.is_float()) {
        const double *fa = as_const_float(a), *fb = as_const_float(b);
        if (fa && fb) {
            out = make_const(t, t.bits() == 32 ? fold_float<float>(k, *fa, *fb) : fold_float<double>(k, *fa, *fb));
            return true;
        }
        return false;
    }
    const int64_t *ia = as_const_int(a), *ib = as_const_int(b);
    if (ia && ib) {
        out = make_const(t.element_of(), fold_int(t, *ia, *ib, k));
        if (t.is_vector()) out = Broadcast::make(out, t.lanes());
        return true;
    }
    return false;
}

// Broadcast/ramp arithmetic: keep vector index math in ramp form.
bool Simplifier::vector_rule(const Expr &a, const Expr &b, IRNodeType k, Expr &out) {
    const auto *ba = a.as<Broadcast>(), *bb = b.as<Broadcast>();
    const auto *ra = a.as<Ramp>(), *rb = b.as<Ramp>();
    int lanes = a.type().lanes();
    auto scalar = [&](Expr x, Expr y) -> Expr {
        switch (k) {
        case IRNodeType::Add: return mutate(Add::make(x, y));
        case IRNodeType::Sub: return mutate(Sub::make(x, y));
        case IRNodeType::Mul: return mutate(Mul::make(x, y));
        case IRNodeType::Div: return mutate(Div::make(x, y));
        case IRNodeType::Mod: return mutate(Mod::make(x, y));
        case IRNodeType::Min: return mutate(Min::make(x, y));
        case IRNodeType::Max: return mutate(Max::make(x, y));
        default: return Expr();
        }
    };
    if (ba && bb) {
        Expr s = scalar(ba->value, bb->value);
        if (s.defined()) {
            out = Broadcast::make(s, lanes);
            return true;
        }
    }
    if (!is_index_type(a.type())) return false;
    if (ra && bb && (k == IRNodeType::Add || k == IRNodeType::Sub)) {
        out = Ramp::make(scalar(ra->base, bb->value), ra->stride, lanes);
        return true;
    }
    if (ba && rb && k == IRNodeType::Add) {
        out = Ramp::make(scalar(ba->value, rb->base), rb->stride, lanes);
        return true;
    }
    if (ra && rb && (k == IRNodeType::Add || k == IRNodeType::Sub)) {
        out = Ramp::make(scalar(ra->base, rb->base), scalar(ra->stride, rb->stride), lanes);
        return true;
    }
    if (ra && bb && k == IRNodeType::Mul) {
        out = Ramp::make(scalar(ra->base, bb->value), scalar(ra->stride, bb->value), lanes);
        return true;
    }
    // A stride that the divisor divides: every lane has the base's remainder,
    // and the quotients step evenly (floor division, any sign of the base).
    const int64_t *stride = ra ? as_const_int(ra->stride) : nullptr;
    const int64_t *divisor = bb ? as_const_int(bb->value) : nullptr;
    if (stride && divisor && *divisor > 0 && *stride % *divisor == 0) {
        if (k == IRNodeType::Div) {
            out = Ramp::make(scalar(ra->base, bb->value), make_const(ra->stride.type(), *stride / *divisor), lanes);
            return true;
        }
        if (k == IRNodeType::Mod) {
            out = Broadcast::make(scalar(ra->base, bb->value), lanes);
            return true;
        }
    }
    return false;
}

// a + b and a - b (Op: Add or Sub).
template<typename Op>
Expr Simplifier::visit_sum(const Expr &orig, const Expr &a, const Expr &b) {
    constexpr IRNodeType k = Op::node_kind;
    constexpr int sign = k == IRNodeType::Add ? 1 : -1;
    Type t = orig.type();
    Expr out;
    if (try_fold(t, a, b, k, out)) return out;
    if (t.is_vector() && vector_rule(a, b, k, out)) return out;
    if (is_index_type(t) && t.is_scalar()) {
        Linear l = linearize(a);
        l.add(linearize(b), sign);
        l.normalize();
        if (!l.terms.empty() && !let_values.empty()) {
            Linear le = linearize_expanded(a);
            le.add(linearize_expanded(b), sign);
            le.normalize();
            if (le.terms.empty()) return make_const(t, le.constant);
        }
        return delinearize(l, t);
    }
    if (!t.is_float()) {
        if (is_zero(b)) return a;
        if (k == IRNodeType::Add && is_zero(a)) return b;
        if (k == IRNodeType::Sub && equal(a, b)) return make_zero(t);
    }
    return Op::make(a, b);
}

Expr Simplifier::visit(const Add *op) { return visit_sum<Add>(Expr(op), mutate(op->a), mutate(op->b)); }
Expr Simplifier::visit(const Sub *op) { return visit_sum<Sub>(Expr(op), mutate(op->a), mutate(op->b)); }

Expr Simplifier::visit(const Mul *op) {
    Expr a = mutate(op->a), b = mutate(op->b), out;
    Type t = op->type;
    if (try_fold(t, a, b, IRNodeType::Mul, out)) return out;
    if (t.is_vector() && vector_rule(a, b, IRNodeType::Mul, out)) return out;
    if (!t.is_float()) {
        if (is_const(a) && !is_const(b)) std::swap(a, b);
        if (is_zero(b)) return b;
        if (is_one(b)) return a;
        // (a / c) * c is a - a % c; when a's residue modulo c is known (a
        // multiple, the lets in scope), that is a minus a constant: the start
        // of a tile that align_bounds() rounds down folds back to itself.
        const Div *d = a.as<Div>();
        const int64_t *c = as_const_int(b);
        if (is_index_type(t) && t.is_scalar() && d && c && *c > 0 && is_const(d->b, *c)) {
            ModRem mr = modulus_remainder(d->a);
            if (mr.modulus % *c == 0) return mutate(Sub::make(d->a, make_const(t, floor_mod(mr.remainder, *c))));
        }
        if (is_index_type(t) && t.is_scalar() && as_const_int(b)) {
            Linear l = linearize(a);
            if (l.terms.size() > 1 || l.constant != 0) {
                l.scale(*as_const_int(b));
                return delinearize(l, t);
            }
        }
    }
    if (a.same_as(op->a) && b.same_as(op->b)) return Expr(op);
    return Mul::make(a, b);
}

Expr Simplifier::visit(const Div *op) {
    Expr a = mutate(op->a), b = mutate(op->b), out;
    Type t = op->type;
    if (try_fold(t, a, b, IRNodeType::Div, out)) return out;
    if (t.is_vector() && vector_rule(a, b, IRNodeType::Div, out)) return out;
    if (t.is_float() && as_const_float(b)) {
        // As Halide does: a float divided by a constant is multiplied by its reciprocal.
        double r = 1.0 / *as_const_float(b);
        if (t.bits() == 32) r = (double)(1.0f / (float)*as_const_float(b));
        return Mul::make(a, make_const(t, r));
    }
    if (!t.is_float()) {
        if (is_one(b)) return a;
        if (is_zero(b)) return b;
        const int64_t *c = as_const_int(b);
        if (is_index_type(t) && t.is_scalar() && c && *c > 0) {
            // (c*k*x + m) / c == k*x + m / c: pull out the multiples of c.
            Linear l = linearize(a);
            Linear q, rest;
            for (auto &term : l.terms) {
                if (term.second % *c == 0) q.add_term(term.first, term.second / *c, term.key);
                else rest.add_term(term.first, term.second, term.key);
            }
            q.constant = floor_div(l.constant, *c);
            rest.constant = floor_mod(l.constant, *c);
            int64_t lo, hi;
            Expr rest_e = delinearize(rest, t);
            if (const_bounds(rest_e, lo, hi) && floor_div(lo, *c) == floor_div(hi, *c)) {
                q.constant += floor_div(lo, *c);
                return delinearize(q, t);
            }
            if (!q.terms.empty()) {
                Expr qe = delinearize(q, t);
                return mutate(Add::make(qe, Div::make(rest_e, b)));
            }
            // (x / c1) / c2 -> x / (c1*c2)
            if (const auto *inner = a.as<Div>()) {
                if (const int64_t *c1 = as_const_int(inner->b); c1 && *c1 > 0)
                    return Div::make(inner->a, make_const(t, *c1 * *c));
            }
        }
    }
    if (a.same_as(op->a) && b.same_as(op->b)) return Expr(op);
    return Div::make(a, b);
}

Expr Simplifier::visit(const Mod *op) {
    Expr a = mutate(op->a), b = mutate(op->b), out;
    Type t = op->type;
    if (try_fold(t, a, b, IRNodeType::Mod, out)) return out;
    if (t.is_vector() && vector_rule(a, b, IRNodeType::Mod, out)) return out;
    if (!t.is_float()) {
        if (is_one(b) || is_zero(b)) return make_zero(t);
        const int64_t *c = as_const_int(b);
        if (is_index_type(t) && t.is_scalar() && c && *c > 0) {
            Linear l = linearize(a), rest;
            for (auto &term : l.terms)
                if (term.second % *c != 0) rest.add_term(term.first, term.second, term.key);
            rest.constant = floor_mod(l.constant, *c);
            Expr rest_e = delinearize(rest, t);
            int64_t lo, hi;
            if (const_bounds(rest_e, lo, hi) && lo >= 0 && hi < *c) return rest_e;
            // The residue of a through the lets in scope: (a + 64 * i) % 2 of
            // a tile loop whose min a is known even or odd.
            ModRem mr = modulus_remainder(rest_e);
            if (mr.modulus % *c == 0) return make_const(t, floor_mod(mr.remainder, *c));
            if (rest.terms.size() != l.terms.size() || rest.constant != l.constant)
                return Mod::make(rest_e, b);
        }
    }
    if (a.same_as(op->a) && b.same_as(op->b)) return Expr(op);
    return Mod::make(a, b);
}

Expr Simplifier::visit(const Cast *op) {
    Expr v = mutate(op->value);
    Type t = op->type;
    if (v.type() == t) return v;
    if (t.is_scalar()) {
        if (const int64_t *i = as_const_int(v)) {
            if (t.is_float()) return make_const(t, v.type().is_uint() ? (double)(uint64_t)*i : (double)*i);
            return make_const(t, *i);  // wraps to width
        }
        if (const double *f = as_const_float(v)) {
            if (t.is_float()) return make_const(t, *f);
            if (std::isfinite(*f) && std::fabs(*f) < 9e18) return make_const(t, (int64_t)*f);
        }
        // int32(int64(x)) for an int32 x
        if (const auto *c = v.as<Cast>(); c && c->value.type() == t && v.type().can_represent(t)) return c->value;
    }
    if (const auto *b = v.as<Broadcast>()) return Broadcast::make(mutate(Cast::make(t.element_of(), b->value)), t.lanes());
    if (v.same_as(op->value)) return Expr(op);
    return Cast::make(t, v);
}

Expr Simplifier::visit(const Ramp *op) {
    Expr b = mutate(op->base), s = mutate(op->stride);
    if (is_zero(s)) return Broadcast::make(b, op->lanes);
    if (b.same_as(op->base) && s.same_as(op->stride)) return Expr(op);
    return Ramp::make(b, s, op->lanes);
}

Expr Simplifier::visit(const Call *op) {
    Expr e = IRMutator::visit(op);
    const auto *c = e.as<Call>();
    if (c && c->call_type == Call::PureExtern && c->args.size() == 1 && e.type() == Float(32)) {
        if (const double *f = as_const_float(c->args[0])) {
            float x = (float)*f;
            if (c->name == "floor") return make_const(e.type(), (double)std::floor(x));
            if (c->name == "ceil") return make_const(e.type(), (double)std::ceil(x));
            if (c->name == "sqrt") return make_const(e.type(), (double)std::sqrt(x));
        }
    }
    return e;
}

}  // namespace simplifier
}  // namespace internal
}  // namespace kiln
