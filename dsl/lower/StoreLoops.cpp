#include "StoreLoops.h"

#include "kiln/IROperator.h"

namespace kiln {
namespace internal {

Stmt StoreLoopMutator::visit(const Allocate *op) {
    bool added = op->owns_memory() && tracks(op) && allocations.insert(op->name).second;
    Stmt s = IRMutator::visit(op);
    if (added) allocations.erase(op->name);
    return s;
}

Stmt StoreLoopMutator::visit(const For *op) {
    Stmt body = mutate(op->body);
    Stmt loop = body.same_as(op->body) ? Stmt(op) : For::make(op->name, op->min, op->extent, op->for_type, body);
    if (op->for_type != ForType::Serial) return loop;
    StoreLoop l{op, body, {}, nullptr};
    Stmt inner = body;
    while (const LetStmt *let = inner.as<LetStmt>()) l.lets.push_back(let), inner = let->body;
    l.store = inner.as<Store>();
    Stmt r;
    if (l.store && allocations.count(l.store->name)) r = rewrite(l);
    else if (!l.store) r = rewrite_other(op, body);
    return r.defined() ? r : loop;
}

Stmt if_loop_runs(const For *loop, const Stmt &s) {
    const int64_t *n = as_const_int(loop->extent);
    if (n && *n > 0) return s;
    return IfThenElse::make(Expr(0) < loop->extent, s);
}

}  // namespace internal
}  // namespace kiln
