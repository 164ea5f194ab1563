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

// One value of a solved variable, valid where `cond` holds.
struct Choice {
    Expr value, cond;
};

// The values of v for which access == u, when there are few: a*v + b == u
// (one value, if a divides u - b), (v + b) / k == u (k values).
std::vector<Choice> invert(const Expr &access, const std::string &v, const Expr &u) {
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
    for (int64_t t = 0; t < *k; t++) all.push_back({simplify(u * (int)*k - inner.b + (int)t), Expr()});
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

private:
    void solve(const std::set<std::string> &forced) {
        solutions.clear();
        arg_solved.assign(args.size(), false);
        arg_conds.assign(args.size(), Expr());
        for (bool progress = true; progress;) {
            progress = false;
            for (size_t i = 0; i < args.size(); i++) {
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
                } else if (used.size() == 1 && !forced.count(used[0])) {
                    std::vector<Choice> c = invert(simplify(a), used[0], u);
                    if (c.empty()) continue;
                    solutions[used[0]] = c;
                    arg_solved[i] = true;
                    progress = true;
                }
            }
        }
    }
};

}  // namespace

AdjointTerm gather_or_scatter(const std::string &target, const std::vector<std::string> &target_vars,
                              const std::vector<Expr> &access_args, const Expr &contribution,
                              const std::string &seed_name, const Expr &seed, const ReadingStage &stage) {
    Solver s(access_args, stage);
    s.run();
    AdjointTerm term;
    for (bool solved : s.arg_solved) term.scatter |= !solved;

    // The variables left become the dimensions of one RDom.
    std::vector<std::pair<Expr, Expr>> region;
    std::vector<std::string> left;
    for (size_t i = 0; i < stage.pure_vars.size(); i++) {
        const std::string &v = stage.pure_vars[i];
        if (s.solutions.count(v)) continue;
        const Interval &r = stage.pure_ranges[i];
        user_assert(r.bounded())
            << "Cannot differentiate " << stage.what << ": sending its adjoint to " << target
            << " sums over every value of its Var " << v
            << (term.scatter ? " (the read cannot be inverted: a clamp, a boundary condition or a data-dependent "
                               "index, so it is scattered)"
                             : " (the read does not depend on " + v + ")")
            << ", but the region of " << stage.what << " in " << v << " is unknown; pass the output's region: "
            << "propagate_adjoints(output, adjoint, {{min, extent}, ...}), or differentiate a scalar loss";
        region.push_back({r.min, simplify(r.max - r.min + 1)});
        left.push_back(v);
    }
    for (const auto &rv : stage.rvars) {
        if (s.solutions.count(rv.name)) continue;
        region.push_back({rv.min, rv.extent});
        left.push_back(rv.name);
    }
    RDom rdom;
    if (!region.empty()) rdom = RDom(region, target + "_r");

    // Every combination of the solved variables' choices adds one term.
    std::vector<std::pair<std::string, const std::vector<Choice> *>> solved(s.solutions.size());
    std::transform(s.solutions.begin(), s.solutions.end(), solved.begin(),
                   [](const auto &kv) { return std::make_pair(kv.first, &kv.second); });
    std::vector<size_t> pick(solved.size(), 0);
    Expr total;
    Type t = contribution.type();
    while (true) {
        std::map<std::string, Expr> forward, adjoint;
        Expr cond;
        for (size_t k = 0; k < left.size(); k++) forward[left[k]] = adjoint[left[k]] = rdom[(int)k];
        for (size_t j = 0; j < solved.size(); j++) {
            const std::string &v = solved[j].first;
            const Choice &c = (*solved[j].second)[pick[j]];
            cond = conj(cond, c.cond);
            Expr clamped = c.value;
            for (size_t i = 0; i < stage.pure_vars.size(); i++) {
                const Interval &r = stage.pure_ranges[i];
                if (stage.pure_vars[i] == v && r.bounded()) clamped = clamp(c.value, r.min, r.max);
            }
            forward[v] = clamped;
            adjoint[v] = clamped;
            for (const auto &rv : stage.rvars) {
                if (rv.name != v) continue;
                Expr hi = simplify(rv.min + rv.extent - 1);
                cond = conj(cond, c.value >= rv.min && c.value <= hi);
                forward[v] = adjoint[v] = clamp(c.value, rv.min, hi);
            }
            // The reading stage's own adjoint is zero outside its region: read it where the value is.
            if (std::find(stage.pure_vars.begin(), stage.pure_vars.end(), v) != stage.pure_vars.end()) adjoint[v] = c.value;
        }
        for (const Expr &c : s.arg_conds) cond = conj(cond, c);
        if (stage.predicate.defined()) cond = conj(cond, substitute(forward, stage.predicate));
        Expr value = substitute(forward, contribution);
        value = substitute(seed_name, substitute(adjoint, seed), value);
        if (cond.defined()) value = Select::make(simplify(cond), value, make_zero(t));
        total = total.defined() ? total + value : value;
        if (term.lhs.empty())
            for (size_t i = 0; i < access_args.size(); i++)
                term.lhs.push_back(s.arg_solved[i] ? make_var(u_name(i)) : simplify(substitute(forward, access_args[i])));
        size_t j = 0;
        for (; j < pick.size(); j++) {
            if (++pick[j] < solved[j].second->size()) break;
            pick[j] = 0;
        }
        if (j == pick.size()) break;
    }
    std::map<std::string, Expr> rename;
    for (size_t i = 0; i < target_vars.size(); i++) rename[u_name(i)] = make_var(target_vars[i]);
    term.value = simplify(substitute(rename, total));
    for (Expr &a : term.lhs) a = substitute(rename, a);
    return term;
}

}  // namespace internal
}  // namespace kiln
