// Expr and Stmt: reference-counted handles to immutable IR nodes.
//
// The node classes themselves live in dsl/ir/IR.h; this header only needs the
// base classes so that user code can hold and combine expressions.
#pragma once
#include <atomic>
#include <memory>
#include <string>

#include "Type.h"

namespace kiln {

// Every node kind, written once. Expressions first, then statements.
#define KILN_FOR_EACH_EXPR_NODE(X) \
    X(IntImm) X(UIntImm) X(FloatImm) X(StringImm) X(Cast) X(Variable) X(Add) X(Sub) X(Mul) X(Div) X(Mod) \
    X(Min) X(Max) X(EQ) X(NE) X(LT) X(LE) X(GT) X(GE) X(And) X(Or) X(Not) X(Select) X(Load) X(Ramp)   \
    X(Broadcast) X(Call) X(Let)
#define KILN_FOR_EACH_STMT_NODE(X) \
    X(LetStmt) X(AssertStmt) X(ProducerConsumer) X(For) X(Store) X(Provide) X(Allocate) X(Realize) \
    X(Block) X(IfThenElse) X(Evaluate)

enum class IRNodeType {
#define KILN_ENUM(N) N,
    KILN_FOR_EACH_EXPR_NODE(KILN_ENUM) KILN_FOR_EACH_STMT_NODE(KILN_ENUM)
#undef KILN_ENUM
};

struct IRNode : std::enable_shared_from_this<IRNode> {
    explicit IRNode(IRNodeType t) : node_type(t) {}
    virtual ~IRNode() = default;
    const IRNodeType node_type;
};

struct BaseExprNode : IRNode {
    BaseExprNode(IRNodeType t, Type ty) : IRNode(t), type(ty) {}
    Type type;
    ~BaseExprNode() override { delete printed.load(); }
    // The node's printed text once something has asked for it (the
    // simplifier's ordering key, dsl/ir/ExprKey.h), owned by the node;
    // nodes never change, so neither does the text. Set once, atomically,
    // since nodes may be shared between threads.
    mutable std::atomic<const std::string *> printed{nullptr};
};

struct BaseStmtNode : IRNode {
    explicit BaseStmtNode(IRNodeType t) : IRNode(t) {}
};

template<typename Node>
class IRHandle {
public:
    IRHandle() = default;
    explicit IRHandle(std::shared_ptr<const Node> p) : ptr(std::move(p)) {}
    bool defined() const { return ptr != nullptr; }
    const Node *get() const { return ptr.get(); }
    const Node *operator->() const { return ptr.get(); }
    bool same_as(const IRHandle &o) const { return ptr == o.ptr; }
    IRNodeType node_type() const { return ptr->node_type; }
    template<typename T> const T *as() const {
        return (ptr && ptr->node_type == T::node_kind) ? static_cast<const T *>(ptr.get()) : nullptr;
    }
    const std::shared_ptr<const Node> &shared() const { return ptr; }

protected:
    std::shared_ptr<const Node> ptr;
};

class Expr : public IRHandle<BaseExprNode> {
public:
    Expr() = default;
    explicit Expr(std::shared_ptr<const BaseExprNode> p) : IRHandle(std::move(p)) {}
    // The handle of a node that is already owned by some Expr.
    explicit Expr(const BaseExprNode *n)
        : IRHandle(std::static_pointer_cast<const BaseExprNode>(n->shared_from_this())) {}
    Expr(int x);            // int32 constant
    Expr(bool x);           // bool constant
    Expr(float x);          // float32 constant
    Expr(double x);         // float32 constant, as in Halide
    Expr(int64_t x);        // int64 constant
    Expr(uint32_t x);       // uint32 constant
    Type type() const { return ptr->type; }
};

class Stmt : public IRHandle<BaseStmtNode> {
public:
    Stmt() = default;
    explicit Stmt(std::shared_ptr<const BaseStmtNode> p) : IRHandle(std::move(p)) {}
    explicit Stmt(const BaseStmtNode *n)
        : IRHandle(std::static_pointer_cast<const BaseStmtNode>(n->shared_from_this())) {}
};

// Printing (dsl/ir/IRPrinter.cpp).
std::ostream &operator<<(std::ostream &, const Expr &);
std::ostream &operator<<(std::ostream &, const Stmt &);
std::string to_string(const Expr &);
std::string to_string(const Stmt &);

}  // namespace kiln
