// The internal representation of a Func: its definitions and schedule.
#pragma once
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "IR.h"

namespace kiln {
namespace internal {

struct FunctionContents;

// One step of loop shaping, in the order the user wrote it.
struct Split {
    enum Kind { SplitVar, FuseVars };
    Kind kind = SplitVar;
    std::string old_var, outer, inner;  // fuse: inner + outer -> old_var (the fused name)
    Expr factor;
    TailStrategy tail = TailStrategy::Auto;
};

// A loop of a stage. `var` is the full dotted name ("x.xo").
struct Dim {
    std::string var;        // full dotted name, unique in the stage
    std::string user_name;  // the name the user gave ("xo"; "r.x" for an RVar)
    ForType for_type = ForType::Serial;
    bool is_rvar = false;
    bool is_pure = true;  // iterations independent (pure vars; false for RVars)
};

// compute_with: this stage runs inside the loops of stage `stage` of Func
// `func`, from the loop `var` outward.
struct FuseLevel {
    std::string func;
    std::weak_ptr<FunctionContents> target;  // the Func named `func` (follows it when names are made unique)
    int stage = 0;
    std::string var;  // user name of the loop
    LoopAlignStrategy align = LoopAlignStrategy::Auto;  // for the fused loops not in align_dims
    std::map<std::string, LoopAlignStrategy> align_dims;  // by user name of a fused loop
    bool defined() const { return !func.empty(); }
    LoopAlignStrategy align_of(const std::string &loop) const {
        auto it = align_dims.find(loop);
        return it == align_dims.end() ? align : it->second;
    }
};

// prefetch(name, at, from, offset, strategy): at the top of each iteration
// of loop `at`, prefetch the box of `name` (a Func or an image) that the
// iteration uses, with loop `from` advanced by `offset` (InjectPrefetches.h).
struct Prefetch {
    std::string name;
    std::weak_ptr<FunctionContents> target;    // the Func named (follows it when names are made unique)
    std::weak_ptr<ParameterContents> buffer;   // or the output buffer named (f.output_buffer())
    bool is_image = false;
    std::string at, from;  // user names of loops of the stage
    Expr offset;
    PrefetchBoundStrategy strategy = PrefetchBoundStrategy::GuardWithIf;
};

struct StageSchedule {
    std::vector<Split> splits;
    std::vector<Dim> dims;  // innermost first
    FuseLevel fuse_with;
    // npu_tile(x, y): the loops (Dim::var, x first) the NPU target turns into
    // one tile of instructions; empty: the innermost two (checked less).
    std::vector<std::string> npu_tile;
    std::vector<Prefetch> prefetches;  // in the order given

