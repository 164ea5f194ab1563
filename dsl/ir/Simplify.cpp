#include "Simplify.h"

#include <algorithm>
#include <cmath>
#include <functional>
#include <vector>

#include "ExprKey.h"
#include "IRPrinter.h"
#include "IRVisitor.h"
#include "Substitute.h"

namespace kiln {
namespace internal {

namespace {

using Range64 = std::pair<int64_t, int64_t>;

// Euclidean division (IR.h): the remainder is never negative; x / 0 == 0.
int64_t floor_div(int64_t a, int64_t b) {
    if (b == 0) return 0;
    if (b == -1) return (int64_t)(0 - (uint64_t)a);
    int64_t q = a / b, r = a % b;
    if (r < 0) q += b > 0 ? -1 : 1;
    return q;
}
int64_t floor_mod(int64_t a, int64_t b) {
    if (b == 0 || b == -1) return 0;
    int64_t r = a % b;
    if (r < 0) r += b > 0 ? b : -b;
    return r;
}

// Signed integer types where the no-overflow assumption holds.
bool is_index_type(Type t) { return t.is_int() && t.bits >= 32; }

// A sum of terms coeff*atom plus a constant, for canonicalizing int sums.
// Atoms are compared and ordered by their printed text (expr_key).
struct Linear {
    struct Term {
        Expr first;        // the atom
        int64_t second;    // its coefficient
        ExprKey key;       // to_string(first)
    };
    std::vector<Term> terms;  // sorted by key after normalize()
    int64_t constant = 0;

    void add_term(const Expr &atom, int64_t c, ExprKey key = nullptr) {
        if (!key) key = expr_key(atom);
        for (auto &t : terms) {
            if (t.key == key || *t.key == *key) {
                t.second += c;
                return;
            }
        }
        terms.push_back({atom, c, std::move(key)});
    }
    void scale(int64_t c) {
        for (auto &t : terms) t.second *= c;
        constant *= c;
    }
    void add(const Linear &o, int64_t sign) {
        for (const auto &t : o.terms) add_term(t.first, t.second * sign, t.key);
        constant += o.constant * sign;
    }
    void normalize() {
        terms.erase(std::remove_if(terms.begin(), terms.end(), [](auto &t) { return t.second == 0; }), terms.end());
        std::stable_sort(terms.begin(), terms.end(), [](auto &a, auto &b) { return *a.key < *b.key; });
    }
};

Linear linearize(const Expr &e) {
    Linear l;
    if (const int64_t *c = as_const_int(e)) {
        l.constant = *c;
    } else if (const auto *a = e.as<Add>()) {
        l = linearize(a->a);
        l.add(linearize(a->b), 1);
    } else if (const auto *s = e.as<Sub>()) {
        l = linearize(s->a);
        l.add(linearize(s->b), -1);
    } else if (const auto *m = e.as<Mul>(); m && as_const_int(m->b)) {
        l = linearize(m->a);
        l.scale(*as_const_int(m->b));
    } else if (m && as_const_int(m->a)) {
        l = linearize(m->b);
        l.scale(*as_const_int(m->a));
    } else {
        l.add_term(e, 1);
    }
    return l;
}

Expr term_expr(const Expr &atom, int64_t c) {
    if (c == 1) return atom;
    return Mul::make(atom, make_const(atom.type(), c));
}

Expr delinearize(Linear l, Type t) {
    l.normalize();
    Expr r;
    for (const auto &term : l.terms) {
        if (term.second > 0) r = r.defined() ? Add::make(r, term_expr(term.first, term.second)) : term_expr(term.first, term.second);
    }
    for (const auto &term : l.terms) {
        if (term.second < 0) {
            Expr p = term_expr(term.first, -term.second);
            r = r.defined() ? Sub::make(r, p) : Sub::make(make_zero(t), p);
        }
    }
    if (!r.defined()) return make_const(t, l.constant);
    if (l.constant > 0) r = Add::make(r, make_const(t, l.constant));
    if (l.constant < 0) r = Sub::make(r, make_const(t, -l.constant));
    return r;
}

class Simplifier : public IRMutator {
public:
    std::map<std::string, std::vector<Range64>> ranges;  // constant bounds of variables in scope
    std::map<std::string, std::vector<Expr>> let_values;  // int lets in scope, for cancelling differences

