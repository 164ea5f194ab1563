#include "RealizationOrder.h"

#include <algorithm>
#include <functional>
#include <set>

#include "ComputeWith.h"
#include "SavedResiduals.h"
#include "UniqueNames.h"
#include "WrapCalls.h"
#include "ir/IRVisitor.h"

namespace kiln {
namespace internal {

namespace {

class FindCalls : public IRVisitor {
public:
    std::vector<std::shared_ptr<FunctionContents>> funcs;
    std::vector<std::string> names;
    std::map<std::string, std::shared_ptr<ParameterContents>> params;
    std::set<std::string> vars;  // free Variables: Vars, and RVars named without their RDom
    Expr bad_arity;  // a call with the wrong number of arguments (FuncRef::define reports those it sees)
    // The output buffers whose fields are used (Func::output_buffer()): not inputs.
    std::map<std::string, std::shared_ptr<ParameterContents>> output_buffers;

    // A buffer's constraints (Dimension::set_min, ...) may use Params and other buffers.
    void include_constraints(const ParameterContents &p) {
        for (const DimConstraint &c : p.constraints)
            for (const Expr &e : {c.min, c.extent, c.stride})
                if (e.defined()) include(e);
    }

protected:
    void add(const std::shared_ptr<ParameterContents> &p) {
        auto &m = p->is_output ? output_buffers : params;
        if (m.count(p->name)) return;
        m[p->name] = p;
        include_constraints(*p);
    }
    void visit(const Call *op) override {
        IRVisitor::visit(op);
        if (op->call_type == Call::Func) {
            // A null func: a Func's call to itself, or a wrapper's to the Func it wraps.
            if (op->func) funcs.push_back(op->func);
            names.push_back(op->name);
            if (op->func && op->args.size() != op->func->args.size() && !bad_arity.defined()) bad_arity = Expr(op);
        }
        if (op->call_type == Call::Image && op->param) add(op->param);
    }
    void visit(const Variable *op) override {
        if (op->param) add(op->param);
        else if (!op->rdom) vars.insert(op->name);
        if (op->rdom) {
            for (const auto &v : op->rdom->vars) {
                include(v.min);
                include(v.extent);
            }
        }
    }
};

// Each update's where() condition uses only RVars and the update's pure
// Vars. FuncRef::define checks this when the update is defined; a where()
// added to the RDom afterwards is checked here.
void check_where_vars(const FunctionContents &f) {
    for (int s = 1; s < f.num_stages(); s++) {
        const Definition &d = f.stage(s);
        if (!d.rdom || !d.rdom->predicate.defined()) continue;
        std::set<std::string> known;
        for (const auto &a : d.args)
            if (const auto *v = a.as<Variable>()) known.insert(v->name);
        for (const auto &rv : d.rdom->vars) known.insert(rv.name);
        FindCalls c;
        c.include(d.rdom->predicate);
        for (const auto &v : c.vars)
            user_assert(known.count(v))
                << "RDom " << d.rdom->name << ": the where() condition " << d.rdom->predicate << ", added after "
                << f.stage_name(s) << " was defined, uses Var " << v << ", which " << f.stage_name(s)
                << " does not loop over; call where() before defining the update, with a condition of the RVars of "
                << d.rdom->name << ", the update's pure Vars, Params and constants";
    }
}

}  // namespace

Environment find_environment(const std::vector<std::shared_ptr<FunctionContents>> &outputs,
                             std::vector<SavedResidual> *residuals) {
    Environment env = find_user_functions(outputs);
    for (auto &kv : env) {
        auto copy = std::make_shared<FunctionContents>(*kv.second);
        kv.second = copy;
    }
    wrap_calls(env);
    std::vector<std::string> names;
    for (const auto &o : outputs) names.push_back(o->name);
    std::vector<SavedResidual> saved = read_saved_residuals(env, names);
    if (residuals) *residuals = saved;
    return env;
}

Environment find_user_functions(const std::vector<std::shared_ptr<FunctionContents>> &outputs) {
    std::vector<std::shared_ptr<FunctionContents>> funcs;
    std::set<const FunctionContents *> seen;
    std::vector<std::shared_ptr<FunctionContents>> work = outputs;
    while (!work.empty()) {
        auto f = work.back();
        work.pop_back();
        user_assert(f->init.defined()) << "Func " << f->name
                                       << " is used in the pipeline but never defined; give it a definition";
        if (!seen.insert(f.get()).second) continue;
        funcs.push_back(f);
        check_where_vars(*f);
        FindCalls c;
        for_each_definition_expr(*f, [&](const Expr &e) { c.include(e); });
        if (const Call *bad = c.bad_arity.as<Call>())
            user_error << "Func " << bad->name << " has " << bad->func->args.size() << " dimension(s) but is called "
                       << "with " << bad->args.size() << " argument(s) in a schedule or RDom expression of " << f->name
                       << ": " << c.bad_arity << "; call it with one coordinate per dimension";
        for (auto &g : c.funcs) work.push_back(g);
        // Wrappers (in()) and the Funcs they wrap belong to the pipeline too.
        for (auto &kv : f->schedule.wrappers) work.push_back(kv.second);
        for (auto &kv : c.params)
            for (auto &w : kv.second->wrappers) work.push_back(w.second);
        if (auto w = f->wrapped_func.lock()) work.push_back(w);
    }
    make_names_unique(funcs);
    Environment env;
    for (const auto &f : funcs) env[f->name] = f;
    return env;
}

std::vector<std::string> direct_callees(const FunctionContents &f) {
    FindCalls c;
    for_each_definition_expr(f, [&](const Expr &e) { c.include(e); });
    std::vector<std::string> r;
    for (const auto &n : c.names)
        if (n != f.name && std::find(r.begin(), r.end(), n) == r.end()) r.push_back(n);
    return r;
}

namespace {
FindCalls find_in_definitions(const Environment &env) {
    FindCalls c;
    for (const auto &kv : env) {
        for_each_definition_expr(*kv.second, [&](const Expr &e) { c.include(e); });
        for (const auto &p : kv.second->output_buffers) c.include_constraints(*p);
    }
    return c;
}
}  // namespace

std::map<std::string, std::shared_ptr<ParameterContents>> find_parameters(const Environment &env) {
    return find_in_definitions(env).params;
}

std::map<std::string, std::shared_ptr<ParameterContents>> find_output_buffer_uses(const Environment &env) {
    return find_in_definitions(env).output_buffers;
}

std::set<std::string> computed_funcs(const std::vector<std::string> &outputs, const Environment &env) {
    std::set<std::string> seen;
    std::vector<std::string> work = outputs;
    while (!work.empty()) {
        std::string n = work.back();
        work.pop_back();
        if (!env.count(n) || !seen.insert(n).second) continue;
        for (const auto &c : direct_callees(*env.at(n))) work.push_back(c);
    }
    return seen;
}

std::vector<std::string> realization_order(const std::vector<std::string> &outputs, const Environment &env) {
    std::vector<std::string> order;
    std::set<std::string> done, visiting;
    std::function<void(const std::string &)> visit = [&](const std::string &n) {
        // A compute_with group is realized together: the producers of all its
        // members first, then the parent, then the Funcs fused into it.
        std::string root = fusion_parent(*env.at(n));
        if (root.empty() || !env.count(root)) root = n;
        if (done.count(root)) return;
        internal_assert(!visiting.count(root)) << "cycle in the pipeline through " << root;
        visiting.insert(root);
        std::vector<std::string> group = fused_children(env, root);
        group.insert(group.begin(), root);
        for (const auto &m : group)
            for (const auto &c : direct_callees(*env.at(m)))
                if (std::find(group.begin(), group.end(), c) == group.end()) visit(c);
        visiting.erase(root);
        for (const auto &m : group) {
            done.insert(m);
            order.push_back(m);
        }
    };
    for (const auto &o : outputs) visit(o);
    return order;
}

}  // namespace internal
}  // namespace kiln
