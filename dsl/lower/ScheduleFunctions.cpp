#include "ScheduleFunctions.h"

#include <algorithm>
#include <cstdlib>
#include <map>
#include <set>

#include "ComputeWith.h"
#include "InlineFunctions.h"
#include "RealizationOrder.h"
#include "ir/IRVisitor.h"
#include "ir/Simplify.h"
#include "ir/Substitute.h"
#include "ir/Util.h"
#include "schedule/ScheduleOrigin.h"

namespace kiln {
namespace internal {

TailStrategy resolve_tail(TailStrategy t, bool is_rvar, int stage, bool is_output) {
    if (t != TailStrategy::Auto) return t;
    if (stage == 0) return TailStrategy::ShiftInwards;
    if (is_rvar || is_output) return TailStrategy::GuardWithIf;
    return TailStrategy::RoundUp;
}

bool is_rvar_name(const Definition &d, const std::string &n) {
    if (!d.rdom) return false;
    for (const auto &v : d.rdom->vars)
        if (n == v.name || n.rfind(v.name + ".", 0) == 0) return true;
    return false;
}

StageNest stage_nest(const FunctionContents &f, int stage, bool is_output) {
    return stage_nest(f, stage, is_output, f.stage(stage).schedule);
}

StageNest stage_nest(const FunctionContents &f, int stage, bool is_output, const StageSchedule &sched) {
    const Definition &d = f.stage(stage);
    const std::string prefix = f.stage_prefix(stage);
    // The loop variable of each pure dimension: f's own argument names in the
    // pure definition; in an update, the Var it uses bare at that position.
    std::vector<std::string> pure(f.args.size());
    for (size_t i = 0; i < f.args.size(); i++) {
        if (stage == 0) pure[i] = f.args[i];
        else if (const auto *v = d.args[i].as<Variable>(); v && !v->rdom && !v->param) pure[i] = v->name;
    }
    std::map<std::string, Expr> subs;
    for (const auto &n : pure)
        if (!n.empty()) subs[n] = make_var(prefix + n);
    if (d.rdom)
        for (const auto &v : d.rdom->vars) subs[v.name] = make_var(prefix + v.name);

    std::vector<Expr> args;
    if (stage == 0) {
        for (const auto &a : f.args) args.push_back(make_var(prefix + a));
    } else {
        for (const auto &a : d.args) args.push_back(simplify(substitute(subs, a)));
    }
    // The values simplified: terms that cancel (g(x) - g(x), after inlining
    // two equal reads) read nothing, so bounds inference asks nothing for
    // them, as Halide, whose input regions come from its simplified code.
    // The update's arguments and predicate too, so that a sum the predicate
    // bounds is still written as the accesses write it (bounds narrow an
    // access by a condition on the same sum).
    std::vector<Expr> values;
    for (const auto &v : d.values) values.push_back(simplify(substitute(subs, v)));
    Stmt body = Provide::make(f.name, values, args);
    if (d.rdom && d.rdom->predicate.defined())
        body = IfThenElse::make(simplify(substitute(subs, d.rdom->predicate)), body);

    // Loop-bound lets (outermost first) and the lets defining split variables.
    std::vector<std::pair<std::string, Expr>> bound_lets;
    auto define_bounds = [&](const std::string &v, Expr mn, Expr extent) {
        bound_lets.push_back({prefix + v + ".loop_min", mn});
        bound_lets.push_back({prefix + v + ".loop_extent", extent});
        bound_lets.push_back({prefix + v + ".loop_max", make_var(prefix + v + ".loop_min") +
                                                            make_var(prefix + v + ".loop_extent") - 1});
    };
    for (size_t i = 0; i < f.args.size(); i++) {
        if (pure[i].empty()) continue;
        Expr mn = make_var(prefix + f.args[i] + ".min"), mx = make_var(prefix + f.args[i] + ".max");
        define_bounds(pure[i], mn, mx - mn + 1);
    }
    if (d.rdom)
        for (const auto &v : d.rdom->vars) define_bounds(v.name, v.min, v.extent);

    std::vector<std::pair<std::string, Expr>> var_lets;  // innermost first
    std::vector<Expr> guards;
    for (const auto &sp : sched.splits) {
        if (sp.kind == Split::SplitVar) {
            std::string old = prefix + sp.old_var, outer = prefix + sp.outer, inner = prefix + sp.inner;
            TailStrategy tail = resolve_tail(sp.tail, is_rvar_name(d, sp.old_var), stage, is_output);
            Expr k = sp.factor;
            Expr base = make_var(outer) * k;
            if (tail == TailStrategy::ShiftInwards) base = min(base, make_var(old + ".loop_extent") - k);
            var_lets.push_back({old, base + make_var(inner) + make_var(old + ".loop_min")});
            if (tail == TailStrategy::GuardWithIf) guards.push_back(make_var(old) <= make_var(old + ".loop_max"));
            define_bounds(sp.inner, 0, k);
            define_bounds(sp.outer, 0, (make_var(old + ".loop_extent") + k - 1) / k);
        } else {
            std::string fused = prefix + sp.old_var, inner = prefix + sp.inner, outer = prefix + sp.outer;
            Expr ie = make_var(inner + ".loop_extent");
            var_lets.push_back({inner, make_var(fused) % ie + make_var(inner + ".loop_min")});
            var_lets.push_back({outer, make_var(fused) / ie + make_var(outer + ".loop_min")});
            define_bounds(sp.old_var, 0, ie * make_var(outer + ".loop_extent"));
        }
    }
    for (auto it = guards.rbegin(); it != guards.rend(); ++it) body = IfThenElse::make(*it, body);
    // Later splits define the variables earlier splits are expressed in, so
    // the first split's let is innermost.
    for (const auto &l : var_lets) body = LetStmt::make(l.first, l.second, body);
    StageNest nest;
    nest.lets = bound_lets;
    for (auto it = sched.dims.rbegin(); it != sched.dims.rend(); ++it)
        nest.loops.push_back({prefix + it->var, it->user_name, it->for_type});
    nest.body = body;
    return nest;
}

Stmt wrap_loops(const std::vector<StageNest::Loop> &loops, size_t from, Stmt body) {
    for (size_t i = loops.size(); i-- > from;) {
        const std::string &n = loops[i].name;
        body = For::make(n, make_var(n + ".loop_min"), make_var(n + ".loop_extent"), loops[i].type, body);
    }
    return body;
}

Stmt wrap_lets(const std::vector<std::pair<std::string, Expr>> &lets, Stmt body) {
    for (auto it = lets.rbegin(); it != lets.rend(); ++it) body = LetStmt::make(it->first, it->second, body);
    return body;
}

Stmt build_stage(const FunctionContents &f, int stage, bool is_output) {
    auto build = [&](const StageSchedule &sched) {
        StageNest n = stage_nest(f, stage, is_output, sched);
        return wrap_lets(n.lets, wrap_loops(n.loops, 0, n.body));
    };
    const Definition &d = f.stage(stage);
    // Specializations: if (c0) { ... } else if (c1) { ... } else { own schedule, or the failure }
    Stmt s = build(d.schedule);
    if (!d.specialize_fail.empty()) {
        s = AssertStmt::make(make_bool(false), -14,  // kiln_error_specialize_fail
                             {StringImm::make(f.stage_name(stage) + ": " + d.specialize_fail)});
    }
    for (auto it = d.specializations.rbegin(); it != d.specializations.rend(); ++it)
        s = IfThenElse::make(it->condition, build(it->schedule), s);
    return s;
}

namespace {

struct Site {
    std::string loop;  // full loop name
    ForType type;
};

// The loops that enclose every use of `name` (outermost first), stopping at
// vectorized loops; and which Funcs' loops contain a use.
class LegalSites : public IRVisitor {
public:
    explicit LegalSites(std::vector<std::string> n) : names(std::move(n)) {}
    std::vector<Site> common;
    bool any_use = false;
    std::vector<std::string> users;  // Funcs whose Provide contains a use

