#include "SplitWideVectors.h"

#include "ir/IRVisitor.h"
#include "kiln/IROperator.h"

#include <algorithm>

namespace kiln {
namespace internal {

namespace {

// The bytes of the widest value a statement loads or stores, and whether
// it has a vectorized loop.
class WidestValue : public IRVisitor {
public:
    int bytes = 0;
    bool vectorized_inside = false;

private:
    using IRVisitor::visit;
    void visit(const For *op) override {
        vectorized_inside |= op->for_type == ForType::Vectorized;
        IRVisitor::visit(op);
    }
    void visit(const Load *op) override {
        bytes = std::max(bytes, op->type.bytes());
        IRVisitor::visit(op);
    }
    void visit(const Store *op) override {
        bytes = std::max(bytes, op->value.type().bytes());
        IRVisitor::visit(op);
    }
};

class SplitWide : public IRMutator {
public:
    explicit SplitWide(int register_bytes) : register_bytes(register_bytes) {}

private:
    const int register_bytes;
    using IRMutator::visit;

    Stmt visit(const For *op) override {
        Stmt s = IRMutator::visit(op);
        const int64_t *n = as_const_int(op->extent);
        // More than 64 lanes, or a vectorized loop inside: vectorize_loops'
        // user errors, which name the loops as the schedule made them.
        if (op->for_type != ForType::Vectorized || !n || *n > 64) return s;
        WidestValue w;
        w.include(op->body);
        if (w.vectorized_inside || w.bytes == 0 || *n * w.bytes <= 2 * register_bytes) return s;
        const int k = register_bytes / w.bytes;
        if (k < 2 || *n % k != 0) return s;
        const std::string reg = op->name + "_reg", lane = op->name + "_lane";
        Expr x = op->min + Variable::make(Int(32), reg) * k + Variable::make(Int(32), lane);
        Stmt body = LetStmt::make(op->name, x, s.as<For>()->body);
        body = For::make(lane, 0, k, ForType::Vectorized, body);
        return For::make(reg, 0, (int)(*n / k), ForType::Unrolled, body);
    }
};

}  // namespace

Stmt split_wide_vectors(const Stmt &s, int register_bytes) {
    return SplitWide(register_bytes).mutate(s);
}

}  // namespace internal
}  // namespace kiln