    // Like linearize(), but let-bound variables are expanded into their
    // values, so that (let a = e + 255, let b = e) a - b becomes 255.
    Linear linearize_expanded(const Expr &e, int depth = 0) {
        Linear l = linearize(e);
        if (depth > 4) return l;
        Linear r;
        r.constant = l.constant;
        for (const auto &t : l.terms) {
            const auto *v = t.first.as<Variable>();
            auto it = v ? let_values.find(v->name) : let_values.end();
            if (it != let_values.end() && !it->second.empty()) {
                Linear inner = linearize_expanded(it->second.back(), depth + 1);
                inner.scale(t.second);
                r.add(inner, 1);
            } else {
                r.add_term(t.first, t.second, t.key);
            }
        }
        return r;
    }
    // a - b as a constant, looking through lets.
    bool constant_difference(const Expr &a, const Expr &b, int64_t &d) {
        if (!is_index_type(a.type()) || a.type().is_vector()) return false;
        Linear l = linearize_expanded(a);
        l.add(linearize_expanded(b), -1);
        l.normalize();
        if (!l.terms.empty()) return false;
        d = l.constant;
        return true;
    }

    // Constant bounds of an int expression, when they can be found.
    bool const_bounds(const Expr &e, int64_t &lo, int64_t &hi, int depth = 0) {
        if (depth > 12 || (!e.type().is_int() && !e.type().is_uint())) return false;
        if (const int64_t *c = as_const_int(e)) {
            lo = hi = *c;
            return true;
        }
        if (const auto *v = e.as<Variable>()) {
            auto it = ranges.find(v->name);
            if (it != ranges.end() && !it->second.empty()) {
                lo = it->second.back().first;
                hi = it->second.back().second;
                return true;
            }
            return false;
        }
        if (const auto *b = e.as<Broadcast>()) return const_bounds(b->value, lo, hi, depth + 1);
        int64_t al, ah, bl, bh;
        auto both = [&](const Expr &a, const Expr &b) {
            return const_bounds(a, al, ah, depth + 1) && const_bounds(b, bl, bh, depth + 1);
        };
        // Narrow and unsigned arithmetic wraps: only the type's range is known.
        bool wraps = !is_index_type(e.type()) && (e.as<Add>() || e.as<Sub>() || e.as<Mul>());
        if (wraps) {
        } else if (const auto *a = e.as<Add>()) {
            // A bound past int64 is no constant bound.
            return both(a->a, a->b) && !__builtin_add_overflow(al, bl, &lo) && !__builtin_add_overflow(ah, bh, &hi);
        }
        if (const auto *s = e.as<Sub>(); s && !wraps) {
            return both(s->a, s->b) && !__builtin_sub_overflow(al, bh, &lo) && !__builtin_sub_overflow(ah, bl, &hi);
        }
        if (const auto *m = e.as<Mul>(); m && !wraps) {
            if (!both(m->a, m->b)) return false;
            int64_t p[4];
            if (__builtin_mul_overflow(al, bl, &p[0]) || __builtin_mul_overflow(al, bh, &p[1]) ||
                __builtin_mul_overflow(ah, bl, &p[2]) || __builtin_mul_overflow(ah, bh, &p[3]))
                return false;
            lo = *std::min_element(p, p + 4);
            hi = *std::max_element(p, p + 4);
            return true;
        }
        if (const auto *d = e.as<Div>()) {
            if (!both(d->a, d->b) || bl != bh || bl == 0) return false;
            lo = std::min(floor_div(al, bl), floor_div(ah, bl));
            hi = std::max(floor_div(al, bl), floor_div(ah, bl));
            return true;
        }
        if (const auto *m = e.as<Mod>()) {
            const int64_t *c = as_const_int(m->b);
            if (!c || *c == 0 || *c == INT64_MIN) return false;
            lo = 0;
            hi = std::llabs(*c) - 1;
            if (const_bounds(m->a, al, ah, depth + 1) && al >= 0 && ah < std::llabs(*c)) lo = al, hi = ah;
            return true;
        }
        if (const auto *m = e.as<Min>()) {
            if (!both(m->a, m->b)) return false;
            lo = std::min(al, bl);
            hi = std::min(ah, bh);
            return true;
        }
        if (const auto *m = e.as<Max>()) {
            if (!both(m->a, m->b)) return false;
            lo = std::max(al, bl);
            hi = std::max(ah, bh);
            return true;
        }
        if (const auto *s = e.as<Select>()) {
            if (!both(s->true_value, s->false_value)) return false;
            lo = std::min(al, bl);
            hi = std::max(ah, bh);
            return true;
        }
        if (const auto *c = e.as<Cast>()) {
            if (e.type().is_int() && e.type().bits >= 32 && c->value.type().is_int() && c->value.type().bits <= e.type().bits)
                return const_bounds(c->value, lo, hi, depth + 1);
            if (c->value.type().is_bool() || (c->value.type().is_uint() && c->value.type().bits < e.type().bits)) {
                if (const_bounds(c->value, lo, hi, depth + 1)) return true;
            }
        }
        if (e.type().is_bool()) {
            lo = 0;
            hi = 1;
            return true;
        }
        if (e.type().bits <= 16) {
            lo = e.type().is_int() ? -((int64_t)1 << (e.type().bits - 1)) : 0;
            hi = e.type().is_int() ? ((int64_t)1 << (e.type().bits - 1)) - 1 : ((int64_t)1 << e.type().bits) - 1;
            return true;
        }
        return false;
    }

