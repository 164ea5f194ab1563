#include <atomic>

#include "ir/Function.h"
#include "ir/IRVisitor.h"
#include "kiln/Func.h"
#include "kiln/Schedule.h"

namespace kiln {

LoopLevel::LoopLevel(const Func &f, const VarOrRVar &v)
    : kind(At), func_name(f.name()), var_name(v.name()), contents(f.contents()) {}
LoopLevel LoopLevel::root() {
    LoopLevel l;
    l.kind = Root;
    return l;
}
std::string LoopLevel::to_string() const {
    if (kind == Root) return "root";
    if (kind == Inlined) return "inline";
    return func_name + "." + var_name;
}

const char *to_string(TailStrategy t) {
    switch (t) {
    case TailStrategy::Auto: return "Auto";
    case TailStrategy::GuardWithIf: return "GuardWithIf";
    case TailStrategy::ShiftInwards: return "ShiftInwards";
    case TailStrategy::RoundUp: return "RoundUp";
    }
    return "?";
}
const char *to_string(ForType t) {
    switch (t) {
    case ForType::Serial: return "serial";
    case ForType::Parallel: return "parallel";
    case ForType::Vectorized: return "vectorized";
    case ForType::Unrolled: return "unrolled";
    case ForType::LaneFallback: return "lane fallback";
    }
    return "?";
}
const char *to_string(PrefetchBoundStrategy s) {
    switch (s) {
    case PrefetchBoundStrategy::Clamp: return "Clamp";
    case PrefetchBoundStrategy::GuardWithIf: return "GuardWithIf";
    case PrefetchBoundStrategy::NonFaulting: return "NonFaulting";
    }
    return "?";
}
const char *to_string(LoopAlignStrategy a) {
    switch (a) {
    case LoopAlignStrategy::AlignStart: return "AlignStart";
    case LoopAlignStrategy::AlignEnd: return "AlignEnd";
    case LoopAlignStrategy::NoAlign: return "NoAlign";
    case LoopAlignStrategy::Auto: return "Auto";
    }
    return "?";
}

const char *to_string(Residual r) {
    static const char *names[] = {"none", "whole", "bits", "float16", "bfloat16"};
    return names[(int)r];
}

const char *to_string(MemoryType m) {
    static const char *names[] = {"Auto", "GM", "UB", "L1", "L0A", "L0B", "L0C"};
    return names[(int)m];
}

namespace internal {
static std::atomic<uint64_t> epoch{0}, functions_made{0};
FunctionContents::FunctionContents() : serial(functions_made++) {}

uint64_t definition_epoch() { return epoch.load(); }
void bump_definition_epoch() { epoch++; }

void StageSchedule::split_dim(int i, const std::string &outer, const std::string &inner, Expr factor,
                              TailStrategy tail) {
    const Dim d = dims[i];
    Split sp;
    sp.kind = Split::SplitVar;
    sp.old_var = d.var;
    sp.outer = d.var + "." + outer;
    sp.inner = d.var + "." + inner;
    sp.factor = std::move(factor);
    sp.tail = tail;
    splits.push_back(sp);
    Dim din = d, dout = d;
    din.var = sp.inner;
    din.user_name = inner;
    dout.var = sp.outer;
    dout.user_name = outer;
    dims[i] = din;
    dims.insert(dims.begin() + i + 1, dout);
}

std::string FunctionContents::stage_name(int i) const {
    return i == 0 ? name : name + ".update(" + std::to_string(i - 1) + ")";
}

std::vector<Dim> FunctionContents::definition_dims(int i) const {
    std::vector<Dim> dims;
    if (i == 0) {
        for (const auto &n : args) dims.push_back(Dim{n, n, ForType::Serial, false, true});
        return dims;
    }
    const Definition &d = stage(i);
    if (d.rdom)
        for (const auto &rv : d.rdom->vars) dims.push_back(Dim{rv.name, rv.name, ForType::Serial, true, false});
    // A pure Var is independent across iterations only if every self-call
    // reads the Func at that same Var in that same position.
    class SelfCalls : public IRVisitor {
    public:
        std::string name;
        std::vector<std::vector<Expr>> calls;
        void visit(const Call *op) override {
            IRVisitor::visit(op);
            if (op->call_type == Call::Func && op->name == name) calls.push_back(op->args);
        }
    } self_calls;
    self_calls.name = name;
    for (const auto &v : d.values) self_calls.include(v);
    for (size_t a = 0; a < d.args.size(); a++) {
        const auto *v = d.args[a].as<Variable>();
        if (!v || v->rdom || v->param) continue;
        bool independent = true;
        for (const auto &c : self_calls.calls) {
            const auto *cv = c[a].as<Variable>();
            independent &= cv && cv->name == v->name;
        }
        dims.push_back(Dim{v->name, v->name, ForType::Serial, false, independent});
    }
    return dims;
}
}  // namespace internal

}  // namespace kiln
