// Stage::rfactor(): split an associative reduction into an intermediate
// Func that reduces independent slices, and a merge of the slices.
//
//   f(x) = 0;  f(x) += g(r.x, r.y, x);
//   Func intm = f.update(0).rfactor(r.y, u);
//     ->  intm(x, u) = 0;  intm(x, u) += g(r.x, u, x);       (RDom over r.x only)
//         f(x) += intm(x, r.y');                              (RDom over r.y's domain)
//
// u is a pure Var of intm, so its loop may be parallel or vectorized. A split
// RVar is factored through its split: with f.update(0).split(r.x, ro, ri, 8),
// rfactor(ri, u) sums in(ro * 8 + u) over ro for each of 8 lanes u (guarded
// by ro * 8 + u < extent when 8 does not divide it). The update must be
// associative (analysis/Associativity.h); when it is not commutative (an
// argmax), only RVars outside every other RVar may be factored, so each
// slice is a contiguous run and the merge visits them in order. The stage's
// other directives are dropped: schedule intm and the merge afterwards.
#include <algorithm>
#include <set>

#include "analysis/Associativity.h"
#include "ir/Function.h"
#include "ir/IRPrinter.h"
#include "ir/Substitute.h"
#include "kiln/Func.h"

namespace kiln {

using namespace internal;

namespace {

// An RVar loop of the stage after its splits, in terms of the RDom.
struct LoopRVar {
    std::string var;  // the dim's full name ("r.x", "r.x.ro")
    std::string user_name;
    Expr min, extent;
};

// The stage's RVar loops (innermost first) and, for each RVar of its RDom,
// its value in terms of those loops (Variables named by the loops' full
// names), with the guards of splits whose factor may not divide the extent.
struct SplitRDom {
    std::vector<LoopRVar> loops;
    std::map<std::string, Expr> value_of;
    std::vector<Expr> guards;
};

SplitRDom split_rdom(const FunctionContents &f, int stage, const std::string &what) {
    const Definition &d = f.stage(stage);
    std::map<std::string, LoopRVar> live;
    SplitRDom r;
    for (const auto &v : d.rdom->vars) {
        live[v.name] = {v.name, v.name, v.min, v.extent};
        r.value_of[v.name] = make_var(v.name);
    }
    for (const Split &sp : d.schedule.splits) {
        if (sp.kind == Split::FuseVars) {
            user_assert(!live.count(sp.inner))
                << what << ": the stage fuses RVars (into " << sp.old_var
                << "); rfactor before fusing, then fuse the loops of the intermediate it returns";
            continue;
        }
        auto it = live.find(sp.old_var);
        if (it == live.end()) continue;  // a pure Var's split
        LoopRVar old = it->second;
        live.erase(it);
        Expr k = sp.factor;
        live[sp.outer] = {sp.outer, "", 0, (old.extent + k - 1) / k};
        live[sp.inner] = {sp.inner, "", 0, k};
        Expr offset = make_var(sp.outer) * k + make_var(sp.inner);
        for (auto &kv : r.value_of) kv.second = substitute(sp.old_var, offset + old.min, kv.second);
        for (auto &g : r.guards) g = substitute(sp.old_var, offset + old.min, g);
        const int64_t *ck = as_const_int(k), *ce = as_const_int(old.extent);
        // The guard compares the same sum the RVar's uses index by, so that
        // bounds inference narrows those indices with it (analysis/Bounds.h).
        if (!(ck && ce && *ce % *ck == 0)) r.guards.push_back(offset + old.min < old.min + old.extent);
    }
    for (const Dim &dim : d.schedule.dims) {
        if (!dim.is_rvar) continue;
        auto it = live.find(dim.var);
        internal_assert(it != live.end()) << "RVar loop " << dim.var << " of " << f.stage_name(stage);
        it->second.user_name = dim.user_name;
        r.loops.push_back(it->second);
    }
    return r;
}

// "rxo, u" or "{{r.x, u}, {r.y, v}}", for messages.
std::string pairs_text(const std::vector<std::pair<RVar, Var>> &p) {
    std::string s;
    for (const auto &[r, v] : p) s += (s.empty() ? "" : ", ") + std::string("{") + r.name() + ", " + v.name() + "}";
    return p.size() == 1 ? p[0].first.name() + ", " + p[0].second.name() : "{" + s + "}";
}

// A definition through the public API, with the RDom attached even when no
// value mentions its RVars (the loops still run).
void define(const std::shared_ptr<FunctionContents> &f, const std::vector<Expr> &lhs, const std::vector<Expr> &values,
            const std::shared_ptr<ReductionDomainContents> &rdom) {
    FuncRef(f, lhs) = Tuple(values);
    Definition &d = f->updates.empty() ? f->init : f->updates.back();
    if (rdom && !rdom->vars.empty() && !d.rdom) {
        d.rdom = rdom;
        std::vector<Dim> dims;
        for (const auto &v : rdom->vars) dims.push_back(Dim{v.name, v.name, ForType::Serial, true, false});
        d.schedule.dims.insert(d.schedule.dims.begin(), dims.begin(), dims.end());
    }
}

}  // namespace

Func Stage::rfactor(const RVar &r, const Var &v, const std::string &name) { return rfactor({{r, v}}, name); }

Func Stage::rfactor(const std::vector<std::pair<RVar, Var>> &preserved, const std::string &intm_name) {
    bump_definition_epoch();
    FunctionContents &f = *func;
    const std::string what = "In schedule of " + name() + ": rfactor(" + pairs_text(preserved) + ")";
    user_assert(stage_index > 0 && f.stage(stage_index).rdom)
        << what << ": rfactor splits a reduction, an update definition over an RDom; " << name() << " is "
        << (stage_index == 0 ? "the pure definition" : "an update with no RDom");
    user_assert(!preserved.empty()) << what << ": give at least one {RVar, Var} pair";
    Definition &d = f.stage(stage_index);

    AssociativeOp op = find_associative_op(f.name, d.args, d.values);
    user_assert(specialization < 0) << what << ": rfactor changes the algorithm of the whole update, so it cannot "
                                       "apply to one specialization; call it on "
                                    << f.stage_name(stage_index) << " before specializing";
    user_assert(op.found) << what << ": the update of " << f.name << " is not an associative reduction: " << op.why
                          << ". rfactor can split updates that combine " << f.name
                          << "'s current value with a term that does not read it, by +, -, *, min, max, && or || "
                             "(each Tuple element on its own), or an argmin/argmax Tuple select; rewrite the update "
                             "in that form, or leave it serial and parallelize or vectorize a pure Var of "
                          << f.name << " instead";

    SplitRDom split = split_rdom(f, stage_index, what);
    std::vector<std::string> loop_names;
    for (const auto &l : split.loops) loop_names.push_back(l.user_name);
    std::map<std::string, int> factored;  // loop index -> pair index
    std::set<std::string> new_vars;
    std::vector<int> loop_of_pair;
    for (size_t p = 0; p < preserved.size(); p++) {
        const std::string &rn = preserved[p].first.name(), &vn = preserved[p].second.name();
        int found = -1;
        for (size_t i = 0; i < split.loops.size(); i++)
            if (split.loops[i].user_name == rn) found = (int)i;
        std::string listed;
        for (auto it = loop_names.rbegin(); it != loop_names.rend(); ++it) listed += (listed.empty() ? "" : ", ") + *it;
        user_assert(found >= 0) << what << ": " << rn << " is not an RVar loop of the stage; its RVar loops "
                                << "(outermost first) are: " << listed;
        user_assert(!factored.count(split.loops[found].var)) << what << ": " << rn << " is named twice";
        user_assert(std::find(f.args.begin(), f.args.end(), vn) == f.args.end() && new_vars.insert(vn).second)
            << what << ": the Var " << vn << " is already a dimension of " << f.name
            << " or named twice; give each factored RVar a new Var";
        factored[split.loops[found].var] = (int)p;
        loop_of_pair.push_back(found);
    }
    if (!op.commutative) {
        for (size_t i = 0; i < split.loops.size(); i++) {
            if (!factored.count(split.loops[i].var)) continue;
            for (size_t j = i + 1; j < split.loops.size(); j++) {
                user_assert(factored.count(split.loops[j].var))
                    << what << ": the update of " << f.name << " is an " << op.description
                    << ", associative but not commutative (which of equal values wins depends on the order), so "
                       "each factored RVar must be outside every other RVar, making each slice one contiguous run; "
                    << split.loops[i].user_name << " is inside " << split.loops[j].user_name << ". Factor "
                    << split.loops[j].user_name << " (the outer loop of a split) instead";
            }
        }
    }

    // The intermediate: f's pure Vars, then the new Vars.
    auto intm = std::make_shared<FunctionContents>();
    intm->name = intm_name.empty() ? derived_name(f.derived_names, f.name + "_intm") : intm_name;
    user_assert(intm->name != f.name) << what << ": the intermediate needs a name other than " << f.name;
    std::vector<Expr> pure_args, intm_args;
    for (const auto &a : f.args) pure_args.push_back(make_var(a));
    intm_args = pure_args;
    for (const auto &[rv, v] : preserved) intm_args.push_back(v);
    define(intm, intm_args, op.identities, nullptr);

    // Its update: over the RVar loops not factored, the factored ones
    // replaced by the new Vars.
    auto kept = std::make_shared<ReductionDomainContents>();
    kept->name = intm->name + ".r";
    std::map<std::string, Expr> loop_value;
    for (const auto &l : split.loops) {
        auto it = factored.find(l.var);
        if (it != factored.end()) {
            loop_value[l.var] = preserved[it->second].second;
        } else {
            kept->vars.push_back({l.user_name, l.min, l.extent});
        }
    }
    for (size_t i = 0, k = 0; i < split.loops.size(); i++)
        if (!factored.count(split.loops[i].var)) loop_value[split.loops[i].var] = RVar(kept, (int)k++);
    std::map<std::string, Expr> rvar_value;
    for (const auto &kv : split.value_of) rvar_value[kv.first] = substitute(loop_value, kv.second);
    Expr pred;
    for (const auto &g : split.guards) pred = pred.defined() ? (pred && substitute(loop_value, g)) : substitute(loop_value, g);
    if (d.rdom->predicate.defined()) {
        Expr p = substitute(rvar_value, d.rdom->predicate);
        pred = pred.defined() ? (p && pred) : p;
    }
    std::vector<Expr> lhs;
    for (const auto &a : d.args) lhs.push_back(substitute(rvar_value, a));
    for (const auto &[rv, v] : preserved) lhs.push_back(v);
    std::map<std::string, Expr> placeholders;
    for (size_t i = 0; i < op.values.size(); i++) {
        FuncRef self(intm, lhs);
        placeholders[op.x_names[i]] = op.values.size() == 1 ? Expr(self) : self[(int)i];
        placeholders[op.y_names[i]] = substitute(rvar_value, op.incoming[i]);
    }
    std::vector<Expr> values;
    for (size_t i = 0; i < op.values.size(); i++) {
        Expr v = substitute(placeholders, op.values[i]);
        if (pred.defined() && kept->vars.empty()) v = select(pred, v, placeholders[op.x_names[i]]);
        values.push_back(v);
    }
    if (!kept->vars.empty()) kept->predicate = without_rdom_owner(pred, kept.get());  // no cycle
    define(intm, lhs, values, kept);

    // f's update becomes the merge of the slices, over the factored loops.
    auto merged = std::make_shared<ReductionDomainContents>();
    merged->name = f.name + ".r" + std::to_string(stage_index);
    for (const auto &l : split.loops)
        if (factored.count(l.var)) merged->vars.push_back({l.user_name, l.min, l.extent});
    std::vector<Expr> slice = pure_args;
    for (int li : loop_of_pair) {
        int k = 0;
        for (int i = 0; i < li; i++) k += factored.count(split.loops[i].var) ? 1 : 0;
        slice.push_back(RVar(merged, k));
    }
    placeholders.clear();
    for (size_t i = 0; i < op.values.size(); i++) {
        FuncRef self(func, pure_args), part(intm, slice);
        placeholders[op.x_names[i]] = op.values.size() == 1 ? Expr(self) : self[(int)i];
        placeholders[op.y_names[i]] = op.values.size() == 1 ? Expr(part) : part[(int)i];
    }
    values.clear();
    for (const auto &v : op.values) values.push_back(substitute(placeholders, v));
    std::vector<Definition> later(f.updates.begin() + stage_index, f.updates.end());
    f.updates.resize(stage_index - 1);
    define(func, pure_args, values, merged);
    for (auto &l : later) f.updates.push_back(std::move(l));
    return Func(intm);
}

}  // namespace kiln
