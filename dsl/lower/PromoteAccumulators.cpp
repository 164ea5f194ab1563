#include "PromoteAccumulators.h"

#include <algorithm>
#include <functional>
#include <map>
#include <set>
#include <vector>

#include "BoundAllocations.h"
#include "StoreLoops.h"
#include "ir/IRVisitor.h"
#include "ir/Simplify.h"
#include "ir/Substitute.h"
#include "kiln/IROperator.h"

namespace kiln {
namespace internal {

namespace {

// Whether every Load of `name` in what it visits is of type `t` at `index`
// (with `index` undefined: whether there is none).
class OnlyAt : public IRVisitor {
public:
    OnlyAt(const std::string &name, Type t, const Expr &index) : name(name), type(t), index(index) {}
    bool ok = true;

protected:
    const std::string &name;
    Type type;
    const Expr &index;
    void visit(const Load *op) override {
        IRVisitor::visit(op);
        if (op->name == name) ok &= index.defined() && op->type == type && equal(op->index, index);
    }
};

class ReplaceAccumulator : public IRMutator {
public:
    ReplaceAccumulator(const std::string &name, Expr to) : name(name), to(std::move(to)) {}

protected:
    const std::string &name;
    Expr to;
    Expr visit(const Load *op) override { return op->name == name ? to : IRMutator::visit(op); }
};

// One accumulator of a loop with several: the element (or vector) of
// `name` at `index` (with the loop's invariant lets substituted).
struct Slot {
    std::string name;
    Expr index;
    Type type;
    std::string acc;
};

// Do two slots of one allocation share no element? Dense vectors (or
// scalars) whose starts differ by a constant of at least their width, or
// by k * f.extent.0 + c with k != 0: in different rows of f's storage
// (a store writes inside its allocation's region, so a vector lies
// within one row).
bool disjoint(const Slot &a, const Slot &b, const Environment &env) {
    auto start = [](const Expr &i) {
        const auto *r = i.as<Ramp>();
        return r ? r->base : i;
    };
    auto dense = [](const Expr &i) {
        const auto *r = i.as<Ramp>();
        return !r || is_one(r->stride);
    };
    if (!dense(a.index) || !dense(b.index)) return false;
    Expr diff = simplify(start(a.index) - start(b.index));
    int64_t width = std::max(a.type.lanes(), b.type.lanes());
    if (const int64_t *d = as_const_int(diff)) return *d >= width || *d <= -width;
    // k * extent.0 + c: constants at extent.0 = 0..3 on one line (index
    // arithmetic is of low degree in the extents, so four points decide).
    // The row is the extent of the innermost dimension in storage.
    auto f = env.find(a.name);
    if (f == env.end()) return false;
    const FunctionContents &func = *f->second;
    size_t unit = 0;
    if (!func.schedule.storage_dims.empty())
        unit = std::find(func.args.begin(), func.args.end(), func.schedule.storage_dims[0]) - func.args.begin();
    const std::string row = a.name + ".extent." + std::to_string(unit);
    int64_t at[4];
    for (int e = 0; e < 4; e++) {
        const int64_t *v = as_const_int(simplify(substitute(row, Expr(e), diff)));
        if (!v) return false;
        at[e] = *v;
    }
    int64_t k = at[1] - at[0];
    return k != 0 && at[2] - at[1] == k && at[3] - at[2] == k;
}

// The accumulators of a loop body with several stores. It walks the body
// with the values of its loop-invariant lets in scope (lets whose values
// neither use the loop variable or a varying let nor load an accumulated
// allocation; a name may be bound again, as unrolled copies do), so that
// each load and store of the accumulated allocations (`names`) is known by
// its index in terms of what is outside the loop. Collect: the stores make
// the slots; Check: whether every load of those allocations is of a slot;
// Replace: the loads and stores of the slots become their locals.
class Slots : public IRMutator {
public:
    enum class Mode { Collect, Check, Replace };
    Slots(const std::string &loop, const std::set<std::string> &names, int &counter, const Environment &env)
        : names(names), counter(counter), env(env) {
        variant.insert(loop);
    }
    Mode mode = Mode::Collect;
    std::vector<Slot> slots;
    bool ok = true;

    static Expr local_index(Type t) { return t.is_scalar() ? Expr(0) : Ramp::make(0, 1, t.lanes()); }

protected:
    const std::set<std::string> &names;
    int &counter;
    const Environment &env;
    std::map<std::string, Expr> invariant;
    std::set<std::string> variant;

