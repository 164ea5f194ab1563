// What hoist_invariant_loads and promote_accumulators both rewrite: an
// innermost serial loop whose body is lets, then one Store into a buffer
// the pipeline allocates (in scope), which therefore overlaps no input,
// output or other allocation (not one that may be an output's buffer,
// Allocate::owns_memory()).
//
//   allocate f[..] { ... for (r, min, extent) { let a = ..  f[i] = g(a, ..) } ... }
//                        ^ rewrite({loop, body, lets {a}, store f[i]})
#pragma once
#include <set>
#include <string>
#include <vector>

#include "ir/IRVisitor.h"

namespace kiln {
namespace internal {

class StoreLoopMutator : public IRMutator {
protected:
    struct StoreLoop {
        const For *loop;                     // as it was
        Stmt body;                           // its body, mutated
        std::vector<const LetStmt *> lets;   // the body's lets, outermost first
        const Store *store;                  // the body's one store
    };
    // The loop's replacement, or undefined to keep it.
    virtual Stmt rewrite(const StoreLoop &l) = 0;
    // The same for an innermost serial loop of another shape (e.g. several
    // stores); `body` is mutated already. Default: keep it.
    virtual Stmt rewrite_other(const For *, const Stmt &) { return Stmt(); }
    // Whether `name` is a pipeline allocation in scope that tracks() accepts.
    bool tracked(const std::string &name) const { return allocations.count(name) > 0; }
    // Whether stores into this allocation are rewritten (default: all).
    virtual bool tracks(const Allocate *) { return true; }

    Stmt visit(const Allocate *op) override;
    Stmt visit(const For *op) override;

private:
    std::set<std::string> allocations;
};

// s, run only if `loop` runs at all: inside if (0 < extent) unless the
// extent is a positive constant.
Stmt if_loop_runs(const For *loop, const Stmt &s);

}  // namespace internal
}  // namespace kiln
