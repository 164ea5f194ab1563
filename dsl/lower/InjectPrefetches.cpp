#include "InjectPrefetches.h"

#include <set>

#include "analysis/Bounds.h"
#include "ir/Simplify.h"
#include "ir/Substitute.h"
#include "ir/Util.h"

namespace kiln {
namespace internal {

namespace {

// One prefetch directive, with the loops it names resolved.
struct Request {
    const FunctionContents *func;
    int stage;
    Prefetch p;
    std::string at, from;  // full loop names (g.s0.x.xo)
};

std::string call_text(const Request &r) {
    return "Func " + r.func->stage_name(r.stage) + ": prefetch(" + r.p.name + ", " + r.p.at + ", " + r.p.from + ", " +
           to_string(r.p.offset) + ", " + to_string(r.p.strategy) + ")";
}

class Inject : public IRMutator {
public:
    Inject(const Environment &env, const std::vector<std::string> &outs)
        : env(env), outputs(outs.begin(), outs.end()), params(find_parameters(env)) {
        for (const auto &kv : env) {
            const FunctionContents &f = *kv.second;
            for (int k = 0; k < f.num_stages(); k++)
                for (const Prefetch &p : f.stage(k).schedule.prefetches) add(f, k, p);
        }
    }

    // Every directive found its loop (an inlined stage has none).
    void check_all_placed() const {
        for (const auto &kv : requests)
            for (const Request &r : kv.second)
                user_assert(placed.count(kv.first))
                    << call_text(r) << ": " << r.func->name << " has no loop " << r.p.at
                    << " in the loop nest (it is inlined, or its loop is fused into another Func's by "
                       "compute_with), so there is nothing to prefetch in; compute it with loops of its own "
                       "(compute_root() or compute_at(...)) or remove the prefetch";
    }

protected:
    const Environment &env;
    const std::set<std::string> outputs;  // never realized: their buffers are the caller's
    std::map<std::string, std::shared_ptr<ParameterContents>> params;
    std::map<std::string, std::vector<Request>> requests;  // by the full name of loop `at`
    std::set<std::string> placed;
    std::vector<std::pair<std::string, Expr>> lets;  // enclosing LetStmts, outermost first
    struct Loop {
        std::string name;
        ForType type;
        size_t lets;  // how many lets enclose the loop
    };
    std::vector<Loop> loops;                      // enclosing loops, outermost first
    std::map<std::string, std::vector<Range>> realized;  // Funcs whose storage encloses this point

    void add(const FunctionContents &f, int k, const Prefetch &p) {
        const StageSchedule &s = f.stage(k).schedule;
        Request r{&f, k, p, "", ""};
        std::vector<std::string> names;
        int at = -1, from = -1;
        for (size_t i = 0; i < s.dims.size(); i++) {
            names.push_back(s.dims[i].user_name);
            if (s.dims[i].user_name == p.at) at = (int)i;
            if (s.dims[i].user_name == p.from) from = (int)i;
        }
        for (const auto &[i, v] : {std::pair<int, std::string>{at, p.at}, {from, p.from}})
            user_assert(i >= 0) << call_text(r) << ": " << f.stage_name(k) << " has no loop " << v
                                << "; its loops, innermost first: " << join(names);
        user_assert(from >= at) << call_text(r) << ": loop " << p.from << " is inside loop " << p.at
                                << "; `from` must be `at` itself or a loop around it, e.g. prefetch(" << p.name
                                << ", " << p.from << ", " << p.at << ", ...)";
        user_assert(s.dims[at].for_type != ForType::Vectorized)
            << call_text(r) << ": loop " << p.at << " is vectorized, and a prefetch goes into each iteration; "
            << "prefetch at a loop around it";
        user_assert(p.is_image || env.count(p.name)) << call_text(r) << ": " << p.name << " is not in the pipeline";
        user_assert(p.is_image || env.at(p.name)->num_values() == 1)
            << call_text(r) << ": " << p.name << " has several values (a Tuple); prefetching a Tuple-valued Func "
            << "is not supported; prefetch the inputs it reads instead";
        r.at = f.stage_prefix(k) + s.dims[at].var;
        r.from = f.stage_prefix(k) + s.dims[from].var;
        requests[r.at].push_back(r);
    }

    Stmt visit(const LetStmt *op) override {
        lets.push_back({op->name, op->value});
        Stmt body = mutate(op->body);
        lets.pop_back();
        return body.same_as(op->body) ? Stmt(op) : LetStmt::make(op->name, op->value, body);
    }

    Stmt visit(const Realize *op) override {
        realized[op->name] = op->bounds;
        Stmt body = mutate(op->body);
        realized.erase(op->name);
        return body.same_as(op->body) ? Stmt(op)
                                      : Realize::make(op->name, op->types, op->bounds, body, op->fold_factors);
    }