    // dims[i] split into an inner loop named `inner` (at i) and an outer
    // one named `outer` (at i + 1), recorded in `splits`; no checks (the
    // callers check the names, the factor and the tail).
    void split_dim(int i, const std::string &outer, const std::string &inner, Expr factor, TailStrategy tail);
};

struct Bound {
    std::string var;
    Expr min, extent;
};

// align_bounds(var, modulus, remainder): the region of dimension `var` is
// widened so that its min is `remainder` modulo `modulus` and its extent a
// multiple of `modulus` (constants, 0 <= remainder < modulus).
struct BoundAlignment {
    std::string var;
    int64_t modulus = 1, remainder = 0;
};

// fold_storage(var, factor, fold_forward): dimension `var` of the Func's
// storage is a circular buffer of `factor` rows (indexed modulo factor).
struct StorageFold {
    std::string var;
    Expr factor;
    bool fold_forward = true;  // the region moves toward larger coordinates
};

struct FuncSchedule {
    LoopLevel compute_level, store_level;  // default: inlined
    bool store_level_set = false;
    std::vector<Bound> bounds;
    std::vector<BoundAlignment> alignments;  // align_bounds(), one per dimension at most
    // Wrappers made by f.in(...): consumer name ("" for f.in(), every
    // consumer) -> the wrapper Func its calls to f are redirected to.
    std::map<std::string, std::shared_ptr<FunctionContents>> wrappers;
    MemoryType memory_type = MemoryType::Auto;  // store_in() (NPU target)
    bool double_buffer = false;                 // double_buffer() (NPU target)
    bool software_pipeline = false;             // software_pipeline() (NPU target)
    std::vector<StorageFold> storage_folds;     // fold_storage(), one per dimension at most
    std::vector<std::string> storage_dims;      // reorder_storage(): all args, innermost first; empty: args' order
    // save() (autodiff): a pipeline that neither outputs the Func nor its
    // encoding reads it from residual_buffer, which the forward pass wrote
    // (lower/SavedResiduals.h).
    Residual residual = Residual::None;
    std::shared_ptr<ParameterContents> residual_buffer;
    // Where a schedule file set a level, fold or loop type, for the errors
    // of lowering (schedule/ScheduleOrigin.h): kind -> {"file:line:col", the value it set}.
    std::map<std::string, std::pair<std::string, std::string>> origins;
};

// A schedule used instead of the stage's own when `condition` (of Params and
// buffer fields) holds at run time.
struct Specialization {
    Expr condition;
    StageSchedule schedule;
};

struct Definition {
    std::vector<Expr> args;    // left-hand side (Vars for the pure definition)
    std::vector<Expr> values;  // right-hand side: one value, or one per Tuple element
    std::shared_ptr<ReductionDomainContents> rdom;  // updates over an RDom
    StageSchedule schedule;
    std::vector<Specialization> specializations;  // tested in order
    std::string specialize_fail;  // if set: no specialization applies -> run-time error with this message
    bool defined() const { return !values.empty(); }
};

// Incremented by every definition and schedule directive, so compiled
// pipelines know when they are stale.
uint64_t definition_epoch();
void bump_definition_epoch();

struct FunctionContents {
    FunctionContents();
    std::string name;
    // Order of creation: of two Funcs given the same name, the later one is
    // renamed (lower/UniqueNames.h).
    uint64_t serial;
    std::vector<std::string> args;
    std::vector<Type> types;  // one per Tuple element (a single one for most Funcs)
    Definition init;
    std::vector<Definition> updates;
    FuncSchedule schedule;
    // A Func that only reads an ImageParam (ImageParam -> Func conversion);
    // always inlined.
    bool is_image_wrapper = false;
    // The BoundaryConditions function that made this Func ("repeat_edge",
    // ...); empty for the user's own Funcs. Reports list such Funcs apart.
    std::string boundary_condition;
    // How many Funcs were derived from this one per base name (derived_name()).
    std::map<std::string, int> derived_names;
    // A wrapper made by f.in() or image.in(): the Func or image it copies.
    // Not owned (the wrapped Func or image owns its wrappers); its definition
    // calls the wrapped one by name until lowering (WrapCalls) relinks it.
    std::string wraps;  // its name; empty if this is not a wrapper
    std::weak_ptr<FunctionContents> wrapped_func;
    std::weak_ptr<ParameterContents> wrapped_image;

    // The buffers it is realized into when it is an output, made by
    // Func::output_buffer(s)() (one per Tuple element): their fields as
    // Exprs, and their constraints (Dimension::set_bounds, ...).
    std::vector<std::shared_ptr<ParameterContents>> output_buffers;

    // The encoder a forward pass outputs for a Func saved as Bits
    // (lower/SavedResiduals.h): the saved Func's name; empty otherwise.
    std::string encodes_residual;

    // The JIT cache (a JITCache) of realize() calls made directly on this Func.
    std::shared_ptr<void> jit_cache;

    int num_stages() const { return 1 + (int)updates.size(); }
    int num_values() const { return (int)types.size(); }
    std::string buffer_name(int value_index) const { return tuple_buffer_name(name, value_index, num_values()); }
    int bytes_per_point() const {  // of every Tuple element
        int b = 0;
        for (const Type &t : types) b += t.bytes();
        return b;
    }
    Definition &stage(int i) { return i == 0 ? init : updates[i - 1]; }
    const Definition &stage(int i) const { return i == 0 ? init : updates[i - 1]; }
    std::string stage_name(int i) const;  // "f" or "f.update(0)"
    // Stage i's loops as its definition made them, before any schedule:
    // the pure Vars (an update's RVars first, innermost first); an update's
    // pure Var is independent across iterations if every read of the Func
    // in the update is at that Var in its position.
    std::vector<Dim> definition_dims(int i) const;
    // The prefix of stage i's loop and region names: "f.s1." (f.s1.x, f.s1.x.min, ...).
    std::string stage_prefix(int i) const { return name + ".s" + std::to_string(i) + "."; }
};

}  // namespace internal
}  // namespace kiln
