// The work one store does: the calls to Funcs and images in its values, by
// name, and its operations, each distinct subexpression once. LoopCounts
// counts each store's once and multiplies it by the store's executions.
//
//   u(x) = select(c == 0, a(x) + 1, (b(x) * 2 + 3) * 4)   (x vectorized, c not)
//     calls {a: 1, b: 1}; arith 1 (==) + 1 (select) + 3 (the larger branch)
#pragma once
#include <functional>
#include <map>
#include <set>
#include <string>

#include "ir/IRVisitor.h"

namespace kiln {
namespace internal {

// Calls to Funcs in an expression, by name (every occurrence: the report's
// reads), and its operations, each distinct subexpression once: lowering's
// CSE pass (lower/CSE.h) names what a store computes twice, so harris's
// output, which inlines the structure tensor's sums into det - k trace^2
// and so names Sxx three times, computes each sum once.
class CountCalls : public IRVisitor {
public:
    std::map<std::string, int64_t> calls;
    int64_t arith = 0, divs = 0, transcendentals = 0;
    // Whether a condition is the same in every lane of the enclosing
    // vectorized loop (or no loop is vectorized); unset: none is.
    std::function<bool(const Expr &)> uniform;
    // The bytes of the widest type of the values included (not of indices
    // or conditions): a uint8 store of float arithmetic, 4.
    int widest = 0;

    void include(const Expr &e) override;
    using IRVisitor::include;
    void visit(const Call *op) override;

    // Operations in an index (a store's) are not counted.
    void include_index(const Expr &e) {
        in_index = true;
        include(e);
        in_index = false;
    }

private:
    bool in_index = false, repeated = false;
    std::set<std::string> seen;
    int64_t &arith_or_none() { return in_index || repeated ? ignored : arith; }
    int64_t ignored = 0;
    void visit(const Add *op) override { arith_or_none()++, IRVisitor::visit(op); }
    void visit(const Sub *op) override { arith_or_none()++, IRVisitor::visit(op); }
    void visit(const Mul *op) override { arith_or_none()++, IRVisitor::visit(op); }
    void visit(const Div *op) override { (in_index || repeated ? ignored : op->type.is_float() ? arith : divs)++, IRVisitor::visit(op); }
    void visit(const Mod *op) override { (in_index || repeated ? ignored : divs)++, IRVisitor::visit(op); }
    void visit(const Min *op) override { arith_or_none()++, IRVisitor::visit(op); }
    void visit(const Max *op) override { arith_or_none()++, IRVisitor::visit(op); }
    void visit(const EQ *op) override { arith_or_none()++, IRVisitor::visit(op); }
    void visit(const NE *op) override { arith_or_none()++, IRVisitor::visit(op); }
    void visit(const LT *op) override { arith_or_none()++, IRVisitor::visit(op); }
    void visit(const LE *op) override { arith_or_none()++, IRVisitor::visit(op); }
    void visit(const GT *op) override { arith_or_none()++, IRVisitor::visit(op); }
    void visit(const GE *op) override { arith_or_none()++, IRVisitor::visit(op); }
    void visit(const And *op) override { arith_or_none()++, IRVisitor::visit(op); }
    void visit(const Or *op) override { arith_or_none()++, IRVisitor::visit(op); }
    void visit(const Not *op) override { arith_or_none()++, IRVisitor::visit(op); }
    void visit(const Cast *op) override { arith_or_none()++, IRVisitor::visit(op); }
    void visit(const Select *op) override;
    // A counter for one branch of a select, which knows what this one has seen.
    CountCalls branch() const;
};

}  // namespace internal
}  // namespace kiln
