#include "VectorizeLoops.h"

#include <map>

#include "ir/IRVisitor.h"
#include "ir/Simplify.h"
#include "ir/Substitute.h"

namespace kiln {
namespace internal {

namespace {

struct Scalarize {};  // thrown when a loop body cannot be vectorized

Expr widen(const Expr &e, int lanes) {
    if (e.type().lanes() == lanes) return e;
    internal_assert(e.type().is_scalar()) << "lane mismatch in vectorization";
    return Broadcast::make(e, lanes);
}

// Is e affine in v (e[v+1] - e[v] free of v)?
bool affine_in(const Expr &e, const std::string &v) {
    if (!expr_uses_var(e, v)) return true;
    if (!e.type().is_int()) return false;
    Expr step = simplify(substitute(v, Variable::make(Int(32), v) + 1, e) - e);
    return !expr_uses_var(step, v);
}

// A conjunction of comparisons whose sides are affine in v: true on an
// interval of v, so checking both ends proves it for all lanes.
bool convex_in(const Expr &c, const std::string &v) {
    if (const auto *a = c.as<And>()) return convex_in(a->a, v) && convex_in(a->b, v);
    auto sides = [&](const Expr &a, const Expr &b) { return affine_in(a, v) && affine_in(b, v); };
    if (const auto *o = c.as<LT>()) return sides(o->a, o->b);
    if (const auto *o = c.as<LE>()) return sides(o->a, o->b);
    if (const auto *o = c.as<GT>()) return sides(o->a, o->b);
    if (const auto *o = c.as<GE>()) return sides(o->a, o->b);
    return !expr_uses_var(c, v);
}

// Collect the guards in a loop body that depend on v; lets are substituted
// so each guard is in terms of v and outer variables.
class FindGuards : public IRVisitor {
public:
    explicit FindGuards(const std::string &v) : var(v) {}
    std::vector<Expr> guards;  // substituted conditions
    bool ok = true;

protected:
    std::string var;
    std::map<std::string, Expr> lets;
    std::vector<std::string> inner_loops;  // loops inside the vectorized one
    void visit(const LetStmt *op) override {
        lets[op->name] = substitute(lets, op->value);
        include(op->body);
        lets.erase(op->name);
    }
    void visit(const For *op) override {
        inner_loops.push_back(op->name);
        IRVisitor::visit(op);
        inner_loops.pop_back();
    }
    void visit(const IfThenElse *op) override {
        Expr c = simplify(substitute(lets, op->condition));
        if (expr_uses_var(c, var)) {
            // The all-lanes test is evaluated outside the loop, so it may not
            // depend on loops inside it.
            bool hoistable = convex_in(c, var) && !op->else_case.defined();
            for (const auto &l : inner_loops) hoistable &= !expr_uses_var(c, l);
            if (hoistable) guards.push_back(c);
            else ok = false;
        }
        IRVisitor::visit(op);
    }
};

// Replace guards depending on v by their then-branch (they hold on the fast path).
class DropGuards : public IRMutator {
public:
    explicit DropGuards(const std::string &v) : var(v) {}

protected:
    std::string var;
    std::map<std::string, Expr> lets;
    Stmt visit(const LetStmt *op) override {
        lets[op->name] = substitute(lets, op->value);
        Stmt b = mutate(op->body);
        lets.erase(op->name);
        return b.same_as(op->body) ? Stmt(op) : LetStmt::make(op->name, op->value, b);
    }
    Stmt visit(const IfThenElse *op) override {
        Expr c = simplify(substitute(lets, op->condition));
        if (expr_uses_var(c, var)) return mutate(op->then_case);
        return IRMutator::visit(op);
    }
};

class VectorSubs : public IRMutator {
public:
    VectorSubs(const std::string &v, Expr ramp, int n) : lanes(n) { scope[v] = std::move(ramp); }

protected:
    int lanes;
    std::map<std::string, Expr> scope;

