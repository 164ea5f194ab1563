#include "UnswitchDenseLoads.h"

#include <set>
#include <vector>

#include "ir/BoundNames.h"
#include "ir/IRVisitor.h"
#include "ir/Substitute.h"
#include "kiln/IROperator.h"

namespace kiln {
namespace internal {

namespace {

// Whether an expression reads memory (which the loop may write).
class ReadsMemory : public IRVisitor {
public:
    bool found = false;

protected:
    using IRVisitor::visit;
    void visit(const Load *op) override {
        found = true;
        IRVisitor::visit(op);
    }
};

// A select between a dense vector load and something else, on a scalar
// test that reads neither `loop`, nor a name in `bound`, nor memory.
bool invariant_dense_select(const Select *op, const std::string &loop, const std::set<std::string> &bound) {
    const Load *l = op->true_value.as<Load>();
    if (!l || !l->type.is_vector() || !l->index.as<Ramp>() || !op->condition.type().is_scalar()) return false;
    if (expr_uses_var_if(op->condition, [&](const std::string &n) { return n == loop || bound.count(n) > 0; }))
        return false;
    ReadsMemory reads;
    reads.include(op->condition);
    return !reads.found;
}

// The tests of such selects directly in a loop body (not in nested loops),
// each once.
class Tests : public IRVisitor {
public:
    Tests(const std::string &loop, const std::set<std::string> &bound) : loop(loop), bound(bound) {}
    std::vector<Expr> found;

protected:
    using IRVisitor::visit;
    const std::string &loop;
    const std::set<std::string> &bound;
    void visit(const For *) override {}
    void visit(const Select *op) override {
        IRVisitor::visit(op);
        if (!invariant_dense_select(op, loop, bound)) return;
        for (const Expr &c : found)
            if (equal(c, op->condition)) return;
        found.push_back(op->condition);
    }
};

// The body with those selects replaced by their dense loads.
class TakeDense : public IRMutator {
public:
    TakeDense(const std::string &loop, const std::set<std::string> &bound) : loop(loop), bound(bound) {}

protected:
    using IRMutator::visit;
    const std::string &loop;
    const std::set<std::string> &bound;
    Stmt visit(const For *op) override { return Stmt(op); }
    Expr visit(const Select *op) override {
        if (invariant_dense_select(op, loop, bound)) return op->true_value;
        return IRMutator::visit(op);
    }
};

class Unswitch : public IRMutator {
protected:
    using IRMutator::visit;
    Stmt visit(const For *op) override {
        Stmt body = mutate(op->body);
        Stmt loop = body.same_as(op->body) ? Stmt(op) : For::make(op->name, op->min, op->extent, op->for_type, body);
        if (op->for_type != ForType::Serial && op->for_type != ForType::LaneFallback) return loop;
        std::vector<std::string> names = bound_names(body);
        std::set<std::string> bound(names.begin(), names.end());
        Tests tests(op->name, bound);
        tests.include(body);
        if (tests.found.empty()) return loop;
        Expr all;
        for (const Expr &c : tests.found) all = all.defined() ? (all && c) : c;
        Stmt dense = For::make(op->name, op->min, op->extent, op->for_type,
                               TakeDense(op->name, bound).mutate(body));
        return IfThenElse::make(all, dense, loop);
    }
};

}  // namespace

Stmt unswitch_dense_loads(const Stmt &s) { return Unswitch().mutate(s); }

}  // namespace internal
}  // namespace kiln
