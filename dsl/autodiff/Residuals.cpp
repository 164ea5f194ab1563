// forward_with_residuals() (kiln/Derivative.h): the forward pass that writes
// the forward Funcs a backward pipeline saves (Func::save()), which the
// backward pipeline then reads from their buffers (lower/SavedResiduals.h).
//
//   bias_add.save(Residual::Bits), backward reads select(bias_add(x, y) >= 0.0f, ...):
//     forward outputs: output, and
//     bias_add_bits(x, y) = uint8(select(bias_add(clamp(8 x, first, last), y) >= 0.0f, 1, 0)
//                               | select(bias_add(clamp(8 x + 1, first, last), y) >= 0.0f, 2, 0) | ... 128)
//     with [first, last] = output's columns
//   gelu_in.save(BFloat(16)):
//     forward outputs: output, and gelu_in_bfloat16(x, y) = bfloat16(gelu_in(x, y))
#include <limits>
#include <set>

#include "analysis/ConcreteSizes.h"
#include "ir/Simplify.h"
#include "kiln/Derivative.h"
#include "lower/Lower.h"
#include "lower/SavedResiduals.h"
#include "ir/Error.h"
#include "ir/IRVisitor.h"
#include "ir/Substitute.h"
#include "ir/Util.h"

namespace kiln {

using namespace internal;

namespace {

// The Bits encoding of f, whose backward pass reads `condition` of its value.
Func bits_encoder(const Func &f, const Expr &condition, const std::vector<Func> &forward) {
    const Func *shaped = nullptr;
    for (const Func &o : forward)
        if (!shaped && o.dimensions() == f.dimensions()) shaped = &o;
    std::vector<std::string> names;
    for (const Func &o : forward) names.push_back(o.name() + " (" + std::to_string(o.dimensions()) + "-D)");
    user_assert(shaped) << "Func " << f.name() << " is saved as bits (save(bits)), packed along dimension 0 up to "
                        << "the end of a forward output of its " << f.dimensions() << " dimension(s), and the "
                        << "forward outputs are " << join(names) << "; save() it whole";
    // The forward pass computes f over its output's columns: a byte's bits
    // past either end repeat the nearest column (the backward pass never
    // reads them, and f may not be computable there).
    Expr first = shaped->output_buffer().dim(0).min(), last = shaped->output_buffer().dim(0).max();
    std::vector<Var> vars;
    std::vector<Expr> args;
    for (const std::string &a : f.contents()->args) {
        vars.push_back(Var(a));
        args.push_back(Var(a));
    }
    Func enc(f.name() + "_bits");
    Expr packed = make_const(UInt(8), (int64_t)0);
    for (int i = 0; i < 8; i++) {
        std::vector<Expr> at = args;
        at[0] = clamp(8 * args[0] + i, first, last);
        Expr bit = substitute("value", f(at), condition);
        packed = packed | select(bit, make_const(UInt(8), (int64_t)(1 << i)), make_const(UInt(8), (int64_t)0));
    }
    enc(args) = packed;
    enc.contents()->encodes_residual = f.name();
    if (vars.size() > 1) enc.parallel(vars.back());
    return enc;
}

// The copy of f rounded to a 16-bit float type (`how` Float16 or BFloat16).
Func narrow_encoder(const Func &f, Residual how) {
    std::vector<Var> vars;
    for (const std::string &a : f.contents()->args) vars.push_back(Var(a));
    std::vector<Expr> args(vars.begin(), vars.end());
    Func enc(f.name() + "_" + to_string(how));
    enc(args) = cast(how == Residual::BFloat16 ? BFloat(16) : Float(16), f(args));
    enc.contents()->encodes_residual = f.name();
    if (vars.size() > 1) enc.parallel(vars.back());
    return enc;
}

// Calls of the copied Funcs go to their copies.
class ToCopies : public IRMutator {
public:
    explicit ToCopies(const Environment &copies) : copies(copies) {}

protected:
    using IRMutator::visit;
    const Environment &copies;
    Expr visit(const Call *op) override {
        Expr e = IRMutator::visit(op);
        const Call *c = e.as<Call>();
        if (c->call_type != Call::Func || !c->func || !copies.count(c->name)) return e;
        return Call::make(c->type, c->name, c->args, Call::Func, copies.at(c->name), nullptr, c->value_index);
    }
};

}  // namespace

std::vector<std::shared_ptr<FunctionContents>> internal::contents_of(const std::vector<Func> &fs) {
    std::vector<std::shared_ptr<FunctionContents>> r;
    for (const Func &f : fs) r.push_back(f.contents());
    return r;
}

std::vector<Func> internal::copy_pipeline(const std::vector<Func> &outputs) {
    Environment user = find_user_functions(contents_of(outputs)), copies;
    for (const auto &[name, f] : user) {
        auto c = std::make_shared<FunctionContents>(*f);
        c->jit_cache = nullptr;
        copies[name] = c;
    }
    ToCopies to(copies);
    for (auto &[name, c] : copies) {
        for (int s = 0; s < c->num_stages(); s++) {
            Definition &d = c->stage(s);
            for (auto &v : d.values) v = to.mutate(v);
            for (auto &a : d.args) a = to.mutate(a);
        }
        for (auto &w : c->schedule.wrappers)
            if (copies.count(w.second->name)) w.second = copies.at(w.second->name);
        if (auto w = c->wrapped_func.lock())
            if (copies.count(w->name)) c->wrapped_func = copies.at(w->name);
    }
    std::vector<Func> r;
    for (const Func &o : outputs) r.push_back(Func(copies.at(o.name())));
    return r;
}

std::map<std::string, std::vector<int>> internal::read_extents(const std::vector<Func> &outputs,
                                                                const std::set<std::string> &inputs,
                                                                const std::map<std::string, std::vector<int>> &sizes,
                                                                const Target &t) {
    std::map<std::string, std::vector<int>> r;
    for (const Func &o : outputs)
        if (!sizes.count(o.name())) return r;  // no size to infer from
    std::vector<std::shared_ptr<FunctionContents>> outs = contents_of(outputs);
    ConcreteSizes cs = concrete_sizes(outs, sizes, "read_extents");
    LowerOptions lo;
    lo.stop = LowerStop::LoopNest;
    PipelineRegions regions;
    lo.regions = &regions;
    Stmt body;
    try {
        body = lower(outs, "", {}, t, lo).body;
    } catch (const CompileError &) {
        return r;  // left unsized; the kernel's own lowering says what is wrong, where it is
    }
    const std::map<std::string, Expr> values = substitutions(cs);
    // The boxes may name the loop nest's lets (a reduction's bounds).
    class Lets : public IRVisitor {
    public:
        std::map<std::string, Expr> found;
        void visit(const LetStmt *op) override {
            found[op->name] = op->value;
            IRVisitor::visit(op);
        }
    } lets;
    lets.include(body);
    for (const std::string &name : inputs) {
        auto box = regions.inputs.find(name);
        if (box == regions.inputs.end()) continue;
        std::vector<int> ext;
        for (const Interval &i : box->second) {
            if (!i.bounded()) break;
            std::optional<int64_t> n = constant_value(i.max - i.min + 1, values, lets.found);
            if (!n || *n < 1 || *n > std::numeric_limits<int>::max()) break;
            ext.push_back((int)*n);
        }
        if (ext.size() == box->second.size()) r[name] = ext;
    }
    return r;
}

void internal::residual_sizes(const std::vector<SavedResidual> &saved, const std::vector<Func> &forward,
                              const std::vector<Func> &backward, const Target &t,
                              std::map<std::string, std::vector<int>> &sizes) {
    std::set<std::string> unsized;
    for (const auto &r : saved)
        if (!sizes.count(r.buffer->name)) unsized.insert(r.buffer->name);
    if (unsized.empty()) return;
    // First the box the backward pass reads (already in bytes for bits,
    // which it reads at x / 8): exact under its schedule, where a forward
    // output's size is only a guess (a residual of attention is seq x seq,
    // its output d x seq).
    for (const auto &[name, ext] : read_extents(backward, unsized, sizes, t)) {
        sizes[name] = ext;
        unsized.erase(name);
    }
    // Then, where that box is not constant, a forward output's size with as
    // many dimensions.
    for (const auto &r : saved) {
        if (!unsized.count(r.buffer->name)) continue;
        for (const Func &f : forward) {
            auto it = sizes.find(f.name());
            if (it == sizes.end() || (int)it->second.size() != r.buffer->dimensions) continue;
            std::vector<int> ext = it->second;
            if (r.how == Residual::Bits) ext[0] = (ext[0] + 7) / 8;
            sizes[r.buffer->name] = ext;
            break;
        }
    }
}

std::vector<SavedBuffer> saved_buffers(const std::vector<Func> &forward, const std::vector<Func> &backward,
                                       const std::map<std::string, std::vector<int>> &sizes, const Target &t) {
    std::vector<SavedResidual> saved;
    find_environment(contents_of(backward), &saved);
    std::map<std::string, std::vector<int>> all = sizes;
    residual_sizes(saved, forward, backward, t, all);
    std::vector<SavedBuffer> r;
    for (const SavedResidual &s : saved) {
        bool is_output = false;
        for (const Func &o : forward) is_output |= s.how == Residual::Whole && o.name() == s.func;
        auto ext = all.find(s.buffer->name);
        r.push_back({s.func, ImageParam(s.buffer), ext == all.end() ? std::vector<int>() : ext->second, is_output});
    }
    return r;
}

Pipeline forward_with_residuals(const std::vector<Func> &forward, const std::vector<Func> &backward) {
    user_assert(!forward.empty()) << "forward_with_residuals(forward, backward): give the Funcs differentiated";
    std::vector<SavedResidual> saved;
    find_environment(contents_of(backward), &saved);
    Environment user = find_user_functions(contents_of(backward));
    std::vector<Func> outs = forward;
    for (const SavedResidual &r : saved) {
        Func f(user.at(r.func));
        bool is_output = false;
        for (const Func &o : forward) is_output |= o.contents() == f.contents();
        if (r.how == Residual::Bits) outs.push_back(bits_encoder(f, r.condition, forward));
        else if (r.how != Residual::Whole) outs.push_back(narrow_encoder(f, r.how));
        else if (!is_output) outs.push_back(f);
    }
    return Pipeline(outs);
}

}  // namespace kiln
