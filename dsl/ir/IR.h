// The Kiln IR: expression and statement nodes.
//
// Semantics, written once (they follow Halide's so that differential tests
// against Halide 14 can be exact):
//  - Unsigned integers and signed integers narrower than 32 bits wrap on
//    overflow (two's complement). Signed 32- and 64-bit overflow is undefined,
//    as in Halide: the simplifier and the C++ compiler both assume it does not
//    happen (this is what lets index arithmetic be optimized).
//  - Div and Mod on integers round toward negative infinity: a == (a/b)*b + a%b
//    with 0 <= a%b < |b|. Division or modulo by zero yields zero.
//  - Div on floats is IEEE division, except that division by a constant is
//    multiplication by its reciprocal (as Halide does); Mod on floats is
//    a - b*floor(a/b).
//  - Cast follows C: float->int truncates toward zero, int->narrower int wraps.
//  - Float math is IEEE: no reassociation, no FMA contraction, unless the target
//    has fast_math, which allows both (Halide's default float mode).
//  - Operands of a binary node have the same type; bools are UInt(1); the
//    result of a comparison is Bool with the operands' lane count.
//  - Select's condition is Bool (select() rejects other types, as Halide
//    does). A scalar condition, or a Broadcast of one, evaluates only the
//    side it picks, like C's ?: (CodeGen_C and the IR interpreter of
//    tests/fuzz do so; vectorize_loops relies on it to guard a dense load
//    that is in bounds only when the condition holds). A vector condition
//    evaluates both sides and picks per lane, so no side may have side
//    effects, and bounds inference covers what either side reads.
//  - Variables are scoped by Let/LetStmt/For; names are dotted paths
//    ("blur.s0.x.xi"). In a lowered pipeline a name is never shadowed, but
//    sibling statements may bind the same name (a loop's unrolled or
//    partitioned copies; Lower.h states the lowered form's rules).
//
// Every node has a static make() that checks its invariants with
// internal_assert; nodes are immutable and shared.
#pragma once
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "Error.h"
#include "kiln/Expr.h"
#include "kiln/IROperator.h"
#include "kiln/Param.h"
#include "kiln/RDom.h"
#include "kiln/Schedule.h"