    // The vectorized loop directly inside the common loops that holds every
    // use, if there is one: computing the Func there is computing it per
    // vector of its consumer.
    const Site *vector_inside() const {
        for (const auto &u : uses)
            if (u.first != common.size() || u.second.loop != uses[0].second.loop || u.second.loop.empty())
                return nullptr;
        return uses.empty() ? nullptr : &uses[0].second;
    }

protected:
    std::vector<std::string> names;  // a Func, or a compute_with group
    std::vector<Site> stack;
    std::string current_provide;
    // Per use: how many loops enclose it outside vectorized ones, and the
    // first vectorized loop (loop "" if none).
    std::vector<std::pair<size_t, Site>> uses;
    void visit(const For *op) override {
        stack.push_back({op->name, op->for_type});
        IRVisitor::visit(op);
        stack.pop_back();
    }
    void visit(const Provide *op) override {
        current_provide = op->name;
        IRVisitor::visit(op);
        current_provide.clear();
    }
    void visit(const Call *op) override {
        IRVisitor::visit(op);
        if (op->call_type != Call::Func || std::find(names.begin(), names.end(), op->name) == names.end()) return;
        if (!current_provide.empty() && std::find(users.begin(), users.end(), current_provide) == users.end())
            users.push_back(current_provide);
        std::vector<Site> here;
        Site vector{"", ForType::Serial};
        for (const auto &s : stack) {
            if (s.type == ForType::Vectorized) {
                vector = s;
                break;
            }
            here.push_back(s);
        }
        uses.push_back({here.size(), vector});
        if (!any_use) {
            common = here;
            any_use = true;
            return;
        }
        size_t k = 0;
        while (k < common.size() && k < here.size() && common[k].loop == here[k].loop) k++;
        common.resize(k);
    }
};

// "g.s0.x.xo" -> ("g", "xo"): the Func and the name the user gave the loop.
std::pair<std::string, std::string> split_loop_name(const std::string &loop, const Environment &env) {
    for (const auto &kv : env) {
        const std::string &fn = kv.first;
        if (loop.rfind(fn + ".s", 0) != 0) continue;
        size_t p = loop.find('.', fn.size() + 2);
        if (p == std::string::npos) continue;
        int stage = std::atoi(loop.substr(fn.size() + 2, p - fn.size() - 2).c_str());
        if (stage < 0 || stage >= kv.second->num_stages()) continue;
        std::string dim = loop.substr(p + 1);
        for (const auto &d : kv.second->stage(stage).schedule.dims)
            if (d.var == dim) return {fn, d.user_name};
    }
    return {"", last_component(loop)};
}

std::string describe_sites(const std::vector<Site> &sites, const Environment &env) {
    std::string r = "compute_root()";
    for (const auto &s : sites) {
        auto fv = split_loop_name(s.loop, env);
        r += ", compute_at(" + fv.first + ", " + fv.second + ")";
    }
    return r;
}

// Is (func, var) a loop of a Func fused (compute_with) into another, that
// runs as the loop (parent, var)?
bool fused_alias(const std::string &func, const std::string &var, const std::string &parent, const Environment &env) {
    auto it = env.find(func);
    if (it == env.end()) return false;
    const FunctionContents &f = *it->second;
    for (int s = 0; s < f.num_stages(); s++) {
        const FuseLevel &l = f.stage(s).schedule.fuse_with;
        if (!l.defined() || l.func != parent) continue;
        StageNest n = stage_nest(f, s, false);
        for (const auto &loop : n.loops) {
            if (loop.user_name == var) return true;
            if (loop.user_name == l.var) break;
        }
    }
    return false;
}

int find_site(const std::vector<Site> &sites, const LoopLevel &l, const Environment &env) {
    for (int i = (int)sites.size() - 1; i >= 0; i--) {
        auto fv = split_loop_name(sites[i].loop, env);
        if (fv.second != l.var()) continue;
        if (fv.first == l.func() || fused_alias(l.func(), l.var(), fv.first, env)) return i;
    }
    return -1;
}

// The lanes of a vectorized loop made by vectorize(v, n) (a split by the
// constant n), or 0.
int vector_lanes(const std::string &loop, const Environment &env) {
    for (const auto &kv : env) {
        const FunctionContents &f = *kv.second;
        for (int st = 0; st < f.num_stages(); st++) {
            const std::string prefix = f.stage_prefix(st);
            if (loop.rfind(prefix, 0) != 0) continue;
            for (const Split &sp : f.stage(st).schedule.splits) {
                const int64_t *c = sp.kind == Split::SplitVar ? as_const_int(sp.factor) : nullptr;
                if (c && prefix + sp.inner == loop) return (int)*c;
            }
        }
    }
    return 0;
}

// A Func computed per vector of its consumer (the site the user named or,
// for an unscheduled reduction, the innermost one, is a vectorized loop)
// is computed just outside that loop, over the vector's region, and
// vectorized with the consumer's lanes, as Halide vectorizes it: in every
// stage its first dimension becomes the innermost loop (a pure dimension:
// its iterations are independent, so it may move inside the RVars), split
// by the lanes with GuardWithIf, and vectorized. A stage whose first
// dimension the schedule already split, or that vectorizes a loop or is
// specialized, keeps its loops.
void vectorize_per_consumer_vector(FunctionContents &f, int lanes) {
    if (lanes < 2 || f.args.empty()) return;
    for (int st = 0; st < f.num_stages(); st++) {
        Definition &d = f.stage(st);
        StageSchedule &s = d.schedule;
        if (!d.specializations.empty()) continue;
        auto dim = std::find_if(s.dims.begin(), s.dims.end(), [&](const Dim &x) { return x.var == f.args[0]; });
        bool vectorized = std::any_of(s.dims.begin(), s.dims.end(),
                                      [](const Dim &x) { return x.for_type == ForType::Vectorized; });
        if (dim == s.dims.end() || !dim->is_pure || dim->is_rvar || dim->for_type != ForType::Serial || vectorized)
            continue;
        // Innermost, then split and vectorized as vectorize(x, lanes, GuardWithIf) would.
        Dim x = *dim;
        s.dims.erase(dim);
        s.dims.insert(s.dims.begin(), x);
        s.split_dim(0, x.user_name, x.user_name + "_vec", Expr(lanes), TailStrategy::GuardWithIf);
        s.dims[0].for_type = ForType::Vectorized;
    }
}

Stmt realize(const FunctionContents &f, Stmt body) {
    return Realize::make(f.name, f.types, std::vector<Range>(f.args.size()), body);
}

// Puts the produce of a Func (or compute_with group) and the consume of what
// follows into the loop `compute_loop`, and each member's Realize into its
// store loop ("" for both: at the root).
class Inject : public IRMutator {
public:
    Inject(const Environment &e, const std::string &f, std::string cl,
           std::vector<std::pair<const FunctionContents *, std::string>> stores)
        : env(e), func(f), compute_loop(std::move(cl)), store_loops(std::move(stores)) {}

