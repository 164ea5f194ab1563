#include "Bounds.h"

#include <algorithm>
#include <functional>
#include <set>
#include <unordered_set>

#include "Monotonic.h"
#include "ir/IRPrinter.h"
#include "ir/IRVisitor.h"
#include "ir/Simplify.h"
#include "ir/Substitute.h"

namespace kiln {
namespace internal {

namespace {

Expr smin(const Expr &a, const Expr &b) { return simplify(Min::make(a, b)); }
Expr smax(const Expr &a, const Expr &b) { return simplify(Max::make(a, b)); }

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
        if (op->call_type == Call::PureExtern && (op->name == "floor" || op->name == "ceil" || op->name == "round")) {
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

// The statements of s that read (or write) `name` somewhere inside them.
class FindAccesses : public MarkHolders {
public:
    FindAccesses(const std::string &n, bool r, bool w, std::unordered_set<const void *> &out)
        : MarkHolders(out), name(n), reads(r), writes(w) {}

private:
    const std::string &name;
    bool reads, writes;
    void visit(const Call *op) override {
        if (reads && op->name == name && op->call_type != Call::PureExtern) mark();
        IRVisitor::visit(op);
    }
    void visit(const Provide *op) override {
        if (writes && op->name == name) mark();
        IRVisitor::visit(op);
    }
};

// Walks a statement, ranging loop and let variables, collecting boxes.
class BoxCollector : public IRVisitor {
public:
    BoxCollector(const std::string &n, bool r, bool w, const Scope &outer, bool keep = false,
                 const std::set<std::string> *req = nullptr, const std::set<std::string> *req_min = nullptr)
        : name(n), reads(r), writes(w), keep_lets(keep), required(req), required_min(req_min), scope(outer),
          sym(outer) {}
    // Two boxes are collected. `box` ranges each loop variable over its loop
    // as it goes. `sym_box` keeps the loop variables as symbols and bounds
    // each end over a loop when leaving it: at the loop's first or last
    // iteration where the end moves one way with the loop variable (an end
    // of unknown direction is dropped, undefined). Terms that move together
    // then stay together: the end of a tile rounded up at the image's edge,
    //   x*8 + ((min(x*8 + 7, n) - x*8 + 2) / 2) * 2,
    // is the last tile's, where ranging x in each term apart adds the first
    // (whole) tile's rounded extent to the last tile's start. The result
    // takes each end from sym_box where it is defined.
    Box box, sym_box;
    bool found = false;
    std::string first_unbounded;
    LetList kept;           // with keep_lets: the lets left as names, in order
    bool conflict = false;  // a kept name defined twice with different values

    // Only the statements that access the Func are walked: the lets and
    // loops of the rest of a pipeline cannot change its box, and ranging
    // them would cost as much as the whole pipeline's bounds at every call.
    void collect(const Stmt &s) {
        FindAccesses(name, reads, writes, touching).include(s);
        find_needed_lets(s);
        include(s);
    }
    using IRVisitor::include;
    void include(const Stmt &s) override {
        if (s.defined() && touching.count(s.get())) IRVisitor::include(s);
    }

protected:
    std::unordered_set<const void *> touching;
    // The lets whose ranges the box can depend on: those the accesses'
    // arguments, the loops' bounds and the conditions around them name,
    // directly or through other lets. The others are not ranged: in a
    // deep fused group every Func's accesses sit inside the region lets of
    // all its consumers, and ranging each of those lets again for every
    // Func made bounds inference quadratic in the group's length, each
    // step a simplification (local_laplacian's 8 levels fused into the
    // output's strips: 14.5 s).
    std::set<std::string> needed_lets;
    void find_needed_lets(const Stmt &s) {
        class Needed : public IRVisitor {
        public:
            Needed(const BoxCollector &c) : c(c) {}
            std::set<std::string> seeds;
            std::map<std::string, std::set<std::string>> deps;  // let -> the names its value uses
            using IRVisitor::include;
            void include(const Stmt &st) override {
                if (st.defined() && c.touching.count(st.get())) IRVisitor::include(st);
            }

        private:
            const BoxCollector &c;
            std::set<std::string> *sink = nullptr;  // where the names visited go
            void names_into(std::set<std::string> *to, const Expr &e) {
                std::set<std::string> *outer = sink;
                sink = to;
                include(e);
                sink = outer;
            }
            void visit(const Variable *op) override {
                if (sink) sink->insert(op->name);
            }
            void visit(const Call *op) override {
                if (c.reads && op->name == c.name && op->call_type != Call::PureExtern)
                    for (const Expr &a : op->args) names_into(&seeds, a);
                IRVisitor::visit(op);
            }
            void visit(const Provide *op) override {
                if (c.writes && op->name == c.name)
                    for (const Expr &a : op->args) names_into(&seeds, a);
                IRVisitor::visit(op);
            }
            void visit(const For *op) override {
                names_into(&seeds, op->min);
                names_into(&seeds, op->extent);
                include(op->body);
            }
            void visit(const IfThenElse *op) override {
                names_into(&seeds, op->condition);
                include(op->then_case);
                include(op->else_case);
            }
            void visit(const LetStmt *op) override {
                std::set<std::string> &d = deps[op->name];
                names_into(&d, op->value);
                // A required stage variable is clamped to its region's lets.
                if ((c.required && c.required->count(op->name)) || (c.required_min && c.required_min->count(op->name)))
                    d.insert({op->name + ".min", op->name + ".max"});
                include(op->body);
            }
            void visit(const Let *op) override {
                names_into(&deps[op->name], op->value);
                include(op->body);
            }
        } n(*this);
        n.include(s);
        std::vector<std::string> work(n.seeds.begin(), n.seeds.end());
        needed_lets = n.seeds;
        while (!work.empty()) {
            std::string v = work.back();
            work.pop_back();
            auto d = n.deps.find(v);
            if (d == n.deps.end()) continue;
            for (const std::string &u : d->second)
                if (needed_lets.insert(u).second) work.push_back(u);
        }
    }
    const std::string &name;
    bool reads, writes, keep_lets;
    const std::set<std::string> *required;      // stage variables taken over their regions only
    const std::set<std::string> *required_min;  // ... at or above their regions' mins only
    Scope scope, sym;  // loop variables ranged; loop variables as symbols
    std::map<std::string, Expr> kept_values;
    std::map<std::string, Expr> let_values;  // lets inside the statement, substituted

    // `what` describes the access, for an unbounded one (printed only then).
    template<typename What>
    void merge(const std::vector<Expr> &args, const What &what) {
        start(args.size());
        if (box.size() != args.size()) return;  // arity errors are reported by validation
        for (size_t i = 0; i < args.size(); i++) {
            Interval iv = bounds_of_expr_in_scope(args[i], scope);
            if (!iv.bounded() && first_unbounded.empty())
                first_unbounded = what() + " (argument " + std::to_string(i) + ": " + to_string(args[i]) + ")";
            box[i] = interval_union(box[i], iv);
            sym_box[i] = interval_union(sym_box[i], bounds_of_expr_in_scope(args[i], sym));
        }
    }
    // The first access sizes both boxes.
    void start(size_t n) {
        if (!found) box.assign(n, Interval::nothing()), sym_box.assign(n, Interval::nothing());
        found = true;
    }
    void visit(const Call *op) override {
        IRVisitor::visit(op);
        if (reads && op->name == name && op->call_type != Call::PureExtern)
            merge(op->args, [&] { return to_string(Expr(op)); });
    }
    void visit(const Provide *op) override {
        IRVisitor::visit(op);
        if (writes && op->name == name) {
            merge(op->args, [&] {
                std::string s = op->name + "(";
                for (size_t i = 0; i < op->args.size(); i++) s += (i ? ", " : "") + to_string(op->args[i]);
                return s + ")";
            });
        }
    }
    void visit(const LetStmt *op) override {
        include(op->value);
        if (!needed_lets.count(op->name)) {
            include(op->body);
            return;
        }
        // Simplified as it is stored: a chain of region lets names each
        // earlier one twice or more (extent = max - min + 1), so substituting
        // unsimplified values would double the expression at every stage.
        Expr value = simplify(substitute(let_values, op->value));
        Interval iv = let_interval(op->value, value);
        Interval siv;
        bool both = required && required->count(op->name);
        if (both || (required_min && required_min->count(op->name))) {
            // Kept as a name, so that what is computed from it keeps the clamp.
            Expr lo = Variable::make(Int(32), op->name + ".min");
            Expr hi = both ? Variable::make(Int(32), op->name + ".max") : Expr();
            siv = clamp_to(sym_interval(value), lo, hi, sym);
            iv = clamp_to(iv, lo, hi, scope);
            value = Variable::make(value.type(), op->name);
        } else if (keeps(op->name, value, iv)) {
            value = Variable::make(value.type(), op->name), iv = siv = Interval::point(value);
        } else {
            siv = sym_interval(value);
        }
        scope.push(op->name, iv);
        sym.push(op->name, siv);
        Expr old = let_values.count(op->name) ? let_values[op->name] : Expr();
        let_values[op->name] = value;
        include(op->body);
        if (old.defined()) let_values[op->name] = old;
        else let_values.erase(op->name);
        sym.pop(op->name);
        scope.pop(op->name);
    }
    // i within [lo, hi] (names resolved in scope s); hi undefined: at or above lo.
    static Interval clamp_to(const Interval &i, const Expr &lo, const Expr &hi, const Scope &s) {
        Interval l = bounds_of_expr_in_scope(lo, s), h = hi.defined() ? bounds_of_expr_in_scope(hi, s) : Interval();
        Expr mn = i.min.defined() && l.min.defined() ? smax(i.min, l.min) : l.min.defined() ? l.min : i.min;
        Expr mx = i.max.defined() && h.max.defined() ? smin(i.max, h.max) : h.max.defined() ? h.max : i.max;
        return Interval(mn, mx);
    }
    // A substituted let value with the loop variables as symbols: itself,
    // unless it names a variable a condition has narrowed to a range. (Names
    // of single values outside the statement stay; box_touched resolves
    // them in the result.)
    Interval sym_interval(const Expr &value) {
        bool narrowed = expr_uses_var_if(value, [&](const std::string &n) {
            const Interval *i = sym.find(n);
            return i && !(i->bounded() && i->min.same_as(i->max));
        });
        if (!narrowed && value.type() == Int(32)) return Interval::point(value);
        return bounds_of_expr_in_scope(value, sym);
    }
    // Whether a let stays a name in the box: its value is the same over
    // every loop of the statement (its interval is that value) and too large
    // to repeat wherever it is used (a level of a pyramid names the last
    // level's region twice, so substituting doubles it at every level).
    bool keeps(const std::string &n, const Expr &value, const Interval &iv) {
        if (!keep_lets || !iv.bounded() || !equal(iv.min, iv.max) || !equal(iv.min, value)) return false;
        if (small_expr(value, 32)) return false;
        auto it = kept_values.find(n);
        if (it != kept_values.end()) {
            conflict |= !equal(it->second, value);
            return true;
        }
        kept_values[n] = value;
        kept.push_back({n, value});
        return true;
    }
    // A let's range, from the ranges of the names in its value; but a value
    // made only of other lets may not vary at all where its lets do: the
    // extent of a wrapper computed per panel of an outer loop xo,
    //   let w.max = min(xo*32, n - 32) + 31;  let w.min = min(xo*32, n - 32)
    //   let w.extent = w.max - w.min + 1
    // is 32 for every xo, which the ranges of w.max and w.min widen to
    // [64 - n, n] (and a split of w's loop, shifting its last vector inwards
    // by that extent, then reads far below w.min). So a value
    // naming no loop variable is also tried with the lets substituted: if it
    // then depends on nothing ranged, it is a single point.
    Interval let_interval(const Expr &raw, const Expr &substituted) {
        Interval iv = bounds_of_expr_in_scope(raw, scope);
        if (iv.bounded() && equal(iv.min, iv.max)) return iv;
        if (depends_on_scope(raw, false)) return iv;
        Expr v = simplify(substituted);
        if (!depends_on_scope(v)) return Interval::point(v);
        // Lets that vary together (the min and max of a region, both
        // following a tile loop t) cancel in the substituted value, where
        // their intervals would not: with a = t*384 - 1, b = t*384 + 384,
        //   (b - a) - 31  ->  354, not [t.min*384 - t.max*384 + 354, ...]
        return bounds_of_expr_in_scope(v, scope);
    }
    // A loop's last iteration is bounded from the lets' values, not their
    // intervals: min and extent usually share terms that must cancel
    // (min = y - 1, extent = (y + 1) - (y - 1) + 1  ->  last = y + 1).
    void visit(const For *op) override {
        include(op->min);
        include(op->extent);
        Expr first = substitute(let_values, op->min);
        Expr last = simplify(substitute(let_values, Sub::make(Add::make(op->min, op->extent), 1)));
        Interval mn = bounds_of_expr_in_scope(first, scope);
        Interval mx = bounds_of_expr_in_scope(last, scope);
        scope.push(op->name, Interval(mn.min, mx.max));
        Expr self = Variable::make(Int(32), op->name);
        sym.push(op->name, Interval::point(self));
        Box outer_sym = sym_box;  // the body's symbolic box is bounded over the loop alone
        for (Interval &i : sym_box) i = Interval::nothing();
        include(op->body);
        sym.pop(op->name);
        scope.pop(op->name);
        Interval range(mn.min, mx.max);
        for (Interval &i : sym_box) {
            if (i.is_empty_marker) continue;
            Expr lo = over_loop(i.min, op->name, first, last, range, true);
            Expr hi = over_loop(i.max, op->name, first, last, range, false);
            // The loop's ends name the lets and variables outside it.
            i = Interval(lo.defined() ? bounds_of_expr_in_scope(lo, sym).min : lo,
                         hi.defined() ? bounds_of_expr_in_scope(hi, sym).max : hi);
        }
        if (outer_sym.size() == sym_box.size())
            for (size_t i = 0; i < sym_box.size(); i++) sym_box[i] = interval_union(outer_sym[i], sym_box[i]);
    }
    // The lowest (or highest) value of e over the iterations first..last of
    // loop v (in `range`): e at one end if it moves one way with v, else its
    // bound over the range (undefined if none).
    Expr over_loop(const Expr &e, const std::string &v, const Expr &first, const Expr &last, const Interval &range,
                   bool lowest) {
        if (!e.defined()) return e;
        Monotonic m = monotonic(e, v);
        if (m == Monotonic::Constant) return e;
        if (m == Monotonic::Unknown) {
            sym.push(v, range);
            Interval b = bounds_of_expr_in_scope(e, sym);
            sym.pop(v);
            return lowest ? b.min : b.max;
        }
        bool at_first = (m == Monotonic::Increasing) == lowest;
        return simplify(substitute(v, at_first ? first : last, e));
    }
    // Conditions "v <= e" / "v < e" / "v >= e" narrow v inside the then-branch
    // (this is what keeps GuardWithIf tails from widening the box).
    //
    // A condition of values fixed for the whole run (Params, buffer fields:
    // a specialization) selects between the boxes of the two branches
    // instead of taking their union: select(c, then.min, else.min), ...
    void visit(const IfThenElse *op) override {
        include(op->condition);
        bool fixed = op->else_case.defined() && !depends_on_scope(op->condition);
        Box saved = box, saved_sym = sym_box;
        bool saved_found = found;
        if (fixed) box.clear(), sym_box.clear(), found = false;
        std::vector<std::string> pushed, sym_pushed;
        narrow(op->condition, pushed, scope);
        narrow(op->condition, sym_pushed, sym);
        include(op->then_case);
        for (auto it = pushed.rbegin(); it != pushed.rend(); ++it) it->empty() ? scope.pop_sum() : scope.pop(*it);
        for (auto it = sym_pushed.rbegin(); it != sym_pushed.rend(); ++it) it->empty() ? sym.pop_sum() : sym.pop(*it);
        if (!fixed) {
            include(op->else_case);
            return;
        }
        Box then_box = box, then_sym = sym_box;
        bool then_found = found;
        box.clear(), sym_box.clear(), found = false;
        include(op->else_case);
        Box else_box = box, else_sym = sym_box;
        bool else_found = found;
        box = saved, sym_box = saved_sym, found = saved_found;
        if (then_found && else_found && then_box.size() == else_box.size()) {
            for (size_t i = 0; i < then_box.size(); i++) {
                then_box[i] = select_interval(op->condition, then_box[i], else_box[i]);
                then_sym[i] = select_interval(op->condition, then_sym[i], else_sym[i]);
            }
            merge_box(then_box, then_sym);
            return;
        }
        if (then_found) merge_box(then_box, then_sym);
        if (else_found) merge_box(else_box, else_sym);
    }
    // Does c name a ranged variable (a loop's, an outer one's, or with
    // `lets`, a let's of the statement)?
    bool depends_on_scope(const Expr &c, bool lets = true) const {
        return expr_uses_var_if(c, [&](const std::string &n) {
            if (kept_values.count(n)) return false;  // a kept let is one value
            return let_values.count(n) ? lets : scope.find(n) != nullptr;
        });
    }

    static Interval select_interval(const Expr &c, const Interval &a, const Interval &b) {
        if (a.is_empty_marker) return b;
        if (b.is_empty_marker) return a;
        Expr mn = a.min.defined() && b.min.defined() ? Select::make(c, a.min, b.min) : Expr();
        Expr mx = a.max.defined() && b.max.defined() ? Select::make(c, a.max, b.max) : Expr();
        return Interval(mn, mx);
    }
    void merge_box(const Box &b, const Box &sb) {
        start(b.size());
        if (box.size() != b.size() || sb.size() != b.size()) return;
        for (size_t i = 0; i < b.size(); i++) {
            box[i] = interval_union(box[i], b[i]);
            sym_box[i] = interval_union(sym_box[i], sb[i]);
        }
    }
    // Does narrowing the interval `iv` of the variable v (one of the loop
    // variables kept as a symbol) at its upper (or lower) end by `b` close a
    // guard on both sides of v itself? Ranged apart, each end is v clamped
    // on its side, [max(v, lo), min(v, hi)]: as wide as the loop around it,
    // though at each iteration it is the one point v (or nothing). That is
    // a member of a compute_with group, guarded to its own range inside the
    // fused loop yc: a Func computed inside it had a region of unknown
    // extent, max(yc, 0) .. min(yc, yc.loop_max), and its buffer a loop
    // and a stride of that extent. Kept one point, clamp(yc, 0, yc.loop_max),
    // its region is one row:
    //   if (0 <= yc && yc <= yc.loop_max) { ... f(yc) ... }   f: [clamp(yc, 0, yc.loop_max)], extent 1
    static bool guarded_point(const std::string &v, const Interval &iv, bool upper, const Interval &b) {
        if (!(upper ? b.max : b.min).defined() || !iv.bounded()) return false;
        auto is_v = [&](const Expr &e) {
            const auto *w = e.as<Variable>();
            return w && w->name == v;
        };
        // The end narrowed is still v; the other is v clamped on its side
        // by an earlier condition.
        const Expr &open = upper ? iv.max : iv.min, &other = upper ? iv.min : iv.max;
        if (!is_v(open)) return false;
        const auto *lo = other.as<Max>();
        const auto *hi = other.as<Min>();
        if (upper && lo) return is_v(lo->a) || is_v(lo->b);
        if (!upper && hi) return is_v(hi->a) || is_v(hi->b);
        return false;
    }
    void narrow(const Expr &c, std::vector<std::string> &pushed, Scope &scope) {
        if (const auto *a = c.as<And>()) {
            narrow(a->a, pushed, scope);
            narrow(a->b, pushed, scope);
            return;
        }
        const Variable *v = nullptr;
        Expr bound;
        bool upper = false;
        if (const auto *le = c.as<LE>(); le && (v = le->a.as<Variable>())) bound = le->b, upper = true;
        else if (const auto *lt = c.as<LT>(); lt && (v = lt->a.as<Variable>())) bound = Sub::make(lt->b, make_one(lt->b.type())), upper = true;
        else if (const auto *ge = c.as<GE>(); ge && (v = ge->a.as<Variable>())) bound = ge->b;
        else if (const auto *gt = c.as<GT>(); gt && (v = gt->a.as<Variable>())) bound = Add::make(gt->b, make_one(gt->b.type()));
        if (!v) {  // a sum below a bound: kept for that same sum (pushed "" marks it)
            const auto *le = c.as<LE>();
            const auto *lt = c.as<LT>();
            Expr sum = le ? le->a : lt ? lt->a : Expr();
            if (sum.defined() && sum.as<Add>() && sum.type() == Int(32)) {
                Interval b = bounds_of_expr_in_scope(le ? le->b : Sub::make(lt->b, make_one(lt->b.type())), scope);
                if (b.max.defined()) {
                    scope.push_sum(sum, Interval(Expr(), b.max));
                    pushed.push_back("");
                }
            }
            return;
        }
        if (!v || v->type != Int(32)) return;
        const Interval *cur = scope.find(v->name);
        Interval iv = cur ? *cur : Interval::point(Expr(v));
        Interval b = bounds_of_expr_in_scope(bound, scope);
        if (guarded_point(v->name, iv, upper, b)) {
            // v itself, guarded on both sides, is one point (clamped: where
            // the guard fails nothing reads it).
            Expr p = upper ? smin(iv.min, b.max) : smax(iv.max, b.min);
            iv = Interval::point(p);
        } else {
            if (upper && b.max.defined()) iv.max = iv.max.defined() ? smin(iv.max, b.max) : b.max;
            if (!upper && b.min.defined()) iv.min = iv.min.defined() ? smax(iv.min, b.min) : b.min;
        }
        scope.push(v->name, iv);
        pushed.push_back(v->name);
    }
};

}  // namespace

void MarkHolders::include(const Stmt &s) {
    if (!s.defined()) return;
    bool outer = hit;
    hit = false;
    IRVisitor::include(s);
    if (hit) holders.insert(s.get());
    hit = hit || outer;
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

Interval bounds_of_expr_in_scope(const Expr &e, const Scope &scope) {
    BoundsOf b(scope);
    Interval r = b.of(e);
    if (r.is_empty_marker) return Interval();
    return r;
}

namespace {

// The lets of `lets` that the box names, directly or through other lets
// among them, in their order.
LetList lets_needed(const LetList &lets, const Box &box) {
    class Names : public IRVisitor {
    public:
        std::set<std::string> names;
        void visit(const Variable *v) override { names.insert(v->name); }
    } used;
    for (const Interval &i : box) {
        if (i.min.defined()) used.include(i.min);
        if (i.max.defined()) used.include(i.max);
    }
    LetList needed;
    for (auto it = lets.rbegin(); it != lets.rend(); ++it) {
        if (!used.names.count(it->first)) continue;
        needed.insert(needed.begin(), *it);
        used.include(it->second);
    }
    return needed;
}

}  // namespace

Box box_touched(const Stmt &s, const std::string &name, bool reads, bool writes, bool *found, const Scope &outer,
                LetList *kept, const std::set<std::string> *required, const std::set<std::string> *required_min) {
    BoxCollector c(name, reads, writes, outer, kept != nullptr, required, required_min);
    c.collect(s);
    if (c.conflict) return box_touched(s, name, reads, writes, found, outer, nullptr, required, required_min);
    if (found) *found = c.found;
    Box box = c.box;
    for (size_t i = 0; i < box.size(); i++) {
        if (box[i].is_empty_marker) {
            box[i] = Interval();
            continue;
        }
        if (c.sym_box[i].min.defined()) box[i].min = bounds_of_expr_in_scope(c.sym_box[i].min, outer).min;
        if (c.sym_box[i].max.defined()) box[i].max = bounds_of_expr_in_scope(c.sym_box[i].max, outer).max;
        if (!box[i].min.defined()) box[i].min = c.box[i].min;
        if (!box[i].max.defined()) box[i].max = c.box[i].max;
    }
    if (kept) *kept = lets_needed(c.kept, box);
    return box;
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

std::string describe_unbounded_access(const Stmt &s, const std::string &name) {
    BoxCollector c(name, true, false, Scope());
    c.collect(s);
    return c.first_unbounded;
}

}  // namespace internal
}  // namespace kiln
