#include "UnrollLoops.h"

#include "ir/IRVisitor.h"
#include "ir/Substitute.h"

namespace kiln {
namespace internal {

namespace {

class Unroll : public IRMutator {
protected:
    Stmt visit(const For *op) override {
        Stmt body = mutate(op->body);
        if (op->for_type != ForType::Unrolled) {
            if (body.same_as(op->body)) return Stmt(op);
            return For::make(op->name, op->min, op->extent, op->for_type, body);
        }
        const int64_t *n = as_const_int(op->extent);
        user_assert(n) << "Loop " << op->name << " is scheduled unroll(), but its extent " << op->extent
                       << " is not a constant; use unroll(var, factor) to split off a constant-size loop, or "
                          "bound() the Func's size";
        user_assert(*n <= 1024) << "Loop " << op->name << " is scheduled unroll() with extent " << *n
                                << ", which would make the code too large; unroll by a smaller factor";
        std::vector<Stmt> copies;
        for (int64_t i = 0; i < *n; i++) copies.push_back(substitute(op->name, op->min + (int)i, body));
        return Block::make(copies);
    }
};

}  // namespace

Stmt unroll_loops(const Stmt &s) { return Unroll().mutate(s); }

}  // namespace internal
}  // namespace kiln
