#include "HoistLoads.h"

#include <set>
#include <vector>

#include "kiln/IROperator.h"
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

class Hoist : public IRMutator {
protected:
    std::set<std::string> allocations;
    int counter = 0;

    Stmt visit(const Allocate *op) override {
        bool added = allocations.insert(op->name).second;
        Stmt s = IRMutator::visit(op);
        if (added) allocations.erase(op->name);
        return s;
    }

    Stmt visit(const For *op) override {
        Stmt body = mutate(op->body);
        Stmt loop = body.same_as(op->body) ? Stmt(op) : For::make(op->name, op->min, op->extent, op->for_type, body);
        if (op->for_type != ForType::Serial) return loop;
        // The body's lets, then one store into an allocation.
        std::vector<const LetStmt *> lets;
        Stmt inner = body;
        while (const LetStmt *l = inner.as<LetStmt>()) lets.push_back(l), inner = l->body;
        const Store *store = inner.as<Store>();
        if (!store || !allocations.count(store->name)) return loop;
        UnconditionalLoads finder;
        for (const LetStmt *l : lets) finder.include(l->value);
        finder.include(store->value);
        finder.include(store->index);
        std::vector<std::pair<std::string, Expr>> hoisted;
        for (const Load *load : finder.loads) {
            if (load->name == store->name) continue;
            if (expr_uses_var(load->index, op->name)) continue;
            bool uses_let = false;
            for (const LetStmt *l : lets) uses_let = uses_let || expr_uses_var(load->index, l->name);
            if (uses_let) continue;
            std::string name = load->name + ".hoisted." + std::to_string(counter++);
            body = ReplaceLoad(load, Variable::make(load->type, name)).mutate(body);
            hoisted.emplace_back(name, Expr(load));
        }
        if (hoisted.empty()) return loop;
        Stmt s = For::make(op->name, op->min, op->extent, op->for_type, body);
        for (auto it = hoisted.rbegin(); it != hoisted.rend(); ++it) s = LetStmt::make(it->first, it->second, s);
        const int64_t *n = as_const_int(op->extent);
        if (n && *n > 0) return s;
        return IfThenElse::make(Expr(0) < op->extent, s);
    }
};

}  // namespace

Stmt hoist_invariant_loads(const Stmt &s) { return Hoist().mutate(s); }

}  // namespace internal
}  // namespace kiln
