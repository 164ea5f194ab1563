// The directive table (Directives.h). Each row's apply function is the C++
// API call the directive stands for, on arguments ScheduleFile::apply() has
// already resolved: a Loop argument is c.loops[i], an Int c.ints[i], a Func
// and its loop c.site and c.site_loops.
#include "Directives.h"

#include <algorithm>

#include "ir/Error.h"

namespace kiln {
namespace internal {
namespace sched {

namespace {

constexpr Slot Loop = Slot::Loop, Name = Slot::Name, Int = Slot::Int, Tail = Slot::Tail, Root = Slot::Root,
               AFunc = Slot::Func, AStage = Slot::Stage, FuncLoop = Slot::FuncLoop, Dim = Slot::Dim, Memory = Slot::Memory,
               Align = Slot::Align, Bool = Slot::Bool, NewFunc = Slot::NewFunc, Buffer = Slot::Buffer,
               PrefetchWay = Slot::Prefetch, Saved = Slot::Residual;

const char *const kLevel = "compute_at(func, var) or compute_at(root)";

template<typename T>
T named(const Arg &a, std::initializer_list<T> values, T fallback) {
    for (T v : values)
        if (a.name == to_string(v)) return v;
    return fallback;
}

MemoryType memory(const Arg &a) {
    return named(a, {MemoryType::GM, MemoryType::UB, MemoryType::L1, MemoryType::L0A, MemoryType::L0B, MemoryType::L0C},
                 MemoryType::Auto);
}

// The LoopAlignStrategy argument i (Auto if left out).
LoopAlignStrategy align(const DirectiveCall &c, size_t i) {
    return c.size() <= i ? LoopAlignStrategy::Auto
                         : named(c.args[i], {LoopAlignStrategy::AlignStart, LoopAlignStrategy::AlignEnd,
                                             LoopAlignStrategy::NoAlign},
                                 LoopAlignStrategy::Auto);
}

// A loop-type directive: name(var) or name(var, factor[, tail]).
template<Stage &(Stage::*whole)(const VarOrRVar &), Stage &(Stage::*split)(const VarOrRVar &, Expr, TailStrategy)>
void loop_type(DirectiveCall &c) {
    if (c.size() == 1) (c.stage.*whole)(c.loops[0]);
    else (c.stage.*split)(c.loops[0], c.ints[1], c.tail(2));
}

std::vector<Form> loop_type_forms(const char *factor) { return {{{{"var", Loop}, {factor, Int}, {"tail", Tail}}, 1}}; }

}  // namespace

TailStrategy DirectiveCall::tail(size_t i) const {
    if (i >= args.size()) return TailStrategy::Auto;
    return named(args[i], {TailStrategy::GuardWithIf, TailStrategy::ShiftInwards, TailStrategy::RoundUp},
                 TailStrategy::Auto);
}

const std::vector<Directive> &directives() {
    static const std::vector<Directive> table = {
        {"split", Scope::Stage, "split(old, outer, inner, factor[, tail])",
         {{{{"old", Loop}, {"outer", Name}, {"inner", Name}, {"factor", Int}, {"tail", Tail}}, 4}}, false, nullptr,
         [](DirectiveCall &c) { c.stage.split(c.loops[0], c.loops[1], c.loops[2], c.ints[3], c.tail(4)); },
         "splits loop old into outer and inner loops, inner of extent factor"},
        {"fuse", Scope::Stage, "fuse(inner, outer, fused)", {{{{"inner", Loop}, {"outer", Loop}, {"fused", Name}}, 3}},
         false, nullptr, [](DirectiveCall &c) { c.stage.fuse(c.loops[0], c.loops[1], c.loops[2]); },
         "merges two adjacent loops into one"},
        {"reorder", Scope::Stage, "reorder(innermost, ..., outermost)", {{{{"var", Loop}, {"var", Loop}}, 2}}, true, nullptr,
         [](DirectiveCall &c) { c.stage.reorder(c.loops); }, "orders the loops named, innermost first"},
        {"tile", Scope::Stage,
         "tile(x, y, xo, yo, xi, yi, xfactor, yfactor[, tail]) or tile(x, y, xi, yi, xfactor, yfactor[, tail])",
         {{{{"x", Loop}, {"y", Loop}, {"xi", Name}, {"yi", Name}, {"xfactor", Int}, {"yfactor", Int}, {"tail", Tail}}, 6},
          {{{"x", Loop}, {"y", Loop}, {"xo", Name}, {"yo", Name}, {"xi", Name}, {"yi", Name}, {"xfactor", Int},
            {"yfactor", Int}, {"tail", Tail}},
           8}},
         false, nullptr,
         [](DirectiveCall &c) {
             const auto &l = c.loops;
             if (c.size() >= 8) c.stage.tile(l[0], l[1], l[2], l[3], l[4], l[5], c.ints[6], c.ints[7], c.tail(8));
             else c.stage.tile(l[0], l[1], l[2], l[3], c.ints[4], c.ints[5], c.tail(6));
         },
         "splits two loops and orders the tile's loops inside the outer ones"},
        {"vectorize", Scope::Stage, "vectorize(var[, factor[, tail]])", loop_type_forms("factor"), false, nullptr,
         loop_type<&Stage::vectorize, &Stage::vectorize>, "runs a loop (or its inner split) as SIMD lanes"},
        {"unroll", Scope::Stage, "unroll(var[, factor[, tail]])", loop_type_forms("factor"), false, nullptr,
         loop_type<&Stage::unroll, &Stage::unroll>, "repeats a loop's body (or its inner split's) without a loop"},
        {"parallel", Scope::Stage, "parallel(var[, task_size[, tail]])", loop_type_forms("task_size"), false, nullptr,
         loop_type<&Stage::parallel, &Stage::parallel>, "runs a loop's iterations (or tasks of them) on threads"},
        {"serial", Scope::Stage, "serial(var)", {{{{"var", Loop}}, 1}}, false, nullptr,
         [](DirectiveCall &c) { c.stage.serial(c.loops[0]); }, "runs a loop in order (the default)"},
        {"compute_root", Scope::Func, "compute_root()", {{{}, 0}}, false, "compute",
         [](DirectiveCall &c) { c.func.compute_root(); }, "computes the whole Func before its consumers"},
        {"compute_at", Scope::Func, kLevel, {{{{"root", Root}}, 1}, {{{"func", AFunc}, {"var", FuncLoop}}, 2}}, false,
         "compute",
         [](DirectiveCall &c) { c.site ? (void)c.func.compute_at(*c.site, c.site_loops[0]) : (void)c.func.compute_root(); },
         "computes the Func inside loop var of func, as much as one iteration needs"},
        {"compute_inline", Scope::Func, "compute_inline()", {{{}, 0}}, false, "compute",
         [](DirectiveCall &c) { c.func.compute_inline(); }, "substitutes the Func's definition into its consumers"},
        {"store_root", Scope::Func, "store_root()", {{{}, 0}}, false, "store", [](DirectiveCall &c) { c.func.store_root(); },
         "allocates the Func's storage outside every loop"},
        {"store_at", Scope::Func, "store_at(func, var) or store_at(root)",
         {{{{"root", Root}}, 1}, {{{"func", AFunc}, {"var", FuncLoop}}, 2}}, false, "store",
         [](DirectiveCall &c) { c.site ? (void)c.func.store_at(*c.site, c.site_loops[0]) : (void)c.func.store_root(); },
         "allocates the Func's storage inside loop var of func (a sliding window when computed further in)"},
        {"fold_storage", Scope::Func, "fold_storage(var, factor[, fold_forward])",
         {{{{"var", Dim}, {"factor", Int}, {"fold_forward", Bool}}, 2}}, false, "fold",
         [](DirectiveCall &c) { c.func.fold_storage(Var(c.args[0].name), c.ints[1], c.size() < 3 || c.args[2].name == "true"); },
         "keeps dimension var of the storage as a circular buffer of factor rows",
         [](const FunctionContents &f) { return !f.schedule.storage_folds.empty(); },
         "it lays out and sizes its buffers itself"},
        {"reorder_storage", Scope::Func, "reorder_storage(innermost, ..., outermost)", {{{{"var", Dim}, {"var", Dim}}, 2}}, true,
         nullptr,
         [](DirectiveCall &c) {
             std::vector<Var> dims;
             for (const Arg &a : c.args) dims.push_back(Var(a.name));
             c.func.reorder_storage(dims);
         },
         "orders the dimensions of the Func's storage, innermost first",
         [](const FunctionContents &f) { return !f.schedule.storage_dims.empty(); },
         "it lays out and sizes its buffers itself"},
        {"bound", Scope::Func, "bound(var, min, extent)", {{{{"var", Dim}, {"min", Int}, {"extent", Int}}, 3}}, false,
         nullptr, [](DirectiveCall &c) { c.func.bound(Var(c.args[0].name), c.ints[1], c.ints[2]); },
         "fixes the region of dimension var that is computed"},
        {"align_bounds", Scope::Func, "align_bounds(var, modulus[, remainder])",
         {{{{"var", Dim}, {"modulus", Int}, {"remainder", Int}}, 2}}, false, nullptr,
         [](DirectiveCall &c) { c.func.align_bounds(Var(c.args[0].name), c.ints[1], c.size() > 2 ? c.ints[2] : Expr(0)); },
         "widens the region of dimension var computed to start at remainder modulo modulus, its extent a multiple "
         "of modulus"},
        {"rfactor", Scope::Update, "rfactor(rvar, var[, rvar, var, ...], intermediate)",
         {{{{"rvar", Loop}, {"var", Name}, {"intermediate", NewFunc}}, 3},
          {{{"rvar", Loop}, {"var", Name}, {"rvar", Loop}, {"var", Name}, {"intermediate", NewFunc}}, 5},
          {{{"rvar", Loop}, {"var", Name}, {"rvar", Loop}, {"var", Name}, {"rvar", Loop}, {"var", Name},
            {"intermediate", NewFunc}},
           7}},
         false, nullptr,
         [](DirectiveCall &c) {
             std::vector<std::pair<RVar, Var>> pairs;
             for (size_t i = 0; i + 1 < c.size(); i += 2) pairs.push_back({RVar(c.loops[i].name()), Var(c.args[i + 1].name)});
             c.define(c.stage.rfactor(pairs, c.args.back().name));
         },
         "splits a reduction into an intermediate over the preserved vars, which can run in parallel"},
        {"save", Scope::Func, "save([whole|bits|float16|bfloat16|none])", {{{{"how", Saved}}, 0}}, false, nullptr,
         [](DirectiveCall &c) {
             std::string how = c.size() ? c.args[0].name : "whole";
             for (Residual r : {Residual::None, Residual::Whole, Residual::Bits, Residual::Float16, Residual::BFloat16})
                 if (how == to_string(r)) c.func.save(r);
         },
         "keeps the forward Func for the backward pass: the backward pass reads it from a buffer the forward pass "
         "writes (bits: one bit per point, the comparison the backward pass reads it through; float16, bfloat16: "
         "a copy rounded to 16 bits)"},
        {"store_in", Scope::Func, "store_in(GM|UB|L1|L0A|L0B|L0C)", {{{{"memory", Memory}}, 1}}, false, nullptr,
         [](DirectiveCall &c) { c.func.store_in(memory(c.args[0])); }, "places the Func's buffer in one NPU memory"},
        {"double_buffer", Scope::Func, "double_buffer()", {{{}, 0}}, false, nullptr,
         [](DirectiveCall &c) { c.func.double_buffer(); }, "gives the Func's NPU buffer two copies so loads overlap compute"},
        {"software_pipeline", Scope::Func, "software_pipeline()", {{{}, 0}}, false, nullptr,
         [](DirectiveCall &c) { c.func.software_pipeline(); },
         "NPU: runs the Func and what follows it in the body of the loop it is computed at one iteration behind "
         "what precedes it, so the next iteration's first stage overlaps this one's second"},
        {"compute_with", Scope::Stage,
         "compute_with(func, var[, align]) or compute_with(func, var, loop, align[, loop, align, ...]); func may be "
         "an update stage, func.update(N)",
         {{{{"func", AStage}, {"var", FuncLoop}, {"align", Align}}, 2},
          {{{"func", AStage}, {"var", FuncLoop}, {"loop", Loop}, {"align", Align}}, 4},
          {{{"func", AStage}, {"var", FuncLoop}, {"loop", Loop}, {"align", Align}, {"loop", Loop}, {"align", Align}}, 6},
          {{{"func", AStage}, {"var", FuncLoop}, {"loop", Loop}, {"align", Align}, {"loop", Loop}, {"align", Align},
            {"loop", Loop}, {"align", Align}},
           8}},
         false, nullptr,
         [](DirectiveCall &c) {
             Stage parent(c.site->contents(), c.site_stage);
             if (c.size() <= 3) {
                 c.stage.compute_with(parent, c.site_loops[0], align(c, 2));
                 return;
             }
             std::vector<std::pair<VarOrRVar, LoopAlignStrategy>> dims;
             for (size_t i = 2; i + 1 < c.size(); i += 2) dims.push_back({c.loops[i], align(c, i + 1)});
             c.stage.compute_with(parent, c.site_loops[0], dims);
         },
         "runs the stage inside the loops of func (or of its stage func.update(N)) from var outward (horizontal fusion)"},
        {"prefetch", Scope::Stage, "prefetch(func, at, from[, offset[, strategy]])",
         {{{{"func", Buffer}, {"at", Loop}, {"from", Loop}, {"offset", Int}, {"strategy", PrefetchWay}}, 3}}, false,
         nullptr,
         [](DirectiveCall &c) {
             Expr offset = c.size() > 3 ? c.ints[3] : Expr(1);
             PrefetchBoundStrategy s =
                 c.size() > 4 ? named(c.args[4], {PrefetchBoundStrategy::Clamp, PrefetchBoundStrategy::NonFaulting},
                                      PrefetchBoundStrategy::GuardWithIf)
                              : PrefetchBoundStrategy::GuardWithIf;
             if (c.image) c.stage.prefetch(ImageParam(c.image), c.loops[1], c.loops[2], offset, s);
             else c.stage.prefetch(*c.site, c.loops[1], c.loops[2], offset, s);
         },
         "prefetches what loop at uses of func, offset iterations of loop from ahead (host: __builtin_prefetch)",
         [](const FunctionContents &f) {
             for (int k = 0; k < f.num_stages(); k++)
                 if (!f.stage(k).schedule.prefetches.empty()) return true;
             return false;
         },
         "it stages every load into on-chip memory with its own DMA, overlapped with compute by double_buffer()"},
        {"npu_tile", Scope::Stage, "npu_tile(x, y)", {{{{"x", Loop}, {"y", Loop}}, 2}}, false, nullptr,
         [](DirectiveCall &c) { c.stage.npu_tile(c.loops[0], c.loops[1]); },
         "names the two loops the NPU target turns into one tile of instructions"},
    };
    return table;
}

const Directive *find_directive(const std::string &name) {
    for (const auto &d : directives())
        if (name == d.name) return &d;
    return nullptr;
}

std::vector<std::string> directive_names() {
    std::vector<std::string> r;
    for (const auto &d : directives()) r.push_back(d.name);
    return r;
}

bool params_for(const Directive &d, size_t n, std::vector<Parameter> *params) {
    if (d.variadic) {
        *params = std::vector<Parameter>(n, d.forms[0].params[0]);
        return n >= 2;
    }
    for (const Form &f : d.forms)
        if (n >= f.required && n <= f.params.size()) {
            params->assign(f.params.begin(), f.params.begin() + n);
            return true;
        }
    return false;
}

void check_npu_honours(const FunctionContents &f) {
    for (const Directive &d : directives())
        user_assert(!d.ignored_by_npu || !d.ignored_by_npu(f))
            << "NPU target: Func " << f.name << " is scheduled with " << d.name
            << ", which the NPU target does not honour (" << d.npu_reason << "); remove it from the NPU schedule";
}

std::string arity_text(const Directive &d) {
    if (d.variadic) return "2 or more arguments";
    std::vector<std::string> n;
    for (const Form &f : d.forms)
        for (size_t k = f.required; k <= f.params.size(); k++) n.push_back(std::to_string(k));
    if (n.size() == 1) return n[0] == "0" ? "no arguments" : n[0] == "1" ? "1 argument" : n[0] + " arguments";
    std::string last = n.back();
    n.pop_back();
    return join(n) + " or " + last + " arguments";
}

}  // namespace sched
}  // namespace internal
}  // namespace kiln
