// Scatter turned into gather where the read can be inverted (Gather.h).
#include "autodiff/Gather.h"

#include <algorithm>
#include <map>
#include <set>

#include "ir/Simplify.h"
#include "ir/Substitute.h"
#include "kiln/RDom.h"

namespace kiln {
namespace internal {

namespace {

// e = a * v + b with a constant a and b free of v.
struct Linear {
    bool ok = false;
    int64_t a = 0;
    Expr b;
};

Linear linear_in(const Expr &e, const std::string &v) {
    if (!expr_uses_var(e, v)) return {true, 0, e};
    if (e.as<Variable>()) return {true, 1, make_zero(e.type())};
    if (const Add *op = e.as<Add>()) {
        Linear l = linear_in(op->a, v), r = linear_in(op->b, v);
        if (l.ok && r.ok) return {true, l.a + r.a, l.b + r.b};
    } else if (const Sub *op = e.as<Sub>()) {
        Linear l = linear_in(op->a, v), r = linear_in(op->b, v);
        if (l.ok && r.ok) return {true, l.a - r.a, l.b - r.b};
    } else if (const Mul *op = e.as<Mul>()) {
        const Expr &k = expr_uses_var(op->a, v) ? op->b : op->a, &rest = expr_uses_var(op->a, v) ? op->a : op->b;
        const int64_t *c = as_const_int(k);
        Linear l = linear_in(rest, v);
        if (c && l.ok && !expr_uses_var(k, v)) return {true, l.a * *c, l.b * k};
    }
    return {};
}

// One value of a solved variable, valid where `cond` holds; or, for a tail
// of a clamp, every value in [tail_min, tail_min + tail_extent), all read at
// the clamp's end `fixed`; or, for a clamp summed after another's tail
// (`whole`), every value of the variable's range, read at the clamp of it.
struct Choice {
    Expr value, cond;
    Expr tail_min, tail_extent, fixed;
    bool whole = false;
    bool tail() const { return fixed.defined(); }
    bool summed() const { return tail() || whole; }
};

// clamp(v + b, lo, hi), as clamp() builds it or reordered: v + b, lo, hi.
bool as_clamp(const Expr &e, Expr &inner, Expr &lo, Expr &hi) {
    const Max *mx = e.as<Max>();
    const Min *mn = mx ? mx->a.as<Min>() : nullptr;
    if (mx && mn) {
        inner = mn->a, hi = mn->b, lo = mx->b;
        return true;
    }
    const Min *mn2 = e.as<Min>();
    const Max *mx2 = mn2 ? mn2->a.as<Max>() : nullptr;
    if (mn2 && mx2) {
        inner = mx2->a, lo = mx2->b, hi = mn2->b;
        return true;
    }
    return false;
}

// The values of v for which access == u, when there are few: a*v + b == u
// (one value, if a divides u - b), (v + b) / k == u (k values); and of a
// clamped v + b, with v in `range`, the one value inside [lo, hi], the
// two tails that the clamp sends to lo and to hi, and the whole range (for
// the sums at another clamp's ends, gather_or_scatter).
std::vector<Choice> invert(const Expr &access, const std::string &v, const Expr &u, const Interval &range) {
    Expr clamped, lo, hi;
    if (range.bounded() && as_clamp(access, clamped, lo, hi) && !expr_uses_var(lo, v) && !expr_uses_var(hi, v)) {
        Linear l = linear_in(clamped, v);
        if (!l.ok || l.a != 1) return {};
        Expr zero = make_zero(Int(32));
        Choice inside{simplify(u - l.b), simplify(u >= lo && u <= hi)};
        Choice below{Expr(), Expr(), range.min, simplify(max(lo - l.b - range.min, zero)), lo};
        Expr above_min = simplify(hi - l.b + 1);
        Choice above{Expr(), Expr(), above_min, simplify(max(range.max - above_min + 1, zero)), hi};
        Choice whole{Expr(), Expr(), range.min, simplify(range.max - range.min + 1), Expr(), true};
        return {inside, below, above, whole};
    }
    Linear l = linear_in(access, v);
    if (l.ok && l.a != 0) {
        Expr rest = simplify(u - l.b);
        if (l.a == 1) return {{rest, Expr()}};
        if (l.a == -1) return {{simplify(l.b - u), Expr()}};
        Expr a = make_const(Int(32), l.a);
        return {{simplify(rest / a), simplify(rest % a == 0)}};
    }
    const Div *d = access.as<Div>();
    const int64_t *k = d ? as_const_int(d->b) : nullptr;
    if (!k || *k <= 0 || *k > 16) return {};
    Linear inner = linear_in(d->a, v);
    if (!inner.ok || inner.a != 1) return {};
    std::vector<Choice> all;
    for (int64_t t = 0; t < *k; t++) all.push_back({simplify(u * (int)*k - inner.b + (int)t)});
    return all;
}

Expr conj(const Expr &a, const Expr &b) {
    if (!a.defined() || is_one(a)) return b;
    if (!b.defined() || is_one(b)) return a;
    return a && b;
}

std::string u_name(size_t i) { return "adj$u" + std::to_string(i); }

class Solver {
public:
    Solver(const std::vector<Expr> &args, const ReadingStage &stage) : args(args), stage(stage) {
        for (const auto &v : stage.pure_vars) vars.push_back(v);
        for (const auto &rv : stage.rvars) vars.push_back(rv.name);
    }

