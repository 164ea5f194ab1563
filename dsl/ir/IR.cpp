#include "IR.h"

#include "kiln_float16.h"

namespace kiln {
namespace internal {

namespace {
template<typename T, typename... Args>
Expr mk(Args &&...args) {
    return Expr(std::make_shared<const T>(std::forward<Args>(args)...));
}
template<typename T>
Stmt mks(std::shared_ptr<T> n) {
    return Stmt(std::shared_ptr<const BaseStmtNode>(std::move(n)));
}
Type bool_of(const Expr &a) { return Bool(a.type().lanes()); }
}  // namespace

Expr IntImm::make(Type t, int64_t v) {
    internal_assert(t.is_int() && t.is_scalar()) << "IntImm of type " << t.to_string();
    if (t.bits() < 64) {
        int sh = 64 - t.bits();
        v = (int64_t)((uint64_t)v << sh) >> sh;  // wrap to width
    }
    return mk<IntImm>(t, v);
}
Expr UIntImm::make(Type t, uint64_t v) {
    internal_assert(t.is_uint() && t.is_scalar()) << "UIntImm of type " << t.to_string();
    if (t.bits() < 64) v &= ((uint64_t)1 << t.bits()) - 1;
    return mk<UIntImm>(t, v);
}
Expr FloatImm::make(Type t, double v) {
    internal_assert(t.is_float() && t.is_scalar()) << "FloatImm of type " << t.to_string();
    // The value the type holds: rounded to nearest even.
    internal_assert(t.bits() == 16 || t == Float(32) || t == Float(64)) << "FloatImm of type " << t.to_string();
    if (t.bits() == 32) v = (double)(float)v;
    if (t == BFloat(16)) v = kiln_bfloat16_to_float(kiln_bfloat16_from_double(v));
    if (t == Float(16)) v = kiln_float16_to_float(kiln_float16_from_double(v));
    return mk<FloatImm>(t, v);
}
Expr StringImm::make(const std::string &v) { return mk<StringImm>(v); }
Expr Cast::make(Type t, Expr v) {
    internal_assert(v.defined()) << "Cast of undefined";
    internal_assert(t.lanes() == v.type().lanes()) << "Cast changes lanes";
    return mk<Cast>(t, std::move(v));
}
Expr Variable::make(Type t, const std::string &name, std::shared_ptr<ParameterContents> p,
                    std::shared_ptr<ReductionDomainContents> r) {
    auto n = std::make_shared<Variable>(t, name);
    n->param = std::move(p);
    n->rdom = std::move(r);
    return Expr(std::shared_ptr<const BaseExprNode>(std::move(n)));
}

// Arithmetic has its operands' type; a comparison is Bool with their lanes.
#define KILN_BINARY(N, RESULT_TYPE)                                                             \
    Expr N::make(Expr a, Expr b) {                                                              \
        internal_assert(a.defined() && b.defined()) << #N " of undefined";                     \
        internal_assert(a.type() == b.type())                                                   \
            << #N " of mismatched types " << a.type().to_string() << ", " << b.type().to_string(); \
        Type t = RESULT_TYPE;                                                                   \
        return mk<N>(t, std::move(a), std::move(b));                                            \
    }
KILN_BINARY(Add, a.type()) KILN_BINARY(Sub, a.type()) KILN_BINARY(Mul, a.type()) KILN_BINARY(Div, a.type())
KILN_BINARY(Mod, a.type()) KILN_BINARY(Min, a.type()) KILN_BINARY(Max, a.type())
KILN_BINARY(EQ, bool_of(a)) KILN_BINARY(NE, bool_of(a)) KILN_BINARY(LT, bool_of(a)) KILN_BINARY(LE, bool_of(a))
KILN_BINARY(GT, bool_of(a)) KILN_BINARY(GE, bool_of(a))
#undef KILN_BINARY
#define KILN_LOGIC(N)                                                                  \
    Expr N::make(Expr a, Expr b) {                                                     \
        internal_assert(a.defined() && b.defined()) << #N " of undefined";            \
        internal_assert(a.type().is_bool() && b.type().is_bool()) << #N " of non-bool"; \
        internal_assert(a.type().lanes() == b.type().lanes()) << #N " lane mismatch";      \
        Type t = a.type();                                                             \
        return mk<N>(t, std::move(a), std::move(b));                                   \
    }
KILN_LOGIC(And) KILN_LOGIC(Or)
#undef KILN_LOGIC

Expr Not::make(Expr a) {
    internal_assert(a.defined() && a.type().is_bool()) << "Not of non-bool";
    Type t = a.type();
    return mk<Not>(t, std::move(a));
}
Expr Select::make(Expr c, Expr t, Expr f) {
    internal_assert(c.defined() && t.defined() && f.defined()) << "Select of undefined";
    internal_assert(c.type().is_bool()) << "Select condition must be bool";
    internal_assert(t.type() == f.type()) << "Select of mismatched types";
    internal_assert(c.type().lanes() == 1 || c.type().lanes() == t.type().lanes()) << "Select lane mismatch";
    Type ty = t.type();
    return mk<Select>(ty, std::move(c), std::move(t), std::move(f));
}
Expr Load::make(Type t, const std::string &name, Expr index) {
    internal_assert(index.defined() && index.type().element_of() == Int(32)) << "Load index must be int32";
    internal_assert(t.lanes() == index.type().lanes()) << "Load lanes mismatch";
    return mk<Load>(t, name, std::move(index));
}
Expr Ramp::make(Expr base, Expr stride, int lanes) {
    internal_assert(base.defined() && stride.defined() && lanes > 1) << "bad Ramp";
    internal_assert(base.type().is_scalar() && base.type() == stride.type()) << "Ramp of mismatched types";
    Type t = base.type().with_lanes(lanes);
    return mk<Ramp>(t, std::move(base), std::move(stride), lanes);
}
Expr Broadcast::make(Expr value, int lanes) {
    internal_assert(value.defined() && value.type().is_scalar() && lanes > 1) << "bad Broadcast";
    Type t = value.type().with_lanes(lanes);
    return mk<Broadcast>(t, std::move(value), lanes);
}
Expr Call::make(Type t, const std::string &name, std::vector<Expr> args, CallType ct,
                std::shared_ptr<FunctionContents> func, std::shared_ptr<ParameterContents> param, int value_index) {
    for (const auto &a : args) internal_assert(a.defined()) << "Call to " << name << " with undefined arg";
    internal_assert(value_index >= 0 && (value_index == 0 || ct == Func)) << "Call to " << name << " with value index "
                                                                          << value_index;
    auto n = std::make_shared<Call>(t, name, std::move(args), ct);
    n->func = std::move(func);
    n->param = std::move(param);
    n->value_index = value_index;
    return Expr(std::shared_ptr<const BaseExprNode>(std::move(n)));
}
Expr Let::make(const std::string &name, Expr value, Expr body) {
    internal_assert(value.defined() && body.defined()) << "Let of undefined";
    Type t = body.type();
    return mk<Let>(t, name, std::move(value), std::move(body));
}

Stmt LetStmt::make(const std::string &name, Expr value, Stmt body) {
    internal_assert(value.defined() && body.defined()) << "LetStmt " << name << " of undefined";
    auto n = std::make_shared<LetStmt>();
    n->name = name;
    n->value = std::move(value);
    n->body = std::move(body);
    return mks(std::move(n));
}
Stmt AssertStmt::make(Expr condition, int error_code, std::vector<Expr> message) {
    internal_assert(condition.defined() && condition.type().is_bool()) << "bad AssertStmt";
    auto n = std::make_shared<AssertStmt>();
    n->condition = std::move(condition);
    n->error_code = error_code;
    n->message = std::move(message);
    return mks(std::move(n));
}
Stmt ProducerConsumer::make(const std::string &name, bool is_producer, Stmt body) {
    internal_assert(body.defined()) << "ProducerConsumer of undefined";
    auto n = std::make_shared<ProducerConsumer>();
    n->name = name;
    n->is_producer = is_producer;
    n->body = std::move(body);
    return mks(std::move(n));
}
Stmt For::make(const std::string &name, Expr min, Expr extent, ForType t, Stmt body) {
    internal_assert(min.defined() && extent.defined() && body.defined()) << "For " << name << " of undefined";
    internal_assert(min.type() == Int(32) && extent.type() == Int(32)) << "For " << name << " bounds must be int32";
    auto n = std::make_shared<For>();
    n->name = name;
    n->min = std::move(min);
    n->extent = std::move(extent);
    n->for_type = t;
    n->body = std::move(body);
    return mks(std::move(n));
}
Stmt Store::make(const std::string &name, Expr value, Expr index) {
    internal_assert(value.defined() && index.defined()) << "Store of undefined";
    internal_assert(value.type().lanes() == index.type().lanes()) << "Store lanes mismatch";
    auto n = std::make_shared<Store>();
    n->name = name;
    n->value = std::move(value);
    n->index = std::move(index);
    return mks(std::move(n));
}
Stmt Provide::make(const std::string &name, std::vector<Expr> values, std::vector<Expr> args) {
    internal_assert(!values.empty()) << "Provide to " << name << " of no values";
    for (const auto &v : values) internal_assert(v.defined()) << "Provide of undefined";
    auto n = std::make_shared<Provide>();
    n->name = name;
    n->values = std::move(values);
    n->args = std::move(args);
    return mks(std::move(n));
}
Stmt Allocate::make(const std::string &name, Type t, Expr size, Stmt body, const std::string &in_output,
                    Expr in_place) {
    internal_assert(size.defined() && body.defined()) << "Allocate of undefined";
    internal_assert(in_output.empty() == !in_place.defined()) << "Allocate of " << name << ": output without condition";
    auto n = std::make_shared<Allocate>();
    n->in_output = in_output;
    n->in_place = std::move(in_place);
    n->name = name;
    n->type = t;
    n->size = std::move(size);
    n->body = std::move(body);
    return mks(std::move(n));
}
Stmt Realize::make(const std::string &name, std::vector<Type> types, std::vector<Range> bounds, Stmt body,
                   std::vector<Expr> fold_factors, const std::string &in_output, Expr in_place) {
    internal_assert(body.defined()) << "Realize of undefined";
    internal_assert(in_output.empty() == !in_place.defined()) << "Realize of " << name << ": output without condition";
    internal_assert(!types.empty()) << "Realize of " << name << " with no types";
    fold_factors.resize(bounds.size());
    auto n = std::make_shared<Realize>();
    n->name = name;
    n->types = std::move(types);
    n->bounds = std::move(bounds);
    n->fold_factors = std::move(fold_factors);
    n->in_output = in_output;
    n->in_place = std::move(in_place);
    n->body = std::move(body);
    return mks(std::move(n));
}
Stmt Block::make(Stmt first, Stmt rest) {
    if (!first.defined()) return rest;
    if (!rest.defined()) return first;
    auto n = std::make_shared<Block>();
    n->first = std::move(first);
    n->rest = std::move(rest);
    return mks(std::move(n));
}
Stmt Block::make(const std::vector<Stmt> &stmts) {
    Stmt r;
    for (auto it = stmts.rbegin(); it != stmts.rend(); ++it) r = Block::make(*it, r);
    return r;
}
Stmt IfThenElse::make(Expr c, Stmt t, Stmt e) {
    internal_assert(c.defined() && c.type() == Bool() && t.defined()) << "bad IfThenElse";
    auto n = std::make_shared<IfThenElse>();
    n->condition = std::move(c);
    n->then_case = std::move(t);
    n->else_case = std::move(e);
    return mks(std::move(n));
}
Stmt Evaluate::make(Expr v) {
    internal_assert(v.defined()) << "Evaluate of undefined";
    auto n = std::make_shared<Evaluate>();
    n->value = std::move(v);
    return mks(std::move(n));
}

Expr make_var(const std::string &name, Type t) { return Variable::make(t, name); }

std::string tuple_buffer_name(const std::string &func, int index, int count) {
    return count == 1 ? func : func + "." + std::to_string(index);
}

}  // namespace internal
}  // namespace kiln
