// The simplifier's entry points (Simplify.h), and what its rules (listed in
// SimplifyInternal.h) ask of an expression: its linear form, its bounds.
#include "Simplify.h"

#include <cctype>

#include "ExprKey.h"
#include "SimplifyInternal.h"
#include "SimplifyMemo.h"

namespace kiln {
namespace internal {
namespace simplifier {

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

Expr delinearize(Linear l, Type t) {
    auto term_expr = [](const Expr &atom, int64_t c) {
        return c == 1 ? atom : Mul::make(atom, make_const(atom.type(), c));
    };
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

// Like linearize(), but let-bound variables are expanded into their
// values, so that (let a = e + 255, let b = e) a - b becomes 255.
Linear Simplifier::linearize_expanded(const Expr &e, int depth) {
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
bool Simplifier::constant_difference(const Expr &a, const Expr &b, int64_t &d) {
    if (!is_index_type(a.type()) || a.type().is_vector()) return false;
    Linear l = linearize_expanded(a);
    l.add(linearize_expanded(b), -1);
    l.normalize();
    if (!l.terms.empty()) return false;
    d = l.constant;
    return true;
}

// Constant bounds of an int expression, when they can be found.
bool Simplifier::const_bounds(const Expr &e, int64_t &lo, int64_t &hi, int depth) {
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
    if (const auto *a = e.as<Add>(); a && !wraps) {  // a bound past int64 is no constant bound
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
        if (e.type().is_int() && e.type().bits() >= 32 && c->value.type().is_int() && c->value.type().bits() <= e.type().bits())
            return const_bounds(c->value, lo, hi, depth + 1);
        if (c->value.type().is_bool() || (c->value.type().is_uint() && c->value.type().bits() < e.type().bits())) {
            if (const_bounds(c->value, lo, hi, depth + 1)) return true;
        }
    }
    if (e.type().is_bool()) {
        lo = 0;
        hi = 1;
        return true;
    }
    if (e.type().bits() <= 16 && !e.type().is_float()) {
        lo = e.type().is_int() ? -((int64_t)1 << (e.type().bits() - 1)) : 0;
        hi = e.type().is_int() ? ((int64_t)1 << (e.type().bits() - 1)) - 1 : ((int64_t)1 << e.type().bits()) - 1;
        return true;
    }
    return false;
}

// One constant end of an int expression (the upper one with `upper`), where
// const_bounds finds no pair: a min is at most either operand's upper end,
// a max at least either operand's lower end, whatever the other operand is.
//   min(e, 0) + 3  ->  at most 3;  max(e, 2) * -2  ->  at most -4
bool Simplifier::const_bound(const Expr &e, bool upper, int64_t &end, int depth) {
    int64_t lo, hi;
    if (const_bounds(e, lo, hi, depth)) {
        end = upper ? hi : lo;
        return true;
    }
    if (depth > 12 || !is_index_type(e.type()) || !e.type().is_scalar()) return false;
    int64_t x, y;
    const Min *mn = e.as<Min>();
    const Max *mx = e.as<Max>();
    if (mn || mx) {
        const Expr &a = mn ? mn->a : mx->a, &b = mn ? mn->b : mx->b;
        bool ha = const_bound(a, upper, x, depth + 1), hb = const_bound(b, upper, y, depth + 1);
        // The end a min keeps from either operand is its upper one; a max's, its lower one.
        bool either = upper == (mn != nullptr);
        if (ha && hb) end = mn ? std::min(x, y) : std::max(x, y);
        else if (either && (ha || hb)) end = ha ? x : y;
        else return false;
        return true;
    }
    if (const auto *a = e.as<Add>()) {
        return const_bound(a->a, upper, x, depth + 1) && const_bound(a->b, upper, y, depth + 1) &&
               !__builtin_add_overflow(x, y, &end);
    }
    if (const auto *s = e.as<Sub>()) {
        return const_bound(s->a, upper, x, depth + 1) && const_bound(s->b, !upper, y, depth + 1) &&
               !__builtin_sub_overflow(x, y, &end);
    }
    if (const auto *m = e.as<Mul>()) {
        const int64_t *c = as_const_int(m->b);
        return c && const_bound(m->a, (*c >= 0) == upper, x, depth + 1) && !__builtin_mul_overflow(x, *c, &end);
    }
    return false;
}

// Constant bounds of a - b: exact when a and b differ by a constant (through
// lets), else the bounds of their linear difference, else of a and b apart.
bool Simplifier::diff_bounds(const Expr &a, const Expr &b, int64_t &lo, int64_t &hi) {
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
bool Simplifier::rounded_diff_bounds(Linear l, int64_t &lo, int64_t &hi) {
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

namespace {
int64_t gcd(int64_t a, int64_t b) {
    a = a < 0 ? -a : a;
    b = b < 0 ? -b : b;
    while (b) {
        int64_t t = a % b;
        a = b;
        b = t;
    }
    return a;
}
}  // namespace

// What e is modulo some m: e == r (mod m), m >= 1, or m == 0 when e is the
// constant r. Lets in scope carry their values' (alignments); anything
// unknown is (1, 0). As for linear forms, index arithmetic is assumed not
// to overflow; a modulus past 2^31 is given up.
//   let a = (n / 2) * 2 - 1 in a + 64 * i  ->  (2, 1): the parity of a tile loop's min
ModRem Simplifier::modulus_remainder(const Expr &e, int depth) {
    const ModRem unknown{1, 0};
    if (depth > 24 || !is_index_type(e.type()) || e.type().is_vector()) return unknown;
    auto norm = [&](int64_t m, int64_t r) {
        if (m > (int64_t(1) << 31) || m < 0) return unknown;
        return ModRem{m, m ? floor_mod(r, m) : r};
    };
    auto unify = [&](ModRem a, ModRem b) {  // one of a or b
        int64_t d = a.remainder - b.remainder;
        return norm(gcd(gcd(a.modulus, b.modulus), d), a.remainder);
    };
    if (const int64_t *c = as_const_int(e)) return {0, *c};
    if (const auto *v = e.as<Variable>()) {
        auto it = alignment.find(v->name);
        return it != alignment.end() && !it->second.empty() ? it->second.back() : unknown;
    }
    if (const auto *c = e.as<Cast>()) return is_index_type(c->value.type()) ? modulus_remainder(c->value, depth + 1) : unknown;
    auto two = [&](const Expr &a, const Expr &b, ModRem &x, ModRem &y) {
        x = modulus_remainder(a, depth + 1);
        y = modulus_remainder(b, depth + 1);
    };
    ModRem x, y;
    if (const auto *a = e.as<Add>()) {
        two(a->a, a->b, x, y);
        return norm(gcd(x.modulus, y.modulus), x.remainder + y.remainder);
    }
    if (const auto *s = e.as<Sub>()) {
        two(s->a, s->b, x, y);
        return norm(gcd(x.modulus, y.modulus), x.remainder - y.remainder);
    }
    if (const auto *m = e.as<Mul>()) {
        two(m->a, m->b, x, y);
        int64_t a, b, c, r;
        if (__builtin_mul_overflow(x.modulus, y.modulus, &a) || __builtin_mul_overflow(x.modulus, y.remainder, &b) ||
            __builtin_mul_overflow(y.modulus, x.remainder, &c) || __builtin_mul_overflow(x.remainder, y.remainder, &r))
            return unknown;
        return norm(gcd(gcd(a, b), c), r);
    }
    if (const auto *d = e.as<Div>()) {  // (m*q + r) / k with k dividing m: (m/k)*q + r/k
        const int64_t *k = as_const_int(d->b);
        x = modulus_remainder(d->a, depth + 1);
        if (k && *k > 0 && x.modulus % *k == 0) return norm(x.modulus / *k, floor_div(x.remainder, *k));
        return unknown;
    }
    if (const auto *m = e.as<Mod>()) {
        const int64_t *k = as_const_int(m->b);
        if (!k || *k <= 0) return unknown;
        x = modulus_remainder(m->a, depth + 1);
        return norm(gcd(x.modulus, *k), x.remainder);
    }
    if (const auto *m = e.as<Min>()) {
        two(m->a, m->b, x, y);
        return unify(x, y);
    }
    if (const auto *m = e.as<Max>()) {
        two(m->a, m->b, x, y);
        return unify(x, y);
    }
    if (const auto *s = e.as<Select>()) {
        two(s->true_value, s->false_value, x, y);
        return unify(x, y);
    }
    if (const auto *l = e.as<Let>()) {
        x = modulus_remainder(l->value, depth + 1);
        alignment[l->name].push_back(x);
        y = modulus_remainder(l->body, depth + 1);
        alignment[l->name].pop_back();
        return y;
    }
    return unknown;
}

}  // namespace simplifier

namespace {

thread_local SimplifyMemo *current_memo = nullptr;

// Whether e may be kept in a SimplifyMemo: not a float expression, nor one
// whose text may show a float constant (a digit, a point and a digit:
// "0.100000f"; such names as "b3.0" are left out too), nor a leaf.
bool memo_keeps(const Expr &e, const std::string &text) {
    if (e.type().is_float() || e.as<Variable>() || is_const(e)) return false;
    for (size_t i = text.find('.'); i != std::string::npos; i = text.find('.', i + 1))
        if (i > 0 && i + 1 < text.size() && std::isdigit((unsigned char)text[i - 1]) &&
            std::isdigit((unsigned char)text[i + 1]))
            return false;
    return true;
}

}  // namespace

SimplifyMemo::Use::Use(SimplifyMemo &m) : outer(current_memo) { current_memo = &m; }
SimplifyMemo::Use::~Use() { current_memo = outer; }

Expr simplify(const Expr &e) {
    SimplifyMemo *memo = current_memo;
    if (!memo || !e.defined()) return simplifier::Simplifier().mutate(e);
    ExprKey text = expr_key(e);
    if (!memo_keeps(e, *text)) return simplifier::Simplifier().mutate(e);
    auto it = memo->results.find(*text);
    if (it != memo->results.end() && it->second.type == e.type()) {
        memo->hits++;
        return it->second.result;
    }
    memo->misses++;
    Expr r = simplifier::Simplifier().mutate(e);
    if (it != memo->results.end()) return r;  // the same text in another type: not kept
    if (memo->text_bytes >= SimplifyMemo::max_text_bytes) {
        memo->results.clear();
        memo->text_bytes = 0;
    }
    memo->text_bytes += text->size();
    std::string_view key = *text;  // into the text the entry keeps
    memo->results.emplace(key, SimplifyMemo::Entry{std::move(text), e.type(), r});
    return r;
}
Stmt simplify(const Stmt &s) { return simplifier::Simplifier().mutate(s); }
Expr simplify(const Expr &e, const std::map<std::string, std::pair<int64_t, int64_t>> &var_ranges) {
    simplifier::Simplifier s;
    for (const auto &r : var_ranges) s.ranges[r.first].push_back(r.second);
    return s.mutate(e);
}
bool can_prove(const Expr &e) { return is_one(simplify(e)); }

}  // namespace internal
}  // namespace kiln
