#include "InlineFunctions.h"

#include <algorithm>

#include "ir/IRVisitor.h"
#include "ir/Substitute.h"
#include "schedule/ScheduleOrigin.h"

namespace kiln {
namespace internal {

bool is_inlined(const FunctionContents &f, bool is_output) {
    if (is_output) return false;
    if (f.is_image_wrapper) return true;
    return f.schedule.compute_level.is_inlined() && f.updates.empty();
}

namespace {

class Inliner : public IRMutator {
public:
    Inliner(const Environment &e, const std::vector<std::string> &outs) : env(e), outputs(outs) {}

protected:
    const Environment &env;
    const std::vector<std::string> &outputs;
    Expr visit(const Call *op) override {
        Expr e = IRMutator::visit(op);
        const auto *c = e.as<Call>();
        if (!c || c->call_type != Call::Func) return e;
        auto it = env.find(c->name);
        if (it == env.end()) return e;
        const FunctionContents &f = *it->second;
        bool out = std::find(outputs.begin(), outputs.end(), f.name) != outputs.end();
        if (!is_inlined(f, out)) return e;
        std::map<std::string, Expr> m;
        for (size_t i = 0; i < f.args.size(); i++) m[f.args[i]] = c->args[i];
        return mutate(substitute(m, f.init.values[c->value_index]));
    }
};

}  // namespace

void inline_functions(Environment &env, const std::vector<std::string> &outputs) {
    for (auto &kv : env) {
        FunctionContents &f = *kv.second;
        bool out = std::find(outputs.begin(), outputs.end(), f.name) != outputs.end();
        if (is_inlined(f, out) && f.schedule.store_level_set && !f.is_image_wrapper) {
            user_error << schedule_origin(f, "store") << "Func " << f.name << " is scheduled store_at(" << f.schedule.store_level.to_string()
                       << ") but is inlined; a Func with store_root() or store_at() must also be given "
                          "compute_root() or compute_at()";
        }
    }
    Inliner inl(env, outputs);
    for (auto &kv : env) {
        FunctionContents &f = *kv.second;
        for (int s = 0; s < f.num_stages(); s++) {
            Definition &d = f.stage(s);
            for (auto &v : d.values) v = inl.mutate(v);
            for (auto &a : d.args) a = inl.mutate(a);
            if (d.rdom) {
                auto r = std::make_shared<ReductionDomainContents>(*d.rdom);
                for (auto &v : r->vars) {
                    v.min = inl.mutate(v.min);
                    v.extent = inl.mutate(v.extent);
                }
                if (r->predicate.defined()) r->predicate = inl.mutate(r->predicate);
                d.rdom = r;
            }
        }
    }
}

}  // namespace internal
}  // namespace kiln