namespace kiln {
namespace internal {

struct FunctionContents;

template<typename T>
struct ExprNode : BaseExprNode {
    explicit ExprNode(Type t) : BaseExprNode(T::node_kind, t) {}
};
template<typename T>
struct StmtNode : BaseStmtNode {
    StmtNode() : BaseStmtNode(T::node_kind) {}
};

#define KILN_NODE(N) static constexpr IRNodeType node_kind = IRNodeType::N;

struct IntImm : ExprNode<IntImm> {
    KILN_NODE(IntImm)
    int64_t value;
    IntImm(Type t, int64_t v) : ExprNode(t), value(v) {}
    static Expr make(Type t, int64_t v);  // wraps v to t's width
};
struct UIntImm : ExprNode<UIntImm> {
    KILN_NODE(UIntImm)
    uint64_t value;
    UIntImm(Type t, uint64_t v) : ExprNode(t), value(v) {}
    static Expr make(Type t, uint64_t v);
};
struct FloatImm : ExprNode<FloatImm> {
    KILN_NODE(FloatImm)
    double value;
    FloatImm(Type t, double v) : ExprNode(t), value(v) {}
    static Expr make(Type t, double v);  // rounds to float for 32 bits
};
struct StringImm : ExprNode<StringImm> {
    KILN_NODE(StringImm)
    std::string value;
    StringImm(std::string v) : ExprNode(Int(32)), value(std::move(v)) {}  // type unused
    static Expr make(const std::string &v);
};
struct Cast : ExprNode<Cast> {
    KILN_NODE(Cast)
    Expr value;
    Cast(Type t, Expr v) : ExprNode(t), value(std::move(v)) {}
    static Expr make(Type t, Expr v);
};
struct Variable : ExprNode<Variable> {
    KILN_NODE(Variable)
    std::string name;
    std::shared_ptr<ParameterContents> param;           // set for Params and buffer fields
    std::shared_ptr<ReductionDomainContents> rdom;      // set for RVars
    Variable(Type t, std::string n) : ExprNode(t), name(std::move(n)) {}
    static Expr make(Type t, const std::string &name, std::shared_ptr<ParameterContents> p = nullptr,
                     std::shared_ptr<ReductionDomainContents> r = nullptr);
};

#define KILN_BINARY_NODE(N)                                                 \
    struct N : ExprNode<N> {                                                \
        KILN_NODE(N)                                                        \
        Expr a, b;                                                          \
        N(Type t, Expr x, Expr y) : ExprNode(t), a(std::move(x)), b(std::move(y)) {} \
        static Expr make(Expr a, Expr b);                                   \
    };
KILN_BINARY_NODE(Add)
KILN_BINARY_NODE(Sub)
KILN_BINARY_NODE(Mul)
KILN_BINARY_NODE(Div)
KILN_BINARY_NODE(Mod)
KILN_BINARY_NODE(Min)
KILN_BINARY_NODE(Max)
KILN_BINARY_NODE(EQ)
KILN_BINARY_NODE(NE)
KILN_BINARY_NODE(LT)
KILN_BINARY_NODE(LE)
KILN_BINARY_NODE(GT)
KILN_BINARY_NODE(GE)
KILN_BINARY_NODE(And)
KILN_BINARY_NODE(Or)
#undef KILN_BINARY_NODE

struct Not : ExprNode<Not> {
    KILN_NODE(Not)
    Expr a;
    Not(Type t, Expr x) : ExprNode(t), a(std::move(x)) {}
    static Expr make(Expr a);
};
struct Select : ExprNode<Select> {
    KILN_NODE(Select)
    Expr condition, true_value, false_value;
    Select(Type t, Expr c, Expr a, Expr b)
        : ExprNode(t), condition(std::move(c)), true_value(std::move(a)), false_value(std::move(b)) {}
    static Expr make(Expr c, Expr t, Expr f);
};
// Load from a flat buffer (after storage flattening). The index has the
// lane count of the result.
struct Load : ExprNode<Load> {
    KILN_NODE(Load)
    std::string name;
    Expr index;
    Load(Type t, std::string n, Expr i) : ExprNode(t), name(std::move(n)), index(std::move(i)) {}
    static Expr make(Type t, const std::string &name, Expr index);
};
struct Ramp : ExprNode<Ramp> {
    KILN_NODE(Ramp)
    Expr base, stride;
    int lanes;
    Ramp(Type t, Expr b, Expr s, int l) : ExprNode(t), base(std::move(b)), stride(std::move(s)), lanes(l) {}
    static Expr make(Expr base, Expr stride, int lanes);
};
struct Broadcast : ExprNode<Broadcast> {
    KILN_NODE(Broadcast)
    Expr value;
    int lanes;
    Broadcast(Type t, Expr v, int l) : ExprNode(t), value(std::move(v)), lanes(l) {}
    static Expr make(Expr value, int lanes);
};

// A call: to a Func (multi-dimensional, before flattening), to an input
// image, or to a pure math function. A Func returning a Tuple is called once
// per element: value_index says which (0 for every other call).
struct Call : ExprNode<Call> {
    KILN_NODE(Call)
    enum CallType { Func, Image, PureExtern };
    std::string name;
    std::vector<Expr> args;
    CallType call_type;
    std::shared_ptr<FunctionContents> func;  // Func calls; null for a Func's call to itself
    std::shared_ptr<ParameterContents> param;  // Image calls
    int value_index = 0;
    Call(Type t, std::string n, std::vector<Expr> a, CallType ct)
        : ExprNode(t), name(std::move(n)), args(std::move(a)), call_type(ct) {}
    static Expr make(Type t, const std::string &name, std::vector<Expr> args, CallType ct,
                     std::shared_ptr<FunctionContents> func = nullptr,
                     std::shared_ptr<ParameterContents> param = nullptr, int value_index = 0);
};
struct Let : ExprNode<Let> {
    KILN_NODE(Let)
    std::string name;
    Expr value, body;
    Let(Type t, std::string n, Expr v, Expr b) : ExprNode(t), name(std::move(n)), value(std::move(v)), body(std::move(b)) {}
    static Expr make(const std::string &name, Expr value, Expr body);
};

// ---- Statements ----

struct LetStmt : StmtNode<LetStmt> {
    KILN_NODE(LetStmt)
    std::string name;
    Expr value;
    Stmt body;
    static Stmt make(const std::string &name, Expr value, Stmt body);
};
// If condition is false, report the message (StringImm and numeric parts
// concatenated) and return error_code (negative) from the kernel.
struct AssertStmt : StmtNode<AssertStmt> {
    KILN_NODE(AssertStmt)
    Expr condition;
    int error_code;
    std::vector<Expr> message;
    static Stmt make(Expr condition, int error_code, std::vector<Expr> message);
};
// Marks the region that produces Func `name`, or the region that consumes it.
struct ProducerConsumer : StmtNode<ProducerConsumer> {
    KILN_NODE(ProducerConsumer)
    std::string name;
    bool is_producer;
    Stmt body;
    static Stmt make(const std::string &name, bool is_producer, Stmt body);
};
struct For : StmtNode<For> {
    KILN_NODE(For)
    std::string name;
    Expr min, extent;
    ForType for_type;
    Stmt body;
    static Stmt make(const std::string &name, Expr min, Expr extent, ForType t, Stmt body);
};
struct Store : StmtNode<Store> {
    KILN_NODE(Store)
    std::string name;
    Expr value, index;
    static Stmt make(const std::string &name, Expr value, Expr index);
};
// Multi-dimensional store into Func `name` (before flattening): one value
// per Tuple element, all evaluated before any is stored.
struct Provide : StmtNode<Provide> {
    KILN_NODE(Provide)
    std::string name;
    std::vector<Expr> values;
    std::vector<Expr> args;
    static Stmt make(const std::string &name, std::vector<Expr> values, std::vector<Expr> args);
    static Stmt make(const std::string &name, Expr value, std::vector<Expr> args) {
        return make(name, std::vector<Expr>{std::move(value)}, std::move(args));
    }
};
struct Allocate : StmtNode<Allocate> {
    KILN_NODE(Allocate)
    std::string name;
    Type type;
    Expr size;  // in elements
    Stmt body;
    // Storage shared with an output (realize_into_outputs): if `in_output`
    // is set, the buffer is output `in_output`'s memory when `in_place`
    // holds at run time (nothing is allocated; its stride lets are the
    // output's), and an allocation of its own otherwise.
    std::string in_output;
    Expr in_place;
    static Stmt make(const std::string &name, Type t, Expr size, Stmt body, const std::string &in_output = "",
                     Expr in_place = Expr());
    // Whether no output or other buffer can share this one's memory.
    bool owns_memory() const { return in_output.empty(); }
};
struct Range {
    Expr min, extent;
};
// Storage for Func `name` over a box (before flattening), one buffer per
// Tuple element (types). fold_factors[d] is undefined, or the circular-buffer
// size of dimension d (storage folding).
struct Realize : StmtNode<Realize> {
    KILN_NODE(Realize)
    std::string name;
    std::vector<Type> types;
    std::vector<Range> bounds;
    std::vector<Expr> fold_factors;
    Stmt body;
    // As Allocate's: output `in_output`'s buffer when `in_place` holds at
    // run time (the realized region is then the output buffer's), else an
    // allocation of its own.
    std::string in_output;
    Expr in_place;
    static Stmt make(const std::string &name, std::vector<Type> types, std::vector<Range> bounds, Stmt body,
                     std::vector<Expr> fold_factors = {}, const std::string &in_output = "", Expr in_place = Expr());
    static Stmt make(const std::string &name, Type t, std::vector<Range> bounds, Stmt body,
                     std::vector<Expr> fold_factors = {}) {
        return make(name, std::vector<Type>{t}, std::move(bounds), std::move(body), std::move(fold_factors));
    }
};
struct Block : StmtNode<Block> {
    KILN_NODE(Block)
    Stmt first, rest;
    static Stmt make(Stmt first, Stmt rest);  // either may be undefined
    static Stmt make(const std::vector<Stmt> &stmts);
};
struct IfThenElse : StmtNode<IfThenElse> {
    KILN_NODE(IfThenElse)
    Expr condition;
    Stmt then_case, else_case;
    static Stmt make(Expr c, Stmt t, Stmt e = Stmt());
};
struct Evaluate : StmtNode<Evaluate> {
    KILN_NODE(Evaluate)
    Expr value;
    static Stmt make(Expr v);
};

#undef KILN_NODE

// Helpers
Expr make_var(const std::string &name, Type t = Int(32));
// The buffer holding element `index` of a Func with `count` elements: the
// Func's own name for a single value, "<name>.<index>" for a Tuple.
std::string tuple_buffer_name(const std::string &func, int index, int count);

}  // namespace internal
}  // namespace kiln
