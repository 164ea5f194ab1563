#include "HoistLoads.h"

#include <set>
#include <vector>

#include "kiln/IROperator.h"
#include "StoreLoops.h"
#include "ir/IRVisitor.h"
#include "ir/Substitute.h"

namespace kiln {
namespace internal {

namespace {

// The scalar loads of an expression that every evaluation executes, in the
// order met, each once.
class UnconditionalLoads : public IRVisitor {
public:
    std::vector<const Load *> loads;

protected:
    // A select's values, the right operand of && and || (C++ evaluates them
    // only when needed) and a let's body (its index may name the let) are
    // not searched.
    void visit(const Select *op) override { include(op->condition); }
    void visit(const And *op) override { include(op->a); }
    void visit(const Or *op) override { include(op->a); }
    void visit(const Let *op) override { include(op->value); }
    void visit(const Load *op) override {
        IRVisitor::visit(op);
        if (!op->type.is_scalar()) return;
        for (const Load *l : loads)
            if (l->name == op->name && equal(l->index, op->index)) return;
        loads.push_back(op);
    }
};

class ReplaceLoad : public IRMutator {
public:
    ReplaceLoad(const Load *l, Expr v) : load(l), var(std::move(v)) {}

protected:
    const Load *load;
    Expr var;
    Expr visit(const Load *op) override {
        if (op->name == load->name && op->type == load->type && equal(op->index, load->index)) return var;
        return IRMutator::visit(op);
    }
};

class Hoist : public StoreLoopMutator {
protected:
    int counter = 0;

    Stmt rewrite(const StoreLoop &l) override {
        const For *op = l.loop;
        const Store *store = l.store;
        Stmt body = l.body;
        UnconditionalLoads finder;
        for (const LetStmt *let : l.lets) finder.include(let->value);
        finder.include(store->value);
        finder.include(store->index);
        std::vector<std::pair<std::string, Expr>> hoisted;
        for (const Load *load : finder.loads) {
            if (load->name == store->name) continue;
            if (expr_uses_var(load->index, op->name)) continue;
            bool uses_let = false;
            for (const LetStmt *let : l.lets) uses_let = uses_let || expr_uses_var(load->index, let->name);
            if (uses_let) continue;
            std::string name = load->name + ".hoisted." + std::to_string(counter++);
            body = ReplaceLoad(load, Variable::make(load->type, name)).mutate(body);
            hoisted.emplace_back(name, Expr(load));
        }
        if (hoisted.empty()) return Stmt();
        Stmt s = For::make(op->name, op->min, op->extent, op->for_type, body);
        for (auto it = hoisted.rbegin(); it != hoisted.rend(); ++it) s = LetStmt::make(it->first, it->second, s);
        return if_loop_runs(op, s);
    }
};

}  // namespace

Stmt hoist_invariant_loads(const Stmt &s) { return Hoist().mutate(s); }

}  // namespace internal
}  // namespace kiln