    Stmt inject_here(Stmt body) const {
        return Block::make(build_group_produce(env, func, {}), wrap_group_consume(env, func, body));
    }
    Stmt realize_here(const std::string &loop, Stmt body) const {
        for (const auto &m : store_loops)
            if (m.second == loop) body = realize(*m.first, body);
        return body;
    }

protected:
    const Environment &env;
    const std::string &func;
    std::string compute_loop;
    std::vector<std::pair<const FunctionContents *, std::string>> store_loops;

    Stmt visit(const For *op) override {
        Stmt body = mutate(op->body);
        if (op->name == compute_loop) body = inject_here(body);
        body = realize_here(op->name, body);
        if (body.same_as(op->body)) return Stmt(op);
        return For::make(op->name, op->min, op->extent, op->for_type, body);
    }
};

// The index in `sites` of f's store loop (-1: root), checked against its
// compute site `ci`.
int store_site(const FunctionContents &f, const std::vector<Site> &sites, int ci, const Environment &env) {
    const LoopLevel &cl = f.schedule.compute_level;
    const LoopLevel &sl = f.schedule.store_level;
    int si = ci;
    if (f.schedule.store_level_set && !cl.is_inlined()) {
        if (sl.is_root()) {
            si = -1;
        } else {
            si = find_site(sites, sl, env);
            std::string levels = "store_root()";
            for (int k = 0; k <= ci; k++) {
                auto fv = split_loop_name(sites[k].loop, env);
                levels += ", store_at(" + fv.first + ", " + fv.second + ")";
            }
            user_assert(si >= 0 && si <= ci)
                << schedule_origin(f, "store") << "Func " << f.name << " is scheduled store_at(" << sl.func() << ", " << sl.var()
                << ") and compute_at(" << (cl.is_root() ? "root" : cl.func() + ", " + cl.var())
                << "): the storage must be at or outside the compute level, in a loop that encloses "
                   "every use. Legal store levels: "
                << levels;
        }
    }
    for (int k = si + 1; k <= ci; k++) {
        if (sites[k].type != ForType::Parallel) continue;
        auto fv = split_loop_name(sites[k].loop, env);
        std::string at = schedule_origin(f, "store");
        user_error << (at.empty() ? schedule_origin(f, "compute") : at) << "Func " << f.name << " is stored at " << (si < 0 ? std::string("root") : sl.to_string())
                   << " but computed inside the parallel loop over " << fv.second << " of " << fv.first
                   << ": the threads would share one buffer and overwrite each other's values. Store it "
                      "inside the parallel loop (e.g. store_at("
                   << fv.first << ", " << fv.second << ")) or make that loop serial";
    }
    return si;
}

bool is_in(const std::vector<std::string> &names, const std::string &n) {
    return std::find(names.begin(), names.end(), n) != names.end();
}

// The Funcs fused into an output (compute_with) that are not outputs: they
// are produced in the output's group, among the outputs, so only what is
// produced after that group may read them. Names the first read before.
class ReadBeforeGroup : public IRVisitor {
public:
    explicit ReadBeforeGroup(std::map<std::string, std::string> kids) : parent_of(std::move(kids)) {}
    void check(const Stmt &s) { include(s); }

protected:
    std::map<std::string, std::string> parent_of;  // fused child -> its output parent
    std::set<std::string> started;
    std::vector<std::string> producing;
    void visit(const ProducerConsumer *op) override {
        if (op->is_producer) started.insert(op->name), producing.push_back(op->name);
        IRVisitor::visit(op);
        if (op->is_producer) producing.pop_back();
    }
    void visit(const Call *op) override {
        IRVisitor::visit(op);
        auto it = parent_of.find(op->name);
        if (op->call_type != Call::Func || it == parent_of.end() || started.count(op->name)) return;
        std::string reader = producing.empty() ? std::string("the pipeline") : producing.back();
        user_error << "Func " << op->name << " is scheduled compute_with(" << it->second << ", ...) with the output "
                   << it->second << ", so it is computed with " << it->second << "'s loops, after everything computed "
                   << "at the root; but " << reader << " reads it and is computed before the outputs. Make " << reader
                   << " an output, compute it at a loop of an output that comes after " << it->second
                   << ", or remove the compute_with";
    }
};

// The outputs Func f reads, directly or through the non-output Funcs it
// reads (memoized in `memo`).
const std::set<std::string> &outputs_needed(const std::string &f, const Environment &env,
                                            const std::vector<std::string> &outputs,
                                            std::map<std::string, std::set<std::string>> &memo) {
    auto it = memo.find(f);
    if (it != memo.end()) return it->second;
    std::set<std::string> n;
    for (const auto &c : direct_callees(*env.at(f))) {
        if (is_in(outputs, c)) {
            n.insert(c);
        } else if (env.count(c)) {
            const std::set<std::string> &m = outputs_needed(c, env, outputs, memo);
            n.insert(m.begin(), m.end());
        }
    }
    return memo[f] = n;
}

// `s` with the produce `inject` makes placed right after the produce of
// each output in `reads`: s is the outputs' produces in realization order
// (a chain of Blocks), inside the consumes and Realizes of the Funcs
// placed at the root so far.
//
//   produce a; produce c   ->   produce a; produce b; consume b { produce c }   (b at the root reads a)
Stmt after_outputs(const Inject &inject, const Stmt &s, std::set<std::string> reads) {
    if (reads.empty()) return inject.inject_here(s);
    internal_assert(s.defined()) << "no statement after the outputs a Func at the root reads";
    if (const auto *b = s.as<Block>()) {
        struct Produced : IRVisitor {
            std::set<std::string> *reads;
            using IRVisitor::visit;
            void visit(const ProducerConsumer *op) override {
                if (op->is_producer) reads->erase(op->name);
                IRVisitor::visit(op);
            }
        } produced;
        produced.reads = &reads;
        produced.include(b->first);
        return Block::make(b->first, after_outputs(inject, b->rest, reads));
    }
    if (const auto *pc = s.as<ProducerConsumer>(); pc && !pc->is_producer)
        return ProducerConsumer::make(pc->name, false, after_outputs(inject, pc->body, reads));
    if (const auto *r = s.as<Realize>())
        return Realize::make(r->name, r->types, r->bounds, after_outputs(inject, r->body, reads), r->fold_factors);
    internal_error << "a Func at the root reads outputs the statement does not produce before its end";
    return s;
}

}  // namespace

bool computed_within_output(const FunctionContents &f, const std::vector<std::string> &outputs) {
    const LoopLevel &cl = f.schedule.compute_level;
    return is_in(outputs, f.name) && !cl.is_inlined() && !cl.is_root();
}

Stmt schedule_functions(const std::vector<std::string> &outputs, const std::vector<std::string> &order,
                        const Environment &env) {
    std::map<std::string, std::set<std::string>> needs;  // outputs_needed()'s memo
    for (const auto &o : outputs) {
        const FunctionContents &f = *env.at(o);
        if (!computed_within_output(f, outputs)) continue;
        const LoopLevel &cl = f.schedule.compute_level;
        std::string what = schedule_origin(f, "compute") + "Func " + o +
                           " is an output of the pipeline and is scheduled compute_at(" + cl.func() + ", " + cl.var() + ")";
        user_assert(is_in(outputs, cl.func()) && cl.func() != o)
            << what << ", but " << cl.func() << " is not another output of this pipeline; an output is computed at "
            << "the root, or at a loop of another output that reads it (its values are then written to its "
            << "buffer there): compute it at the root, or at a loop of an output";
        user_assert(!f.schedule.store_level_set)
            << what << " and stored at " << f.schedule.store_level.to_string()
            << ", but an output's storage is its buffer: remove the store_at";
        user_assert(fusion_parent(f).empty() && fused_children(env, o).empty())
            << what << " and fused with compute_with; an output computed at another output's loop cannot be "
            << "fused: remove the compute_with, or compute it at the root";
    }
    // In realization order: an output another output reads is produced first.
    // A Func fused into an output is produced in its group (compute_with);
    // the outputs after the group consume it.
    std::vector<std::string> groups;
    std::map<std::string, std::string> fused_into_output;
    for (const auto &n : order) {
        if (!is_in(outputs, n) || !fusion_parent(*env.at(n)).empty() || computed_within_output(*env.at(n), outputs))
            continue;
        groups.push_back(n);
        for (const auto &c : fused_children(env, n))
            if (!is_in(outputs, c)) fused_into_output[c] = n;
    }
    Stmt s;
    for (auto it = groups.rbegin(); it != groups.rend(); ++it) {
        Stmt produce = build_group_produce(env, *it, outputs);
        if (!s.defined()) {
            s = produce;
            continue;
        }
        std::vector<std::string> kids = fused_children(env, *it);
        for (auto k = kids.rbegin(); k != kids.rend(); ++k)
            if (!is_in(outputs, *k)) s = ProducerConsumer::make(*k, false, s);
        s = Block::make(produce, s);
    }

    for (auto it = order.rbegin(); it != order.rend(); ++it) {
        const FunctionContents &f = *env.at(*it);
        bool is_out = std::find(outputs.begin(), outputs.end(), f.name) != outputs.end();
        // A Func fused into another (compute_with) is placed with it; into
        // an output, it is stored at the root.
        if (fused_into_output.count(f.name)) s = realize(f, s);
        const bool within = computed_within_output(f, outputs);  // placed as any Func, without storage
        if ((is_out && !within) || is_inlined(f, false) || !fusion_parent(f).empty()) continue;
        std::vector<std::string> group = fused_children(env, f.name);
        group.insert(group.begin(), f.name);
        LegalSites legal(group);
        legal.include(s);
        internal_assert(legal.any_use) << "Func " << f.name << " is in the pipeline but nothing uses it";

        const LoopLevel &cl = f.schedule.compute_level;
        int ci = -1;  // -1: root
        const Site *vector = group.size() == 1 ? legal.vector_inside() : nullptr;
        if (cl.is_inlined()) {
            ci = (int)legal.common.size() - 1;  // a reduction left unscheduled: innermost
            if (vector) vectorize_per_consumer_vector(*env.at(f.name), vector_lanes(vector->loop, env));
        } else if (vector && !cl.is_root() && split_loop_name(vector->loop, env) ==
                                                  std::make_pair(cl.func(), cl.var())) {
            // compute_at a vectorized loop: per vector, just outside it.
            ci = (int)legal.common.size() - 1;
            vectorize_per_consumer_vector(*env.at(f.name), vector_lanes(vector->loop, env));
        } else if (!cl.is_root()) {
            user_assert(env.count(cl.func()))
                << schedule_origin(f, "compute") << "Func " << f.name << " is scheduled compute_at(" << cl.func() << ", " << cl.var() << "), but "
                << cl.func() << " is not part of this pipeline. Legal sites: "
                << describe_sites(legal.common, env) << ", or compute_inline()";
            ci = find_site(legal.common, cl, env);
            if (ci < 0) {
                bool uses = std::find(legal.users.begin(), legal.users.end(), cl.func()) != legal.users.end();
                if (!uses)
                    user_error << schedule_origin(f, "compute") << "Func " << f.name << " is scheduled compute_at(" << cl.func() << ", " << cl.var()
                               << "), but " << cl.func() << " does not use " << f.name << " (it is used by "
                               << join(legal.users) << "). Legal sites: " << describe_sites(legal.common, env)
                               << ", or compute_inline()";
                user_error << schedule_origin(f, "compute") << "Func " << f.name << " is scheduled compute_at("
                           << cl.func() << ", " << cl.var() << "), but there is no loop over " << cl.var() << " in " << cl.func()
                           << " that encloses every use of " << f.name << " (a vectorized loop, or a loop "
                           << "of only some of its uses, is not a legal site). Legal sites: "
                           << describe_sites(legal.common, env) << ", or compute_inline()";
            }
        }
        // At the root, the produce goes before every output's, or, when the
        // group reads outputs (itself or through the Funcs it reads, which
        // are produced before it or inside it), right after the last of
        // those is produced. A Func it reads needs a subset of those
        // outputs, so it is placed at or before the same point, and being
        // placed later (realization order, reversed) it goes first.
        std::set<std::string> reads_outputs;
        if (ci < 0)
            for (const auto &m : group) {
                const std::set<std::string> &n = outputs_needed(m, env, outputs, needs);
                reads_outputs.insert(n.begin(), n.end());
            }
        std::vector<std::pair<const FunctionContents *, std::string>> stores;
        for (const auto &m : group) {
            if (within) break;  // its buffer is its storage
            int si = store_site(*env.at(m), legal.common, ci, env);
            stores.push_back({env.at(m).get(), si < 0 ? "" : legal.common[si].loop});
        }
        Inject inject(env, f.name, ci < 0 ? "" : legal.common[ci].loop, stores);
        s = inject.mutate(s);
        if (ci < 0) s = reads_outputs.empty() ? inject.inject_here(s) : after_outputs(inject, s, reads_outputs);
        s = inject.realize_here("", s);
    }
    if (!fused_into_output.empty()) ReadBeforeGroup(fused_into_output).check(s);
    return s;
}

}  // namespace internal
}  // namespace kiln
