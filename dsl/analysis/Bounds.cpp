#include "Bounds.h"

#include <algorithm>
#include <functional>
#include <set>
#include <unordered_set>

#include "Monotonic.h"
#include "ir/ExprKey.h"
#include "ir/IRPrinter.h"
#include "ir/IRVisitor.h"
#include "ir/Simplify.h"
#include "ir/Substitute.h"

namespace kiln {
namespace internal {

Expr smin(const Expr &a, const Expr &b) { return simplify(Min::make(a, b)); }
Expr smax(const Expr &a, const Expr &b) { return simplify(Max::make(a, b)); }

namespace {

class BoundsOf : public IRVisitor {
public:
    explicit BoundsOf(const Scope &s) : scope(s) {}
    Interval result;

    Interval of(const Expr &e) {
        include(e);
        return result;
    }

protected:
    const Scope &scope;
    Scope lets;  // Let expressions inside the expression

    void type_range(Type t) {
        if (t.is_bool()) result = Interval(make_zero(t), make_one(t));
        else if (!t.is_float() && t.bits() <= 16) result = Interval(type_min(t), type_max(t));
        else result = Interval();
    }
    void visit(const IntImm *op) override { result = Interval::point(Expr(op)); }
    void visit(const UIntImm *op) override { result = Interval::point(Expr(op)); }
    void visit(const FloatImm *op) override { result = Interval::point(Expr(op)); }
    void visit(const StringImm *op) override { result = Interval(); }
    void visit(const Variable *op) override {
        if (const Interval *i = lets.find(op->name)) result = *i;
        else if (const Interval *i = scope.find(op->name)) result = *i;
        else result = Interval::point(Expr(op));
    }
    void visit(const Cast *op) override {
        if (fixed(op)) return;
        Interval v = of(op->value);
        Type from = op->value.type(), to = op->type;
        bool monotonic_safe = to.can_represent(from) || (from.is_float() && !to.is_float() && to.bits() >= 32) ||
                              (from.is_int() && to.is_int() && to.bits() >= from.bits());
        // Index values are assumed to fit in 31 bits (as for int32 overflow):
        // uint32 -> int32 keeps them, and int32 -> uint32 does when they are
        // provably non-negative (abs(x), max(x, 0), ...).
        if (from.is_uint() && to.is_int() && from.bits() >= 32 && to.bits() >= 32) monotonic_safe = true;
        if (from.is_int() && to.is_uint() && to.bits() >= from.bits() && from.bits() >= 32 && non_negative(v.min))
            monotonic_safe = true;
        if (!monotonic_safe) {
            // Still exact when both ends are constants the new type holds.
            const int64_t *lo = as_const_int(v.min), *hi = as_const_int(v.max);
            type_range(to);
            Interval range = result;
            if (lo && hi && !to.is_float() && to.bits() < 64 && *lo <= *hi) {
                int64_t tmin = to.is_int() ? -((int64_t)1 << (to.bits() - 1)) : 0;
                int64_t tmax = to.is_int() ? ((int64_t)1 << (to.bits() - 1)) - 1 : (((int64_t)1 << to.bits()) - 1);
                if (*lo >= tmin && *hi <= tmax) result = Interval(make_const(to, *lo), make_const(to, *hi));
            } else {
                result = range;
            }
            return;
        }
        result = Interval(v.min.defined() ? simplify(Cast::make(to, v.min)) : Expr(),
                          v.max.defined() ? simplify(Cast::make(to, v.max)) : Expr());
    }
    static bool non_negative(const Expr &e) {
        if (!e.defined()) return false;
        if (const int64_t *c = as_const_int(e)) return *c >= 0;
        if (const auto *m = e.as<Max>()) return non_negative(m->a) || non_negative(m->b);
        return false;
    }
    // Narrow and unsigned integers wrap around, so their sums and products
    // are only known to lie in the type's range.
    bool wraps(Type t) const { return !t.is_float() && !(t.is_int() && t.bits() >= 32); }
    // int32 arithmetic is assumed not to overflow, but an interval of
    // constants may still reach past int32 where the expression is never
    // evaluated (the untaken side of a select): folding those ends would
    // wrap them into a wrong interval, so the result is unbounded instead.
    static bool int32_ends_overflow(Type t, const Interval &a, const Interval &b, IRNodeType k) {
        if (t != Int(32)) return false;
        const int64_t *al = as_const_int(a.min), *ah = as_const_int(a.max);
        const int64_t *bl = as_const_int(b.min), *bh = as_const_int(b.max);
        int64_t p[4] = {al ? *al : 0, al ? *al : 0, ah ? *ah : 0, ah ? *ah : 0};
        int64_t q[4] = {bl ? *bl : 0, bh ? *bh : 0, bl ? *bl : 0, bh ? *bh : 0};
        bool known[4] = {al && bl, al && bh, ah && bl, ah && bh};
        for (int i = 0; i < 4; i++) {
            if (!known[i]) continue;
            int64_t r = k == IRNodeType::Add ? p[i] + q[i] : k == IRNodeType::Sub ? p[i] - q[i] : p[i] * q[i];
            if (r < INT32_MIN || r > INT32_MAX) return true;
        }
        return false;
    }
    // Wrapping arithmetic: exact constant bounds if no endpoint combination
    // leaves the type's range, else the whole range.
    void wrapping(Type t, const Interval &a, const Interval &b, IRNodeType k) {
        type_range(t);
        Interval range = result;
        const int64_t *al = as_const_int(a.min), *ah = as_const_int(a.max);
        const int64_t *bl = as_const_int(b.min), *bh = as_const_int(b.max);
        const int64_t *tl = as_const_int(range.min), *th = as_const_int(range.max);
        if (!al || !ah || !bl || !bh || !tl || !th) return;
        int64_t p[4] = {*al, *al, *ah, *ah}, q[4] = {*bl, *bh, *bl, *bh}, r[4];
        for (int i = 0; i < 4; i++)
            r[i] = k == IRNodeType::Add ? p[i] + q[i] : k == IRNodeType::Sub ? p[i] - q[i] : p[i] * q[i];
        int64_t lo = *std::min_element(r, r + 4), hi = *std::max_element(r, r + 4);
        if (lo >= *tl && hi <= *th) result = Interval(make_const(t, lo), make_const(t, hi));
    }
    // The two cases above, for + - *: true when one applied.
    bool overflowing(Type t, const Interval &a, const Interval &b, IRNodeType k) {
        if (wraps(t)) wrapping(t, a, b, k);
        else if (int32_ends_overflow(t, a, b, k)) result = Interval();
        else return false;
        return true;
    }
    // A sum holding a min (or max) whose operands share a ranged variable
    // with the rest of the sum: those terms move together, so they are
    // bounded together, inside the min (min(a, b) + c = min(a + c, b + c)).
    // The extent of a tile at the edge of its loop t,
    //   min(t*5 + 4, n) - t*5  ->  min(4, n - t*5),
    // is at most 4 for every t; ranging t in each term apart gives n.
    bool correlated_sum(const Expr &e) {
        if (e.type() != Int(32) || sum_depth > 4) return false;
        std::vector<std::pair<Expr, bool>> terms;  // each term, and whether it is subtracted
        std::function<void(const Expr &, bool)> flatten = [&](const Expr &x, bool neg) {
            if (const auto *a = x.as<Add>()) flatten(a->a, neg), flatten(a->b, neg);
            else if (const auto *s = x.as<Sub>()) flatten(s->a, neg), flatten(s->b, !neg);
            else terms.push_back({x, neg});
        };
        flatten(e, false);
        for (size_t i = 0; i < terms.size(); i++) {
            const Min *mn = terms[i].first.as<Min>();
            const Max *mx = terms[i].first.as<Max>();
            if (!mn && !mx) continue;
            Expr rest;
            for (size_t j = 0; j < terms.size(); j++) {
                if (j == i) continue;
                const Expr &t = terms[j].first;
                rest = !rest.defined() ? (terms[j].second ? Sub::make(make_zero(t.type()), t) : t)
                       : terms[j].second ? Sub::make(rest, t) : Add::make(rest, t);
            }
            if (!rest.defined() || !shares_ranged_var(terms[i].first, rest)) continue;
            Expr a = mn ? mn->a : mx->a, b = mn ? mn->b : mx->b;
            bool neg = terms[i].second;  // rest - min(a, b) = max(rest - a, rest - b)
            a = simplify(neg ? Sub::make(rest, a) : Add::make(a, rest));
            b = simplify(neg ? Sub::make(rest, b) : Add::make(b, rest));
            sum_depth++;
            result = of((mn != nullptr) != neg ? Min::make(a, b) : Max::make(a, b));
            sum_depth--;
            return true;
        }
        return false;
    }
    int sum_depth = 0;
    bool moves(const std::string &n) const {
        const Interval *i = lets.find(n);
        if (!i) i = scope.find(n);
        return i && !(i->bounded() && equal(i->min, i->max));
    }
    bool shares_ranged_var(const Expr &a, const Expr &b) const {
        std::set<std::string> in_a;
        expr_uses_var_if(a, [&](const std::string &n) {
            if (moves(n)) in_a.insert(n);
            return false;
        });
        return !in_a.empty() && expr_uses_var_if(b, [&](const std::string &n) { return in_a.count(n) > 0; });
    }
    void visit(const Add *op) override {
        if (!correlated_sum(Expr(op))) {
            Interval a = of(op->a), b = of(op->b);
            if (overflowing(op->type, a, b, IRNodeType::Add)) return;
            result = Interval(a.min.defined() && b.min.defined() ? simplify(Add::make(a.min, b.min)) : Expr(),
                              a.max.defined() && b.max.defined() ? simplify(Add::make(a.max, b.max)) : Expr());
        }
        if (const Interval *known = scope.find_sum(Expr(op))) {
            if (known->max.defined()) result.max = result.max.defined() ? smin(result.max, known->max) : known->max;
            if (known->min.defined()) result.min = result.min.defined() ? smax(result.min, known->min) : known->min;
        }
    }
    void visit(const Sub *op) override {
        if (correlated_sum(Expr(op))) return;
        Interval a = of(op->a), b = of(op->b);
        if (overflowing(op->type, a, b, IRNodeType::Sub)) return;
        result = Interval(a.min.defined() && b.max.defined() ? simplify(Sub::make(a.min, b.max)) : Expr(),
                          a.max.defined() && b.min.defined() ? simplify(Sub::make(a.max, b.min)) : Expr());
    }
    void visit(const Mul *op) override {
        Interval a = of(op->a), b = of(op->b);
        if (overflowing(op->type, a, b, IRNodeType::Mul)) return;
        if (a.bounded() && b.bounded() && equal(a.min, a.max) && equal(b.min, b.max)) {
            result = Interval::point(simplify(Mul::make(a.min, b.min)));
            return;
        }
        const int64_t *cb = as_const_int(b.min);
        if (cb && equal(b.min, b.max)) {
            // x * c with c constant keeps the bounded sides of x.
            Expr lo = a.min.defined() ? simplify(Mul::make(a.min, b.min)) : Expr();
            Expr hi = a.max.defined() ? simplify(Mul::make(a.max, b.min)) : Expr();
            result = *cb >= 0 ? Interval(lo, hi) : Interval(hi, lo);
            return;
        }
        if (!a.bounded() || !b.bounded()) {
            result = Interval();
            return;
        }
        const int64_t *ca = as_const_int(a.min);
        if (ca && equal(a.min, a.max)) {
            Expr lo = simplify(Mul::make(a.min, b.min)), hi = simplify(Mul::make(a.min, b.max));
            result = *ca >= 0 ? Interval(lo, hi) : Interval(hi, lo);
            return;
        }
        Expr p[4] = {Mul::make(a.min, b.min), Mul::make(a.min, b.max), Mul::make(a.max, b.min),
                     Mul::make(a.max, b.max)};
        result = Interval(smin(smin(p[0], p[1]), smin(p[2], p[3])), smax(smax(p[0], p[1]), smax(p[2], p[3])));
    }
    void visit(const Div *op) override {
        if (fixed(op)) return;
        Interval a = of(op->a), b = of(op->b);
        if (op->type.is_float() || !b.bounded() || !equal(b.min, b.max)) {
            result = Interval();
            if (!op->type.is_float() && b.bounded()) {
                // Dividing by a positive constant range: |a/b| <= |a|.
                const int64_t *lo = as_const_int(b.min);
                if (lo && *lo > 0 && a.bounded())
                    result = Interval(smin(a.min, make_zero(op->type)), smax(a.max, make_zero(op->type)));
            }
            return;
        }
        const int64_t *c = as_const_int(b.min);
        if (c) {
            Expr lo = a.min.defined() ? simplify(Div::make(a.min, b.min)) : Expr();
            Expr hi = a.max.defined() ? simplify(Div::make(a.max, b.min)) : Expr();
            result = *c >= 0 ? Interval(lo, hi) : Interval(hi, lo);
            return;
        }
        if (!a.bounded()) {
            result = Interval();
            return;
        }
        // A symbolic divisor: a/b is monotonic in a for fixed b (either direction).
        Expr x = Div::make(a.min, b.min), y = Div::make(a.max, b.min);
        result = Interval(smin(x, y), smax(x, y));
    }
    void visit(const Mod *op) override {
        Interval a = of(op->a), b = of(op->b);
        if (op->type.is_float()) {
            result = Interval();
            return;
        }
        if (a.bounded() && b.bounded() && equal(a.min, a.max) && equal(b.min, b.max)) {
            result = Interval::point(simplify(Mod::make(a.min, b.min)));
            return;
        }
        if (!b.bounded()) {
            type_range(op->type);
            return;
        }
        // Euclidean remainder: 0 <= a % b < |b|.
        Expr z = make_zero(op->type);
        Expr absb = smax(smax(b.max, simplify(Sub::make(z, b.min))), z);
        result = Interval(z, simplify(Max::make(Sub::make(absb, make_one(op->type)), z)));
    }
    void visit(const Min *op) override {
        Interval a = of(op->a), b = of(op->b);
        Expr lo = a.min.defined() && b.min.defined() ? smin(a.min, b.min) : Expr();
        Expr hi = a.max.defined() && b.max.defined() ? smin(a.max, b.max) : a.max.defined() ? a.max : b.max;
        result = Interval(lo, hi);
    }
    void visit(const Max *op) override {
        Interval a = of(op->a), b = of(op->b);
        Expr lo = a.min.defined() && b.min.defined() ? smax(a.min, b.min) : a.min.defined() ? a.min : b.min;
        Expr hi = a.max.defined() && b.max.defined() ? smax(a.max, b.max) : Expr();
        result = Interval(lo, hi);
    }
#define KILN_BOOL_NODE(N) \
    void visit(const N *op) override { result = Interval(make_zero(op->type), make_one(op->type)); }
    KILN_BOOL_NODE(EQ) KILN_BOOL_NODE(NE) KILN_BOOL_NODE(LT) KILN_BOOL_NODE(LE) KILN_BOOL_NODE(GT)
    KILN_BOOL_NODE(GE) KILN_BOOL_NODE(And) KILN_BOOL_NODE(Or) KILN_BOOL_NODE(Not)
#undef KILN_BOOL_NODE
    void visit(const Select *op) override {
        // abs(x) is select(x < 0, 0 - x, x), or for a signed x
        // select(x < 0, 0 - u, u) with u = cast<unsigned>(x): never negative.
        const auto *lt = op->condition.as<LT>();
        const auto *neg = op->true_value.as<Sub>();
        const auto *u = op->false_value.as<Cast>();
        bool same = lt && (equal(op->false_value, lt->a) || (u && u->type.is_uint() && equal(u->value, lt->a)));
        if (same && neg && is_zero(lt->b) && is_zero(neg->a) && equal(neg->b, op->false_value)) {
            Interval x = of(lt->a);
            if (x.bounded()) {
                Expr z = make_zero(x.min.type());
                Expr lo = smax(smax(x.min, simplify(Sub::make(z, x.max))), z);
                Expr hi = smax(simplify(Sub::make(z, x.min)), x.max);
                if (lo.type() != op->type) lo = simplify(Cast::make(op->type, lo)), hi = simplify(Cast::make(op->type, hi));
                result = Interval(lo, hi);
                return;
            }
        }
        Interval a = of(op->true_value), b = of(op->false_value);
        // A condition that no ranged variable changes picks one side for the
        // whole range (a specialization's condition on input sizes):
        //   select(w >= 32, [x0 - 31, x0], [x0, x0])  ->  [select(w >= 32, x0 - 31, x0), x0]
        if (a.bounded() && b.bounded() && !ranged(op->condition)) {
            result = Interval(simplify(Select::make(op->condition, a.min, b.min)),
                              simplify(Select::make(op->condition, a.max, b.max)));
            return;
        }
        result = interval_union(a, b);
    }
    // Does e name a variable with a range (the scope's or a let's), or, with
    // `data`, read a load or call other than pure math?
    bool varies(const Expr &e, bool data) const {
        class Varies : public IRVisitor {
        public:
            const BoundsOf &self;
            bool data, found = false;
            Varies(const BoundsOf &s, bool d) : self(s), data(d) {}
            void visit(const Variable *v) override {
                found |= self.lets.find(v->name) != nullptr || self.scope.find(v->name) != nullptr;
            }
            void visit(const Load *op) override {
                found |= data;
                IRVisitor::visit(op);
            }
            void visit(const Call *c) override {
                found |= data && c->call_type != Call::PureExtern;
                IRVisitor::visit(c);
            }
        } v(*this, data);
        v.include(e);
        return v.found;
    }
    bool ranged(const Expr &e) const { return varies(e, false); }
    // An expression of constants, Params and unranged variables, without
    // loads or calls, is one value wherever it is evaluated: its own
    // interval, whatever its operators (a float division, a cast between
    // float and int: cast<int>(1.0f / p), float32(255)).
    template<typename Node>
    bool fixed(const Node *op) {
        Expr e(op);
        if (!e.type().is_scalar() || varies(e, true)) return false;
        result = Interval::point(simplify(e));
        return true;
    }
    void visit(const Load *op) override { type_range(op->type); }
    void visit(const Ramp *op) override {
        Interval b = of(op->base), s = of(op->stride);
        if (!b.bounded() || !s.bounded()) {
            result = Interval();
            return;
        }
        Expr last = Mul::make(s.max, make_const(s.max.type(), (int64_t)(op->lanes - 1)));
        Expr last_lo = Mul::make(s.min, make_const(s.min.type(), (int64_t)(op->lanes - 1)));
        result = Interval(smin(b.min, simplify(Add::make(b.min, last_lo))), smax(b.max, simplify(Add::make(b.max, last))));
    }
    void visit(const Broadcast *op) override { include(op->value); }
    void visit(const Call *op) override {
        if (op->call_type == Call::PureExtern && (op->name == "floor" || op->name == "ceil" || op->name == "round" ||
                                                  op->name == "trunc")) {
            Interval a = of(op->args[0]);
            result = Interval(a.min.defined() ? Call::make(op->type, op->name, {a.min}, Call::PureExtern) : Expr(),
                              a.max.defined() ? Call::make(op->type, op->name, {a.max}, Call::PureExtern) : Expr());
            return;
        }
        type_range(op->type);
    }
    void visit(const Let *op) override {
        Interval v = of(op->value);
        lets.push(op->name, v);
        include(op->body);
        lets.pop(op->name);
    }
};

}  // namespace

std::string Scope::text(const std::string &within) const {
    auto end = [](const Expr &e) { return e.defined() ? *expr_key(e) : std::string("?"); };
    auto interval = [&](const Interval &i) {
        return i.is_empty_marker ? std::string("[nothing]") : "[" + end(i.min) + ", " + end(i.max) + "]";
    };
    std::string t;
    for (const auto &[name, stack] : m) {
        if (within.find(name) == std::string::npos) continue;
        t += name;
        for (const Interval &i : stack) t += " " + interval(i);
        t += "\n";
    }
    for (const auto &[e, i] : sums) t += "sum " + end(e) + " " + interval(i) + "\n";
    return t;
}

const Interval *Scope::find_sum(const Expr &e) const {
    for (auto it = sums.rbegin(); it != sums.rend(); ++it)
        if (equal(it->first, e)) return &it->second;
    return nullptr;
}

Interval interval_union(const Interval &a, const Interval &b) {
    if (a.is_empty_marker) return b;
    if (b.is_empty_marker) return a;
    return Interval(a.min.defined() && b.min.defined() ? smin(a.min, b.min) : Expr(),
                    a.max.defined() && b.max.defined() ? smax(a.max, b.max) : Expr());
}

namespace {

// An int32 expression without loads, calls or lets whose ranged names are
// all single points is one value: the expression with those points put in.
// Found in one walk and simplified once, where BoundsOf would simplify
// again at every node (a box's min over all its accesses is a long min
// chain, bounded again at every loop the box leaves: each step simplified
// the chain below it once more, quadratic in its length).
//   scope {t: [t, t], a: [x + 1, x + 1]}:  min(a - 1, t)  ->  [min(x, t), min(x, t)]
bool point_value(const Expr &e, const Scope &scope, Expr &value) {
    if (e.type() != Int(32) || scope.has_sums()) return false;
    class Points : public IRVisitor {
    public:
        explicit Points(const Scope &s) : scope(s) {}
        const Scope &scope;
        std::map<std::string, Expr> values;
        bool ok = true;
        void include(const Expr &x) override {
            if (ok) IRVisitor::include(x);
        }
        void visit(const Variable *op) override {
            const Interval *i = scope.find(op->name);
            if (!i) return;
            if (!i->min.defined() || !i->min.same_as(i->max)) {
                ok = false;
                return;
            }
            const auto *self = i->min.as<Variable>();
            if (!self || self->name != op->name) values[op->name] = i->min;
        }
        void visit(const Load *) override { ok = false; }
        void visit(const Call *) override { ok = false; }
        void visit(const Let *) override { ok = false; }
    } points(scope);
    points.include(e);
    if (!points.ok) return false;
    value = simplify(points.values.empty() ? e : substitute(points.values, e));
    return true;
}

}  // namespace

Interval bounds_of_expr_in_scope(const Expr &e, const Scope &scope) {
    Expr value;
    if (e.defined() && point_value(e, scope, value)) return Interval::point(value);
    BoundsOf b(scope);
    Interval r = b.of(e);
    if (r.is_empty_marker) return Interval();
    return r;
}

bool small_expr(const Expr &e, int budget) {
    class Count : public IRVisitor {
    public:
        int left;
        explicit Count(int b) : left(b) {}
        void include(const Expr &x) override {
            if (left < 0) return;
            left--;
            IRVisitor::include(x);
        }
    } count(budget);
    count.include(e);
    return count.left >= 0;
}

}  // namespace internal
}  // namespace kiln