    bool varies(const Expr &e) const {
        return expr_loads_if(e, [&](const std::string &b) { return names.count(b) > 0; }) ||
               expr_uses_var_if(e, [&](const std::string &v) { return variant.count(v) > 0; });
    }
    // The slot of `name` at `index` (as written in the body), or null.
    const Slot *find(const std::string &name, const Expr &index, Type t, Expr *full = nullptr) const {
        if (varies(index)) return nullptr;
        Expr f = simplify(substitute(invariant, index));
        if (full) *full = f;
        for (const Slot &s : slots)
            if (s.name == name && s.type == t && equal(s.index, f)) return &s;
        return nullptr;
    }
    Stmt visit(const LetStmt *op) override {
        Expr value = mutate(op->value);
        bool was_invariant = invariant.count(op->name) > 0, was_variant = variant.count(op->name) > 0;
        Expr old = was_invariant ? invariant[op->name] : Expr();
        if (varies(op->value)) {
            invariant.erase(op->name);
            variant.insert(op->name);
        } else {
            invariant[op->name] = substitute(invariant, op->value);
            variant.erase(op->name);
        }
        Stmt body = mutate(op->body);
        invariant.erase(op->name);
        variant.erase(op->name);
        if (was_invariant) invariant[op->name] = old;
        if (was_variant) variant.insert(op->name);
        return LetStmt::make(op->name, value, body);
    }
    Expr visit(const Load *op) override {
        if (!names.count(op->name) || mode == Mode::Collect) return IRMutator::visit(op);
        const Slot *s = find(op->name, op->index, op->type);
        if (mode == Mode::Replace) return Load::make(op->type, s->acc, local_index(op->type));
        ok &= s != nullptr;
        return IRMutator::visit(op);
    }
    Stmt visit(const Store *op) override {
        Expr value = mutate(op->value);
        Type t = op->value.type();
        if (mode == Mode::Check) return Stmt(op);
        if (mode == Mode::Replace) {
            const Slot *s = find(op->name, op->index, t);
            return Store::make(s->acc, value, local_index(t));
        }
        Expr full;
        if (varies(op->index)) {
            ok = false;
        } else if (!find(op->name, op->index, t, &full)) {
            Slot slot{op->name, full, t, op->name + ".acc." + std::to_string(counter++)};
            for (const Slot &other : slots) ok &= other.name != slot.name || disjoint(other, slot, env);
            slots.push_back(slot);
        }
        return Store::make(op->name, value, op->index);
    }
};

class Promote : public StoreLoopMutator {
public:
    explicit Promote(const Environment &env) : env(env) {}

protected:
    const Environment &env;
    int counter = 0;

    // A loop of lets and several stores (a register block's unrolled
    // update, e.g. for (r) { f[ramp(i0, 1, 16)] += ..; f[ramp(i0 + 16, 1, 16)] += .. })
    // whose stores are each at an index the loop does not change, of
    // allocations in scope, into elements no two of them share, and whose
    // loads of those allocations are of the stored elements: each stored
    // element gets its own local, as the one-store case.
    Stmt rewrite_other(const For *op, const Stmt &body) override {
        std::vector<const Store *> stores;
        std::function<bool(const Stmt &)> shape = [&](const Stmt &s) -> bool {  // lets and stores only
            if (const auto *l = s.as<LetStmt>()) return shape(l->body);
            if (const auto *b = s.as<Block>()) return shape(b->first) && (!b->rest.defined() || shape(b->rest));
            if (const auto *st = s.as<Store>()) return stores.push_back(st), true;
            return false;
        };
        if (!shape(body) || stores.empty()) return Stmt();
        std::set<std::string> names;
        for (const Store *st : stores) {
            if (!tracked(st->name)) return Stmt();
            names.insert(st->name);
        }
        Slots slots(op->name, names, counter, env);
        slots.mutate(body);
        if (slots.ok) {  // every slot is known: the loads can be checked
            slots.mode = Slots::Mode::Check;
            slots.mutate(body);
        }
        if (!slots.ok) return Stmt();
        std::vector<Stmt> all;
        for (const Slot &sl : slots.slots)
            all.push_back(Store::make(sl.acc, Load::make(sl.type, sl.name, sl.index), Slots::local_index(sl.type)));
        slots.mode = Slots::Mode::Replace;
        all.push_back(For::make(op->name, op->min, op->extent, op->for_type, slots.mutate(body)));
        for (const Slot &sl : slots.slots)
            all.push_back(Store::make(sl.name, Load::make(sl.type, sl.acc, Slots::local_index(sl.type)), sl.index));
        Stmt s = Block::make(all);
        for (auto it = slots.slots.rbegin(); it != slots.slots.rend(); ++it)
            s = Allocate::make(it->acc, it->type.element_of(), it->type.lanes(), s);
        return if_loop_runs(op, s);
    }

    // A small allocation of constant size is a local array already.
    bool tracks(const Allocate *op) override { return !allocation_on_stack(op); }

    Stmt rewrite(const StoreLoop &l) override {
        const For *op = l.loop;
        const Store *store = l.store;
        const Expr &index = store->index;
        if (expr_uses_var(index, op->name)) return Stmt();
        for (const LetStmt *let : l.lets)
            if (expr_uses_var(index, let->name)) return Stmt();
        const Type t = store->value.type();
        OnlyAt only(store->name, t, index);
        for (const LetStmt *let : l.lets) only.include(let->value);
        only.include(store->value);
        OnlyAt none(store->name, t, Expr());  // the index itself reads no element
        none.include(index);
        if (!only.ok || !none.ok) return Stmt();

        const std::string acc = store->name + ".acc." + std::to_string(counter++);
        const Expr slot = t.is_scalar() ? Expr(0) : Ramp::make(0, 1, t.lanes());
        const Expr current = Load::make(t, acc, slot);
        ReplaceAccumulator replace(store->name, current);
        Stmt body = Store::make(acc, replace.mutate(store->value), slot);
        for (auto it = l.lets.rbegin(); it != l.lets.rend(); ++it)
            body = LetStmt::make((*it)->name, replace.mutate((*it)->value), body);
        Stmt s = Block::make({Store::make(acc, Load::make(t, store->name, index), slot),
                              For::make(op->name, op->min, op->extent, op->for_type, body),
                              Store::make(store->name, current, index)});
        return if_loop_runs(op, Allocate::make(acc, t.element_of(), t.lanes(), s));
    }
};

}  // namespace

Stmt promote_accumulators(const Stmt &s, const Environment &env) { return Promote(env).mutate(s); }

}  // namespace internal
}  // namespace kiln