    // Solve with `forced` left unsolved, until the unsolved arguments use
    // no solved variable.
    void run() {
        std::set<std::string> forced;
        while (true) {
            solve(forced);
            std::set<std::string> more;
            for (size_t i = 0; i < args.size(); i++)
                if (!arg_solved[i])
                    for (const auto &v : vars)
                        if (solutions.count(v) && expr_uses_var(args[i], v)) more.insert(v);
            if (more.empty()) return;
            forced.insert(more.begin(), more.end());
        }
    }

    const std::vector<Expr> &args;
    const ReadingStage &stage;
    std::vector<std::string> vars;  // the stage's pure Vars, then its RVars
    std::map<std::string, std::vector<Choice>> solutions;
    std::vector<bool> arg_solved;
    std::vector<Expr> arg_conds;  // a determined argument: u_i == its value

    std::map<std::string, size_t> arg_of;  // a solved variable -> the argument it was solved from
    std::set<std::string> kept;            // variables an argument solved in terms of: left to sum over

    Interval range_of(const std::string &v) const {
        for (size_t i = 0; i < stage.pure_vars.size(); i++)
            if (stage.pure_vars[i] == v) return stage.pure_ranges[i];
        for (const auto &rv : stage.rvars)
            if (rv.name == v) return Interval(rv.min, simplify(rv.min + rv.extent - 1));
        return Interval();
    }

    bool is_pure(const std::string &v) const {
        return std::find(stage.pure_vars.begin(), stage.pure_vars.end(), v) != stage.pure_vars.end();
    }

private:
    // An argument of several variables, v + w (a convolution's x + r.x),
    // solved for one of them, v = u - w, the others kept as variables to
    // sum over. v is the one of widest range: a pure Var before an RVar, so
    // the sum runs over the taps, not over the image; the others must have
    // bounded ranges. False if no variable appears as +-v.
    bool solve_for_one(size_t i, const Expr &a, const std::vector<std::string> &used,
                       const std::set<std::string> &forced) {
        std::string best;
        for (const auto &v : used) {
            if (forced.count(v) || kept.count(v)) continue;
            Linear l = linear_in(a, v);
            if (!l.ok || (l.a != 1 && l.a != -1)) continue;
            bool others_bounded = true;
            for (const auto &o : used)
                if (o != v) others_bounded &= range_of(o).bounded();
            if (!others_bounded) continue;
            if (best.empty() || (is_pure(v) && !is_pure(best))) best = v;
        }
        if (best.empty()) return false;
        Linear l = linear_in(a, best);
        Expr u = make_var(u_name(i));
        solutions[best] = {{simplify(l.a == 1 ? u - l.b : l.b - u), Expr()}};
        arg_of[best] = i;
        arg_solved[i] = true;
        for (const auto &o : used)
            if (o != best) kept.insert(o);
        return true;
    }

