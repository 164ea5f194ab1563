// Func and FuncRef: defining pipeline stages.
//
// A pure definition f(x, y) = e gives f its dimensions and type; every later
// definition is an update, looping over the Vars on its left-hand side that
// are bare Vars (pure) and over the dimensions of the RDom it uses,
// innermost first: r.x, r.y, ..., then the pure Vars in argument order.
#include <algorithm>
#include <cstdlib>
#include <new>
#include <set>
#include <sstream>

#include "ir/Function.h"
#include "ir/IRVisitor.h"
#include "ir/Simplify.h"
#include "ir/Substitute.h"
#include "ir/Util.h"
#include "kiln/Func.h"
#include "kiln/Pipeline.h"
#include "kiln_runtime.h"

namespace kiln {

using namespace internal;

namespace {

// Free Vars and RDoms used by an expression.
class CollectVars : public IRVisitor {
public:
    std::vector<std::string> vars;  // pure Vars, first-use order
    std::vector<std::shared_ptr<ReductionDomainContents>> rdoms;
    bool reads_data = false;  // calls a Func or an image

protected:
    void visit(const Call *op) override {
        IRVisitor::visit(op);
        reads_data |= op->call_type == Call::Func || op->call_type == Call::Image;
    }
    void visit(const Variable *op) override {
        if (op->rdom) {
            bool seen = false;
            for (auto &r : rdoms) seen |= r == op->rdom;
            if (!seen) rdoms.push_back(op->rdom);
        } else if (!op->param) {
            for (auto &v : vars)
                if (v == op->name) return;
            vars.push_back(op->name);
        }
    }
};

// The left-hand side of a pure definition with the implicit Vars (_0, _1,
// ...) its right-hand side uses: in place of its `_`, or else at the end.
//   f(x, _) = g(_, x)  (g 3-D)  ->  f(x, _0, _1) = g(_0, _1, x)
//   f() = g(_)         (g 2-D)  ->  f(_0, _1) = g(_0, _1)
std::vector<Expr> with_implicit_vars(const std::string &f, const std::vector<Expr> &args,
                                     const std::vector<Expr> &values) {
    CollectVars cv;
    for (const auto &v : values) cv.include(v);
    int n = 0;
    for (const auto &v : cv.vars) {
        user_assert(v != "_") << "Func " << f << ": _ is used as a value in its definition; _ can only be an "
                              << "argument of a Func or image call, where it stands for the remaining dimensions";
        if (is_implicit_var(v)) n = std::max(n, std::stoi(v.substr(1)) + 1);
    }
    std::vector<Expr> implicit, r;
    for (int k = 0; k < n; k++) implicit.push_back(Var::implicit(k));
    bool placeholder = false;
    for (const auto &a : args) {
        if (!is_placeholder(a)) {
            r.push_back(a);
            continue;
        }
        user_assert(!placeholder) << "Func " << f << " is defined with _ twice on the left-hand side; _ stands for "
                                  << "all the implicit dimensions, so it can appear once";
        placeholder = true;
        r.insert(r.end(), implicit.begin(), implicit.end());
    }
    if (!placeholder)
        for (const auto &v : implicit) {
            bool named = false;
            for (const auto &a : args) named |= equal(a, v);
            if (!named) r.push_back(v);
        }
    return r;
}

// Calls from f's definitions to f itself keep no owning pointer (no cycle).
class DropSelfReference : public IRMutator {
public:
    explicit DropSelfReference(const FunctionContents *f) : self(f) {}

protected:
    const FunctionContents *self;
    Expr visit(const Call *op) override {
        Expr e = IRMutator::visit(op);
        const auto *c = e.as<Call>();
        if (c->call_type == Call::Func && c->func.get() == self)
            return Call::make(c->type, c->name, c->args, Call::Func, nullptr, nullptr, c->value_index);
        return e;
    }
};

std::string type_list(const std::vector<Type> &v) {
    std::vector<std::string> names;
    for (const Type &t : v) names.push_back(t.to_string());
    return join(names);
}

// The first call in an expression whose argument count differs from the
// callee's dimensions (FuncRef makes such calls so that the definition they
// end up in can report them), looking into the RDoms the expression uses.
class FindBadArity : public IRVisitor {
public:
    Expr bad;

protected:
    std::set<const ReductionDomainContents *> seen;
    void visit(const Call *op) override {
        IRVisitor::visit(op);
        if (!bad.defined() && op->call_type == Call::Func && op->func && op->args.size() != op->func->args.size())
            bad = Expr(op);
    }
    void visit(const Variable *op) override {
        if (!op->rdom || !seen.insert(op->rdom.get()).second) return;
        for (const auto &v : op->rdom->vars) {
            include(v.min);
            include(v.extent);
        }
        if (op->rdom->predicate.defined()) include(op->rdom->predicate);
    }
};

void check_call_arity(const FunctionContents &f, const std::vector<Expr> &lhs, const std::vector<Expr> &values) {
    FindBadArity find;
    for (const auto &e : lhs) find.include(e);
    for (const auto &e : values) find.include(e);
    if (!find.bad.defined()) return;
    const Call *c = find.bad.as<Call>();
    const FunctionContents &g = *c->func;
    std::string where = f.init.defined() ? "the update " + f.name + ".update(" + std::to_string(f.updates.size()) + ")"
                                         : "the definition of " + f.name;
    user_error << "Func " << g.name << " is defined with " << g.args.size() << " argument(s) (" << join(g.args)
               << ") but is called with " << c->args.size() << " in " << where << ": " << find.bad
               << "; call it with one coordinate per dimension, e.g. " << g.name << "(" << join(g.args) << ")";
}

// An RDom's where() condition is evaluated inside the update's loops, where
// only the RDom's RVars, the update's pure Vars, Params and Funcs exist.
std::string where_var_message(const ReductionDomainContents &r, const std::string &v, const std::string &update,
                              const std::vector<std::string> &pure) {
    return "RDom " + r.name + ": the where() condition " + to_string(r.predicate) + " uses Var " + v +
           ", which is not a pure Var of " + update + " (" + (pure.empty() ? "it has none" : "its pure Vars: " + join(pure)) +
           "), so " + v + " has no value where the condition is tested; write the condition with the RVars of " +
           r.name + ", the pure Vars of " + update + ", Params and constants (e.g. a Param<int> in place of " + v + ")";
}

}  // namespace

Func::Func() : Func(anonymous_func_name("f")) {}
Func::Func(const std::string &name) : func(std::make_shared<FunctionContents>()) {
    user_assert(!name.empty()) << "A Func needs a non-empty name";
    func->name = name;
}
Func::Func(Expr e) : Func() {
    user_assert(e.defined()) << "Func(Expr) with an undefined expression";
    (*this)(std::vector<Expr>{}) = e;
}

const std::string &Func::name() const { return func->name; }
bool Func::defined() const { return func->init.defined(); }
int Func::dimensions() const { return (int)func->args.size(); }
Type Func::type() const {
    user_assert(defined()) << "Func " << name() << " has no definition yet, so it has no type";
    user_assert(func->types.size() == 1) << "Func " << name() << " returns a Tuple of " << func->types.size()
                                         << " values (" << type_list(func->types)
                                         << "), so it has no single type; use types() for the type of each element";
    return func->types[0];
}
std::vector<Type> Func::types() const {
    user_assert(defined()) << "Func " << name() << " has no definition yet, so it has no types";
    return func->types;
}
int Func::outputs() const { return defined() ? (int)func->types.size() : 0; }
std::vector<Var> Func::args() const {
    std::vector<Var> v;
    for (const auto &a : func->args) v.emplace_back(a);
    return v;
}
int Func::num_update_definitions() const { return (int)func->updates.size(); }

FuncRef Func::operator()(std::vector<Expr> args) const {
    for (size_t i = 0; i < args.size(); i++)
        user_assert(args[i].defined()) << "Func " << name() << ": argument " << i << " is undefined";
    // A `_` of a Func not yet defined is resolved by its definition (with_implicit_vars).
    if (defined()) args = expand_placeholder(args, dimensions(), "Func " + name());
    return FuncRef(func, std::move(args));
}

Stage Func::update(int i) const {
    user_assert(i >= 0 && i < num_update_definitions())
        << "Func " << name() << " has " << num_update_definitions() << " update definition(s); update(" << i
        << ") does not exist";
    return Stage(func, i + 1);
}

std::vector<Expr> FuncRef::checked_args() const {
    // The call is built before the definition it is part of, so a pure
    // definition calling itself looks like any other early call: say both.
    if (!func->init.defined()) {
        std::string call = func->name + "(", &f = func->name;
        for (size_t i = 0; i < args.size(); i++) {
            std::string a = to_string(args[i]);  // "(x - 1)": drop the parentheses of a whole binary op
            bool wrapped = a.size() > 1 && a.front() == '(' && a.back() == ')';
            int depth = 1;
            for (size_t k = 1; wrapped && k + 1 < a.size(); k++) {
                depth += a[k] == '(' ? 1 : a[k] == ')' ? -1 : 0;
                wrapped = depth > 0;
            }
            call += (i ? ", " : "") + (wrapped ? a.substr(1, a.size() - 2) : a);
        }
        user_error << "Can't call Func " << f << " because it has not been defined yet; define it before using it. "
                   << "If " << call << ") is in the pure definition of " << f << " itself, that definition reads "
                   << "the Func it is defining, which a pure definition cannot: give " << f << " a pure definition "
                   << "first and make the recurrence an update over an RDom, e.g. " << f << "(x) = 0; RDom r(1, 99); "
                   << f << "(r) = " << f << "(r - 1) + 1";
    }
    // A call with the wrong number of arguments is reported by the definition
    // it ends up in (check_call_arity), which can name the caller as well.
    std::vector<Expr> a = args;
    for (size_t i = 0; i < a.size(); i++) {
        user_assert(!a[i].type().is_float())
            << "Func " << func->name << " is called with argument " << i << " of type " << a[i].type().to_string()
            << " (" << a[i] << "); arguments must be integers: use cast<int>(...) or floor()";
        if (a[i].type() != Int(32)) a[i] = cast(Int(32), a[i]);
    }
    return a;
}

FuncRef::operator Expr() const {
    std::vector<Expr> a = checked_args();
    user_assert(func->types.size() == 1)
        << "Func " << func->name << " returns a Tuple of " << func->types.size() << " values ("
        << type_list(func->types) << "), so a call to it is not one Expr; pick an element with " << func->name
        << "(...)[i], or take them all with Tuple(" << func->name << "(...))";
    return Call::make(func->types[0], func->name, a, Call::Func, func);
}

Expr FuncRef::operator[](int i) const {
    std::vector<Expr> a = checked_args();
    int n = (int)func->types.size();
    user_assert(n > 1) << "Func " << func->name << " returns a single value, not a Tuple, so " << func->name
                       << "(...)[" << i << "] has nothing to pick; use " << func->name << "(...) itself";
    user_assert(i >= 0 && i < n) << "Func " << func->name << " returns a Tuple of " << n << " values; element " << i
                                 << " does not exist (use 0 to " << n - 1 << ")";
    return Call::make(func->types[i], func->name, a, Call::Func, func, nullptr, i);
}

size_t FuncRef::size() const { return func->types.size(); }

Stage FuncRef::operator=(Expr value) {
    user_assert(value.defined()) << "Func " << func->name << " is given an undefined value";
    return define({value});
}
Stage FuncRef::operator=(const Tuple &values) { return define(values.as_vector()); }
Stage FuncRef::operator=(const FuncRef &other) {
    if (other.size() > 1) return define(Tuple(other).as_vector());
    return (*this = Expr(other));
}

// undef() stands only as a whole value: nothing can be computed from it.
class NestedUndef : public IRVisitor {
public:
    bool found = false;

protected:
    void visit(const Call *op) override {
        found |= op->call_type == Call::PureExtern && op->name == "undef";
        IRVisitor::visit(op);
    }
};

Stage FuncRef::define(std::vector<Expr> values) {
    bump_definition_epoch();
    for (size_t i = 0; i < values.size(); i++) {
        user_assert(values[i].defined()) << "Func " << func->name << " is given an undefined value (element " << i
                                         << " of its Tuple)";
        const Call *whole = values[i].as<Call>();
        NestedUndef nested;
        if (!(whole && whole->name == "undef" && whole->call_type == Call::PureExtern)) nested.include(values[i]);
        user_assert(!nested.found) << "Func " << func->name << ": undef() appears inside " << values[i]
                                   << "; it can only be a whole value (of the definition or of a Tuple element)";
    }
    FunctionContents &f = *func;
    if (!f.init.defined()) args = with_implicit_vars(f.name, args, values);
    check_call_arity(f, args, values);
    bool all_vars = true;
    std::vector<std::string> names;
    for (const auto &a : args) {
        const auto *v = a.as<Variable>();
        if (!v || v->param || v->rdom) all_vars = false;
        else names.push_back(v->name);
    }
    if (!f.init.defined()) {
        user_assert(all_vars) << "The first definition of Func " << f.name
                              << " must have only Vars on the left-hand side (a pure definition); to write "
                                 "at computed coordinates, first give a pure definition such as "
                              << f.name << "(x) = 0 and then an update";
        std::set<std::string> uniq(names.begin(), names.end());
        user_assert(uniq.size() == names.size())
            << "Func " << f.name << ": the pure definition uses a Var twice on the left-hand side (" << join(names)
            << ")";
        CollectVars cv;
        for (const auto &v : values) cv.include(v);
        user_assert(cv.rdoms.empty()) << "Func " << f.name << ": the pure definition uses RDom "
                                      << cv.rdoms[0]->name << "; reductions need an update definition, e.g. "
                                      << f.name << "(x) = 0; " << f.name << "(x) += ...";
        for (const auto &v : cv.vars)
            user_assert(uniq.count(v)) << "Func " << f.name << ": the definition uses Var " << v
                                       << ", which does not appear on the left-hand side (" << join(names)
                                       << ")";
        f.args = names;
        f.types.clear();
        for (const auto &v : values) f.types.push_back(v.type());
        f.init.args = args;
        f.init.values = values;
        f.init.schedule.dims = f.definition_dims(0);
        return Stage(func, 0);
    }

    // An update definition.
    int stage = (int)f.updates.size() + 1;
    std::string what = f.name + ".update(" + std::to_string(stage - 1) + ")";
    user_assert(args.size() == f.args.size())
        << "Update definition " << what << " has " << args.size() << " argument(s) but " << f.name
        << " has " << f.args.size() << " dimension(s) (" << join(f.args) << ")";
    user_assert(values.size() == f.types.size())
        << "Update definition " << what << " gives " << values.size() << " value(s) but " << f.name << " has "
        << f.types.size() << " (" << type_list(f.types) << "); an update must give "
        << (f.types.size() == 1 ? std::string("one value") : "a Tuple of " + std::to_string(f.types.size()) + " values")
        << ", like the pure definition";
    for (size_t i = 0; i < values.size(); i++) {
        if (values[i].type() == f.types[i]) continue;
        std::string elem = values.size() == 1 ? "" : " (element " + std::to_string(i) + " of its Tuple)";
        user_error << "Update definition " << what << elem << " has type " << values[i].type().to_string() << " but "
                   << f.name << elem << " has type " << f.types[i].to_string()
                   << "; cast the right-hand side, e.g. cast<" << f.types[i].to_string() << ">(...)";
    }
    Definition d;
    for (const auto &v : values) d.values.push_back(DropSelfReference(func.get()).mutate(v));
    CollectVars lhs_vars, rhs_vars;
    for (auto &a : args) {
        user_assert(!a.type().is_float()) << "Update definition " << what << ": argument " << a
                                          << " is a float; coordinates must be integers";
        if (a.type() != Int(32)) a = cast(Int(32), a);
        lhs_vars.include(a);
        d.args.push_back(DropSelfReference(func.get()).mutate(a));
    }
    for (const auto &v : values) rhs_vars.include(v);
    std::vector<std::shared_ptr<ReductionDomainContents>> rdoms = lhs_vars.rdoms;
    for (auto &r : rhs_vars.rdoms) {
        bool seen = false;
        for (auto &q : rdoms) seen |= q == r;
        if (!seen) rdoms.push_back(r);
    }
    user_assert(rdoms.size() <= 1) << "Update definition " << what << " uses two RDoms (" << rdoms[0]->name
                                   << " and " << rdoms[1]->name
                                   << "); an update may loop over one RDom only — combine them into one "
                                      "multi-dimensional RDom";
    // Pure Vars: bare Vars on the left-hand side.
    std::vector<std::string> pure;
    for (const auto &a : d.args)
        if (const auto *v = a.as<Variable>(); v && !v->rdom && !v->param) pure.push_back(v->name);
    for (const auto &v : rhs_vars.vars) {
        bool ok = false;
        for (const auto &p : pure) ok |= p == v;
        user_assert(ok) << "Update definition " << what << " uses Var " << v
                        << " on the right-hand side, but " << v
                        << " is not a bare argument on the left-hand side; every pure Var must appear there";
    }
    for (const auto &v : lhs_vars.vars) {
        bool ok = false;
        for (const auto &p : pure) ok |= p == v;
        user_assert(ok) << "Update definition " << what << ": Var " << v
                        << " appears inside an expression on the left-hand side; pure Vars must be bare "
                           "arguments (use an RDom for computed coordinates)";
    }
    if (!rdoms.empty()) {
        d.rdom = rdoms[0];
        for (size_t i = 0; i < d.rdom->vars.size(); i++) {
            CollectVars bound_vars;
            bound_vars.include(d.rdom->vars[i].min);
            bound_vars.include(d.rdom->vars[i].extent);
            user_assert(bound_vars.vars.empty())
                << "Update definition " << what << ": the bounds of RDom " << d.rdom->name << " (dimension " << i
                << ") use Var " << (bound_vars.vars.empty() ? "" : bound_vars.vars[0])
                << "; an RDom's min and extent may use constants, Params and other Funcs' values, not pure Vars "
                   "(use a where() condition on the RDom instead)";
        }
        if (d.rdom->predicate.defined()) {
            CollectVars where_vars;
            where_vars.include(d.rdom->predicate);
            std::vector<std::string> known = pure;  // the predicate names its own RVars as plain Variables
            for (const auto &rv : d.rdom->vars) known.push_back(rv.name);
            for (const auto &v : where_vars.vars)
                user_assert(std::find(known.begin(), known.end(), v) != known.end())
                    << where_var_message(*d.rdom, v, what, pure);
        }
    }
    f.updates.push_back(std::move(d));
    f.updates.back().schedule.dims = f.definition_dims(stage);
    return Stage(func, stage);
}

Stage FuncRef::define_update_with(std::vector<Expr> values, Expr (*op)(Expr, Expr), const char *opname) {
    for (const auto &v : values)
        user_assert(v.defined()) << "Func " << func->name << ": the right-hand side of " << opname << " is undefined";
    if (!func->init.defined()) {
        // f(...) += e on an undefined Func starts from the identity of the operator.
        std::vector<Expr> pure, identity;
        for (size_t i = 0; i < args.size(); i++) pure.push_back(Var("_" + std::to_string(i)));
        bool additive = std::string(opname) == "+=" || std::string(opname) == "-=";
        for (const auto &v : values) identity.push_back(additive ? make_zero(v.type()) : make_one(v.type()));
        FuncRef(func, pure).define(identity);
    }
    user_assert(values.size() == func->types.size())
        << "Func " << func->name << " " << opname << " gives " << values.size() << " value(s) but " << func->name
        << " has " << func->types.size() << " (" << type_list(func->types) << ")";
    for (size_t i = 0; i < values.size(); i++) {
        Expr current = values.size() == 1 ? Expr(*this) : (*this)[(int)i];
        if (values[i].type() != func->types[i]) values[i] = cast(func->types[i], values[i]);
        values[i] = op(current, values[i]);
    }
    return define(values);
}

static Expr add_op(Expr a, Expr b) { return a + b; }
static Expr sub_op(Expr a, Expr b) { return a - b; }
static Expr mul_op(Expr a, Expr b) { return a * b; }
static Expr div_op(Expr a, Expr b) { return a / b; }
Stage FuncRef::operator+=(Expr v) { return define_update_with({v}, add_op, "+="); }
Stage FuncRef::operator-=(Expr v) { return define_update_with({v}, sub_op, "-="); }
Stage FuncRef::operator*=(Expr v) { return define_update_with({v}, mul_op, "*="); }
Stage FuncRef::operator/=(Expr v) { return define_update_with({v}, div_op, "/="); }
Stage FuncRef::operator+=(const Tuple &v) { return define_update_with(v.as_vector(), add_op, "+="); }
Stage FuncRef::operator-=(const Tuple &v) { return define_update_with(v.as_vector(), sub_op, "-="); }
Stage FuncRef::operator*=(const Tuple &v) { return define_update_with(v.as_vector(), mul_op, "*="); }
Stage FuncRef::operator/=(const Tuple &v) { return define_update_with(v.as_vector(), div_op, "/="); }

// ---- Where a Func is computed and stored ----

Func &Func::compute_root() { return compute_at(LoopLevel::root()); }
Func &Func::compute_at(const Func &f, const VarOrRVar &var) { return compute_at(LoopLevel(f, var)); }
Func &Func::compute_at(const LoopLevel &level) {
    bump_definition_epoch();
    if (!level.is_root() && !level.is_inlined()) {
        auto target = level.func_contents().lock();
        user_assert(target ? target != func : level.func() != name()) << "Func " << name() << ": compute_at(" << name() << ", "
                                            << level.var() << ") asks " << name()
                                            << " to be computed inside its own loops; use a consumer of "
                                            << name() << ", or compute_root()";
    }
    func->schedule.compute_level = level;
    if (!func->schedule.store_level_set) func->schedule.store_level = level;
    return *this;
}
Func &Func::compute_inline() {
    bump_definition_epoch();
    user_assert(func->updates.empty()) << "Func " << name() << " is scheduled compute_inline(), but it has "
                                       << func->updates.size()
                                       << " update definition(s) and a Func with updates cannot be inlined; use "
                                          "compute_root() or compute_at() instead";
    func->schedule.compute_level = LoopLevel::inlined();
    func->schedule.store_level = LoopLevel::inlined();
    func->schedule.store_level_set = false;
    return *this;
}
Func &Func::store_root() { return store_at(LoopLevel::root()); }
Func &Func::store_in(MemoryType m) {
    bump_definition_epoch();
    func->schedule.memory_type = m;
    return *this;
}
Func &Func::double_buffer() {
    bump_definition_epoch();
    func->schedule.double_buffer = true;
    return *this;
}
Func &Func::software_pipeline() {
    bump_definition_epoch();
    func->schedule.software_pipeline = true;
    return *this;
}
Func &Func::save(Residual how) {
    bump_definition_epoch();
    FuncSchedule &sched = func->schedule;
    sched.residual = how;
    sched.residual_buffer = nullptr;
    if (how == Residual::None) return *this;
    user_assert(func->num_values() == 1)
        << "Func " << name() << ": save(): it has " << func->num_values()
        << " values (a Tuple); save a Func of one value, e.g. one that reads the element the backward pass needs";
    user_assert(how != Residual::Bits || !func->args.empty())
        << "Func " << name() << ": save(bits) packs points along dimension 0 and " << name()
        << " has no dimensions; save() it whole";
    auto p = std::make_shared<ParameterContents>();
    const bool narrow = how == Residual::Float16 || how == Residual::BFloat16;
    user_assert(!narrow || func->types[0] == Float(32) || func->types[0] == Float(64))
        << "Func " << name() << ": save(" << to_string(how) << ") keeps a 16-bit copy of float values, and "
        << name() << " has type " << func->types[0].to_string() << "; save() it whole";
    p->name = how == Residual::Whole ? name() : name() + "_" + to_string(how);
    p->type = how == Residual::Bits ? UInt(8) : how == Residual::Float16 ? Float(16)
            : how == Residual::BFloat16 ? BFloat(16) : func->types[0];
    p->is_buffer = true;
    p->dimensions = (int)func->args.size();
    p->saved_func = name();
    sched.residual_buffer = p;
    return *this;
}

Func &Func::save(Type narrow) {
    user_assert(narrow == Float(16) || narrow == BFloat(16))
        << "Func " << name() << ": save(" << narrow.to_string() << "): a saved copy of lower precision is "
        << "Float(16) or BFloat(16) (save(float16), save(bfloat16)); save() keeps it whole";
    return save(narrow.is_bfloat() ? Residual::BFloat16 : Residual::Float16);
}

ImageParam Func::saved_buffer() const {
    user_assert(func->schedule.residual_buffer)
        << "Func " << name() << ": saved_buffer(): " << name() << " is not saved; call " << name()
        << ".save() first (docs/autodiff.md)";
    return ImageParam(func->schedule.residual_buffer);
}

Func &Func::store_at(const Func &f, const VarOrRVar &var) { return store_at(LoopLevel(f, var)); }
Func &Func::store_at(const LoopLevel &level) {
    bump_definition_epoch();
    func->schedule.store_level = level;
    func->schedule.store_level_set = true;
    return *this;
}
Func &Func::fold_storage(const Var &var, Expr factor, bool fold_forward) {
    bump_definition_epoch();
    std::ostringstream text;
    text << "fold_storage(" << var.name() << ", ";
    if (factor.defined()) text << factor;
    text << (fold_forward ? "" : ", false") << ")";
    const std::string call = text.str();
    bool found = false;
    for (const auto &a : func->args) found |= a == var.name();
    user_assert(found) << "Func " << name() << ": " << call << ": " << var.name() << " is not a dimension of "
                       << name() << " (dimensions: " << join(func->args) << ")";
    Expr rows = factor.defined() && !factor.type().is_float() ? simplify(cast(Int(32), factor)) : Expr();
    const int64_t *c = rows.defined() ? as_const_int(rows) : nullptr;
    user_assert(c) << "Func " << name() << ": " << call
                   << ": the factor must be a constant integer (the number of rows kept), e.g. fold_storage("
                   << var.name() << ", 4)";
    user_assert(*c >= 1) << "Func " << name() << ": " << call
                         << ": the factor is the number of rows kept, at least 1";
    StorageFold fold{var.name(), rows, fold_forward};
    for (auto &f : func->schedule.storage_folds)
        if (f.var == var.name()) {  // as in Halide, the last fold of a dimension is the one used
            f = fold;
            return *this;
        }
    func->schedule.storage_folds.push_back(fold);
    return *this;
}
Func &Func::reorder_storage(const std::vector<Var> &dims) {
    bump_definition_epoch();
    std::vector<std::string> names;
    for (const Var &v : dims) names.push_back(v.name());
    const std::string call = "reorder_storage(" + join(names) + ")";
    user_assert(names.size() >= 2) << "Func " << name() << ": " << call
                                   << ": name at least two dimensions, innermost first, e.g. reorder_storage("
                                   << join({func->args.back(), func->args[0]}) << ")";
    std::vector<std::string> order = func->schedule.storage_dims.empty() ? func->args : func->schedule.storage_dims;
    std::vector<size_t> places;  // where the named dimensions are now; they trade places
    for (const std::string &n : names) {
        size_t at = std::find(order.begin(), order.end(), n) - order.begin();
        user_assert(at < order.size()) << "Func " << name() << ": " << call << ": " << n << " is not a dimension of "
                                       << name() << " (dimensions: " << join(func->args) << ")";
        user_assert(std::find(places.begin(), places.end(), at) == places.end())
            << "Func " << name() << ": " << call << ": " << n << " is named twice";
        places.push_back(at);
    }
    std::sort(places.begin(), places.end());
    for (size_t i = 0; i < names.size(); i++) order[places[i]] = names[i];
    func->schedule.storage_dims = order == func->args ? std::vector<std::string>() : order;
    return *this;
}
Func &Func::bound(const Var &var, Expr min, Expr extent) {
    bump_definition_epoch();
    bool found = false;
    for (const auto &a : func->args) found |= a == var.name();
    user_assert(found) << "Func " << name() << ": bound(" << var.name() << ", ...): " << var.name()
                       << " is not a dimension of " << name() << " (dimensions: " << join(func->args) << ")";
    user_assert(min.defined() && extent.defined()) << "Func " << name() << ": bound(" << var.name()
                                                   << ", ...) with an undefined min or extent";
    user_assert(!min.type().is_float() && !extent.type().is_float())
        << "Func " << name() << ": bound(" << var.name() << ", ...) needs integer min and extent";
    for (const Expr &e : {min, extent}) {
        CollectVars used;
        used.include(e);
        user_assert(used.vars.empty() && used.rdoms.empty() && !used.reads_data)
            << "Func " << name() << ": bound(" << var.name() << ", " << min << ", " << extent
            << "): the min and extent must be made of constants and Params (not Vars, RDoms, Func calls or image reads)";
    }
    const int64_t *const_extent = as_const_int(extent);
    user_assert(!const_extent || *const_extent >= 0) << "Func " << name() << ": bound(" << var.name() << ", " << min
                                                    << ", " << extent << "): the extent must not be negative";
    for (auto &b : func->schedule.bounds)
        user_assert(b.var != var.name()) << "Func " << name() << ": bound(" << var.name()
                                         << ", ...) is given twice";
    for (auto &a : func->schedule.alignments)
        user_assert(a.var != var.name()) << "Func " << name() << ": bound(" << var.name() << ", ...) after align_bounds("
                                         << var.name() << ", ...): bound() fixes the region, so align the bound's "
                                         << "min and extent themselves and remove the align_bounds()";
    func->schedule.bounds.push_back(Bound{var.name(), cast(Int(32), min), cast(Int(32), extent)});
    return *this;
}

Func &Func::align_bounds(const Var &var, Expr modulus, Expr remainder) {
    bump_definition_epoch();
    const std::string call = "align_bounds(" + var.name() + ", " + to_string(modulus) + ", " + to_string(remainder) + ")";
    bool found = false;
    for (const auto &a : func->args) found |= a == var.name();
    user_assert(found) << "Func " << name() << ": " << call << ": " << var.name() << " is not a dimension of "
                       << name() << " (dimensions: " << join(func->args) << ")";
    Expr mod = modulus.defined() ? simplify(modulus) : Expr(), rem = remainder.defined() ? simplify(remainder) : Expr();
    const int64_t *m = mod.defined() ? as_const_int(mod) : nullptr, *r = rem.defined() ? as_const_int(rem) : nullptr;
    user_assert(m && *m > 0) << "Func " << name() << ": " << call
                             << ": the modulus must be a positive integer constant, e.g. align_bounds(" << var.name()
                             << ", 2)";
    user_assert(r && *r >= 0 && *r < *m) << "Func " << name() << ": " << call
                                         << ": the remainder must be an integer constant in [0, " << *m << ")";
    for (auto &b : func->schedule.bounds)
        user_assert(b.var != var.name()) << "Func " << name() << ": " << call << " after bound(" << var.name()
                                         << ", ...): bound() fixes the region, so align the bound's min and extent "
                                         << "themselves and remove the align_bounds()";
    for (auto &a : func->schedule.alignments)
        user_assert(a.var != var.name()) << "Func " << name() << ": " << call << ": " << var.name()
                                         << " is aligned twice (align_bounds(" << var.name() << ", " << a.modulus
                                         << ", " << a.remainder << ") before); keep one";
    func->schedule.alignments.push_back(BoundAlignment{var.name(), *m, *r});
    return *this;
}

std::vector<OutputImageParam> Func::output_buffers() const {
    user_assert(defined()) << "Func " << name()
                           << ": output_buffers() before the Func is defined; define it first (its buffers take "
                              "their types and dimensions from the definition)";
    if (func->output_buffers.empty())
        for (int i = 0; i < func->num_values(); i++) {
            auto p = std::make_shared<ParameterContents>();
            p->name = func->buffer_name(i);
            p->type = func->types[i];
            p->is_buffer = p->is_output = true;
            p->dimensions = (int)func->args.size();
            func->output_buffers.push_back(p);
        }
    std::vector<OutputImageParam> r;
    for (const auto &p : func->output_buffers) r.push_back(OutputImageParam(p));
    return r;
}

OutputImageParam Func::output_buffer() const {
    user_assert(!defined() || outputs() == 1)
        << "Func " << name() << " has " << outputs() << " values (a Tuple), each realized into its own buffer; "
        << "use output_buffers()[i] for element i";
    return output_buffers()[0];
}

// ---- Compilation entry points ----

namespace {

void *malloc_or_throw(size_t bytes) {
    void *p = malloc(bytes);
    if (!p) throw std::bad_alloc();
    return p;
}

// The buffer realize(sizes) allocates for element i of f. A kernel indexes
// at most INT32_MAX elements of a buffer, and malloc may fail; either way
// realize() reports what the kernel reports for an intermediate it cannot
// allocate (kiln_error_out_of_memory, Func and bytes named), rather than
// handing the kernel a null buffer.
//
//   f.realize({100000, 100000})  ->  RuntimeError(-10, "Func f: out of memory allocating 10000000000 elements
//                                    (40000000000 bytes) for the output of realize({100000, 100000}); ...")
Buffer<> allocate_output(const FunctionContents &f, int i, const std::vector<int> &sizes) {
    std::string call = "realize({";
    for (size_t d = 0; d < sizes.size(); d++) call += (d ? ", " : "") + std::to_string(sizes[d]);
    call += "})";
    int64_t elements = 1, bytes = 0;
    bool overflow = false;
    for (size_t d = 0; d < sizes.size(); d++) {
        user_assert(sizes[d] >= 0) << "Func " << f.name << ": " << call << " gives dimension " << d
                                   << " the negative size " << sizes[d] << "; sizes are extents, 0 or more";
        overflow |= __builtin_mul_overflow(elements, (int64_t)sizes[d], &elements);
    }
    Type t = f.types[i];
    overflow |= __builtin_mul_overflow(elements, (int64_t)t.bytes(), &bytes);
    Buffer<> b(to_halide_type(t), nullptr, sizes);
    std::string why;
    if (overflow || elements > INT32_MAX) {
        why = "a kernel writes at most 2147483647 elements of a buffer";
    } else if (elements > 0) {
        try {
            b.allocate(malloc_or_throw, free);
            return b;
        } catch (const std::bad_alloc &) {
            why = "malloc failed";
        }
    } else {
        return b;
    }
    std::string what = f.num_values() == 1 ? "the output" : "output " + f.buffer_name(i);
    std::ostringstream m;
    m << "Func " << f.name << ": out of memory allocating ";
    if (overflow) m << "more than 2^63 bytes";
    else m << elements << " " << t.to_string() << " elements (" << bytes << " bytes)";
    m << " for " << what << " of " << call << "; " << why << ". Realize a smaller region, or realize into a Buffer "
      << "you allocate (" << f.name << ".realize(buffer)), one region at a time if need be (Buffer::set_min "
      << "places each region)";
    throw RuntimeError(kiln_error_out_of_memory, m.str());
}

}  // namespace

void Func::realize_raw(const std::vector<halide_buffer_t *> &outs, const Target &t) {
    // Keep the compiled kernel (not the Pipeline, which would own this Func)
    // with the Func, so repeated realize() calls reuse it.
    Pipeline p(*this);
    p.jit_cache_ = std::static_pointer_cast<JITCache>(func->jit_cache);
    p.realize_raw(outs, t);
    func->jit_cache = p.jit_cache_;
}
void Func::compile_jit(const Target &t) {
    Pipeline p(*this);
    p.jit_cache_ = std::static_pointer_cast<JITCache>(func->jit_cache);
    p.compile_jit(t);
    func->jit_cache = p.jit_cache_;
}
void Func::realize(Realization &out, const Target &t) {
    std::vector<halide_buffer_t *> raw;
    for (size_t i = 0; i < out.size(); i++) raw.push_back(out[i].raw_buffer());
    realize_raw(raw, t);
}
Realization Func::realize(std::vector<int> sizes, const Target &t) {
    std::vector<Buffer<>> buffers;
    for (size_t i = 0; i < types().size(); i++) buffers.push_back(allocate_output(*func, (int)i, sizes));
    Realization r(std::move(buffers));
    realize(r, t);
    return r;
}
void Func::compile_to_cpp(const std::string &path, const std::string &fn_name, const Target &t) {
    Pipeline(*this).compile_to_cpp(path, fn_name.empty() ? name() : fn_name, t);
}
std::string Func::lowered_stmt(const Target &t) { return Pipeline(*this).lowered_stmt(t); }

}  // namespace kiln