    Expr visit(const Variable *op) override {
        auto it = scope.find(op->name);
        return it == scope.end() ? Expr(op) : it->second;
    }
    template<typename T>
    Expr binary(const T *op) {
        Expr a = mutate(op->a), b = mutate(op->b);
        if (a.same_as(op->a) && b.same_as(op->b)) return Expr(op);
        int n = std::max(a.type().lanes(), b.type().lanes());
        return T::make(widen(a, n), widen(b, n));
    }
#define KILN_VBIN(N) \
    Expr visit(const N *op) override { return binary(op); }
    KILN_VBIN(Add) KILN_VBIN(Sub) KILN_VBIN(Mul) KILN_VBIN(Div) KILN_VBIN(Mod) KILN_VBIN(Min) KILN_VBIN(Max)
    KILN_VBIN(EQ) KILN_VBIN(NE) KILN_VBIN(LT) KILN_VBIN(LE) KILN_VBIN(GT) KILN_VBIN(GE) KILN_VBIN(And) KILN_VBIN(Or)
#undef KILN_VBIN
    Expr visit(const Not *op) override {
        Expr a = mutate(op->a);
        return a.same_as(op->a) ? Expr(op) : Not::make(a);
    }
    Expr visit(const Cast *op) override {
        Expr v = mutate(op->value);
        if (v.same_as(op->value)) return Expr(op);
        return Cast::make(op->type.with_lanes(v.type().lanes()), v);
    }
    Expr visit(const Select *op) override {
        Expr c = mutate(op->condition), t = mutate(op->true_value), f = mutate(op->false_value);
        if (c.same_as(op->condition) && t.same_as(op->true_value) && f.same_as(op->false_value)) return Expr(op);
        int n = std::max({c.type().lanes(), t.type().lanes(), f.type().lanes()});
        if (c.type().is_vector()) c = widen(c, n);
        return Select::make(c, widen(t, n), widen(f, n));
    }
    Expr visit(const Load *op) override {
        Expr idx = mutate(op->index);
        if (idx.same_as(op->index)) return Expr(op);
        idx = simplify(idx);
        Expr load = Load::make(op->type.with_lanes(idx.type().lanes()), op->name, idx);
        return dense_fast_path(op, idx, load);
    }
    // select(all lanes inside the clamp, dense load, clamped gather)
    Expr dense_fast_path(const Load *op, const Expr &idx, const Expr &load) {
        if (idx.as<Ramp>() || idx.as<Broadcast>()) return load;
        class Unclamp : public IRMutator {
        public:
            Expr cond;
            Expr visit(const Max *op) override {
                const auto *mn = op->a.as<Min>();
                const auto *r = mn ? mn->a.as<Ramp>() : nullptr;
                const auto *hi = mn ? mn->b.as<Broadcast>() : nullptr;
                const auto *lo = op->b.as<Broadcast>();
                if (!r || !hi || !lo || !is_one(r->stride)) return IRMutator::visit(op);
                Expr last = r->base + (r->lanes - 1);
                Expr c = lo->value <= r->base && last <= hi->value;
                cond = cond.defined() ? (cond && c) : c;
                return Expr(r);
            }
        } un;
        Expr fast = simplify(un.mutate(idx));
        const auto *fr = fast.as<Ramp>();
        if (!un.cond.defined() || !fr || !is_one(fr->stride)) return load;
        return Select::make(simplify(un.cond), Load::make(load.type(), op->name, fast), load);
    }
    Expr visit(const Call *op) override {
        std::vector<Expr> args;
        if (!mutate_all(op->args, args)) return Expr(op);
        int n = 1;
        for (const auto &a : args) n = std::max(n, (int)a.type().lanes());
        internal_assert(op->call_type == Call::PureExtern) << "unflattened call in vectorization";
        for (auto &a : args) a = widen(a, n);
        return Call::make(op->type.with_lanes(n), op->name, args, op->call_type);
    }
    // A let bound to a ramp or broadcast is substituted, so that indices built
    // from it stay ramps (dense loads and stores).
    template<typename T, typename Body> Body visit_let(const T *op) {
        Expr v = mutate(op->value);
        bool substituted = false;
        if (v.type().is_vector()) {
            v = simplify(v);
            substituted = v.as<Ramp>() || v.as<Broadcast>();
            scope[op->name] = substituted ? v : Variable::make(v.type(), op->name);
        }
        Body b = mutate(op->body);
        scope.erase(op->name);
        if (substituted) return b;
        if (v.same_as(op->value) && b.same_as(op->body)) return Body(op);
        return T::make(op->name, v, b);
    }
    Expr visit(const Let *op) override { return visit_let<Let, Expr>(op); }
    Stmt visit(const LetStmt *op) override { return visit_let<LetStmt, Stmt>(op); }
    Stmt visit(const Store *op) override {
        Expr v = mutate(op->value), i = mutate(op->index);
        if (v.same_as(op->value) && i.same_as(op->index)) return Stmt(op);
        int n = std::max(v.type().lanes(), i.type().lanes());
        if (i.type().is_scalar()) throw Scalarize();  // every lane would store to one address
        return Store::make(op->name, widen(v, n), simplify(widen(i, n)));
    }
    Stmt visit(const For *op) override {
        Expr mn = mutate(op->min), ex = mutate(op->extent);
        if (mn.type().is_vector() || ex.type().is_vector()) throw Scalarize();
        user_assert(op->for_type != ForType::Vectorized)
            << "Loop " << op->name << " is vectorized inside another vectorized loop; vectorize only one "
            << "loop of a loop nest";
        Stmt b = mutate(op->body);
        if (mn.same_as(op->min) && ex.same_as(op->extent) && b.same_as(op->body)) return Stmt(op);
        return For::make(op->name, mn, ex, op->for_type, b);
    }
    Stmt visit(const IfThenElse *op) override {
        Expr c = mutate(op->condition);
        if (c.type().is_vector()) throw Scalarize();
        return IRMutator::visit(op);
    }
    Stmt visit(const AssertStmt *) override { throw Scalarize(); }
    Stmt visit(const Allocate *) override { throw Scalarize(); }
    Stmt visit(const Provide *) override { internal_error << "Provide in vectorization"; return Stmt(); }
};

class HasVectorLoop : public IRVisitor {
public:
    std::string found;
    void visit(const For *op) override {
        if (op->for_type == ForType::Vectorized && found.empty()) found = op->name;
        IRVisitor::visit(op);
    }
};

class Vectorize : public IRMutator {
public:
    explicit Vectorize(const LoopSources &s) : sources(s) {}

protected:
    const LoopSources &sources;
    Stmt visit(const For *op) override {
        if (op->for_type != ForType::Vectorized) return IRMutator::visit(op);
        HasVectorLoop inner;
        inner.include(op->body);
        user_assert(inner.found.empty())
            << "Loop " << inner.found << " is vectorized inside loop " << op->name
            << ", which is vectorized too; vectorize only one loop of a loop nest (vectorize the "
               "innermost one, unroll() the other)";
        Stmt body = mutate(op->body);
        const int64_t *n = as_const_int(op->extent);
        user_assert(n) << non_constant_extent_error(sources, op->name, op->extent, "vectorize");
        Stmt serial = For::make(op->name, op->min, op->extent, ForType::Serial, body);
        if (*n <= 1) return serial;
        user_assert(*n <= 64) << "Loop " << op->name << " is vectorized with " << *n
                              << " lanes; at most 64 lanes are supported — use a smaller factor";
        FindGuards g(op->name);
        g.include(body);
        if (!g.ok) return serial;
        Stmt vbody = g.guards.empty() ? body : DropGuards(op->name).mutate(body);
        Stmt vec;
        try {
            vec = VectorSubs(op->name, Ramp::make(op->min, make_one(Int(32)), (int)*n), (int)*n).mutate(vbody);
        } catch (const Scalarize &) {
            return serial;
        }
        if (g.guards.empty()) return vec;
        Expr all;
        Expr last = op->min + (int)(*n - 1);
        for (const auto &c : g.guards) {
            Expr both = substitute(op->name, op->min, c) && substitute(op->name, last, c);
            all = all.defined() ? (all && both) : both;
        }
        // The per-lane loop runs only where the guard fails at an end of the
        // vector (a tail, once per loop nest); its kind tells the code
        // generator so (ForType::LaneFallback).
        Stmt lanes = For::make(op->name, op->min, op->extent, ForType::LaneFallback, body);
        return IfThenElse::make(simplify(all), vec, lanes);
    }
};

}  // namespace

Stmt vectorize_loops(const Stmt &s, const LoopSources &sources) {
    return Vectorize(sources).mutate(s);
}

}  // namespace internal
}  // namespace kiln
