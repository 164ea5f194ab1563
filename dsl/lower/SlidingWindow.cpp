#include "SlidingWindow.h"

#include <sstream>

#include "ComputeWith.h"
#include "ScheduleFunctions.h"
#include "analysis/Monotonic.h"
#include "ir/IRVisitor.h"
#include "ir/Simplify.h"
#include "ir/Substitute.h"

namespace kiln {
namespace internal {

namespace {

std::string region_let(const FunctionContents &f, int d, const char *which) {
    return f.stage_prefix(0) + f.args[d] + "." + which;
}

// After sliding, a min is select(v > loop_min, new rows only, whole window);
// the window is the false branch.
Expr unslid(const Expr &e) {
    if (const auto *s = e.as<Select>()) return s->false_value;
    return e;
}

// The values of f's region lets at the start of the body of `loop`, if it
// has them. A producer's region names its consumers' (bounds inference puts
// the lets of a fused group together, consumers first):
//   let blur_x.s0.y.min = blur_y.s0.y.min - 2
// so the lets that move with the loop are expanded through the earlier ones,
// as windows (a consumer's slid min by its whole window), to y - 2.
//
// The expansion does not depend on f, and sliding and folding ask for every
// Func of a group at the same loop (local_laplacian's strips hold the lets
// of all its levels: expanding them once per Func and question was half of
// storage folding), so the last loops' expansions are kept, with their
// bodies (a kept node cannot be freed and its address reused).
const std::map<std::string, Expr> &expanded_lets(const Stmt &body, const std::string &loop) {
    struct Entry {
        Stmt body;
        std::map<std::string, Expr> lets;
    };
    thread_local std::map<std::pair<const void *, std::string>, Entry> cache;
    auto key = std::make_pair((const void *)body.get(), loop);
    auto it = cache.find(key);
    if (it != cache.end()) return it->second.lets;
    if (cache.size() >= 64) cache.clear();
    std::map<std::string, Expr> lets, moving;  // moving: the lets that move with the loop, expanded
    Stmt s = body;
    while (const auto *l = s.as<LetStmt>()) {
        Expr v = moving.empty() ? l->value : substitute(moving, l->value);
        if (expr_uses_var(v, loop)) {
            v = simplify(v);
            moving[l->name] = unslid(v);
        }
        lets[l->name] = v;
        s = l->body;
    }
    return cache.emplace(key, Entry{body, std::move(lets)}).first->second.lets;
}

bool region_lets_at(const Stmt &body, const FunctionContents &f, const std::string &loop,
                    std::map<std::string, Expr> &lets) {
    if (f.args.empty()) return false;  // a zero-dimensional Func has nothing to slide
    lets = expanded_lets(body, loop);
    for (size_t d = 0; d < f.args.size(); d++)
        if (!lets.count(region_let(f, (int)d, "min")) || !lets.count(region_let(f, (int)d, "max"))) return false;
    return true;
}

class ProducerLoops : public IRVisitor {
public:
    explicit ProducerLoops(const std::string &f) : func(f) {}
    bool found = false;
    std::vector<const For *> loops, stack;

protected:
    const std::string &func;
    void visit(const For *op) override {
        if (found) return;
        stack.push_back(op);
        IRVisitor::visit(op);
        stack.pop_back();
    }
    void visit(const ProducerConsumer *op) override {
        if (found) return;
        if (op->is_producer && op->name == func) {
            found = true;
            loops = stack;
            return;
        }
        IRVisitor::visit(op);
    }
};

// Is cond true, in terms of the region lets or of their values?
bool provably(const Expr &cond, const std::map<std::string, Expr> &lets) {
    return is_one(simplify(cond)) || is_one(simplify(substitute(lets, cond)));
}

// The producer of f within s.
class FindProduce : public IRVisitor {
public:
    explicit FindProduce(const std::string &f) : func(f) {}
    Stmt found;

protected:
    const std::string &func;
    void visit(const ProducerConsumer *op) override {
        if (found.defined()) return;
        if (op->is_producer && op->name == func) found = Stmt(op);
        else IRVisitor::visit(op);
    }
};

// How f's splits of dimension d may write past its region. A RoundUp or
// ShiftInwards tail writes past a region that is not a whole number of
// tiles, and sliding shrinks the region to the new rows, so such a split
// decides where the new rows start (`tile`, `tail`) when it is the only
// split of d (and f neither specializes nor shares loops with
// compute_with):
// - RoundUp: tiles start at the region's min, so new rows started a whole
//   number of tiles from the min end where the unslid window's last tile
//   ends (curved.tile(x, y, xi, yi, 64, 2, RoundUp): new rows at min + 2k);
// - ShiftInwards: a region smaller than the factor shifts its one tile
//   below the min, over rows an earlier iteration computed (and whose
//   producers need not be computed there), so new rows start at least one
//   factor below the max (never below the unslid min).
// Either way the producer writes, and reads its own producers, only where
// the unslid window did.
struct DimSplit {
    bool past = false;    // a split of d has a RoundUp or ShiftInwards tail
    bool simple = false;  // ... and it is the only split of d: tile and tail say which
    int64_t tile = 1;
    TailStrategy tail = TailStrategy::Auto;
};
DimSplit dim_split(const Environment &env, const FunctionContents &f, int d) {
    const Definition &def = f.stage(0);
    const std::string &v = f.args[d];
    auto on_v = [&](const Split &sp) {
        return sp.old_var == v || sp.old_var.rfind(v + ".", 0) == 0 || sp.inner.rfind(v + ".", 0) == 0 ||
               sp.outer.rfind(v + ".", 0) == 0;
    };
    DimSplit r;
    int count = 0;
    std::vector<const StageSchedule *> schedules{&def.schedule};
    for (const auto &sp : def.specializations) schedules.push_back(&sp.schedule);
    for (const StageSchedule *sched : schedules) {
        for (const Split &sp : sched->splits) {
            if (!on_v(sp)) continue;
            count++;
            TailStrategy t = sp.kind == Split::SplitVar ? resolve_tail(sp.tail, false, 0, false) : TailStrategy::Auto;
            r.past |= t == TailStrategy::RoundUp || t == TailStrategy::ShiftInwards;
            const int64_t *k = as_const_int(sp.factor);
            if (sp.kind == Split::SplitVar && sp.old_var == v && k && *k >= 1) r.tile = *k, r.tail = t;
        }
    }
    r.simple = count == 1 && schedules.size() == 1 && fusion_parent(f).empty() && fused_children(env, f.name).empty();
    return r;
}

// Why f's region does not slide along `loop` ("" if it does: `out` is then
// the dimension that moves).
std::string moving_dim(const For *loop, const Environment &env, const FunctionContents &f, SlidingDim &out) {
    if (loop->for_type != ForType::Serial)
        return std::string("the loop is ") + to_string(loop->for_type) + ", and sliding needs a serial one";
    std::vector<std::pair<Expr, Expr>> region;
    if (!region_at(loop, f, region)) return "its region is not defined at the top of the loop";
    std::vector<std::string> moving;
    for (size_t d = 0; d < region.size(); d++)
        if (expr_uses_var(region[d].first, loop->name) || expr_uses_var(region[d].second, loop->name))
            moving.push_back(f.args[d]);
    if (moving.empty()) return "its region is the same in every iteration";
    if (moving.size() > 1) {
        std::string dims;
        for (size_t i = 0; i < moving.size(); i++)
            dims += (i == 0 ? "" : i + 1 == moving.size() ? " and " : ", ") + moving[i];
        return "its region moves in " + std::to_string(moving.size()) + " dimensions (" + dims + ")";
    }
    int d = 0;
    while (f.args[d] != moving[0]) d++;
    // Both ends never move down: then every row of the window below the
    // last iteration's max was computed by an earlier iteration, whatever
    // the steps (a clamp at the region's edge, a ShiftInwards tail).
    int smin = step_sign(region[d].first, loop->name), smax = step_sign(region[d].second, loop->name);
    if (smin == 2 || smax == 2) return "its region in " + moving[0] + " does not move monotonically";
    if (smin < 0 || smax < 0) {
        int64_t step = 0;
        const Expr &down = smin < 0 ? region[d].first : region[d].second;
        std::string by = constant_step(down, loop->name, step) ? " (step " + std::to_string(step) + ")" : "";
        return "its region in " + moving[0] + " moves toward smaller " + moving[0] + by;
    }
    Interval written;
    bool below = false, above = false;
    if (!rows_written(loop, f, d, written, below, above))
        return "its producer writes past its region in " + moving[0] + " (a split's RoundUp tail)";
    DimSplit split = dim_split(env, f, d);
    if (split.past && !split.simple)
        return "its producer's splits of " + moving[0] + " may write past the rows new to an iteration (a RoundUp "
               "or ShiftInwards tail, in a split that is not " + moving[0] + "'s only one)";
    if ((above || below) && !split.past)
        return "its producer writes past its region in " + moving[0];
    if (split.past) out.tile = split.tile, out.tail = split.tail;
    out.loop = loop->name;
    out.dim = d;
    out.min = region[d].first;
    out.max = region[d].second;
    return "";
}

class Slide : public IRMutator {
public:
    Slide(const FunctionContents &f, const SlidingDim &d) : func(f), dim(d) {}

protected:
    const FunctionContents &func;
    const SlidingDim &dim;
    Stmt visit(const For *op) override {
        if (op->name != dim.loop) return IRMutator::visit(op);
        Expr v = Variable::make(Int(32), op->name);
        Expr prev_max = substitute(op->name, v - 1, dim.max);
        Expr first_new = prev_max + 1;
        const int k = (int)dim.tile;
        if (k > 1 && dim.tail == TailStrategy::RoundUp) first_new = dim.min + ((first_new - dim.min) / k) * k;
        if (k > 1 && dim.tail == TailStrategy::ShiftInwards) first_new = min(first_new, dim.max - (k - 1));
        Expr slid = select(v > op->min, max(dim.min, first_new), dim.min);
        std::string n = region_let(func, dim.dim, "min");
        class Replace : public IRMutator {
        public:
            std::string name;
            Expr value;
            Stmt visit(const LetStmt *op) override {
                if (op->name == name) return LetStmt::make(op->name, value, op->body);
                return IRMutator::visit(op);
            }
        } r;
        r.name = n;
        r.value = slid;
        return For::make(op->name, op->min, op->extent, op->for_type, r.mutate(op->body));
    }
};

class SlideRealizations : public IRMutator {
public:
    SlideRealizations(const Environment &e, SlidingReports *r) : env(e), reports(r) {}

protected:
    const Environment &env;
    SlidingReports *reports;
    Stmt visit(const Realize *op) override {
        Stmt body = mutate(op->body);
        auto it = env.find(op->name);
        std::vector<const For *> loops;
        if (it != env.end()) loops = loops_to_producer(body, op->name);
        if (!loops.empty()) {
            const FunctionContents &f = *it->second;
            SlidingReport r;
            r.loop = f.schedule.compute_level.to_string();
            SlidingDim d;
            r.not_slid = f.updates.empty() ? moving_dim(loops.back(), env, f, d) : "it has update definitions";
            if (r.not_slid.empty()) {
                r.dim = d.dim;
                r.window = simplify(d.max - d.min + 1);
                body = Slide(f, d).mutate(body);
            }
            if (reports) (*reports)[f.name] = r;
        }
        if (body.same_as(op->body)) return Stmt(op);
        return Realize::make(op->name, op->types, op->bounds, body, op->fold_factors);
    }
};

}  // namespace

int step_sign(const Expr &e, const std::string &v) {
    if (!expr_uses_var(e, v)) return 0;
    int64_t step = 0;
    if (constant_step(e, v, step)) return step > 0 ? 1 : step < 0 ? -1 : 0;
    auto both = [](int a, int b) { return a == 2 || b == 2 ? 2 : a == 0 ? b : b == 0 || a == b ? a : 2; };
    auto negate = [](int a) { return a == 2 ? 2 : -a; };
    auto scaled = [&](const Expr &a, const Expr &c) {
        const int64_t *k = as_const_int(c);
        int s = step_sign(a, v);
        return !k ? 2 : *k > 0 ? s : *k < 0 ? negate(s) : 0;
    };
    if (const auto *op = e.as<Add>()) return both(step_sign(op->a, v), step_sign(op->b, v));
    if (const auto *op = e.as<Sub>()) return both(step_sign(op->a, v), negate(step_sign(op->b, v)));
    if (const auto *op = e.as<Min>()) return both(step_sign(op->a, v), step_sign(op->b, v));
    if (const auto *op = e.as<Max>()) return both(step_sign(op->a, v), step_sign(op->b, v));
    if (const auto *op = e.as<Mul>()) return as_const_int(op->a) ? scaled(op->b, op->a) : scaled(op->a, op->b);
    if (const auto *op = e.as<Div>()) return scaled(op->a, op->b);  // rounds down: keeps the direction
    if (const auto *op = e.as<Select>())
        if (!expr_uses_var(op->condition, v)) return both(step_sign(op->true_value, v), step_sign(op->false_value, v));
    return 2;
}

std::string SlidingReport::describe(const FunctionContents &f) const {
    std::ostringstream os;
    auto fold_text = [&](int d) {
        auto it = folds.find(d);
        if (it == folds.end()) return std::string();
        std::ostringstream t;
        t << "folded to " << it->second << (fold_storage.count(d) ? " (fold_storage)" : "");
        return t.str();
    };
    if (dim >= 0) {
        os << "slides over " << loop << " in " << f.args[dim] << ", window of ";
        if (as_const_int(window)) os << window;
        else os << "variable size";
        std::string own = fold_text(dim);
        os << ", " << (own.empty() ? "not folded" + (not_folded.empty() ? "" : " (" + not_folded + ")") : own);
    } else {
        os << "not slid over " << loop << ": " << not_slid;
    }
    bool first = true;
    for (const auto &kv : folds) {
        if (kv.first == dim) continue;
        os << (first ? "; " : ", ") << f.args[kv.first] << " " << fold_text(kv.first);
        first = false;
    }
    return os.str();
}

std::vector<const For *> loops_to_producer(const Stmt &realize_body, const std::string &f) {
    ProducerLoops p(f);
    p.include(realize_body);
    return p.loops;
}

bool region_at(const For *loop, const FunctionContents &f, std::vector<std::pair<Expr, Expr>> &region,
               std::map<std::string, Expr> *values) {
    std::map<std::string, Expr> lets;
    if (!region_lets_at(loop->body, f, loop->name, lets)) return false;
    region.clear();
    for (size_t d = 0; d < f.args.size(); d++)
        region.push_back({unslid(lets[region_let(f, (int)d, "min")]), lets[region_let(f, (int)d, "max")]});
    if (values) *values = lets;
    return true;
}

bool rows_written(const For *loop, const FunctionContents &f, int d, Interval &rows, bool &below, bool &above) {
    std::vector<std::pair<Expr, Expr>> region;
    std::map<std::string, Expr> lets;
    if (!region_at(loop, f, region, &lets)) return false;
    FindProduce p(f.name);
    p.include(loop->body);
    if (!p.found.defined()) return false;
    Box written = box_touched(p.found, f.name, false, true);
    if ((int)written.size() <= d || !written[d].bounded()) return false;
    rows = written[d];
    below = !provably(rows.min >= Variable::make(Int(32), region_let(f, d, "min")), lets);
    above = !provably(rows.max <= Variable::make(Int(32), region_let(f, d, "max")), lets);
    return true;
}

bool find_sliding_dim(const Stmt &realize_body, const Environment &env, const FunctionContents &f, SlidingDim &out) {
    std::vector<const For *> loops = loops_to_producer(realize_body, f.name);
    return !loops.empty() && moving_dim(loops.back(), env, f, out).empty();
}

Stmt sliding_window(const Stmt &s, const Environment &env, SlidingReports *reports) {
    return SlideRealizations(env, reports).mutate(s);
}

}  // namespace internal
}  // namespace kiln
