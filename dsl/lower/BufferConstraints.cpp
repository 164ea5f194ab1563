#include "BufferConstraints.h"

#include "ScheduleFunctions.h"
#include "ir/IRVisitor.h"
#include "ir/Simplify.h"
#include "ir/Substitute.h"
#include "ir/Util.h"
#include "kiln_runtime.h"

namespace kiln {
namespace internal {

namespace {

Expr str(const std::string &s) { return StringImm::make(s); }

// The buffers of the pipeline: its inputs, and its outputs' buffers that
// have been asked for (Func::output_buffer()).
std::vector<std::shared_ptr<ParameterContents>> pipeline_buffers(const Environment &env,
                                                                 const std::vector<std::string> &outputs) {
    std::vector<std::shared_ptr<ParameterContents>> r;
    for (const auto &kv : find_parameters(env))
        if (kv.second->is_buffer) r.push_back(kv.second);
    for (const auto &o : outputs)
        for (const auto &p : env.at(o)->output_buffers) r.push_back(p);
    return r;
}

void check_output_buffer_uses(const Environment &env, const std::vector<std::string> &outputs) {
    for (const auto &kv : find_output_buffer_uses(env)) {
        bool ours = false;
        for (const auto &o : outputs)
            for (const auto &p : env.at(o)->output_buffers) ours |= p == kv.second;
        user_assert(ours) << "The output buffer " << kv.first << " (" << kv.first
                          << ".output_buffer()) is used by this pipeline, whose outputs are " << join(outputs)
                          << ", but Func " << kv.first
                          << " is not one of them, so it has no buffer here; use the buffer of an output (or "
                             "make the Func an output of the pipeline)";
    }
}

}  // namespace

void check_npu_buffer_constraints(const Environment &env, const std::vector<std::string> &outputs) {
    for (const auto &o : outputs) {
        const FunctionContents &f = *env.at(o);
        user_assert(!computed_within_output(f, outputs))
            << "NPU target: Func " << o << " is an output of the pipeline computed at a loop of "
            << f.schedule.compute_level.func() << " (compute_at(" << f.schedule.compute_level.func() << ", "
            << f.schedule.compute_level.var() << ")), which the NPU target does not support (its outputs are "
            << "written from tiles at the root); compute " << o << " at the root in the NPU build";
    }
    for (const auto &p : pipeline_buffers(env, outputs))
        for (size_t d = 0; d < p->constraints.size(); d++) {
            const DimConstraint &c = p->constraints[d];
            user_assert(!c.min.defined() && !c.extent.defined() && !c.stride.defined())
                << "NPU target: " << (p->is_output ? "the output buffer " : "ImageParam ") << p->name
                << " has a constraint on dimension " << d
                << " (dim(" << d << ").set_min/set_extent/set_stride/set_bounds), which the NPU target does not "
                   "check on entry; remove it from the NPU build (the host target checks and uses it)";
        }
}

void check_npu_types(const Environment &env) {
    // 16-bit buffers and Funcs are the NPU's (widened by TCVT, computed in
    // float32); a scalar Param reaches the kernel as a float or an int32.
    for (const auto &[name, p] : find_parameters(env))
        user_assert(p->is_buffer || !p->type.is_float16_or_bfloat16())
            << "NPU target: Param " << name << " has type " << p->type.to_string()
            << ", and the NPU kernel takes scalar Params as float32 or int32; declare it Param<float> and widen "
               "nothing (the host target handles " << p->type.to_string() << " Params)";
}

Stmt add_buffer_constraints(const Stmt &s, const std::string &kernel, const Environment &env,
                            const std::vector<std::string> &outputs, bool checks) {
    check_output_buffer_uses(env, outputs);
    std::map<std::string, Expr> known;
    std::vector<Stmt> asserts;
    for (const auto &p : pipeline_buffers(env, outputs)) {
        for (size_t d = 0; d < p->constraints.size(); d++) {
            const DimConstraint &c = p->constraints[d];
            const std::pair<const char *, Expr> fields[] = {{"min", c.min}, {"extent", c.extent}, {"stride", c.stride}};
            for (const auto &[field, value] : fields) {
                if (!value.defined()) continue;
                std::string var = p->name + "." + field + "." + std::to_string(d);
                known[var] = value;
                if (!checks) continue;
                Expr actual = make_var(var), want = simplify(value);
                std::string call = p->is_output ? p->name + ".output_buffer()" : p->name;
                call += ".dim(" + std::to_string(d) + ").set_" + field + "(" + to_string(want) + ")";
                asserts.push_back(AssertStmt::make(
                    actual == want, kiln_error_constraint_violated,
                    {str(kernel + ": " + (p->is_output ? "output '" : "input '") + p->name + "' has " + field + " "),
                     actual, str(" in dimension " + std::to_string(d) + ", but the pipeline requires "), want,
                     str(" (" + call + "); pass a buffer with that " + field)}));
            }
        }
    }
    if (known.empty()) return s;
    // Below the outermost lets, as the entry checks, and before them.
    std::vector<const LetStmt *> lets;
    Stmt body = s;
    while (const auto *l = body.as<LetStmt>()) {
        lets.push_back(l);
        body = l->body;
    }
    body = substitute(known, body);
    if (!asserts.empty()) {
        asserts.push_back(body);
        body = Block::make(asserts);
    }
    for (auto it = lets.rbegin(); it != lets.rend(); ++it)
        body = LetStmt::make((*it)->name, substitute(known, (*it)->value), body);
    return body;
}

}  // namespace internal
}  // namespace kiln
