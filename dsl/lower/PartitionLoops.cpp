#include "PartitionLoops.h"

#include <algorithm>
#include <cstring>
#include <map>

#include "analysis/Monotonic.h"
#include "ir/IRVisitor.h"
#include "ir/Simplify.h"
#include "ir/Substitute.h"

namespace kiln {
namespace internal {

namespace {

// The smallest and largest lane of a ramp with a constant stride, of a
// broadcast, or of a sum or difference of them (a vectorized loop's lanes
// added to a broadcast base: x8(b) + ramp(0, 1, 8)).
bool lane_range(const Expr &v, Expr &lo, Expr &hi) {
    if (const auto *b = v.as<Broadcast>()) return lo = hi = b->value, true;
    if (const auto *r = v.as<Ramp>()) {
        const int64_t *st = as_const_int(r->stride);
        if (!st) return false;
        Expr last = r->base + r->stride * (r->lanes - 1);
        lo = *st >= 0 ? r->base : last;
        hi = *st >= 0 ? last : r->base;
        return true;
    }
    Expr alo, ahi, blo, bhi;
    if (const auto *a = v.as<Add>()) {
        if (!lane_range(a->a, alo, ahi) || !lane_range(a->b, blo, bhi)) return false;
        return lo = alo + blo, hi = ahi + bhi, true;
    }
    if (const auto *d = v.as<Sub>()) {
        if (!lane_range(d->a, alo, ahi) || !lane_range(d->b, blo, bhi)) return false;
        return lo = alo - bhi, hi = ahi - blo, true;
    }
    return false;
}

// The scalar condition under which every lane of a vector condition holds,
// or undefined: a conjunction of broadcast scalars and comparisons of
// lane ranges (lane_range: a ramp against a bound), as the test of
// whether a vector lies inside a region (autodiff's zero outside an
// adjoint's region) is written:
//   ramp(b, 1, 8) >= x8(m) && ramp(b, 1, 8) <= x8(M) && x8(c)  ->  b >= m && b + 7 <= M && c
Expr all_lanes(const Expr &e) {
    if (e.type().is_scalar()) return e;
    if (const auto *b = e.as<Broadcast>()) return b->value;
    if (const auto *a = e.as<And>()) {
        Expr x = all_lanes(a->a), y = all_lanes(a->b);
        return x.defined() && y.defined() ? (x && y) : Expr();
    }
    Expr alo, ahi, blo, bhi;
    auto both = [&](const Expr &a, const Expr &b) { return lane_range(a, alo, ahi) && lane_range(b, blo, bhi); };
    if (const auto *c = e.as<GE>()) return both(c->a, c->b) ? Expr(alo >= bhi) : Expr();
    if (const auto *c = e.as<GT>()) return both(c->a, c->b) ? Expr(alo > bhi) : Expr();
    if (const auto *c = e.as<LE>()) return both(c->a, c->b) ? Expr(ahi <= blo) : Expr();
    if (const auto *c = e.as<LT>()) return both(c->a, c->b) ? Expr(ahi < blo) : Expr();
    return Expr();
}

// Whether a let is a steady-state bound this pass gave a loop.
bool is_steady_bound(const std::string &name) {
    for (const char *suffix : {".steady_min", ".steady_max"}) {
        const size_t n = std::strlen(suffix);
        if (name.size() > n && name.compare(name.size() - n, n, suffix) == 0) return true;
    }
    return false;
}

// Whether an IfThenElse is a loop's whole copy this pass made (below,
// whole_loop_copy): the loop under its tests, else that loop partitioned.
bool is_whole_loop_copy(const IfThenElse *op) {
    const auto *loop = op->then_case.as<For>();
    const auto *steady = op->else_case.defined() ? op->else_case.as<LetStmt>() : nullptr;
    return loop && steady && steady->name == loop->name + ".steady_min";
}

// Conditions of scalar Selects and IfThenElses in a loop body (lets
// substituted), by node; and of vector Selects whose lanes all hold
// together (all_lanes).
class FindConditions : public IRVisitor {
public:
    explicit FindConditions(const std::string &v) : loop(v) {}
    std::vector<Expr> conditions;  // substituted
    std::vector<const Select *> selects;
    std::vector<Expr> vector_conditions;  // substituted, all lanes
    std::vector<const Select *> vector_selects;
    std::vector<Expr> if_conditions;  // substituted
    std::vector<const IfThenElse *> ifs;
    std::vector<Expr> min_max_conditions;                // substituted
    std::vector<std::pair<Expr, Expr>> min_max;  // the node, the operand it is in the steady state
    bool has_inner_loop = false;

protected:
    std::string loop;
    std::map<std::string, Expr> lets;
    std::vector<std::string> inner;
    void visit(const LetStmt *op) override {
        // The range of an inner loop this pass already partitioned is
        // computed once per iteration; its mins and maxes bound that loop,
        // and resolving them here would only narrow this loop's steady
        // state to where the inner one has no edge iterations.
        if (!is_steady_bound(op->name)) include(op->value);
        lets[op->name] = substitute(lets, op->value);
        include(op->body);
        lets.erase(op->name);
    }
    void visit(const For *op) override {
        has_inner_loop = true;
        inner.push_back(op->name);
        IRVisitor::visit(op);
        inner.pop_back();
    }
    // The condition with the body's lets substituted, if it is scalar and
    // depends on the loop but on no loop inside it; else undefined.
    Expr loop_condition(const Expr &condition) {
        if (!condition.type().is_scalar()) return Expr();
        Expr c = simplify(substitute(lets, condition));
        if (!expr_uses_var(c, loop)) return Expr();
        for (const auto &i : inner)
            if (expr_uses_var(c, i)) return Expr();
        return c;
    }
    void visit(const Select *op) override {
        IRVisitor::visit(op);
        if (!op->condition.type().is_scalar()) {
            Expr all = all_lanes(op->condition);
            Expr c = all.defined() ? loop_condition(all) : Expr();
            if (!c.defined()) return;
            vector_conditions.push_back(c);
            vector_selects.push_back(op);
            return;
        }
        if (!op->true_value.as<Load>()) return;
        Expr c = loop_condition(op->condition);
        if (!c.defined()) return;
        conditions.push_back(c);
        selects.push_back(op);
    }
    // min(a, b) or max(a, b) of int32 scalars with the loop in exactly one
    // operand: in the steady state it is that operand (a clamp of the index,
    // or the last vector of a ShiftInwards split, min(x.xo * 8, extent - 8)).
    // Only outside inner loops: inside one it is loop-invariant, which the
    // C++ compiler hoists, and a steady state would copy the whole nest.
    template<typename T>
    void visit_min_max(const T *op, bool is_min) {
        IRVisitor::visit(op);
        if (op->type != Int(32) || !inner.empty()) return;
        Expr a = simplify(substitute(lets, op->a)), b = simplify(substitute(lets, op->b));
        const bool in_a = expr_uses_var(a, loop), in_b = expr_uses_var(b, loop);
        if (in_a == in_b) return;
        for (const auto &i : inner)
            if (expr_uses_var(a, i) || expr_uses_var(b, i)) return;
        Expr v = in_a ? a : b, other = in_a ? b : a;
        min_max_conditions.push_back(is_min ? v <= other : v >= other);
        min_max.push_back({Expr(op), in_a ? op->a : op->b});
    }
    void visit(const Min *op) override { visit_min_max(op, true); }
    void visit(const Max *op) override { visit_min_max(op, false); }
    void visit(const IfThenElse *op) override {
        IRVisitor::visit(op);
        if (!op->else_case.defined()) return;  // a plain guard: a steady state saves little
        // An inner loop's tests, decided per run of it: partitioning an
        // outer loop (a tile loop) on them would copy the whole nest for
        // the edge tiles.
        if (is_whole_loop_copy(op)) return;
        Expr c = loop_condition(op->condition);
        if (!c.defined()) return;
        if_conditions.push_back(c);
        ifs.push_back(op);
    }
};

// The first min/max in e with one operand depending on v and one not.
class FindMinMax : public IRVisitor {
public:
    explicit FindMinMax(const std::string &v) : loop(v) {}
    Expr found;

protected:
    std::string loop;
    template<typename T>
    void check(const T *op) {
        if (found.defined()) return;
        if (expr_uses_var(op->a, loop) != expr_uses_var(op->b, loop)) found = Expr(op);
        else IRVisitor::visit(op);
    }
    void visit(const Min *op) override { check(op); }
    void visit(const Max *op) override { check(op); }
};

class ReplaceNode : public IRMutator {
public:
    ReplaceNode(const Expr &from, const Expr &to) : from(from), to(to) {}

protected:
    Expr from, to;
    Expr visit(const Min *op) override { return op == from.get() ? to : IRMutator::visit(op); }
    Expr visit(const Max *op) override { return op == from.get() ? to : IRMutator::visit(op); }
};

// Bounds on v under which `diff >= 0` surely holds: v >= each of `lower`,
// v <= each of `upper`, and every one of `invariant` true. A min or max of
// an affine term and an invariant one is either operand, so requiring both
// alternatives is sufficient ("wide"); so is requiring the term's
// alternative where the term is the min's value ("narrow": one more bound
// on v, the one under which the steady state replaces that min by the term
// anyway). The wide form keeps the whole range when its invariant
// conditions hold, but none of it when they do not: a ShiftInwards row of a
// producer that reaches past its input on both sides (a sliding window's
// row, x.min - 2 to x.max + 2) is never inside it, so
//   min(x.x * 16, n - 16) + x.min + 15 <= input.max
// asks n + x.min - 1 <= input.max (false) besides x.x's bound. The narrow
// form is taken where it needs fewer invariant conditions, or with
// `wide_first` only where the wide one fails (whole_loop_copy's test, below:
// its loop keeps the min, so the narrow form's bound would only shorten the
// range over which the test holds).
bool sufficient_bounds(const Expr &diff, const std::string &v, int depth, std::vector<Expr> &lower,
                       std::vector<Expr> &upper, std::vector<Expr> &invariant, bool wide_first) {
    if (!expr_uses_var(diff, v)) {
        invariant.push_back(diff >= 0);
        return true;
    }
    int64_t k;
    if (constant_step(diff, v, k) && k != 0) {
        Expr rest = simplify(substitute(v, make_zero(Int(32)), diff));  // diff = k*v + rest
        if (expr_uses_var(rest, v)) return false;
        if (k > 0) lower.push_back(simplify((0 - rest + (int)(k - 1)) / (int)k));  // v >= ceil(-rest / k)
        else upper.push_back(simplify(rest / (int)(-k)));                           // v <= floor(rest / -k)
        return true;
    }
    if (depth >= 2) return false;
    FindMinMax fm(v);
    fm.include(diff);
    if (!fm.found.defined()) return false;
    Expr a, b, chosen;  // chosen: the operand with v, `chosen - other >= 0` when it is the value
    if (const auto *m = fm.found.as<Min>()) {
        a = m->a, b = m->b;
        chosen = expr_uses_var(a, v) ? b - a : a - b;
    } else {
        const auto *x = fm.found.as<Max>();
        a = x->a, b = x->b;
        chosen = expr_uses_var(a, v) ? a - b : b - a;
    }
    Expr with_v = expr_uses_var(a, v) ? a : b;
    std::vector<Expr> wl, wu, wi;
    const bool wide =
        sufficient_bounds(simplify(ReplaceNode(fm.found, a).mutate(diff)), v, depth + 1, wl, wu, wi, wide_first) &&
        sufficient_bounds(simplify(ReplaceNode(fm.found, b).mutate(diff)), v, depth + 1, wl, wu, wi, wide_first);
    std::vector<Expr> nl, nu, ni;
    const bool narrow = !(wide && (wi.empty() || wide_first)) &&
                        sufficient_bounds(simplify(ReplaceNode(fm.found, with_v).mutate(diff)), v, depth + 1, nl, nu,
                                          ni, wide_first) &&
                        sufficient_bounds(simplify(chosen), v, depth + 1, nl, nu, ni, wide_first);
    const bool take_narrow = narrow && (!wide || ni.size() < wi.size());
    if (!wide && !take_narrow) return false;
    auto append = [](std::vector<Expr> &to, const std::vector<Expr> &from) {
        to.insert(to.end(), from.begin(), from.end());
    };
    append(lower, take_narrow ? nl : wl);
    append(upper, take_narrow ? nu : wu);
    append(invariant, take_narrow ? ni : wi);
    return true;
}

bool bound_from(const Expr &c, const std::string &v, std::vector<Expr> &lower, std::vector<Expr> &upper,
                std::vector<Expr> &invariant, bool wide_first = false) {
    if (const auto *a = c.as<And>())
        return bound_from(a->a, v, lower, upper, invariant, wide_first) &&
               bound_from(a->b, v, lower, upper, invariant, wide_first);
    Expr diff;  // the condition is diff >= 0
    if (const auto *le = c.as<LE>()) diff = le->b - le->a;
    else if (const auto *lt = c.as<LT>()) diff = lt->b - lt->a - 1;
    else if (const auto *ge = c.as<GE>()) diff = ge->a - ge->b;
    else if (const auto *gt = c.as<GT>()) diff = gt->a - gt->b - 1;
    else return false;
    if (diff.type() != Int(32)) return false;
    return sufficient_bounds(simplify(diff), v, 0, lower, upper, invariant, wide_first);
}

// The steady state's body: the chosen Selects, IfThenElses, mins and maxes
// replaced by their true value, then case and steady operand.
class ReplaceSelects : public IRMutator {
public:
    ReplaceSelects(const std::vector<const Select *> &s, const std::vector<const IfThenElse *> &i,
                   const std::vector<std::pair<Expr, Expr>> &m)
        : targets(s), ifs(i), min_max(m) {}

protected:
    const std::vector<const Select *> &targets;
    const std::vector<const IfThenElse *> &ifs;
    const std::vector<std::pair<Expr, Expr>> &min_max;
    template<typename T>
    Expr visit_min_max(const T *op) {
        for (const auto &m : min_max)
            if (m.first.get() == op) return mutate(m.second);
        return IRMutator::visit(op);
    }
    Expr visit(const Min *op) override { return visit_min_max(op); }
    Expr visit(const Max *op) override { return visit_min_max(op); }
    Expr visit(const Select *op) override {
        for (const auto *t : targets)
            if (t == op) return mutate(op->true_value);
        return IRMutator::visit(op);
    }
    Stmt visit(const IfThenElse *op) override {
        for (const auto *t : ifs)
            if (t == op) return mutate(op->then_case);
        return IRMutator::visit(op);
    }
};

// Drops the repeats from a list of bounds or conditions. A Select shared
// by many parents is met once per path to it, and the Selects of one
// region's loads give the same bounds: bias_gelu_grad's biased_adjoint
// (the GELU's derivative names its clamped input and d_output tens of
// times) put the same two invariant conditions ~100 times into its
// steady_min, a 22 KB line of C++.
//   {n >= 16, x.min <= 0, n >= 16}  ->  {n >= 16, x.min <= 0}
void drop_repeats(std::vector<Expr> &v) {
    std::vector<Expr> kept;
    for (const Expr &e : v)
        if (std::none_of(kept.begin(), kept.end(), [&](const Expr &k) { return equal(k, e); })) kept.push_back(e);
    v.swap(kept);
}

// The number of loops in s.
int count_loops(const Stmt &s) {
    class Count : public IRVisitor {
    public:
        int count = 0;
        using IRVisitor::include;
        void include(const Expr &) override {}  // statements only
        void visit(const For *op) override {
            count++;
            IRVisitor::visit(op);
        }
    } c;
    c.include(s);
    return c.count;
}

class Partition : public IRMutator {
public:
    explicit Partition(const LoopSources &sources) : sources(sources) {}
    // The most iterations g++ unrolls a loop of a constant extent into
    // (its max-completely-peel-times).
    static constexpr int64_t max_unrolled_extent = 16;

protected:
    const LoopSources &sources;
    // A loop over a clamp's tail that autodiff sums at an edge: it runs
    // over the reader's overhang beyond the clamp's end, a stencil's reach
    // (blur3x3_grad: one column per row), and its steady state (every tap
    // inside the adjoint's region) is empty unless the output reaches two
    // points past the input; its copies cost the C++ compiler far more
    // than they save.
    bool over_boundary_tail(const std::string &loop) const {
        auto it = sources.find(loop);
        return it != sources.end() && it->second.boundary_tail;
    }
    Stmt visit(const For *op) override {
        Stmt body = mutate(op->body);
        Stmt same = body.same_as(op->body) ? Stmt(op) : For::make(op->name, op->min, op->extent, op->for_type, body);
        // A per-lane tail loop runs at most once per tail: copies of it would
        // buy nothing, and g++ vectorizes each copy with its own epilogues.
        if (op->for_type != ForType::Serial || over_boundary_tail(op->name)) return same;
        FindConditions fc(op->name);
        fc.include(body);
        // The bounds of the Selects and IfThenElses, for the steady state
        // and (test_*) for the whole loop's copy below.
        std::vector<Expr> lower, upper, invariant, test_lower, test_upper, test_invariant;
        // Adds the bounds a condition gives, all or none: whether it gives any.
        auto add_bounds = [&](const Expr &c) {
            std::vector<Expr> l, u, inv, tl, tu, tinv;
            if (!bound_from(c, op->name, l, u, inv) || !bound_from(c, op->name, tl, tu, tinv, true)) return false;
            lower.insert(lower.end(), l.begin(), l.end());
            upper.insert(upper.end(), u.begin(), u.end());
            invariant.insert(invariant.end(), inv.begin(), inv.end());
            test_lower.insert(test_lower.end(), tl.begin(), tl.end());
            test_upper.insert(test_upper.end(), tu.begin(), tu.end());
            test_invariant.insert(test_invariant.end(), tinv.begin(), tinv.end());
            return true;
        };
        for (const auto &c : fc.conditions)
            if (!add_bounds(c)) return same;
        // An IfThenElse whose condition gives no bounds (e.g. x == 0) stays
        // in the steady state; the others are decided there.
        std::vector<const IfThenElse *> ifs;
        for (size_t i = 0; i < fc.ifs.size(); i++)
            if (add_bounds(fc.if_conditions[i])) ifs.push_back(fc.ifs[i]);
        // Likewise a vector Select whose lanes all hold in the steady state
        // (a vector inside an adjoint's region) is its true value there.
        std::vector<const Select *> selects = fc.selects;
        for (size_t i = 0; i < fc.vector_selects.size(); i++)
            if (add_bounds(fc.vector_conditions[i])) selects.push_back(fc.vector_selects[i]);
        for (auto *list : {&lower, &upper, &invariant, &test_lower, &test_upper, &test_invariant}) drop_repeats(*list);
        // A min/max alone partitions a loop with inner loops only when the
        // steady state, simplified, holds fewer loops (the producers
        // computed per tile of a RoundUp split: their region is the tile
        // clamped to the consumer's region, a run-time extent in every tile
        // though only the last one is cut; in the steady state it is the
        // whole tile and their vector loops of one iteration vanish), and
        // it starts at the loop's first iteration (a prologue would be a
        // third copy of the nest). Otherwise the min/max feeds values
        // computed once per iteration (the first column of a ShiftInwards
        // tile, whose producers keep the whole tile already), and a steady
        // state would copy the nest (every producer computed in the tile)
        // for nothing but them. Only mins and maxes that are their loop
        // operand from or up to some iteration count there: one that also
        // needs an invariant condition (the tile's width against the
        // region's, true in the last tile only) would leave no steady state
        // in general.
        const bool nest = fc.has_inner_loop && selects.empty() && ifs.empty();
        Expr first = op->min, end = op->min + op->extent;  // [first, end)
        std::vector<std::pair<Expr, Expr>> min_max;
        std::vector<Expr> mm_lower, mm_upper, mm_invariant;
        for (size_t i = 0; i < fc.min_max.size(); i++) {
            std::vector<Expr> l, u, inv;  // all or none, as add_bounds
            if (!bound_from(fc.min_max_conditions[i], op->name, l, u, inv)) continue;
            if (nest) {
                // max(c.min + xo * 64, c.min) holds from xo = 0 on.
                l.erase(std::remove_if(l.begin(), l.end(), [&](const Expr &b) { return can_prove(b <= first); }),
                        l.end());
                if (!l.empty() || !inv.empty()) continue;
            }
            mm_lower.insert(mm_lower.end(), l.begin(), l.end());
            mm_upper.insert(mm_upper.end(), u.begin(), u.end());
            mm_invariant.insert(mm_invariant.end(), inv.begin(), inv.end());
            min_max.push_back(fc.min_max[i]);
        }
        if (nest && !min_max.empty() &&
            count_loops(simplify(ReplaceSelects({}, {}, min_max).mutate(body))) >= count_loops(simplify(body)))
            min_max.clear();
        if (!min_max.empty()) {
            lower.insert(lower.end(), mm_lower.begin(), mm_lower.end());
            upper.insert(upper.end(), mm_upper.begin(), mm_upper.end());
            invariant.insert(invariant.end(), mm_invariant.begin(), mm_invariant.end());
        }
        if (selects.empty() && ifs.empty() && min_max.empty()) return same;
        for (auto *list : {&lower, &upper, &invariant}) drop_repeats(*list);
        std::string n = op->name;
        Expr lo = first, hi = end - 1;
        for (const auto &l : lower) lo = max(lo, l);
        for (const auto &u : upper) hi = min(hi, u);
        Expr smin = make_var(n + ".steady_min"), smax = make_var(n + ".steady_max");
        Stmt fast = ReplaceSelects(selects, ifs, min_max).mutate(body);
        Stmt s = Block::make({For::make(n, first, smin - first, ForType::Serial, body),
                              For::make(n, smin, smax - smin + 1, ForType::Serial, fast),
                              For::make(n, smax + 1, end - (smax + 1), ForType::Serial, body)});
        // steady_min in [first, end]; steady_max in [steady_min - 1, end - 1].
        s = LetStmt::make(n + ".steady_max", simplify(max(min(hi, end - 1), smin - 1)), s);
        // Without lower bounds the steady state starts at the first
        // iteration (an empty loop leaves it empty: steady_max < first).
        Expr steady_min = lower.empty() ? first : min(max(lo, first), end);
        if (!invariant.empty()) {
            Expr all = invariant[0];
            for (size_t i = 1; i < invariant.size(); i++) all = all && invariant[i];
            steady_min = select(all, steady_min, end);  // no steady state unless they hold
        }
        s = LetStmt::make(n + ".steady_min", simplify(steady_min), s);
        return whole_loop_copy(op, body, selects, ifs, test_lower, test_upper, test_invariant, fc.has_inner_loop, s);
    }

