#include "PromoteAccumulators.h"

#include <vector>

#include "StoreLoops.h"
#include "ir/IRVisitor.h"
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

class Promote : public StoreLoopMutator {
protected:
    int counter = 0;

    // A small allocation of constant size is a local array already.
    bool tracks(const Allocate *op) override {
        const int64_t *n = as_const_int(op->size);
        return !(n && *n * op->type.bytes() <= 64 * 1024);  // as CodeGen_C places it
    }

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

Stmt promote_accumulators(const Stmt &s) { return Promote().mutate(s); }

}  // namespace internal
}  // namespace kiln
