#include "SlidingWindow.h"

#include <sstream>

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
bool region_lets_at(const Stmt &body, const FunctionContents &f, const std::string &loop,
                    std::map<std::string, Expr> &lets) {
    if (f.args.empty()) return false;  // a zero-dimensional Func has nothing to slide
    std::map<std::string, Expr> moving;  // the lets that move with the loop, expanded
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

// Why f's region does not slide along `loop` ("" if it does: `out` is then
// the dimension that moves).
std::string moving_dim(const For *loop, const FunctionContents &f, SlidingDim &out) {
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
    int64_t smin = 0, smax = 0;
    if (!constant_step(region[d].first, loop->name, smin) || !constant_step(region[d].second, loop->name, smax)) {
        bool monotonic = step_sign(region[d].first, loop->name) != 2 && step_sign(region[d].second, loop->name) != 2;
        return "its region in " + moving[0] + (monotonic ? " does not move by a constant step" : " does not move monotonically");
    }
    if (smin < 0 || smax < 0)
        return "its region in " + moving[0] + " moves toward smaller " + moving[0] + " (step " +
               std::to_string(smin < 0 ? smin : smax) + ")";
    Interval written;
    bool below = false, above = false;
    if (!rows_written(loop, f, d, written, below, above) || above)
        return "its producer writes past its region in " + moving[0] + " (a split's RoundUp tail)";
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
        Expr slid = select(v > op->min, max(dim.min, prev_max + 1), dim.min);
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
            r.not_slid = f.updates.empty() ? moving_dim(loops.back(), f, d) : "it has update definitions";
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

bool find_sliding_dim(const Stmt &realize_body, const FunctionContents &f, SlidingDim &out) {
    std::vector<const For *> loops = loops_to_producer(realize_body, f.name);
    return !loops.empty() && moving_dim(loops.back(), f, out).empty();
}

Stmt sliding_window(const Stmt &s, const Environment &env, SlidingReports *reports) {
    return SlideRealizations(env, reports).mutate(s);
}

}  // namespace internal
}  // namespace kiln