    Stmt visit(const For *op) override {
        loops.push_back({op->name, op->for_type, lets.size()});
        Stmt body = mutate(op->body);
        loops.pop_back();
        auto it = requests.find(op->name);
        if (it != requests.end()) {
            placed.insert(op->name);
            std::vector<Stmt> stmts;
            for (const Request &r : it->second) stmts.push_back(prefetch(r, *op));
            stmts.push_back(body);
            body = Block::make(stmts);
        }
        return body.same_as(op->body) ? Stmt(op) : For::make(op->name, op->min, op->extent, op->for_type, body);
    }

    // The prefetch of r at the top of loop `at`'s body.
    Stmt prefetch(const Request &r, const For &at) {
        for (const Loop &l : loops)
            user_assert(l.type != ForType::Vectorized)
                << call_text(r) << ": loop " << r.p.at << " is inside the vectorized loop " << l.name
                << "; prefetch at a loop outside the vectorized one";
        const std::string &name = r.p.name;
        auto storage = realized.find(name);
        const bool output = !r.p.is_image && storage == realized.end() && outputs.count(name);
        user_assert(r.p.is_image || storage != realized.end() || output)
            << call_text(r) << ": " << name << " is " << (env.at(name)->schedule.compute_level.is_inlined()
                                                              ? "inlined (it has no buffer)"
                                                              : "stored inside loop " + r.p.at)
            << ", so there is nothing to prefetch at " << r.p.at << "; compute and store " << name
            << " outside that loop (e.g. " << name << ".compute_root())";
        bool found = false;
        Box box = box_touched(at.body, name, true, true, &found);
        user_assert(found) << call_text(r) << ": " << r.func->stage_name(r.stage) << " does not read or write "
                           << name << " inside loop " << r.p.at << "; prefetch what the loop uses";
        // Advance `from` by offset: the lets between it and `at` first, then its loop variable.
        size_t first = lets.size();
        for (const Loop &l : loops)
            if (l.name == r.from) first = l.lets;
        Expr next = make_var(r.from) + r.p.offset;
        std::vector<Expr> mins, extents;
        std::vector<Expr> in_buffer;
        for (size_t d = 0; d < box.size(); d++) {
            user_assert(box[d].bounded()) << call_text(r) << ": the region of " << name << " read in loop " << r.p.at
                                          << " is unbounded in dimension " << d << "; clamp the coordinates";
            Expr mn = box[d].min, mx = box[d].max;
            for (size_t i = lets.size(); i-- > first;) {
                mn = substitute(lets[i].first, lets[i].second, mn);
                mx = substitute(lets[i].first, lets[i].second, mx);
            }
            mn = simplify(substitute(r.from, next, mn));
            mx = simplify(substitute(r.from, next, mx));
            Expr bmin, bext;
            if (storage != realized.end()) {
                bmin = storage->second[d].min;
                bext = storage->second[d].extent;
            } else {
                bmin = make_var(name + ".min." + std::to_string(d));
                bext = make_var(name + ".extent." + std::to_string(d));
            }
            Expr bmax = bmin + bext - 1;
            if (r.p.strategy == PrefetchBoundStrategy::Clamp) {
                mn = simplify(max(mn, bmin));
                mx = simplify(min(mx, bmax));
            }
            if (r.p.strategy == PrefetchBoundStrategy::GuardWithIf) in_buffer.push_back(bmin <= mn && mx <= bmax);
            mins.push_back(mn);
            extents.push_back(simplify(max(mx - mn + 1, 0)));
        }
        std::vector<Expr> args = {point(name, r.p.is_image, mins)};
        args.insert(args.end(), extents.begin(), extents.end());
        Stmt s = Evaluate::make(Call::make(Int(32), "prefetch", args, Call::PureExtern));
        if (!in_buffer.empty()) {
            Expr cond = in_buffer[0];
            for (size_t i = 1; i < in_buffer.size(); i++) cond = cond && in_buffer[i];
            s = IfThenElse::make(simplify(cond), s);
        }
        return s;
    }

    // A read of the box's first point, which storage flattening turns into its address.
    Expr point(const std::string &name, bool is_image, const std::vector<Expr> &coords) const {
        if (is_image) {
            const auto &p = params.at(name);
            return Call::make(p->type, name, coords, Call::Image, nullptr, p);
        }
        const auto &f = env.at(name);
        return Call::make(f->types[0], name, coords, Call::Func, f);
    }
};

}  // namespace

Stmt inject_prefetches(const Stmt &s, const Environment &env, const std::vector<std::string> &outputs) {
    Inject inject(env, outputs);
    Stmt r = inject.mutate(s);
    inject.check_all_placed();
    return r;
}

}  // namespace internal
}  // namespace kiln
