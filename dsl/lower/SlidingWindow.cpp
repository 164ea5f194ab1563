#include "SlidingWindow.h"

#include "analysis/Monotonic.h"
#include "ir/IRVisitor.h"
#include "ir/Simplify.h"
#include "ir/Substitute.h"

namespace kiln {
namespace internal {

namespace {

std::string region_let(const FunctionContents &f, int d, const char *which) {
    return f.name + ".s0." + f.args[d] + "." + which;
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
    return lets.count(region_let(f, 0, "min")) != 0;
}

class FindDim : public IRVisitor {
public:
    FindDim(const FunctionContents &f, SlidingDim &o) : func(f), out(o) {}
    bool found = false;

protected:
    const FunctionContents &func;
    SlidingDim &out;
    void visit(const For *op) override {
        std::map<std::string, Expr> lets;
        if (!found && op->for_type == ForType::Serial && region_lets_at(op->body, func, op->name, lets)) {
            int moving = -1, count = 0;
            bool monotonic = true;
            for (size_t d = 0; d < func.args.size(); d++) {
                Expr mn = unslid(lets[region_let(func, (int)d, "min")]), mx = lets[region_let(func, (int)d, "max")];
                if (!expr_uses_var(mn, op->name) && !expr_uses_var(mx, op->name)) continue;
                count++;
                moving = (int)d;
                int64_t smin, smax;
                monotonic &= constant_step(mn, op->name, smin) && constant_step(mx, op->name, smax) && smin >= 0 &&
                             smax >= 0;
            }
            if (count == 1 && monotonic) {
                found = true;
                out.loop = op->name;
                out.dim = moving;
                out.min = unslid(lets[region_let(func, moving, "min")]);
                out.max = lets[region_let(func, moving, "max")];
            }
        }
        IRVisitor::visit(op);
    }
};

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
    explicit SlideRealizations(const Environment &e) : env(e) {}

protected:
    const Environment &env;
    Stmt visit(const Realize *op) override {
        Stmt body = mutate(op->body);
        auto it = env.find(op->name);
        SlidingDim d;
        if (it != env.end() && it->second->updates.empty() && find_sliding_dim(body, *it->second, d))
            body = Slide(*it->second, d).mutate(body);
        return Realize::make(op->name, op->types, op->bounds, body, op->fold_factors);
    }
};

}  // namespace

bool find_sliding_dim(const Stmt &s, const FunctionContents &f, SlidingDim &out) {
    FindDim fd(f, out);
    fd.include(s);
    return fd.found;
}

Stmt sliding_window(const Stmt &s, const Environment &env) { return SlideRealizations(env).mutate(s); }

}  // namespace internal
}  // namespace kiln
