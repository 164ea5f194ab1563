#include "BoundAllocations.h"

#include <algorithm>

#include "analysis/ConstantBound.h"
#include "ir/IRVisitor.h"
#include "kiln/IROperator.h"

namespace kiln {
namespace internal {

bool allocation_on_stack(const Allocate *op) {
    if (!op->owns_memory()) return false;  // a pointer chosen at run time
    const int64_t *n = as_const_int(op->size);
    return n && *n * op->type.bytes() <= stack_allocation_bytes;
}

namespace {

// A constant bound of an allocation's size, a product of its extents (and
// constants), as storage flattening writes it. Each factor is bounded on
// its own, and a factor's bound below zero counts as zero: the buffer is
// accessed only inside its region, so an access means every extent is at
// least 1, and its index is then below the product of the extents, at most
// the product of their bounds. (Whether an extent can be negative at all,
// e.g. a tile past its region's end, often has no proof; nothing reads such
// a buffer.)
std::optional<int64_t> size_bound(const Expr &size, const BoundFacts &facts, int64_t limit) {
    if (const Mul *m = size.as<Mul>()) {
        std::optional<int64_t> a = size_bound(m->a, facts, limit);
        if (!a) return a;
        std::optional<int64_t> b = size_bound(m->b, facts, limit);
        if (!b) return b;
        if (*a == 0 || *b == 0) return 0;
        if (*a > limit || *b > limit / *a) return limit + 1;  // past the limit (and no overflow)
        return *a * *b;
    }
    std::optional<int64_t> n = constant_upper_bound(size, facts);
    if (n) n = std::min(std::max<int64_t>(*n, 0), limit + 1);
    return n;
}

class BoundSizes : public IRMutator {
    BoundFacts facts;

    using IRMutator::visit;

    Stmt visit(const LetStmt *op) override {
        facts.push_let(op->name, op->value);
        Stmt s = IRMutator::visit(op);
        facts.pop_let(op->name);
        return s;
    }

    Stmt visit(const For *op) override {
        facts.push_loop(op->name, op->min, op->extent);
        loops++;
        Stmt s = IRMutator::visit(op);
        loops--;
        facts.pop_loop(op->name);
        return s;
    }
    int loops = 0;  // around the statement visited

    Stmt visit(const Allocate *op) override {
        Stmt body = mutate(op->body);
        Expr size = op->size;
        // Outside every loop an allocation is taken once a call: a heap
        // block costs nothing there, and the query would (a compute_root
        // Func's size follows the image's; camera_pipe unfused spent a
        // quarter of its lowering on such queries).
        if (op->owns_memory() && !as_const_int(size) && loops > 0) {
            const int64_t limit = stack_allocation_bytes / op->type.bytes();
            std::optional<int64_t> n = size_bound(size, facts, limit);
            if (n && *n <= limit) size = make_const(size.type(), *n);
        }
        if (body.same_as(op->body) && size.same_as(op->size)) return Stmt(op);
        return Allocate::make(op->name, op->type, size, body, op->in_output, op->in_place);
    }
};

}  // namespace

Stmt bound_allocations(const Stmt &s) { return BoundSizes().mutate(s); }

}  // namespace internal
}  // namespace kiln
