// box_touched() and describe_unbounded_access() (Bounds.h): the box of a
// Func that a statement reads or writes, found by walking the statement
// with its loop and let variables ranged (BoxCollector) and taking the
// bounds of each access's coordinates over them (BoundsOf, Bounds.cpp).
#include <algorithm>
#include <functional>
#include <set>
#include <unordered_set>

#include "Bounds.h"
#include "Monotonic.h"
#include "ir/ExprKey.h"
#include "ir/IRPrinter.h"
#include "ir/IRVisitor.h"
#include "ir/Simplify.h"
#include "ir/Substitute.h"

namespace kiln {
namespace internal {

namespace {

// The statements of s that read (or write) `name` somewhere inside them.
// With `called`, an expression's Funcs and images are looked up there (and
// added the first time) instead of walking it.
class FindAccesses : public MarkHolders {
public:
    FindAccesses(const std::string &n, bool r, bool w, std::unordered_set<const void *> &out,
                 BoxMemo::Called *called = nullptr)
        : MarkHolders(out), name(n), reads(r), writes(w), called(called) {}
    using MarkHolders::include;
    void include(const Expr &e) override {  // reads are in expressions, writes (Provide) are statements
        if (!reads || !e.defined()) return;
        if (!called) return MarkHolders::include(e);
        auto it = called->find(e.get());
        if (it == called->end()) {
            class Calls : public IRVisitor {
            public:
                std::set<std::string> names;
                void visit(const Call *op) override {
                    if (op->call_type != Call::PureExtern) names.insert(op->name);
                    IRVisitor::visit(op);
                }
            } calls;
            calls.include(e);
            it = called->emplace(e.get(), std::make_pair(e, std::move(calls.names))).first;
        }
        if (it->second.second.count(name)) mark();
    }

private:
    const std::string &name;
    bool reads, writes;
    BoxMemo::Called *called;
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
        collect_marked(s);
    }
    // The same, with `marked` the statements that access the Func.
    void collect_marked(const Stmt &s, std::unordered_set<const void *> marked) {
        touching = std::move(marked);
        collect_marked(s);
    }
    using IRVisitor::include;
    void include(const Stmt &s) override {
        if (s.defined() && touching.count(s.get())) IRVisitor::include(s);
    }

protected:
    std::unordered_set<const void *> touching;
    void collect_marked(const Stmt &s) {
        find_needed_lets(s);
        include(s);
    }
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
    std::vector<std::string> inner_loops;  // the loops of the statement around the visit
    std::map<std::string, Expr> kept_values;
    std::map<std::string, Expr> let_values;  // lets inside the statement, substituted

    // The accesses, and each dimension's intervals, merged since the scopes
    // (and so the boxes' starts) last changed, by their printed text.
    // Inlined Funcs repeat an access many times in one expression, and
    // neighbouring taps share a dimension's interval (harris's windows of
    // products, in its search: 5541 of 9013 accesses repeated, then 4202 of
    // 7242 intervals); under the same scopes a repeat adds nothing to a box,
    // where its union would simplify the box's whole min chain once more.
    std::unordered_set<std::string> merged;
    void scopes_changed() { merged.clear(); }
    static std::string interval_key(size_t dim, const char *box, const Interval &i) {
        return std::to_string(dim) + box + (i.min.defined() ? *expr_key(i.min) : "?") + ";" +
               (i.max.defined() ? *expr_key(i.max) : "?");
    }
    void union_into(Box &b, size_t dim, const char *which, const Interval &i) {
        if (merged.insert(interval_key(dim, which, i)).second) b[dim] = interval_union(b[dim], i);
    }