    // Sign information for a - b: returns -1 (a < b proven), ... via bounds.
    bool diff_bounds(const Expr &a, const Expr &b, int64_t &lo, int64_t &hi) {
        int64_t d;
        if (constant_difference(a, b, d)) {
            lo = hi = d;
            return true;
        }
        if (is_index_type(a.type()) && a.type().is_scalar()) {
            Linear l = linearize(a);
            l.add(linearize(b), -1);
            l.normalize();
            Expr d = delinearize(l, a.type());
            if (const_bounds(d, lo, hi)) return true;
            return rounded_diff_bounds(l, lo, hi);
        }
        int64_t al, ah, bl, bh;
        if (const_bounds(a, al, ah) && const_bounds(b, bl, bh)) {
            lo = al - bh;
            hi = ah - bl;
            return true;
        }
        return false;
    }

    // The difference l may hold k * (n / c) (a rounded-up or -down extent,
    // c > 0, k a multiple of c): that is (k / c) * (n - n % c) with n % c in
    // [0, c - 1], so if the rest cancels, the difference is bounded:
    //   ((e + 15) / 16) * 16 - e  ->  in [0, 15] + 15 - 15 ... in [0, 15]
    // (as min(((e + 15) / 16) * 16 - 16, e - 16) simplifies to e - 16, the
    // region of a vectorized loop shifted inwards stays in terms of e).
    bool rounded_diff_bounds(Linear l, int64_t &lo, int64_t &hi) {
        int64_t slack_lo = 0, slack_hi = 0;
        bool rewrote = false;
        for (size_t i = 0; i < l.terms.size(); i++) {
            const auto *div = l.terms[i].first.as<Div>();
            const int64_t *c = div ? as_const_int(div->b) : nullptr;
            int64_t k = l.terms[i].second;
            if (!c || *c <= 0 || k % *c != 0) continue;
            int64_t m = k / *c;  // k * (n / c) = m * n - m * (n % c)
            Linear n = linearize(div->a);
            l.terms[i].second = 0;
            l.add(n, m);
            if (m > 0) slack_lo -= m * (*c - 1);
            else slack_hi -= m * (*c - 1);
            rewrote = true;
        }
        if (!rewrote) return false;
        l.normalize();
        if (!l.terms.empty()) return false;
        lo = l.constant + slack_lo;
        hi = l.constant + slack_hi;
        return true;
    }

protected:
    Expr fold_float(const Expr &e, double va, double vb, IRNodeType k) {
        double r = 0;
        switch (k) {
        case IRNodeType::Add: r = va + vb; break;
        case IRNodeType::Sub: r = va - vb; break;
        case IRNodeType::Mul: r = va * vb; break;
        case IRNodeType::Div: r = va / vb; break;
        case IRNodeType::Mod: r = va - vb * std::floor(va / vb); break;
        case IRNodeType::Min: r = va < vb ? va : vb; break;
        case IRNodeType::Max: r = va > vb ? va : vb; break;
        default: return e;
        }
        if (e.type().bits == 32) {
            // Fold in float precision, as the target would compute it.
            float fa = (float)va, fb = (float)vb, fr = 0;
            switch (k) {
            case IRNodeType::Add: fr = fa + fb; break;
            case IRNodeType::Sub: fr = fa - fb; break;
            case IRNodeType::Mul: fr = fa * fb; break;
            case IRNodeType::Div: fr = fa / fb; break;
            case IRNodeType::Mod: fr = fa - fb * std::floor(fa / fb); break;
            default: fr = (float)r;
            }
            r = fr;
        }
        return make_const(e.type(), r);
    }

