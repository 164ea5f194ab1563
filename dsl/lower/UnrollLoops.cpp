#include "UnrollLoops.h"

#include "ir/IRVisitor.h"
#include "ir/Substitute.h"

namespace kiln {
namespace internal {

namespace {

class Unroll : public IRMutator {
public:
    explicit Unroll(const std::map<std::string, std::string> &o) : origins(o) {}

protected:
    const std::map<std::string, std::string> &origins;
    Stmt visit(const For *op) override {
        if (op->for_type != ForType::Unrolled) return IRMutator::visit(op);
        Stmt body = mutate(op->body);
        const int64_t *n = as_const_int(op->extent);
        auto origin = origins.find(op->name);
        user_assert(n) << (origin == origins.end() ? "" : origin->second) << "Loop " << op->name << " is scheduled unroll(), but its extent " << op->extent
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

Stmt unroll_loops(const Stmt &s, const std::map<std::string, std::string> &origins) {
    return Unroll(origins).mutate(s);
}

}  // namespace internal
}  // namespace kiln
