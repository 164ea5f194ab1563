#include "UnrollLoops.h"

#include "ir/IRVisitor.h"
#include "ir/Substitute.h"

namespace kiln {
namespace internal {

namespace {

class Unroll : public IRMutator {
public:
    explicit Unroll(const LoopSources &s) : sources(s) {}

protected:
    const LoopSources &sources;
    Stmt visit(const For *op) override {
        if (op->for_type != ForType::Unrolled) return IRMutator::visit(op);
        Stmt body = mutate(op->body);
        const int64_t *n = as_const_int(op->extent);
        user_assert(n) << non_constant_extent_error(sources, op->name, op->extent, "unroll");
        user_assert(*n <= 1024) << "Loop " << op->name << " is scheduled unroll() with extent " << *n
                                << ", which would make the code too large; unroll by a smaller factor";
        std::vector<Stmt> copies;
        for (int64_t i = 0; i < *n; i++) copies.push_back(substitute(op->name, op->min + (int)i, body));
        return Block::make(copies);
    }
};

}  // namespace

Stmt unroll_loops(const Stmt &s, const LoopSources &sources) {
    return Unroll(sources).mutate(s);
}

}  // namespace internal
}  // namespace kiln