    // A short innermost loop of a constant extent (a row of a per-tile
    // producer: 9 vectors) whose tests hold in every iteration in most of
    // its runs (the tiles inside the image) keeps its constant extent there,
    // which the C++ compiler unrolls whole: if the tests hold from the first
    // iteration to the last, one loop with them decided (its mins and maxes
    // kept, a constant once unrolled), else the partitioned loops. Without
    // it, the three loops over run-time ranges are rolled loops whatever the
    // tile (harris's gray: 8 vectors, then the shifted last one).
    static Stmt whole_loop_copy(const For *op, const Stmt &body, const std::vector<const Select *> &selects,
                                const std::vector<const IfThenElse *> &ifs, const std::vector<Expr> &lower,
                                const std::vector<Expr> &upper, const std::vector<Expr> &invariant,
                                bool has_inner_loop, const Stmt &partitioned) {
        const int64_t *extent = as_const_int(op->extent);
        if (!extent || *extent > max_unrolled_extent || has_inner_loop || (selects.empty() && ifs.empty()))
            return partitioned;
        Expr last = op->min + op->extent - 1;
        std::vector<Expr> tests;  // each once: the loads of one pixel share theirs
        auto add = [&](const Expr &t) {
            for (const auto &u : tests)
                if (equal(u, t)) return;
            tests.push_back(t);
        };
        for (const auto &l : lower) add(simplify(l <= op->min));
        for (const auto &u : upper) add(simplify(u >= last));
        for (const auto &c : invariant) add(simplify(c));
        Expr all = make_bool(true);
        for (const auto &t : tests) all = all && t;
        all = simplify(all);
        if (is_zero(all) || is_one(all)) return partitioned;  // the partition is decided already
        Stmt decided = ReplaceSelects(selects, ifs, {}).mutate(body);
        return IfThenElse::make(all, For::make(op->name, op->min, op->extent, ForType::Serial, decided), partitioned);
    }
};

}  // namespace

Stmt partition_loops(const Stmt &s, const LoopSources &sources) { return Partition(sources).mutate(s); }

}  // namespace internal
}  // namespace kiln