    Expr fold_int(Type t, int64_t a, int64_t b, IRNodeType k) {
        int64_t r = 0;
        if (t.is_uint()) {
            uint64_t ua = (uint64_t)a, ub = (uint64_t)b, ur = 0;
            switch (k) {
            case IRNodeType::Add: ur = ua + ub; break;
            case IRNodeType::Sub: ur = ua - ub; break;
            case IRNodeType::Mul: ur = ua * ub; break;
            case IRNodeType::Div: ur = ub ? ua / ub : 0; break;
            case IRNodeType::Mod: ur = ub ? ua % ub : 0; break;
            case IRNodeType::Min: ur = std::min(ua, ub); break;
            case IRNodeType::Max: ur = std::max(ua, ub); break;
            default: break;
            }
            return make_const(t, (int64_t)ur);
        }
        switch (k) {
        case IRNodeType::Add: r = (int64_t)((uint64_t)a + (uint64_t)b); break;
        case IRNodeType::Sub: r = (int64_t)((uint64_t)a - (uint64_t)b); break;
        case IRNodeType::Mul: r = (int64_t)((uint64_t)a * (uint64_t)b); break;
        case IRNodeType::Div: r = floor_div(a, b); break;
        case IRNodeType::Mod: r = floor_mod(a, b); break;
        case IRNodeType::Min: r = std::min(a, b); break;
        case IRNodeType::Max: r = std::max(a, b); break;
        default: break;
        }
        return make_const(t, r);
    }

    // Constant-fold a binary arithmetic node if both sides are constants.
    bool try_fold(Type t, const Expr &a, const Expr &b, IRNodeType k, Expr &out) {
        if (t.is_float()) {
            const double *fa = as_const_float(a), *fb = as_const_float(b);
            if (fa && fb) {
                out = fold_float(make_zero(t), *fa, *fb, k);
                return true;
            }
            return false;
        }
        const int64_t *ia = as_const_int(a), *ib = as_const_int(b);
        if (ia && ib) {
            out = fold_int(t.element_of(), *ia, *ib, k);
            if (t.is_vector()) out = Broadcast::make(out, t.lanes);
            return true;
        }
        return false;
    }

    // Broadcast/ramp arithmetic: keep vector index math in ramp form.
    bool vector_rule(const Expr &a, const Expr &b, IRNodeType k, Expr &out) {
        const auto *ba = a.as<Broadcast>(), *bb = b.as<Broadcast>();
        const auto *ra = a.as<Ramp>(), *rb = b.as<Ramp>();
        int lanes = a.type().lanes;
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
        return false;
    }