    // `what` describes the access, for an unbounded one (printed only then).
    template<typename What>
    void merge(const std::vector<Expr> &args, const What &what) {
        start(args.size());
        if (box.size() != args.size()) return;  // arity errors are reported by validation
        std::string key = "access";
        for (const Expr &a : args) key += ";" + *expr_key(a);
        if (!merged.insert(std::move(key)).second) return;
        for (size_t i = 0; i < args.size(); i++) {
            Interval iv = bounds_of_expr_in_scope(args[i], scope);
            if (!iv.bounded() && first_unbounded.empty())
                first_unbounded = what() + " (argument " + std::to_string(i) + ": " + to_string(args[i]) + ")";
            union_into(box, i, " box ", iv);
            union_into(sym_box, i, " sym ", bounds_of_expr_in_scope(args[i], sym));
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
        scopes_changed();
        Expr old = let_values.count(op->name) ? let_values[op->name] : Expr();
        let_values[op->name] = value;
        include(op->body);
        if (old.defined()) let_values[op->name] = old;
        else let_values.erase(op->name);
        sym.pop(op->name);
        scope.pop(op->name);
        scopes_changed();
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
        const Expr &v = substituted;  // simplified as it was stored
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
        inner_loops.push_back(op->name);
        Expr self = Variable::make(Int(32), op->name);
        sym.push(op->name, Interval::point(self));
        Box outer_sym = sym_box;  // the body's symbolic box is bounded over the loop alone
        for (Interval &i : sym_box) i = Interval::nothing();
        scopes_changed();
        include(op->body);
        sym.pop(op->name);
        scope.pop(op->name);
        inner_loops.pop_back();
        scopes_changed();
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
        scopes_changed();
        include(op->then_case);
        for (auto it = pushed.rbegin(); it != pushed.rend(); ++it) it->empty() ? scope.pop_sum() : scope.pop(*it);
        for (auto it = sym_pushed.rbegin(); it != sym_pushed.rend(); ++it) it->empty() ? sym.pop_sum() : sym.pop(*it);
        scopes_changed();  // and the boxes: a fixed condition collects each branch's apart
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
        scopes_changed();
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
        // Only a variable from outside the statement: a loop inside it is
        // ranged over its iterations, and there the ends clamped apart are
        // exact (at the first iteration max(first, lo), not the point's
        // min(max(first, lo), hi)). Sliding needs that: a compute_with
        // member's rows written, the fused loop inside the statement, are
        // its own rows [lo, hi] only so (camera_pipe's g_r and g_b).
        const bool inner = std::find(inner_loops.begin(), inner_loops.end(), v->name) != inner_loops.end();
        if (!inner && guarded_point(v->name, iv, upper, b)) {
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

// What a BoxCollector walks of s, printed: the statements that access the
// Func (`touching`), a loop, let, guard, block or realization as a header
// around what it holds (a let marked if it is a required stage variable, a
// realization's bounds only if they read the Func), any other statement
// whole; another statement is "_".
struct TouchingText {
    const std::unordered_set<const void *> &touching;
    const std::string &name;
    const std::set<std::string> *required, *required_min;
    std::string &out;

    static std::string text(const Expr &x) { return x.defined() ? *expr_key(x) : std::string("?"); }
    bool reads_func(const Expr &x) const {
        class Finds : public IRVisitor {
        public:
            const std::string &name;
            bool found = false;
            explicit Finds(const std::string &n) : name(n) {}
            void visit(const Call *op) override {
                found |= op->name == name;
                IRVisitor::visit(op);
            }
        } f(name);
        if (x.defined()) f.include(x);
        return f.found;
    }
    void print(const Stmt &s) {
        if (!s.defined()) return;
        if (!touching.count(s.get())) {
            out += "_\n";
            return;
        }
        if (const auto *op = s.as<Block>()) {
            print(op->first);
            print(op->rest);
        } else if (const auto *op = s.as<LetStmt>()) {
            out += "let " + op->name;
            if (required && required->count(op->name)) out += " required";
            if (required_min && required_min->count(op->name)) out += " required_min";
            out += " = " + text(op->value) + "\n";
            print(op->body);
        } else if (const auto *op = s.as<For>()) {
            out += "for " + op->name + " " + std::to_string((int)op->for_type) + " " + text(op->min) + " " +
                   text(op->extent) + " {\n";
            print(op->body);
            out += "}\n";
        } else if (const auto *op = s.as<IfThenElse>()) {
            out += "if " + text(op->condition) + " {\n";
            print(op->then_case);
            out += op->else_case.defined() ? "} else {\n" : "}\n";
            if (op->else_case.defined()) {
                print(op->else_case);
                out += "}\n";
            }
        } else if (const auto *op = s.as<ProducerConsumer>()) {
            out += (op->is_producer ? "produce " : "consume ") + op->name + " {\n";
            print(op->body);
            out += "}\n";
        } else if (const auto *op = s.as<Realize>()) {
            bool reads = reads_func(op->in_place);
            for (const Range &r : op->bounds) reads |= reads_func(r.min) || reads_func(r.extent);
            out += "realize " + op->name;
            if (reads) {
                for (const Range &r : op->bounds) out += " [" + text(r.min) + ", " + text(r.extent) + "]";
                out += " in_place " + text(op->in_place);
            }
            out += " {\n";
            print(op->body);
            out += "}\n";
        } else if (const auto *op = s.as<Provide>()) {
            out += op->name + "(";
            for (const Expr &a : op->args) out += text(a) + ", ";
            out += ") =";
            for (const Expr &v : op->values) out += " " + text(v);
            out += "\n";
        } else {
            out += to_string(s) + "\n";
        }
    }
};

thread_local BoxMemo *current_box_memo = nullptr;

}  // namespace

BoxMemo::Use::Use(BoxMemo &m) : outer(current_box_memo), memo(m) {
    current_box_memo = &m;
    m.called.clear();
}
BoxMemo::Use::~Use() {
    current_box_memo = outer;
    memo.called.clear();
}

void MarkHolders::include(const Stmt &s) {
    if (!s.defined()) return;
    bool outer = hit;
    hit = false;
    IRVisitor::include(s);
    if (hit) holders.insert(s.get());
    hit = hit || outer;
}

Box box_touched(const Stmt &s, const std::string &name, bool reads, bool writes, bool *found, const Scope &outer,
                LetList *kept, const std::set<std::string> *required, const std::set<std::string> *required_min) {
    BoxMemo *memo = current_box_memo;
    std::string key;
    std::unordered_set<const void *> touching;
    if (memo) {
        FindAccesses(name, reads, writes, touching, &memo->called).include(s);
        TouchingText{touching, name, required, required_min, key}.print(s);
        key += std::string("\n") + name + (reads ? " reads" : "") + (writes ? " writes" : "") +
               (kept ? " keeps" : "") + "\nscope\n" + outer.text(key);
        if (const BoxMemo::Entry *e = memo->find(key)) {
            memo->hits++;
            if (found) *found = e->found;
            if (kept && !e->conflict) *kept = e->kept;
            return e->box;
        }
        memo->misses++;
    }
    BoxCollector c(name, reads, writes, outer, kept != nullptr, required, required_min);
    if (memo) c.collect_marked(s, std::move(touching));
    else c.collect(s);
    if (c.conflict) {  // without keeping lets; `kept` is left as it is
        bool any = false;
        Box box = box_touched(s, name, reads, writes, &any, outer, nullptr, required, required_min);
        if (found) *found = any;
        if (memo) memo->keep(key, {any, box, LetList(), true});
        return box;
    }
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
    if (memo) memo->keep(key, {c.found, box, kept ? *kept : LetList()});
    return box;
}

std::string describe_unbounded_access(const Stmt &s, const std::string &name) {
    BoxCollector c(name, true, false, Scope());
    c.collect(s);
    return c.first_unbounded;
}

}  // namespace internal
}  // namespace kiln