    void solve(const std::set<std::string> &forced) {
        solutions.clear();
        arg_of.clear();
        kept.clear();
        arg_solved.assign(args.size(), false);
        arg_conds.assign(args.size(), Expr());
        // Arguments of one variable first; one of several only when none is left.
        for (bool several = false;;) {
            bool progress = false;
            for (size_t i = 0; i < args.size() && !(several && progress); i++) {
                if (arg_solved[i]) continue;
                Expr a = args[i];
                bool multi = false;
                for (const auto &[v, choices] : solutions) {
                    if (!expr_uses_var(a, v)) continue;
                    if (choices.size() == 1) a = substitute(v, choices[0].value, a);
                    else multi = true;
                }
                if (multi) continue;
                std::vector<std::string> used;
                for (const auto &v : vars)
                    if (expr_uses_var(a, v)) used.push_back(v);
                Expr u = make_var(u_name(i));
                if (used.empty()) {
                    arg_solved[i] = true;
                    arg_conds[i] = u == simplify(a);
                    progress = true;
                } else if (used.size() == 1 && !forced.count(used[0]) && !kept.count(used[0])) {
                    std::vector<Choice> c = invert(simplify(a), used[0], u, range_of(used[0]));
                    if (c.empty()) continue;
                    solutions[used[0]] = c;
                    arg_of[used[0]] = i;
                    arg_solved[i] = true;
                    progress = true;
                } else if (several && used.size() > 1) {
                    progress = solve_for_one(i, simplify(a), used, forced);
                }
            }
            if (!progress && several) return;
            several = !progress;
        }
    }
};

}  // namespace

std::vector<AdjointTerm> gather_or_scatter(const std::string &target, const std::vector<std::string> &target_vars,
                                           const std::vector<Expr> &access_args, const Expr &contribution,
                                           const std::string &seed_name, const Expr &seed, const ReadingStage &stage) {
    Solver s(access_args, stage);
    s.run();
    bool scatter = false;
    for (bool solved : s.arg_solved) scatter |= !solved;

    // The variables left become dimensions of an RDom.
    std::vector<std::pair<Expr, Expr>> left_region;
    std::vector<std::string> left;
    for (size_t i = 0; i < stage.pure_vars.size(); i++) {
        const std::string &v = stage.pure_vars[i];
        if (s.solutions.count(v)) continue;
        const Interval &r = stage.pure_ranges[i];
        user_assert(r.bounded())
            << "Cannot differentiate " << stage.what << ": sending its adjoint to " << target
            << " sums over every value of its Var " << v
            << (scatter ? " (the read cannot be inverted: a boundary condition or a data-dependent index, so it is "
                          "scattered)"
                        : " (the read does not depend on " + v + ")")
            << ", but the region of " << stage.what << " in " << v << " is unknown; pass the output's region: "
            << "propagate_adjoints(output, adjoint, {{min, extent}, ...}), or differentiate a scalar loss";
        left_region.push_back({r.min, simplify(r.max - r.min + 1)});
        left.push_back(v);
    }
    for (const auto &rv : stage.rvars) {
        if (s.solutions.count(rv.name)) continue;
        left_region.push_back({rv.min, rv.extent});
        left.push_back(rv.name);
    }
    RDom shared;
    if (!left_region.empty()) shared = RDom(left_region, target + "_r");

    // Every combination of the solved variables' choices adds a term: those
    // without a clamp's tail to one gather, each with tails an update of its
    // own. Of several clamped variables, the first with a tail picks it and
    // every later one is summed whole (written at its clamp), so a clamp in
    // n dimensions sums its ends in 2n updates, not one per edge and corner
    // (3^n - 1): in 2-D the left and right columns take their corners,
    //
    //   g_adj(0, clamp(ry, 0, h - 1)) += c[x -> rx, y -> ry]     rx over [f.min.x, -1], ry over f's rows
    //   g_adj(u, 0) += select(0 <= u <= w - 1, c[x -> u, y -> ry], 0)    ry over [f.min.y, -1]
    //
    // and the same at w - 1 and h - 1.
    std::vector<std::pair<std::string, const std::vector<Choice> *>> solved(s.solutions.size());
    std::transform(s.solutions.begin(), s.solutions.end(), solved.begin(),
                   [](const auto &kv) { return std::make_pair(kv.first, &kv.second); });
    auto clamped_var = [&](size_t j) {
        const std::vector<Choice> &c = *solved[j].second;
        return std::any_of(c.begin(), c.end(), [](const Choice &k) { return k.whole; });
    };
    // A combination is taken when each clamped variable is whole exactly
    // when an earlier variable picked a tail.
    auto wanted = [&](const std::vector<size_t> &pick) {
        bool after_tail = false;
        for (size_t j = 0; j < pick.size(); j++) {
            const Choice &c = (*solved[j].second)[pick[j]];
            if (clamped_var(j) && c.whole != after_tail) return false;
            after_tail |= c.tail();
        }
        return true;
    };
    // The next combination, the first variable's choice fastest; false after the last.
    auto advance = [&](std::vector<size_t> &pick) {
        for (size_t j = 0; j < pick.size(); j++) {
            if (++pick[j] < solved[j].second->size()) return true;
            pick[j] = 0;
        }
        return false;
    };
    std::vector<size_t> pick(solved.size(), 0);
    std::vector<AdjointTerm> terms(1);
    Expr total;
    Type t = contribution.type();
    for (bool more = true; more; more = advance(pick)) {
        if (!wanted(pick)) continue;
        std::vector<std::pair<Expr, Expr>> region = left_region;
        std::vector<const Choice *> choice(solved.size());
        for (size_t j = 0; j < solved.size(); j++) {
            choice[j] = &(*solved[j].second)[pick[j]];
            if (choice[j]->summed()) region.push_back({choice[j]->tail_min, choice[j]->tail_extent});
        }
        const bool tails = region.size() > left_region.size();
        RDom rdom = tails ? RDom(region, target + "_r" + std::to_string(terms.size())) : shared;
        // The dimensions after the variables left are the clamps' tails (and
        // the whole clamped ranges summed with them).
        for (size_t k = left_region.size(); tails && k < region.size(); k++) rdom.get()->vars[k].boundary_tail = true;
        std::map<std::string, Expr> forward, adjoint;
        std::vector<Expr> lhs;
        for (size_t i = 0; i < access_args.size(); i++) lhs.push_back(make_var(u_name(i)));
        Expr cond;
        for (size_t k = 0; k < left.size(); k++) forward[left[k]] = adjoint[left[k]] = rdom[(int)k];
        // A solved value may use the variables left (x = u - r.x): they are the RDom's.
        const std::map<std::string, Expr> summed = forward;
        std::vector<size_t> whole_args;  // written at the clamp of their RVar, once forward is complete
        for (size_t j = 0, tail = left.size(); j < solved.size(); j++) {
            const std::string &v = solved[j].first;
            const Choice &c = *choice[j];
            if (c.summed()) {
                forward[v] = adjoint[v] = rdom[(int)tail++];
                if (c.tail()) lhs[s.arg_of[v]] = c.fixed;
                else whole_args.push_back(s.arg_of[v]);
                continue;
            }
            const Expr value = substitute(summed, c.value);
            if (c.cond.defined()) cond = conj(cond, substitute(summed, c.cond));
            Expr clamped = value;
            for (size_t i = 0; i < stage.pure_vars.size(); i++) {
                const Interval &r = stage.pure_ranges[i];
                if (stage.pure_vars[i] == v && r.bounded()) clamped = clamp(value, r.min, r.max);
            }
            forward[v] = adjoint[v] = clamped;
            for (const auto &rv : stage.rvars) {
                if (rv.name != v) continue;
                Expr hi = simplify(rv.min + rv.extent - 1);
                cond = conj(cond, value >= rv.min && value <= hi);
                forward[v] = adjoint[v] = clamp(value, rv.min, hi);
            }
            // The reading stage's own adjoint is zero outside its region: read it where the value is.
            if (s.is_pure(v)) adjoint[v] = value;
        }
        for (const Expr &c : s.arg_conds) cond = conj(cond, c);
        if (stage.predicate.defined()) cond = conj(cond, substitute(forward, stage.predicate));
        Expr value = substitute(forward, contribution);
        value = substitute(seed_name, substitute(adjoint, seed), value);
        if (cond.defined()) value = Select::make(simplify(cond), value, make_zero(t));
        for (size_t i = 0; i < access_args.size(); i++)
            if (!s.arg_solved[i]) lhs[i] = simplify(substitute(forward, access_args[i]));
        for (size_t i : whole_args) lhs[i] = simplify(substitute(forward, access_args[i]));
        if (tails) {
            terms.push_back({lhs, value, true});
        } else {
            terms[0].lhs = lhs;
            terms[0].scatter = scatter;
            total = total.defined() ? total + value : value;
        }
    }
    terms[0].value = total;
    std::map<std::string, Expr> rename;
    for (size_t i = 0; i < target_vars.size(); i++) rename[u_name(i)] = make_var(target_vars[i]);
    for (AdjointTerm &term : terms) {
        term.value = simplify(substitute(rename, term.value));
        for (Expr &a : term.lhs) a = substitute(rename, a);
    }
    return terms;
}

}  // namespace internal
}  // namespace kiln