    Expr visit_sum(const Expr &orig, const Expr &a, const Expr &b, IRNodeType k) {
        Type t = orig.type();
        Expr out;
        if (try_fold(t, a, b, k, out)) return out;
        if (t.is_vector() && vector_rule(a, b, k, out)) return out;
        if (is_index_type(t) && t.is_scalar()) {
            Linear l = linearize(a);
            l.add(linearize(b), k == IRNodeType::Add ? 1 : -1);
            l.normalize();
            if (!l.terms.empty() && !let_values.empty()) {
                Linear le = linearize_expanded(a);
                le.add(linearize_expanded(b), k == IRNodeType::Add ? 1 : -1);
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
        if (k == IRNodeType::Add) return Add::make(a, b);
        return Sub::make(a, b);
    }

    Expr visit(const Add *op) override { return visit_sum(Expr(op), mutate(op->a), mutate(op->b), IRNodeType::Add); }
    Expr visit(const Sub *op) override { return visit_sum(Expr(op), mutate(op->a), mutate(op->b), IRNodeType::Sub); }

    Expr visit(const Mul *op) override {
        Expr a = mutate(op->a), b = mutate(op->b), out;
        Type t = op->type;
        if (try_fold(t, a, b, IRNodeType::Mul, out)) return out;
        if (t.is_vector() && vector_rule(a, b, IRNodeType::Mul, out)) return out;
        if (!t.is_float()) {
            if (is_const(a) && !is_const(b)) std::swap(a, b);
            if (is_zero(b)) return b;
            if (is_one(b)) return a;
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

    Expr visit(const Div *op) override {
        Expr a = mutate(op->a), b = mutate(op->b), out;
        Type t = op->type;
        if (try_fold(t, a, b, IRNodeType::Div, out)) return out;
        if (t.is_vector() && vector_rule(a, b, IRNodeType::Div, out)) return out;
        if (t.is_float() && as_const_float(b)) {
            // As Halide does: a float divided by a constant is multiplied by its reciprocal.
            double r = 1.0 / *as_const_float(b);
            if (t.bits == 32) r = (double)(1.0f / (float)*as_const_float(b));
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

    Expr visit(const Mod *op) override {
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
                if (rest.terms.size() != l.terms.size() || rest.constant != l.constant)
                    return Mod::make(rest_e, b);
            }
        }
        if (a.same_as(op->a) && b.same_as(op->b)) return Expr(op);
        return Mod::make(a, b);
    }

    Expr visit_minmax(const Expr &orig, Expr a, Expr b, bool is_min) {
        Type t = orig.type();
        Expr out;
        IRNodeType k = is_min ? IRNodeType::Min : IRNodeType::Max;
        if (try_fold(t, a, b, k, out)) return out;
        if (t.is_vector() && vector_rule(a, b, k, out)) return out;
        if (equal(a, b)) return a;
        if (!t.is_float()) {
            int64_t lo, hi;
            if (diff_bounds(a, b, lo, hi)) {
                if (hi <= 0) return is_min ? a : b;  // a <= b
                if (lo >= 0) return is_min ? b : a;  // a >= b
            }
            // min(min(x, c1), c2) -> min(x, min(c1, c2)); same for max.
            if (is_const(b)) {
                if (const auto *ia = a.as<Min>(); is_min && ia && is_const(ia->b))
                    return mutate(Min::make(ia->a, Min::make(ia->b, b)));
                if (const auto *ia = a.as<Max>(); !is_min && ia && is_const(ia->b))
                    return mutate(Max::make(ia->a, Max::make(ia->b, b)));
            }
            // Common outer operand: min(max(x, l), max(y, l)) -> max(min(x, y), l), and the
            // three other combinations; this merges the clamps of boundary conditions.
            {
                const auto *amax = a.as<Max>(), *bmax = b.as<Max>();
                const auto *amin = a.as<Min>(), *bmin = b.as<Min>();
                if (amax && bmax && equal(amax->b, bmax->b))
                    return mutate(Max::make(is_min ? Min::make(amax->a, bmax->a) : Max::make(amax->a, bmax->a), amax->b));
                if (amin && bmin && equal(amin->b, bmin->b))
                    return mutate(Min::make(is_min ? Min::make(amin->a, bmin->a) : Max::make(amin->a, bmin->a), amin->b));
            }
            // Division by a positive constant rounds down, so it is
            // monotonic, as multiplication is where it cannot overflow:
            //   min(a / 2, (a + 1) / 2)  ->  min(a, a + 1) / 2  ->  a / 2
            // (an upsampled level's region; without it each level of a
            // pyramid names the last one twice).
            if (const auto *da = a.as<Div>(), *db = b.as<Div>(); da && db && t.is_scalar() && equal(da->b, db->b)) {
                const int64_t *c = as_const_int(da->b);
                if (c && *c > 0)
                    return mutate(Div::make(is_min ? Min::make(da->a, db->a) : Max::make(da->a, db->a), da->b));
            }
            if (const auto *ma = a.as<Mul>(), *mb = b.as<Mul>(); ma && mb && is_index_type(t) && equal(ma->b, mb->b)) {
                const int64_t *c = as_const_int(ma->b);
                if (c && *c > 0)
                    return mutate(Mul::make(is_min ? Min::make(ma->a, mb->a) : Max::make(ma->a, mb->a), ma->b));
            }
            // min(a, min(a, b)) -> min(a, b)
            if (const auto *ib = b.as<Min>(); is_min && ib && (equal(ib->a, a) || equal(ib->b, a))) return b;
            if (const auto *ib = b.as<Max>(); !is_min && ib && (equal(ib->a, a) || equal(ib->b, a))) return b;
            if (const auto *ia = a.as<Min>(); is_min && ia && (equal(ia->a, b) || equal(ia->b, b))) return a;
            if (const auto *ia = a.as<Max>(); !is_min && ia && (equal(ia->a, b) || equal(ia->b, b))) return a;
            if (Expr pruned = prune_chain(a, b, k); pruned.defined()) return pruned;
            if (is_const(a) && !is_const(b)) std::swap(a, b);
        }
        return is_min ? Min::make(a, b) : Max::make(a, b);
    }

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
    Expr prune_chain(const Expr &a, const Expr &b, IRNodeType k) {
        if (a->node_type != k && b->node_type != k) return Expr();
        const bool is_min = k == IRNodeType::Min;
        std::vector<Expr> ops;
        std::function<void(const Expr &)> flatten = [&](const Expr &e) {
            if (ops.size() > 16) return;
            const auto *mn = is_min ? e.as<Min>() : nullptr;
            const auto *mx = is_min ? nullptr : e.as<Max>();
            if (mn) flatten(mn->a), flatten(mn->b);
            else if (mx) flatten(mx->a), flatten(mx->b);
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
            r = !r.defined() ? ops[i] : is_min ? Min::make(r, ops[i]) : Max::make(r, ops[i]);
        }
        return r;
    }
    Expr visit(const Min *op) override { return visit_minmax(Expr(op), mutate(op->a), mutate(op->b), true); }
    Expr visit(const Max *op) override { return visit_minmax(Expr(op), mutate(op->a), mutate(op->b), false); }

    // Comparisons: fold constants, or decide from the bounds of a - b.
    Expr visit_cmp(const Expr &orig, Expr a, Expr b, IRNodeType k) {
        Type t = orig.type();
        const int64_t *ia = as_const_int(a), *ib = as_const_int(b);
        const double *fa = as_const_float(a), *fb = as_const_float(b);
        auto decide = [&](bool v) { return make_bool(v, t.lanes); };
        if (ia && ib && a.type().is_scalar()) {
            bool u = a.type().is_uint();
            uint64_t ua = (uint64_t)*ia, ub = (uint64_t)*ib;
            switch (k) {
            case IRNodeType::EQ: return decide(*ia == *ib);
            case IRNodeType::NE: return decide(*ia != *ib);
            case IRNodeType::LT: return decide(u ? ua < ub : *ia < *ib);
            case IRNodeType::LE: return decide(u ? ua <= ub : *ia <= *ib);
            case IRNodeType::GT: return decide(u ? ua > ub : *ia > *ib);
            case IRNodeType::GE: return decide(u ? ua >= ub : *ia >= *ib);
            default: break;
            }
        }
        if (fa && fb && a.type().is_scalar()) {
            switch (k) {
            case IRNodeType::EQ: return decide(*fa == *fb);
            case IRNodeType::NE: return decide(*fa != *fb);
            case IRNodeType::LT: return decide(*fa < *fb);
            case IRNodeType::LE: return decide(*fa <= *fb);
            case IRNodeType::GT: return decide(*fa > *fb);
            case IRNodeType::GE: return decide(*fa >= *fb);
            default: break;
            }
        }
        int64_t lo, hi;
        if (!a.type().is_float() && a.type().is_scalar() && diff_bounds(a, b, lo, hi)) {
            switch (k) {
            case IRNodeType::EQ: if (lo > 0 || hi < 0) return decide(false); if (lo == 0 && hi == 0) return decide(true); break;
            case IRNodeType::NE: if (lo > 0 || hi < 0) return decide(true); if (lo == 0 && hi == 0) return decide(false); break;
            case IRNodeType::LT: if (hi < 0) return decide(true); if (lo >= 0) return decide(false); break;
            case IRNodeType::LE: if (hi <= 0) return decide(true); if (lo > 0) return decide(false); break;
            case IRNodeType::GT: if (lo > 0) return decide(true); if (hi <= 0) return decide(false); break;
            case IRNodeType::GE: if (lo >= 0) return decide(true); if (hi < 0) return decide(false); break;
            default: break;
            }
        }
        switch (k) {
        case IRNodeType::EQ: return EQ::make(a, b);
        case IRNodeType::NE: return NE::make(a, b);
        case IRNodeType::LT: return LT::make(a, b);
        case IRNodeType::LE: return LE::make(a, b);
        case IRNodeType::GT: return GT::make(a, b);
        default: return GE::make(a, b);
        }
    }
    Expr visit(const EQ *op) override { return visit_cmp(Expr(op), mutate(op->a), mutate(op->b), IRNodeType::EQ); }
    Expr visit(const NE *op) override { return visit_cmp(Expr(op), mutate(op->a), mutate(op->b), IRNodeType::NE); }
    Expr visit(const LT *op) override { return visit_cmp(Expr(op), mutate(op->a), mutate(op->b), IRNodeType::LT); }
    Expr visit(const LE *op) override { return visit_cmp(Expr(op), mutate(op->a), mutate(op->b), IRNodeType::LE); }
    Expr visit(const GT *op) override { return visit_cmp(Expr(op), mutate(op->a), mutate(op->b), IRNodeType::GT); }
    Expr visit(const GE *op) override { return visit_cmp(Expr(op), mutate(op->a), mutate(op->b), IRNodeType::GE); }

    Expr visit(const And *op) override {
        Expr a = mutate(op->a), b = mutate(op->b);
        if (is_one(a)) return b;
        if (is_one(b)) return a;
        if (is_zero(a)) return a;
        if (is_zero(b)) return b;
        if (equal(a, b)) return a;
        return And::make(a, b);
    }
    Expr visit(const Or *op) override {
        Expr a = mutate(op->a), b = mutate(op->b);
        if (is_one(a)) return a;
        if (is_one(b)) return b;
        if (is_zero(a)) return b;
        if (is_zero(b)) return a;
        if (equal(a, b)) return a;
        return Or::make(a, b);
    }
    Expr visit(const Not *op) override {
        Expr a = mutate(op->a);
        if (is_const(a)) return make_bool(is_zero(a), op->type.lanes);
        if (const auto *n = a.as<Not>()) return n->a;
        return Not::make(a);
    }
    Expr visit(const Select *op) override {
        Expr c = mutate(op->condition), t = mutate(op->true_value), f = mutate(op->false_value);
        if (is_one(c)) return t;
        if (is_zero(c)) return f;
        if (equal(t, f)) return t;
        if (c.same_as(op->condition) && t.same_as(op->true_value) && f.same_as(op->false_value)) return Expr(op);
        return Select::make(c, t, f);
    }
    Expr visit(const Cast *op) override {
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
        if (const auto *b = v.as<Broadcast>()) return Broadcast::make(mutate(Cast::make(t.element_of(), b->value)), t.lanes);
        if (v.same_as(op->value)) return Expr(op);
        return Cast::make(t, v);
    }
    Expr visit(const Broadcast *op) override {
        Expr v = mutate(op->value);
        return v.same_as(op->value) ? Expr(op) : Broadcast::make(v, op->lanes);
    }
    Expr visit(const Ramp *op) override {
        Expr b = mutate(op->base), s = mutate(op->stride);
        if (is_zero(s)) return Broadcast::make(b, op->lanes);
        if (b.same_as(op->base) && s.same_as(op->stride)) return Expr(op);
        return Ramp::make(b, s, op->lanes);
    }
    Expr visit(const Call *op) override {
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

    // Trivial lets (constants, variables) are substituted away.
    template<typename T, typename Body>
    auto visit_let(const T *op, const Body &body) {
        Expr v = mutate(op->value);
        if (is_const(v) || v.template as<Variable>()) {
            return mutate(substitute(op->name, v, body));
        }
        int64_t lo, hi;
        bool bounded = !v.type().is_float() && v.type().is_scalar() && const_bounds(v, lo, hi);
        bool indexed = is_index_type(v.type()) && v.type().is_scalar();
        if (bounded) ranges[op->name].push_back({lo, hi});
        if (indexed) let_values[op->name].push_back(v);
        auto b = mutate(body);
        if (indexed) let_values[op->name].pop_back();
        if (bounded) ranges[op->name].pop_back();
        if (!uses_name(b, op->name)) return b;
        if (v.same_as(op->value) && b.same_as(body)) return decltype(b)(op);
        return T::make(op->name, v, b);
    }
    static bool uses_name(const Expr &e, const std::string &n) { return expr_uses_var(e, n); }
    static bool uses_name(const Stmt &s, const std::string &n) { return stmt_uses_var(s, n); }
    Expr visit(const Let *op) override { return visit_let(op, op->body); }
    Stmt visit(const LetStmt *op) override { return visit_let(op, op->body); }

    Stmt visit(const For *op) override {
        Expr mn = mutate(op->min), ex = mutate(op->extent);
        if (is_zero(ex) || (as_const_int(ex) && *as_const_int(ex) < 0)) return Stmt();
        if (is_one(ex) && op->for_type != ForType::Parallel) {
            return mutate(LetStmt::make(op->name, mn, op->body));
        }
        int64_t ml, mh, el, eh;
        bool bounded = const_bounds(mn, ml, mh) && const_bounds(ex, el, eh);
        if (bounded) ranges[op->name].push_back({ml, mh + eh - 1});
        Stmt b = mutate(op->body);
        if (bounded) ranges[op->name].pop_back();
        if (!b.defined()) return Stmt();
        if (mn.same_as(op->min) && ex.same_as(op->extent) && b.same_as(op->body)) return Stmt(op);
        return For::make(op->name, mn, ex, op->for_type, b);
    }
    Stmt visit(const IfThenElse *op) override {
        Expr c = mutate(op->condition);
        if (is_one(c)) return mutate(op->then_case);
        if (is_zero(c)) return op->else_case.defined() ? mutate(op->else_case) : Stmt();
        Stmt t = mutate(op->then_case), e = mutate(op->else_case);
        if (!t.defined() && !e.defined()) return Stmt();
        if (!t.defined()) return IfThenElse::make(mutate(Not::make(c)), e);
        if (c.same_as(op->condition) && t.same_as(op->then_case) && e.same_as(op->else_case)) return Stmt(op);
        return IfThenElse::make(c, t, e);
    }
    Stmt visit(const AssertStmt *op) override {
        Expr c = mutate(op->condition);
        if (is_one(c)) return Stmt();
        if (c.same_as(op->condition)) return Stmt(op);
        return AssertStmt::make(c, op->error_code, op->message);
    }
    Stmt visit(const ProducerConsumer *op) override {
        Stmt b = mutate(op->body);
        if (!b.defined()) return Stmt();
        return b.same_as(op->body) ? Stmt(op) : ProducerConsumer::make(op->name, op->is_producer, b);
    }
    Stmt visit(const Realize *op) override {
        Stmt body = mutate(op->body);
        if (!body.defined()) return Stmt();  // nothing uses the storage
        std::vector<Range> bounds;
        bool changed = !body.same_as(op->body);
        for (const auto &r : op->bounds) {
            bounds.push_back({mutate(r.min), mutate(r.extent)});
            changed |= !bounds.back().min.same_as(r.min) || !bounds.back().extent.same_as(r.extent);
        }
        return changed ? Realize::make(op->name, op->types, bounds, body, op->fold_factors) : Stmt(op);
    }
    Stmt visit(const Allocate *op) override {
        Expr sz = mutate(op->size);
        Stmt b = mutate(op->body);
        if (!b.defined()) return Stmt();
        if (sz.same_as(op->size) && b.same_as(op->body)) return Stmt(op);
        return Allocate::make(op->name, op->type, sz, b);
    }
};

}  // namespace

Expr simplify(const Expr &e) { return Simplifier().mutate(e); }
Stmt simplify(const Stmt &s) { return Simplifier().mutate(s); }
Expr simplify(const Expr &e, const std::map<std::string, std::pair<int64_t, int64_t>> &var_ranges) {
    Simplifier s;
    for (const auto &r : var_ranges) s.ranges[r.first].push_back(r.second);
    return s.mutate(e);
}
bool can_prove(const Expr &e) { return is_one(simplify(e)); }

}  // namespace internal
}  // namespace kiln
