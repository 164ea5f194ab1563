// What the autoscheduler knows of each Func before it searches
// (SearchSpace.h): consumers, the dimensions its region follows, whether it
// is a row reduction rfactor can split, a matrix product and whose register
// blocks it can be computed per.
//
//   scores(j, i) += Q(rd, i) * key_t(j, rd)     -> matrix_rvar "rd.x", block_root "" (row_max reads whole rows),
//   row_max(i) = max(row_max(i), scores(rk, i))    wrapper "scores_in"; row_max: rvar "rk.x"
#include <algorithm>
#include <tuple>

#include "SearchSpace.h"
#include "ir/IRVisitor.h"
#include "ir/Substitute.h"

namespace kiln {
namespace internal {

namespace {

// Whether an index loads a value (calls a Func or an input): a cell a
// histogram's value selects, where its lanes store apart. An index of
// loop variables alone (max_filter's vert_log(x, r.x, c, r.y), an IIR
// filter's row ry) stores vectors densely along a pure first dimension.
bool loads_value(const Expr &e) {
    struct Loads : IRVisitor {
        bool found = false;
        void visit(const Call *op) override {
            found |= op->call_type == Call::Func || op->call_type == Call::Image;
            IRVisitor::visit(op);
        }
    } v;
    v.include(e);
    return v.found;
}

// Calls to Func `f` in an expression: how many, whether each is at the
// caller's own pure coordinates (f(x, y) in g(x, y) = ...), and which of
// the caller's pure variables (by position) their arguments use.
class CallsTo : public IRVisitor {
public:
    CallsTo(const std::string &f, const std::vector<std::string> &args) : f(f), args(args) {}
    int calls = 0;
    bool same_point = true;
    std::set<size_t> uses;
    std::set<size_t> along_rows;  // the arguments (by position) that use the caller's second pure variable

protected:
    const std::string &f;
    const std::vector<std::string> &args;
    void visit(const Call *op) override {
        IRVisitor::visit(op);
        if (op->call_type != Call::Func || op->name != f) return;
        calls++;
        for (size_t i = 0; i < op->args.size(); i++) {
            // An index computed from loaded values (a lookup table's
            // remap(gray(x, y))) selects anywhere in its range, whatever
            // point the consumer computes: it follows none of them.
            if (loads_value(op->args[i])) continue;
            for (size_t k = 0; k < args.size(); k++)
                if (expr_uses_var(op->args[i], args[k])) {
                    uses.insert(k);
                    if (k == 1) along_rows.insert(i);
                }
        }
        if (op->args.size() != args.size()) same_point = false;
        for (size_t i = 0; i < op->args.size() && same_point; i++) {
            const auto *v = op->args[i].as<Variable>();
            same_point = v && v->name == args[i];
        }
    }
};

// A float sum or product on a target without fast_math: its order is part
// of its result.
bool float_reduction_without_fast_math(const Definition &u, const Target &t) {
    if (u.values.size() != 1 || !u.values[0].type().is_float() || t.has(Target::FastMath)) return false;
    return u.values[0].as<Add>() || u.values[0].as<Mul>();
}

// Whether an update gives the same bits in any order of its RVar: min and
// max do, integer arithmetic does (it wraps), float sums and products do
// not, so those are split into lanes only where the target allows
// reassociation (fast_math), as hand schedules with rfactor assume.
bool reassociation_exact(const Definition &u, const Target &t) {
    if (u.values.size() != 1) return false;
    const Expr &v = u.values[0];
    if (v.as<Max>() || v.as<Min>()) return true;
    if (!v.as<Add>() && !v.as<Mul>()) return false;
    return !float_reduction_without_fast_math(u, t);
}

// The RVars' loop names, innermost first and comma-separated, if f is a
// matrix product: f(x, y, ...) = f(x, y, ...) + a * b over an RDom, its
// update's arguments its pure variables (GEMM, a convolution's taps); ""
// otherwise.
std::string matrix_rvars(const FunctionContents &f) {
    if (f.args.size() < 2 || f.updates.size() != 1 || f.num_values() != 1) return "";
    const Definition &u = f.updates[0];
    if (!u.rdom) return "";
    for (size_t i = 0; i < f.args.size(); i++) {
        const auto *v = u.args[i].as<Variable>();
        if (!v || v->name != f.args[i]) return "";
    }
    const auto *add = u.values[0].as<Add>();
    if (!add || !add->type.is_float()) return "";
    const Call *self = add->a.as<Call>();
    const Mul *product = add->b.as<Mul>();
    if (!self || !product) {
        self = add->b.as<Call>();
        product = add->a.as<Mul>();
    }
    if (!self || !product || self->name != f.name) return "";
    std::string r;
    for (const Dim &d : u.schedule.dims)
        if (d.is_rvar) r += (r.empty() ? "" : ", ") + d.user_name;
    return r;
}

// The operand of matrix product f (matrix_rvars) that packing wraps
// (FuncInfo::pack_operand): a Func or input called with f's first
// variable as its first argument, and its other arguments moving with the
// innermost RVar (B(x, k) of f(x, y) += A(k, y) * B(x, k)). Its name, its
// wrapper's first variable and the first dimension that moves with the
// RVar; {"", "", 0} if neither factor is one.
std::tuple<std::string, std::string, int> pack_operand(const FunctionContents &f) {
    const Definition &u = f.updates[0];
    std::string rvar;
    for (const Dim &d : u.schedule.dims)
        if (d.is_rvar && rvar.empty()) rvar = d.user_name;
    const auto *add = u.values[0].as<Add>();
    const Mul *product = add->b.as<Mul>() ? add->b.as<Mul>() : add->a.as<Mul>();
    for (Expr e : {product->a, product->b}) {
        while (const auto *c = e.as<Cast>()) e = c->value;
        const auto *call = e.as<Call>();
        if (!call || (call->call_type != Call::Func && call->call_type != Call::Image) || call->args.size() < 2) continue;
        const auto *x = call->args[0].as<Variable>();
        if (!x || x->name != f.args[0]) continue;
        int moves = 0;
        for (size_t d = call->args.size() - 1; d >= 1; d--)
            if (expr_uses_var(call->args[d], rvar)) moves = (int)d;
        if (!moves) continue;
        if (call->call_type == Call::Image) return {call->name, "_0", moves};
        if (call->func) return {call->name, call->func->args[0], moves};
    }
    return {"", "", 0};
}

}  // namespace

PipelineFuncs analyze_funcs(const std::vector<std::shared_ptr<FunctionContents>> &outs,
                            const std::vector<std::string> &out_names, const Target &t) {
    PipelineFuncs r;
    const Environment env = find_environment(outs), user = find_user_functions(outs);
    for (const std::string &name : realization_order(out_names, env)) {
        auto it = user.find(name);
        if (it == user.end() || it->second->is_image_wrapper) continue;
        const FunctionContents &f = *it->second;
        FuncInfo fi;
        fi.name = name;
        fi.args = f.args;
        fi.output = std::count(out_names.begin(), out_names.end(), name) != 0;
        fi.updates = !f.updates.empty();
        int widest = 1;
        for (const Type &ty : f.types) widest = std::max(widest, ty.bytes());
        fi.lanes = std::max(1, t.vector_bytes() / widest);
        fi.extent.assign(fi.args.size(), 1024);  // until the baseline is counted
        r.order.push_back(name);
        r.info[name] = fi;
    }
    for (const std::string &name : r.order)
        for (const std::string &c : direct_callees(*user.at(name)))
            if (r.info.count(c)) r.info[c].consumers.push_back(name);
    for (auto &[name, fi] : r.info) {
        const FunctionContents &f = *user.at(name);
        if (f.updates.size() != 1 || f.args.size() != 1 || !f.updates[0].rdom || f.updates[0].rdom->vars.size() != 1)
            continue;
        const Definition &u = f.updates[0];
        const auto *v = u.args[0].as<Variable>();
        std::string rvar;
        for (const Dim &d : u.schedule.dims)
            if (d.is_rvar && v && v->name == f.args[0]) rvar = d.user_name;
        if (reassociation_exact(u, t))
            fi.rvar = rvar;
        else if (!rvar.empty() && float_reduction_without_fast_math(u, t))
            fi.exact_order_only = name + ": its float " + (u.values[0].as<Add>() ? "sum" : "product") + " over " +
                                  rvar + " is not split into vector lanes (rfactor), which would change its rounding; "
                                  "add fast_math to the target to allow it (hand schedules with rfactor reassociate "
                                  "whatever the target)";
    }
    for (auto &[name, fi] : r.info) {
        fi.matrix_rvar = matrix_rvars(*user.at(name));
        if (!fi.matrix_rvar.empty()) std::tie(fi.pack_operand, fi.pack_var, fi.pack_dim) = pack_operand(*user.at(name));
        for (const Definition &u : user.at(name)->updates)
            for (size_t i = 0; i < u.args.size() && i < fi.args.size(); i++) {
                const auto *v = u.args[i].as<Variable>();
                fi.scatter |= (!v || v->name != fi.args[i]) && loads_value(u.args[i]);
            }
    }
    for (auto &[name, fi] : r.info)
        for (const std::string &cn : fi.consumers) {
            const FunctionContents &c = *user.at(cn);
            CallsTo calls(name, c.args);
            for (const Expr &v : c.init.values) calls.include(v);
            for (const Definition &u : c.updates) {
                for (const Expr &v : u.values) calls.include(v);
                for (const Expr &a : u.args) calls.include(a);
            }
            fi.follows.insert(calls.uses.begin(), calls.uses.end());
            // An update that indexes such an argument with anything but
            // its pure variable (an RVar over the column, a fixed row).
            for (size_t i : calls.along_rows)
                for (const Definition &u : user.at(name)->updates) {
                    const auto *v = i < u.args.size() ? u.args[i].as<Variable>() : nullptr;
                    fi.rows_reduced |= !v || i >= fi.args.size() || v->name != fi.args[i];
                }
        }
    for (auto &[name, fi] : r.info) {
        if (fi.consumers.size() != 1 || fi.updates) continue;
        const FunctionContents &c = *user.at(fi.consumers[0]);
        CallsTo calls(name, c.args);
        for (const Expr &v : c.init.values) calls.include(v);
        fi.pointwise = c.updates.empty() && calls.calls == 1 && calls.same_point;
    }
    // A register block of a matrix product is its consumer's block only
    // where each value is read once, at the same point, along a chain of
    // such consumers up to the group's root: elsewhere its region per
    // block is not a constant the unrolled loops can take.
    for (auto &[name, fi] : r.info) {
        if (fi.matrix_rvar.empty()) continue;
        std::string at = name;
        bool same = false;
        while (r.info.at(at).consumers.size() == 1) {
            const std::string &c = r.info.at(at).consumers[0];
            CallsTo calls(at, user.at(c)->args);
            for (const Expr &v : user.at(c)->init.values) calls.include(v);
            if (!user.at(c)->updates.empty() || calls.calls != 1 || !calls.same_point) break;
            same = true;
            at = c;
            if (!r.info.at(at).pointwise) break;
        }
        fi.block_root = same ? at : "";
    }
    return r;
}

void add_wrappers(std::map<std::string, FuncInfo> &info, const Environment &env) {
    std::vector<FuncInfo> wrappers;
    for (auto &[name, fi] : info) {
        if (fi.matrix_rvar.empty() || !fi.block_root.empty() || fi.output) continue;
        const std::string w = name + "_in";
        if (env.count(w) || info.count(w)) continue;  // the name the wrapper would take is a Func's
        fi.wrapper = w;
        FuncInfo wi;
        wi.name = w;
        wi.args = fi.args;
        wi.consumers = fi.consumers;
        wi.follows = fi.follows;
        wi.extent = fi.extent;
        wi.lanes = fi.lanes;
        wrappers.push_back(wi);
    }
    for (const FuncInfo &wi : wrappers) info[wi.name] = wi;
}

}  // namespace internal
}  // namespace kiln
