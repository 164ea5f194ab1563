// Var, RVar, RDom, Param and ImageParam: the leaves of the front end.
#include <algorithm>
#include <atomic>
#include <cctype>
#include <map>
#include <mutex>

#include "ir/Function.h"
#include "ir/IR.h"
#include "ir/IRVisitor.h"
#include "ir/Substitute.h"
#include "kiln/Func.h"
#include "kiln/Param.h"
#include "kiln/RDom.h"
#include "kiln/Var.h"

namespace kiln {

using namespace internal;

namespace internal {
namespace {
std::atomic<int> name_counter{0};
thread_local FuncNameScope *func_names = nullptr;  // the innermost scope on this thread
}  // namespace
std::string unique_name(char prefix) { return std::string(1, prefix) + std::to_string(name_counter++); }
FuncNameScope::FuncNameScope() : outer(func_names) { func_names = this; }
FuncNameScope::~FuncNameScope() { func_names = outer; }
std::string anonymous_func_name(const std::string &kind) {
    if (func_names) {
        if (kind == "f") return "f" + std::to_string(func_names->uses[kind]++);
        return derived_name(func_names->uses, kind);
    }
    if (kind == "f") return unique_name('f');
    static std::mutex m;
    static std::map<std::string, int> uses;
    std::lock_guard<std::mutex> lock(m);
    return derived_name(uses, kind);
}
std::string derived_name(std::map<std::string, int> &uses, const std::string &base) {
    int n = uses[base]++;
    return n == 0 ? base : base + "_" + std::to_string(n);
}
Expr param_variable(const std::shared_ptr<ParameterContents> &p, const std::string &name, Type t) {
    return Variable::make(t, name, p);
}
void check_param_range(const std::string &name, const Expr &lo, const Expr &hi) {
    const int64_t *l = as_const_int(lo), *h = as_const_int(hi);
    const double *fl = as_const_float(lo), *fh = as_const_float(hi);
    bool empty = (l && h && *l > *h) || (fl && fh && *fl > *fh);
    user_assert(!empty) << "Param " << name << ": set_range(" << lo << ", " << hi
                        << ") is empty (the minimum is above the maximum); swap the two ends";
}
}  // namespace internal

Var::Var() : name_(unique_name('v')) {}
Var::operator Expr() const { return Variable::make(Int(32), name_); }
bool Var::is_implicit() const { return is_implicit_var(name_); }

const Var _("_");
const Var _0("_0"), _1("_1"), _2("_2"), _3("_3"), _4("_4"), _5("_5"), _6("_6"), _7("_7"), _8("_8"), _9("_9");

namespace internal {
bool is_implicit_var(const std::string &n) {
    return n.size() > 1 && n[0] == '_' && std::all_of(n.begin() + 1, n.end(), [](char c) { return std::isdigit((unsigned char)c); });
}
bool is_placeholder(const Expr &e) {
    const auto *v = e.as<Variable>();
    return v && !v->param && !v->rdom && v->name == "_";
}
std::vector<Expr> expand_placeholder(const std::vector<Expr> &args, int dims, const std::string &who) {
    std::vector<Expr> r;
    int at = -1;
    for (size_t i = 0; i < args.size(); i++) {
        if (!is_placeholder(args[i])) continue;
        user_assert(at < 0) << who << " is called with _ twice; _ stands for all the dimensions the other arguments "
                            << "leave, so it can appear once";
        at = (int)i;
    }
    if (at < 0) return args;
    int n = dims - ((int)args.size() - 1);
    user_assert(n >= 0) << who << " has " << dims << " dimension(s) but is called with " << args.size() - 1
                        << " argument(s) besides _; drop some, or drop the _";
    for (int i = 0; i < (int)args.size(); i++) {
        if (i != at) r.push_back(args[i]);
        else
            for (int k = 0; k < n; k++) r.push_back(Var::implicit(k));
    }
    return r;
}
}  // namespace internal

RVar::RVar(const std::string &name) : free_name(name) {}
const std::string &RVar::name() const { return dom ? dom->vars[index].name : free_name; }
Expr RVar::min() const {
    user_assert(dom) << "RVar " << free_name << " has no reduction domain";
    return dom->vars[index].min;
}
Expr RVar::extent() const {
    user_assert(dom) << "RVar " << free_name << " has no reduction domain";
    return dom->vars[index].extent;
}
RVar::operator Expr() const {
    user_assert(dom) << "RVar " << free_name << " has no reduction domain and cannot be used in an expression";
    return Variable::make(Int(32), name(), nullptr, dom);
}

void RDom::init(const std::vector<std::pair<Expr, Expr>> &region, const std::string &name) {
    user_assert(!region.empty()) << "RDom needs at least one dimension";
    contents = std::make_shared<ReductionDomainContents>();
    contents->name = name.empty() ? unique_name('r') : name;
    static const char *suffix[] = {"x", "y", "z", "w"};
    for (size_t i = 0; i < region.size(); i++) {
        user_assert(region[i].first.defined() && region[i].second.defined())
            << "RDom " << contents->name << ": dimension " << i << " has an undefined min or extent";
        auto cast32 = [&](Expr e, const char *what) {
            user_assert(!e.type().is_float()) << "RDom " << contents->name << ": the " << what << " of dimension "
                                              << i << " is a float (" << e.type().to_string()
                                              << "); use an integer expression";
            return e.type() == Int(32) ? e : cast(Int(32), e);
        };
        std::string n = contents->name + "." + (i < 4 ? suffix[i] : std::to_string(i));
        contents->vars.push_back({n, cast32(region[i].first, "min"), cast32(region[i].second, "extent")});
    }
    RVar *fields[] = {&x, &y, &z, &w};
    for (size_t i = 0; i < region.size() && i < 4; i++) *fields[i] = RVar(contents, (int)i);
}
RDom::RDom(Expr min, Expr extent, const std::string &name) { init({{min, extent}}, name); }
RDom::RDom(const std::vector<std::pair<Expr, Expr>> &region, const std::string &name) { init(region, name); }
RDom::RDom(Expr m0, Expr e0, Expr m1, Expr e1, const std::string &name) { init({{m0, e0}, {m1, e1}}, name); }
RDom::RDom(Expr m0, Expr e0, Expr m1, Expr e1, Expr m2, Expr e2, const std::string &name) {
    init({{m0, e0}, {m1, e1}, {m2, e2}}, name);
}
int RDom::dimensions() const { return contents ? (int)contents->vars.size() : 0; }
RVar RDom::operator[](int i) const {
    user_assert(contents && i >= 0 && i < dimensions())
        << "RDom " << name() << " has " << dimensions() << " dimensions; index " << i << " is out of range";
    return RVar(contents, i);
}
RDom &RDom::where(Expr predicate) {
    user_assert(contents) << "where() on an undefined RDom";
    bump_definition_epoch();
    user_assert(predicate.defined()) << "RDom " << name() << ".where(): the condition is undefined";
    // As select(): no implicit "!= 0" that would hide a value used as a
    // condition by mistake.
    user_assert(predicate.type().is_bool())
        << "RDom " << name() << ".where(): the condition " << to_string(predicate) << " has type "
        << predicate.type().to_string() << ", but where() needs a boolean condition; compare it, e.g. " << name()
        << ".where(" << to_string(predicate) << " != 0)";
    Expr p = contents->predicate.defined() ? (contents->predicate && predicate) : predicate;
    contents->predicate = without_rdom_owner(p, contents.get());  // no cycle through its own RVars
    return *this;
}
const std::string &RDom::name() const {
    static const std::string none = "(undefined RDom)";
    return contents ? contents->name : none;
}
RDom::operator Expr() const {
    user_assert(dimensions() == 1) << "RDom " << name() << " has " << dimensions()
                                   << " dimensions; use r.x, r.y, ... to refer to one of them";
    return Expr(x);
}
RDom::operator RVar() const {
    user_assert(dimensions() == 1) << "RDom " << name() << " has " << dimensions()
                                   << " dimensions; use r.x, r.y, ... to refer to one of them";
    return x;
}

Expr Dimension::min() const { return param_variable(param, param->name + ".min." + std::to_string(dim_), Int(32)); }
Expr Dimension::extent() const {
    return param_variable(param, param->name + ".extent." + std::to_string(dim_), Int(32));
}
Expr Dimension::max() const { return min() + extent() - 1; }
Expr Dimension::stride() const {
    return param_variable(param, param->name + ".stride." + std::to_string(dim_), Int(32));
}
Dimension Dimension::dim(int d) const { return OutputImageParam(param).dim(d); }
Dimension Dimension::set_min(Expr min) { return set(&DimConstraint::min, "set_min", std::move(min)); }
Dimension Dimension::set_extent(Expr extent) { return set(&DimConstraint::extent, "set_extent", std::move(extent)); }
Dimension Dimension::set_stride(Expr stride) { return set(&DimConstraint::stride, "set_stride", std::move(stride)); }
Dimension Dimension::set_bounds(Expr min, Expr extent) {
    set(&DimConstraint::min, "set_bounds", std::move(min));
    return set(&DimConstraint::extent, "set_bounds", std::move(extent));
}

namespace {

std::string buffer_description(const ParameterContents &p) {
    return p.is_output ? "output buffer " + p.name : "ImageParam " + p.name;
}

// The first Var or RVar of e (a Variable that is not a Param or a buffer field), or "".
std::string free_var(const Expr &e) {
    struct Find : IRVisitor {
        std::string name;
        void visit(const Variable *op) override {
            if (!op->param && name.empty()) name = op->name;
        }
    } f;
    f.include(e);
    return f.name;
}

}  // namespace

Dimension Dimension::set(Expr DimConstraint::*field, const char *method, Expr value) {
    const std::string call = buffer_description(*param) + ".dim(" + std::to_string(dim_) + ")." + method;
    if (value.defined()) {
        user_assert(value.type().is_int() || value.type().is_uint())
            << call << "(" << value << "): the value is a " << value.type().to_string()
            << "; a buffer's min, extent or stride is an integer (use cast<int>(...))";
        value = value.type() == Int(32) ? value : cast(Int(32), value);
        std::string var = free_var(value);
        user_assert(var.empty()) << call << "(" << value << ") uses Var " << var
                                 << ", which has no value when the kernel starts; constrain a buffer with "
                                    "constants, Params and other buffers' fields (e.g. input.dim(0).extent())";
        const int64_t *c = as_const_int(value);
        user_assert(!c || field == &DimConstraint::min || *c >= 0)
            << call << "(" << value << "): " << (field == &DimConstraint::stride ? "a stride" : "an extent")
            << " cannot be negative";
    }
    user_assert(field != &DimConstraint::stride || dim_ != 0 || (value.defined() && is_one(value)))
        << call << "(" << value << "): Kiln's kernels need dimension 0 of every buffer dense (stride 1), so "
        << "dimension 0 takes only set_stride(1); reorder the algorithm's dimensions so that the dense one is "
           "first";
    bump_definition_epoch();
    param->constraints.resize(param->dimensions);
    param->constraints[dim_].*field = value;
    return *this;
}


Dimension OutputImageParam::dim(int d) const {
    user_assert(contents) << "dim(" << d << ") of an undefined ImageParam";
    user_assert(d >= 0 && d < dimensions())
        << (contents->is_output ? "The output buffer " : "ImageParam ") << name() << " has " << dimensions()
        << " dimensions; dim(" << d << ") does not exist";
    return Dimension(contents, d);
}

ImageParam::ImageParam(Type t, int dims, const std::string &name)
    : OutputImageParam(std::make_shared<ParameterContents>()) {
    user_assert(dims >= 0 && dims <= 8) << "ImageParam " << name << ": " << dims
                                        << " dimensions is not supported (0 to 8)";
    contents->name = name;
    contents->type = t;
    contents->is_buffer = true;
    contents->dimensions = dims;
}
void ImageParam::set_raw(const halide_buffer_t *b) {
    contents->held = Halide::Runtime::Buffer<const void>();
    contents->buffer = b;
}
Expr ImageParam::operator()(std::vector<Expr> args) const {
    user_assert(contents) << "Call to an undefined ImageParam";
    args = expand_placeholder(args, dimensions(), "ImageParam " + name());
    user_assert((int)args.size() == dimensions())
        << "ImageParam " << name() << " has " << dimensions() << " dimensions but was called with " << args.size()
        << " arguments";
    for (size_t i = 0; i < args.size(); i++) {
        user_assert(args[i].defined()) << "ImageParam " << name() << ": argument " << i << " is undefined";
        user_assert(!args[i].type().is_float())
            << "ImageParam " << name() << ": argument " << i << " is a " << args[i].type().to_string()
            << "; image coordinates must be integers (use cast<int>(...) or floor)";
        if (args[i].type() != Int(32)) args[i] = cast(Int(32), args[i]);
    }
    return Call::make(contents->type, contents->name, args, Call::Image, nullptr, contents);
}
ImageParam::operator Func() const {
    Func f(derived_name(contents->derived_names, name() + "_im"));
    std::vector<Expr> args;
    for (int i = 0; i < dimensions(); i++) args.push_back(Var("_" + std::to_string(i)));
    f(args) = (*this)(args);
    f.contents()->is_image_wrapper = true;
    return f;
}

}  // namespace kiln
