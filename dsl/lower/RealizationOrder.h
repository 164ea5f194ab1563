// The Funcs of a pipeline and the order in which they are realized.
//
// find_environment walks the definitions reachable from the outputs and
// returns a lowering-local copy of every Func (lowering never mutates the
// user's Funcs), wrappers (in()) included and calls redirected to them
// (wrap_calls), and saved Funcs read from their buffers (SavedResiduals.h).
// realization_order sorts them so that every producer comes
// before its consumers:
//
//   out(x) = g(x) + h(x);  g(x) = f(x);  h(x) = f(x)   ->   f, g, h, out
#pragma once
#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "ir/Function.h"

namespace kiln {
namespace internal {

using Environment = std::map<std::string, std::shared_ptr<FunctionContents>>;

struct SavedResidual;
// Saved forward Funcs (Func::save()) the outputs do not compute are read
// from their buffers (SavedResiduals.h); `residuals`, if given, gets them.
Environment find_environment(const std::vector<std::shared_ptr<FunctionContents>> &outputs,
                             std::vector<SavedResidual> *residuals = nullptr);
// The user's own Funcs reachable from the outputs (not copies), e.g. to
// apply a schedule to them by name.
Environment find_user_functions(const std::vector<std::shared_ptr<FunctionContents>> &outputs);

// Names of the Funcs called by f's definitions (not f itself).
std::vector<std::string> direct_callees(const FunctionContents &f);

// The Funcs the outputs reach through calls, themselves included (after
// inline_functions: those the pipeline computes). env may hold others:
// find_user_functions adds every wrapper of an image the pipeline reads,
// also one for a consumer in another pipeline (a backward pass's
// A.in(B_adjoint) in its forward pass's environment).
std::set<std::string> computed_funcs(const std::vector<std::string> &outputs, const Environment &env);

std::vector<std::string> realization_order(const std::vector<std::string> &outputs, const Environment &env);

// The inputs the pipeline reads: image and scalar parameters, by name.
// Buffer constraints (Dimension::set_stride, ...) count as reads.
std::map<std::string, std::shared_ptr<ParameterContents>> find_parameters(const Environment &env);
// The output buffers whose fields the pipeline uses (f.output_buffer().width()), by name.
std::map<std::string, std::shared_ptr<ParameterContents>> find_output_buffer_uses(const Environment &env);

// Apply fn to every Expr of a Func's definitions (values, args, split
// factors, prefetch offsets, specializations, RDom bounds, bounds). With a
// non-const Func, fn gets each Expr by reference and may replace it.
template<typename Contents, typename Fn>
void for_each_definition_expr(Contents &f, Fn fn) {
    for (int s = 0; s < f.num_stages(); s++) {
        auto &d = f.stage(s);
        for (auto &v : d.values) fn(v);
        for (auto &a : d.args) fn(a);
        for (auto &sp : d.schedule.splits)
            if (sp.factor.defined()) fn(sp.factor);  // a Param may size a split
        for (auto &p : d.schedule.prefetches) fn(p.offset);  // ... or a prefetch's offset
        for (auto &spec : d.specializations) {
            fn(spec.condition);
            for (auto &sp : spec.schedule.splits)
                if (sp.factor.defined()) fn(sp.factor);
        }
        if (d.rdom) {
            for (auto &v : d.rdom->vars) {
                fn(v.min);
                fn(v.extent);
            }
            if (d.rdom->predicate.defined()) fn(d.rdom->predicate);
        }
    }
    for (auto &b : f.schedule.bounds) {
        fn(b.min);
        fn(b.extent);
    }
}

}  // namespace internal
}  // namespace kiln
