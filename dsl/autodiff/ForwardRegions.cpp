// The forward pipeline's Funcs, inputs and regions (ForwardRegions.h).
#include "autodiff/ForwardRegions.h"

#include <set>

#include "ir/IRVisitor.h"
#include "ir/Simplify.h"

namespace kiln {
namespace internal {

namespace {

class FindCalls : public IRVisitor {
public:
    std::vector<const Call *> calls;
    std::vector<const Variable *> params;

protected:
    using IRVisitor::visit;
    void visit(const Call *op) override {
        if (op->call_type != Call::PureExtern) calls.push_back(op);
        IRVisitor::visit(op);
    }
    void visit(const Variable *op) override {
        if (op->param && !op->param->is_buffer && op->name == op->param->name) params.push_back(op);
    }
};

FindCalls calls_of_stage(const Definition &d) {
    FindCalls find;
    for (const Expr &a : d.args) find.include(a);
    for (const Expr &v : d.values) find.include(v);
    return find;
}

class Walk {
public:
    ForwardPipeline p;

    void visit(const std::shared_ptr<FunctionContents> &f) {
        if (!done.insert(f->name).second) return;
        for (int s = 0; s < f->num_stages(); s++) {
            FindCalls found = calls_of_stage(f->stage(s));
            for (const Variable *v : found.params) p.params[v->name] = v->param;
            for (const Call *c : found.calls) {
                if (c->call_type == Call::Image) {
                    p.images[c->name] = c->param;
                } else if (c->func) {
                    visit(c->func);
                } else {
                    user_assert(c->name == f->name)
                        << "Cannot differentiate Func " << f->name << ": its call to " << c->name
                        << " goes through a wrapper made by in(), which autodiff does not follow; "
                           "differentiate the pipeline before adding in() wrappers";
                }
            }
        }
        p.funcs.push_back(f);
    }

private:
    std::set<std::string> done;
};

}  // namespace

std::vector<const Call *> calls_in(const Expr &e) {
    FindCalls find;
    find.include(e);
    return find.calls;
}

ForwardPipeline find_forward_pipeline(const std::shared_ptr<FunctionContents> &output, const Box &output_region) {
    Walk walk;
    walk.visit(output);
    ForwardPipeline p = std::move(walk.p);
    p.regions[output->name] = output_region;
    // Consumers first: a Func's region is complete before its reads are bounded.
    for (auto it = p.funcs.rbegin(); it != p.funcs.rend(); ++it) {
        const FunctionContents &f = **it;
        const Box &box = p.regions[f.name];
        for (int s = 0; s < f.num_stages(); s++) {
            const Definition &d = f.stage(s);
            Scope scope;
            for (size_t i = 0; i < d.args.size() && i < box.size(); i++) {
                const Variable *v = d.args[i].as<Variable>();
                if (v && !v->rdom && !v->param) scope.push(v->name, box[i]);
            }
            if (d.rdom)
                for (const auto &rv : d.rdom->vars) scope.push(rv.name, Interval(rv.min, simplify(rv.min + rv.extent - 1)));
            for (const Call *c : calls_of_stage(d).calls) {
                if (!c->func && c->call_type == Call::Func) continue;  // f itself
                Box &target = p.regions[c->name];
                if (target.empty()) target.assign(c->args.size(), Interval::nothing());
                for (size_t i = 0; i < c->args.size(); i++) {
                    Interval in = bounds_of_expr_in_scope(c->args[i], scope);
                    target[i] = interval_union(target[i], in);
                }
            }
        }
    }
    for (auto &[name, box] : p.regions)
        for (Interval &i : box) {
            if (i.min.defined()) i.min = simplify(i.min);
            if (i.max.defined()) i.max = simplify(i.max);
        }
    return p;
}

}  // namespace internal
}  // namespace kiln
