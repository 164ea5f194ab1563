// IRVisitor walks the IR read-only; IRMutator rebuilds it.
//
// IRMutator returns the very same node when no child changed, so sharing is
// kept and `same_as` tells whether a pass did anything.
#pragma once
#include "IR.h"

namespace kiln {
namespace internal {

class IRVisitor {
public:
    virtual ~IRVisitor() = default;
    virtual void include(const Expr &e);
    virtual void include(const Stmt &s);

protected:
#define KILN_VISIT_DECL(N) virtual void visit(const N *);
    KILN_FOR_EACH_EXPR_NODE(KILN_VISIT_DECL)
    KILN_FOR_EACH_STMT_NODE(KILN_VISIT_DECL)
#undef KILN_VISIT_DECL
};

class IRMutator {
public:
    virtual ~IRMutator() = default;
    virtual Expr mutate(const Expr &e);
    virtual Stmt mutate(const Stmt &s);

protected:
    // Appends the mutated elements of in to out; whether any changed.
    bool mutate_all(const std::vector<Expr> &in, std::vector<Expr> &out);
#define KILN_VISIT_DECL(N) virtual Expr visit(const N *);
    KILN_FOR_EACH_EXPR_NODE(KILN_VISIT_DECL)
#undef KILN_VISIT_DECL
#define KILN_VISIT_DECL(N) virtual Stmt visit(const N *);
    KILN_FOR_EACH_STMT_NODE(KILN_VISIT_DECL)
#undef KILN_VISIT_DECL
};

}  // namespace internal
}  // namespace kiln
