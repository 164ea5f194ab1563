#include "ComputeWith.h"

#include <algorithm>
#include <functional>
#include <set>

#include "InlineFunctions.h"
#include "ScheduleFunctions.h"

namespace kiln {
namespace internal {

namespace {

// The loops of n (the first `count + 1` of them if count >= 0), outermost first.
std::string loop_list(const StageNest &n, int count = -1) {
    std::string r;
    for (size_t i = 0; i < n.loops.size() && (count < 0 || (int)i <= count); i++)
        r += (r.empty() ? "" : ", ") + n.loops[i].user_name;
    return r;
}

bool is_output(const std::vector<std::string> &outputs, const std::string &n) {
    return std::find(outputs.begin(), outputs.end(), n) != outputs.end();
}

// Does `a` read `b`, directly or through other Funcs?
bool depends(const Environment &env, const std::string &a, const std::string &b) {
    std::set<std::string> seen;
    std::function<bool(const std::string &)> walk = [&](const std::string &n) {
        if (!seen.insert(n).second) return false;
        for (const auto &c : direct_callees(*env.at(n)))
            if (c == b || (env.count(c) && walk(c))) return true;
        return false;
    };
    return walk(a);
}

std::string level_text(const FunctionContents &f, bool out) {
    if (out) return "root (an output)";
    return f.schedule.compute_level.to_string();
}

// A child stage's loop `j` against the parent's loop of the same depth: its
// range in terms of the parent's loop variable, and its own value there.
struct Aligned {
    Expr lo, hi, value;
};
Aligned align(const std::string &pn, const std::string &cn, LoopAlignStrategy a) {
    Expr pmin = make_var(pn + ".loop_min"), pmax = make_var(pn + ".loop_max");
    Expr cmin = make_var(cn + ".loop_min"), cmax = make_var(cn + ".loop_max"), cext = make_var(cn + ".loop_extent");
    switch (a) {
    case LoopAlignStrategy::AlignStart: return {pmin, pmin + cext - 1, make_var(pn) - pmin + cmin};
    case LoopAlignStrategy::AlignEnd: return {pmax - cext + 1, pmax, make_var(pn) - pmax + cmax};
    default: return {cmin, cmax, make_var(pn)};
    }
}

struct Child {
    StageNest nest;
    int depth;  // index of the innermost fused loop, outermost first
    FuseLevel level;  // its alignment per fused loop
};

Expr in_range(const std::string &v, Expr lo, Expr hi) { return make_var(v) >= lo && make_var(v) <= hi; }

// The parent stage's nest with the children's stages interleaved.
Stmt build_fused(const StageNest &p, const std::vector<Child> &children) {
    int deepest = 0;
    for (const auto &c : children) deepest = std::max(deepest, c.depth);
    // The remainder of a child fused at depth i: guarded to its range, its
    // loop variables defined from the parent's, then its own inner loops.
    auto child_rest = [&](const Child &c) {
        Stmt body = wrap_loops(c.nest.loops, c.depth + 1, c.nest.body);
        Expr cond;
        for (int j = c.depth; j >= 0; j--) {
            Aligned a = align(p.loops[j].name, c.nest.loops[j].name, c.level.align_of(c.nest.loops[j].user_name));
            body = LetStmt::make(c.nest.loops[j].name, a.value, body);
            Expr in = in_range(p.loops[j].name, a.lo, a.hi);
            cond = cond.defined() ? (in && cond) : in;
        }
        return IfThenElse::make(cond, body);
    };
    std::function<Stmt(int)> inside = [&](int i) {
        std::vector<Stmt> parts;
        if (i == deepest) {
            Expr cond;
            for (int j = i; j >= 0; j--) {
                const std::string &n = p.loops[j].name;
                Expr in = in_range(n, make_var(n + ".loop_min"), make_var(n + ".loop_max"));
                cond = cond.defined() ? (in && cond) : in;
            }
            parts.push_back(IfThenElse::make(cond, wrap_loops(p.loops, i + 1, p.body)));
        } else {
            const auto &l = p.loops[i + 1];
            parts.push_back(For::make(l.name, make_var(l.name + ".fused_min"), make_var(l.name + ".fused_extent"), l.type,
                                      inside(i + 1)));
        }
        for (const auto &c : children)
            if (c.depth == i) parts.push_back(child_rest(c));
        return Block::make(parts);
    };
    const auto &outer = p.loops[0];
    Stmt s = For::make(outer.name, make_var(outer.name + ".fused_min"), make_var(outer.name + ".fused_extent"), outer.type,
                       inside(0));
    // The fused loops cover the parent's and the children's ranges.
    std::vector<std::pair<std::string, Expr>> lets = p.lets;
    for (const auto &c : children) lets.insert(lets.end(), c.nest.lets.begin(), c.nest.lets.end());
    for (int i = 0; i <= deepest; i++) {
        const std::string &n = p.loops[i].name;
        Expr lo = make_var(n + ".loop_min"), hi = make_var(n + ".loop_max");
        for (const auto &c : children) {
            if (c.depth < i) continue;
            Aligned a = align(n, c.nest.loops[i].name, c.level.align_of(c.nest.loops[i].user_name));
            lo = min(lo, a.lo);
            hi = max(hi, a.hi);
        }
        lets.push_back({n + ".fused_min", lo});
        lets.push_back({n + ".fused_extent", hi - make_var(n + ".fused_min") + 1});
    }
    return wrap_lets(lets, s);
}

int loop_index(const StageNest &n, const std::string &user_name) {
    for (size_t i = 0; i < n.loops.size(); i++)
        if (n.loops[i].user_name == user_name) return (int)i;
    return -1;
}

}  // namespace

std::string fusion_parent(const FunctionContents &f) {
    for (int s = 0; s < f.num_stages(); s++)
        if (f.stage(s).schedule.fuse_with.defined()) return f.stage(s).schedule.fuse_with.func;
    return "";
}

std::vector<std::string> fused_children(const Environment &env, const std::string &parent) {
    std::vector<std::string> r;
    for (const auto &kv : env)
        if (fusion_parent(*kv.second) == parent) r.push_back(kv.first);
    return r;
}

void check_compute_with(const Environment &env, const std::vector<std::string> &outputs) {
    // The Funcs this pipeline computes or inlines (inline_functions has
    // removed the calls to inlined Funcs). env also holds every wrapper of
    // an input the pipeline reads, one for a consumer of another pipeline
    // too: a wrapper that is not computed here, fused into a Func that is
    // not here either, belongs to that other pipeline.
    const std::set<std::string> computed = computed_funcs(outputs, env);
    auto in_pipeline = [&](const std::string &n) {
        return env.count(n) && (computed.count(n) || is_inlined(*env.at(n), is_output(outputs, n)));
    };
    for (const auto &kv : env) {
        const FunctionContents &f = *kv.second;
        for (int s = 0; s < f.num_stages(); s++) {
            const FuseLevel &l = f.stage(s).schedule.fuse_with;
            if (!l.defined()) continue;
            if (!in_pipeline(f.name) && !in_pipeline(l.func)) continue;
            std::string what = "Func " + f.stage_name(s) + " is scheduled compute_with(" + l.func +
                               (l.stage ? ".update(" + std::to_string(l.stage - 1) + ")" : "") + ", " + l.var + ")";
            user_assert(in_pipeline(l.func)) << what << ", but " << l.func << " is not part of this pipeline";
            const FunctionContents &p = *env.at(l.func);
            user_assert(l.stage < p.num_stages())
                << what << ", but " << l.func << " has " << p.num_stages() - 1 << " update definition(s)";
            user_assert(fusion_parent(f) == l.func)
                << what << ", but another stage of " << f.name << " is fused into " << fusion_parent(f)
                << "; the stages of one Func can be fused into one other Func only";
            bool fo = is_output(outputs, f.name), po = is_output(outputs, p.name);
            for (const FunctionContents *g : {&f, &p}) {
                bool go = g == &f ? fo : po;
                user_assert(!is_inlined(*g, go))
                    << what << ", but " << g->name << " is inlined; fused stages need loops of their own: give "
                    << f.name << " and " << p.name << " compute_root(), or the same compute_at()";
            }
            // An output's loops are at the root, so a compute_root() Func can
            // join them: it is computed with the output, stored at the root.
            user_assert(!fo || po) << what << ", but " << f.name << " is an output of the pipeline and " << p.name
                                   << " is not; make the output the parent: " << p.name << ".compute_with("
                                   << f.name << ", " << l.var << "), or fuse two outputs";
            user_assert(fo || !po || f.schedule.compute_level.is_root())
                << what << ", but " << p.name << " is an output of the pipeline and " << f.name
                << " is computed at " << level_text(f, fo) << "; a Func fused into an output is computed at the "
                << "root with it: give " << f.name << " compute_root()";
            user_assert(fo || po || f.schedule.compute_level == p.schedule.compute_level)
                << what << ", but " << f.name << " is computed at " << level_text(f, fo) << " and " << p.name
                << " at " << level_text(p, po) << "; fused stages must share their compute level: give both the "
                << "same compute_at() or compute_root()";
            user_assert(fusion_parent(p).empty())
                << what << ", but " << p.name << " is itself fused into " << fusion_parent(p) << "; fuse " << f.name
                << " into " << fusion_parent(p) << " instead";
            for (const auto &ab : {std::make_pair(&f, &p), std::make_pair(&p, &f)}) {
                user_assert(!depends(env, ab.first->name, ab.second->name))
                    << what << ", but " << ab.first->name << " uses the values of " << ab.second->name
                    << " (directly or through other Funcs); fused stages run in the same loop iterations, so neither "
                       "may read the other. Compute "
                    << ab.second->name << " before " << ab.first->name << " instead (without compute_with)";
            }
            for (const FunctionContents *g : {&f, &p}) {
                int gs = g == &f ? s : l.stage;
                user_assert(g->stage(gs).specializations.empty())
                    << what << ", but " << g->stage_name(gs) << " has specializations; a specialized stage "
                    << "cannot be fused";
            }
            StageNest pn = stage_nest(p, l.stage, po), cn = stage_nest(f, s, fo);
            int depth = loop_index(pn, l.var);
            std::string other;  // another stage of the parent that has the loop
            for (int ps = 0; ps < p.num_stages() && depth < 0 && other.empty(); ps++)
                if (ps != l.stage && loop_index(stage_nest(p, ps, po), l.var) >= 0) other = p.stage_name(ps);
            user_assert(depth >= 0) << what << ", but " << p.stage_name(l.stage) << " has no loop " << l.var
                                    << " (its loops, outermost first: " << loop_list(pn) << ")"
                                    << (other.empty() ? "" : "; " + other + " has it: compute_with(" + other + ", " +
                                                                 l.var + ")");
            bool same = (int)cn.loops.size() > depth;
            for (int i = 0; same && i <= depth; i++) same = cn.loops[i].user_name == pn.loops[i].user_name;
            user_assert(same) << what << ", but the fused loops differ: the loops from " << l.var
                              << " outward must have the same names, in the same order, in both stages. "
                              << p.stage_name(l.stage) << " loops over (" << loop_list(pn) << "), "
                              << f.stage_name(s) << " over (" << loop_list(cn)
                              << "), outermost first; split, rename or reorder them to match";
            for (const auto &kv : l.align_dims) {
                bool fused = false;
                for (int i = 0; i <= depth; i++) fused |= cn.loops[i].user_name == kv.first;
                user_assert(fused) << what << " with " << kv.first << " aligned " << to_string(kv.second) << ", but "
                                   << kv.first << " is not a fused loop; the fused loops, outermost first, are: "
                                   << loop_list(pn, depth);
            }
            for (int i = 0; i <= depth; i++) {
                ForType t = pn.loops[i].type;
                user_assert(t != ForType::Vectorized && t != ForType::Unrolled)
                    << what << ", but the fused loop " << pn.loops[i].user_name << " is " << to_string(t)
                    << "; fuse at a loop outside the " << to_string(t) << " ones";
                user_assert(cn.loops[i].type == t)
                    << what << ", but the fused loop " << pn.loops[i].user_name << " is " << to_string(t) << " in "
                    << p.name << " and " << to_string(cn.loops[i].type) << " in " << f.name
                    << "; a fused loop runs one way: schedule it the same in both";
            }
        }
    }
}

Stmt build_group_produce(const Environment &env, const std::string &parent, const std::vector<std::string> &outputs) {
    const FunctionContents &p = *env.at(parent);
    auto out = [&](const FunctionContents &f) { return is_output(outputs, f.name); };
    std::vector<std::string> kids = fused_children(env, parent);
    std::map<std::string, int> next;  // each child's first stage not yet emitted
    std::vector<Stmt> stmts;
    auto emit_until = [&](const FunctionContents &c, int stage) {
        for (int &k = next[c.name]; k < stage; k++) stmts.push_back(build_stage(c, k, out(c)));
    };
    for (int s = 0; s < p.num_stages(); s++) {
        StageNest pn = stage_nest(p, s, out(p));
        std::vector<Child> children;
        for (const auto &k : kids) {
            const FunctionContents &c = *env.at(k);
            for (int cs = 0; cs < c.num_stages(); cs++) {
                const FuseLevel &l = c.stage(cs).schedule.fuse_with;
                if (!l.defined() || l.stage != s) continue;
                emit_until(c, cs);
                next[c.name] = cs + 1;
                children.push_back({stage_nest(c, cs, out(c)), loop_index(pn, l.var), l});
            }
        }
        stmts.push_back(children.empty() ? build_stage(p, s, out(p)) : build_fused(pn, children));
    }
    for (const auto &k : kids) emit_until(*env.at(k), env.at(k)->num_stages());
    Stmt body = Block::make(stmts);
    for (auto it = kids.rbegin(); it != kids.rend(); ++it) body = ProducerConsumer::make(*it, true, body);
    return ProducerConsumer::make(parent, true, body);
}

Stmt wrap_group_consume(const Environment &env, const std::string &parent, Stmt body) {
    std::vector<std::string> kids = fused_children(env, parent);
    for (auto it = kids.rbegin(); it != kids.rend(); ++it) body = ProducerConsumer::make(*it, false, body);
    return ProducerConsumer::make(parent, false, body);
}

}  // namespace internal
}  // namespace kiln
