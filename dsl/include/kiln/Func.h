// Func: a pipeline stage, defined pointwise over its Vars, plus its schedule.
//
//   Func blur_x("blur_x");
//   blur_x(x, y) = (in(x - 1, y) + in(x, y) + in(x + 1, y)) / 3;   // pure definition
//   hist(r) += 1;                                                 // update definition
//   minmax(x) = Tuple(in(x, 0), in(x, 0));                        // several values (Tuple.h)
//   minmax(x) = Tuple(min(minmax(x)[0], in(x, r)), max(minmax(x)[1], in(x, r)));
//
// Every schedule directive is a method; those that shape loops also exist on
// Stage (f.update(i)), and on Func they apply to the pure definition.
#pragma once
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "Buffer.h"
#include "Expr.h"
#include "IROperator.h"
#include "Param.h"
#include "RDom.h"
#include "Schedule.h"
#include "Target.h"
#include "Tuple.h"
#include "Var.h"

namespace kiln {

namespace internal {
struct FunctionContents;
struct StageSchedule;
}

class Func;

// A single stage (pure or update definition) for loop-shaping directives.
//
//   f.split(x, xo, xi, 8):   for x:  body      ->  for xo: for xi in [0,8): body[x -> xo*8 + xi + x.min]
//   f.fuse(x, y, t):         for y: for x: b   ->  for t in [0, ex*ey): body[x -> t % ex, y -> t / ex]
//   f.reorder(y, x):         for y: for x: b   ->  for x: for y: b        (innermost first)
//   f.tile(x, y, xo, yo, xi, yi, 8, 4)          =  split x, split y, reorder(xi, yi, xo, yo)
//   f.vectorize(x, 8)                           =  split by 8, inner loop becomes SIMD lanes
//   f.unroll(x, 4)                              =  split by 4, inner loop copied 4 times
//   f.parallel(y)                               =  iterations of y run on several threads
class Stage {
public:
    Stage(std::shared_ptr<internal::FunctionContents> f, int stage, int specialization = -1)
        : func(std::move(f)), stage_index(stage), specialization(specialization) {}

    Stage &split(const VarOrRVar &old, const VarOrRVar &outer, const VarOrRVar &inner, Expr factor,
                 TailStrategy tail = TailStrategy::Auto);
    Stage &fuse(const VarOrRVar &inner, const VarOrRVar &outer, const VarOrRVar &fused);
    Stage &reorder(const std::vector<VarOrRVar> &vars);
    template<typename... Args> Stage &reorder(const VarOrRVar &a, const VarOrRVar &b, Args &&...rest) {
        return reorder(std::vector<VarOrRVar>{a, b, rest...});
    }
    Stage &tile(const VarOrRVar &x, const VarOrRVar &y, const VarOrRVar &xo, const VarOrRVar &yo,
                const VarOrRVar &xi, const VarOrRVar &yi, Expr xfactor, Expr yfactor,
                TailStrategy tail = TailStrategy::Auto);
    Stage &tile(const VarOrRVar &x, const VarOrRVar &y, const VarOrRVar &xi, const VarOrRVar &yi, Expr xfactor,
                Expr yfactor, TailStrategy tail = TailStrategy::Auto);
    Stage &vectorize(const VarOrRVar &v);
    Stage &vectorize(const VarOrRVar &v, Expr factor, TailStrategy tail = TailStrategy::Auto);
    Stage &unroll(const VarOrRVar &v);
    Stage &unroll(const VarOrRVar &v, Expr factor, TailStrategy tail = TailStrategy::Auto);
    Stage &parallel(const VarOrRVar &v);
    Stage &parallel(const VarOrRVar &v, Expr task_size, TailStrategy tail = TailStrategy::Auto);
    Stage &serial(const VarOrRVar &v);
    // NPU target: loops x (columns) and y (rows), the innermost two of the
    // stage, become one tile of instructions; their extents must be
    // constants and a row of the tile a multiple of 32 bytes (checked when
    // the pipeline is compiled for the NPU). Other targets ignore it.
    //   f.tile(x, y, xo, yo, xi, yi, 64, 16).npu_tile(xi, yi)  ->  one 16 x 64 tile per (xo, yo)
    Stage &npu_tile(const VarOrRVar &x, const VarOrRVar &y);
    // Horizontal fusion: run this stage inside the loops of stage `s` (of
    // another Func), from the loop `var` outward, after s's body in each
    // iteration. Both Funcs need the same compute level and may not depend on
    // each other; the loops from `var` outward must have the same names in both.
    // `s` may be an update stage (s1.update(0)): two reductions over a row in
    // one loop, s2.update(0).compute_with(s1.update(0), r.x).
    //
    //   z1(x, y) = t(x, y) + b;  z2(x, y) = t(x, y) - c;  z2.compute_with(z1, y):
    //     for y: { for x: z1(x, y) = ...   for x: z2(x, y) = ... }
    //
    // The fused loop covers both stages' ranges; each runs only in its own.
    // `align` lines up every fused loop; the list form, as Halide's, gives
    // a strategy per fused loop (the others: Auto):
    //   z2.compute_with(z1, y, {{x, LoopAlignStrategy::AlignStart}, {y, LoopAlignStrategy::AlignEnd}})
    Stage &compute_with(const Stage &s, const VarOrRVar &var, LoopAlignStrategy align = LoopAlignStrategy::Auto);
    Stage &compute_with(const Func &f, const VarOrRVar &var, LoopAlignStrategy align = LoopAlignStrategy::Auto);
    Stage &compute_with(const Stage &s, const VarOrRVar &var,
                        const std::vector<std::pair<VarOrRVar, LoopAlignStrategy>> &align);
    Stage &compute_with(const Func &f, const VarOrRVar &var,
                        const std::vector<std::pair<VarOrRVar, LoopAlignStrategy>> &align);
    // Prefetch what loop `at` of this stage reads (or writes) of Func f or
    // an image, `offset` iterations of loop `from` ahead: at the top of each
    // iteration of `at`, the box it uses with `from` advanced by offset is
    // prefetched into the cache (host target: __builtin_prefetch on each
    // cache line). `from` is `at` or a loop around it. Values are unchanged.
    //
    //   g.prefetch(f, x, y, 2):  for y: for x: { prefetch f(x, y + 2)   g(x, y) = f(x, y) * 2 }
    //
    // The NPU target, which stages data by DMA, does not honour it (an error there).
    Stage &prefetch(const Func &f, const VarOrRVar &at, const VarOrRVar &from, Expr offset = 1,
                    PrefetchBoundStrategy strategy = PrefetchBoundStrategy::GuardWithIf);
    Stage &prefetch(const OutputImageParam &image, const VarOrRVar &at, const VarOrRVar &from, Expr offset = 1,
                    PrefetchBoundStrategy strategy = PrefetchBoundStrategy::GuardWithIf);

    // Run-time dispatch between schedules: a Stage whose loop-shaping
    // directives apply only when `condition` (of Params and buffer fields:
    // extents, mins) is true; it starts as a copy of this stage's schedule so
    // far. Specializations are tested in the order they were made; the stage's
    // own schedule runs when none holds. Asking again with an equal condition
    // returns the same specialization.
    //
    //   f.specialize(n >= 64).vectorize(x, 8);   ->  if (n >= 64) { <loops vectorized by 8> } else { <loops> }
    Stage specialize(Expr condition);
    // When no specialization holds, fail at run time with this message
    // (instead of running the stage's own schedule).
    void specialize_fail(const std::string &message);

    // Split an associative reduction over some of its RVars: returns the
    // intermediate Func, indexed by f's pure Vars then the given Vars, which
    // reduces over the other RVars; this update becomes a reduction of the
    // intermediate over the factored RVars (docs/scheduling.md).
    //
    //   f(x) += g(r.x, r.y)   --rfactor(r.y, u)-->   intm(x, u) += g(r.x, u);  f(x) += intm(x, r.y)
    //
    // `name` names the intermediate (default "<f>_intm").
    Func rfactor(const std::vector<std::pair<RVar, Var>> &preserved, const std::string &name = "");
    Func rfactor(const RVar &r, const Var &v, const std::string &name = "");

    std::string name() const;  // "f", "f.update(0)", "f.specialize(n >= 64)"

protected:
    Stage &set_for_type(const VarOrRVar &v, ForType t, const char *directive);
    void check_can_run_at_once(const VarOrRVar &v, const char *directive);
    internal::StageSchedule &schedule() const;  // the stage's, or its specialization's
    int find_dim(const VarOrRVar &v, const char *directive) const;
    void check_new_name(const std::string &n, const char *directive) const;
    Stage &add_prefetch(const std::string &name, bool is_image, const VarOrRVar &at, const VarOrRVar &from,
                        Expr offset, PrefetchBoundStrategy strategy);
    std::shared_ptr<internal::FunctionContents> func;
    int stage_index;
    int specialization;  // -1: the stage's own schedule
};

// f(x, y) on the left of a definition, or as a call on the right. For a
// Func returning a Tuple, f(x, y)[i] is element i.
class FuncRef {
public:
    FuncRef(std::shared_ptr<internal::FunctionContents> f, std::vector<Expr> args)
        : func(std::move(f)), args(std::move(args)) {}
    Stage operator=(Expr value);  // pure definition (all args Vars) or update
    Stage operator=(const Tuple &values);
    Stage operator=(const FuncRef &other);
    Stage operator+=(Expr value);
    Stage operator-=(Expr value);
    Stage operator*=(Expr value);
    Stage operator/=(Expr value);
    Stage operator+=(const Tuple &values);  // element-wise
    Stage operator-=(const Tuple &values);
    Stage operator*=(const Tuple &values);
    Stage operator/=(const Tuple &values);
    operator Expr() const;  // a call (of a Func with one value)
    Expr operator[](int i) const;  // element i of a call to a Tuple-valued Func
    size_t size() const;           // how many values the Func has

private:
    Stage define(std::vector<Expr> values);
    Stage define_update_with(std::vector<Expr> values, Expr (*op)(Expr, Expr), const char *opname);
    std::vector<Expr> checked_args() const;
    std::shared_ptr<internal::FunctionContents> func;
    std::vector<Expr> args;
};

class Func {
public:
    Func();  // a fresh unique name
    explicit Func(const std::string &name);
    explicit Func(const char *name) : Func(std::string(name)) {}
    explicit Func(Expr e);  // a zero-dimensional Func with value e
    // A handle to an existing Func (e.g. found by name in a pipeline).
    explicit Func(std::shared_ptr<internal::FunctionContents> f) : func(std::move(f)) {}

    const std::string &name() const;
    bool defined() const;
    int dimensions() const;
    Type type() const;                 // of a Func with one value
    std::vector<Type> types() const;   // one per value (Tuple element)
    std::vector<Type> output_types() const { return types(); }  // Halide's name
    int outputs() const;               // how many values: 1, or the size of its Tuple
    std::vector<Var> args() const;
    int num_update_definitions() const;

    FuncRef operator()(std::vector<Expr> args) const;
    FuncRef operator()() const { return (*this)(std::vector<Expr>{}); }
    template<typename... Args> FuncRef operator()(Expr a, Args &&...rest) const {
        return (*this)(std::vector<Expr>{a, Expr(rest)...});
    }

    Stage update(int i = 0) const;

    // Loop shaping of the pure definition (see Stage).
    Func &split(const VarOrRVar &old, const VarOrRVar &outer, const VarOrRVar &inner, Expr factor,
                TailStrategy tail = TailStrategy::Auto);
    Func &fuse(const VarOrRVar &inner, const VarOrRVar &outer, const VarOrRVar &fused);
    Func &reorder(const std::vector<VarOrRVar> &vars);
    template<typename... Args> Func &reorder(const VarOrRVar &a, const VarOrRVar &b, Args &&...rest) {
        return reorder(std::vector<VarOrRVar>{a, b, rest...});
    }
    Func &tile(const VarOrRVar &x, const VarOrRVar &y, const VarOrRVar &xo, const VarOrRVar &yo,
               const VarOrRVar &xi, const VarOrRVar &yi, Expr xfactor, Expr yfactor,
               TailStrategy tail = TailStrategy::Auto);
    Func &tile(const VarOrRVar &x, const VarOrRVar &y, const VarOrRVar &xi, const VarOrRVar &yi, Expr xfactor,
               Expr yfactor, TailStrategy tail = TailStrategy::Auto);
    Func &vectorize(const VarOrRVar &v);
    Func &vectorize(const VarOrRVar &v, Expr factor, TailStrategy tail = TailStrategy::Auto);
    Func &unroll(const VarOrRVar &v);
    Func &unroll(const VarOrRVar &v, Expr factor, TailStrategy tail = TailStrategy::Auto);
    Func &parallel(const VarOrRVar &v);
    Func &parallel(const VarOrRVar &v, Expr task_size, TailStrategy tail = TailStrategy::Auto);
    Func &serial(const VarOrRVar &v);
    Func &npu_tile(const VarOrRVar &x, const VarOrRVar &y);
    // Horizontal fusion of the pure definition with f's (see Stage::compute_with).
    Func &compute_with(const Func &f, const VarOrRVar &var, LoopAlignStrategy align = LoopAlignStrategy::Auto);
    Func &compute_with(const Stage &s, const VarOrRVar &var, LoopAlignStrategy align = LoopAlignStrategy::Auto);
    Func &compute_with(const Func &f, const VarOrRVar &var,
                       const std::vector<std::pair<VarOrRVar, LoopAlignStrategy>> &align);
    Func &compute_with(const Stage &s, const VarOrRVar &var,
                       const std::vector<std::pair<VarOrRVar, LoopAlignStrategy>> &align);
    // Prefetching for the pure definition (see Stage::prefetch).
    Func &prefetch(const Func &f, const VarOrRVar &at, const VarOrRVar &from, Expr offset = 1,
                   PrefetchBoundStrategy strategy = PrefetchBoundStrategy::GuardWithIf);
    Func &prefetch(const OutputImageParam &image, const VarOrRVar &at, const VarOrRVar &from, Expr offset = 1,
                   PrefetchBoundStrategy strategy = PrefetchBoundStrategy::GuardWithIf);
    // Specializations of the pure definition (see Stage::specialize).
    Stage specialize(Expr condition);
    void specialize_fail(const std::string &message);

    // Where the Func is computed and stored.
    //   compute_root():        produce f over everything its consumers need, before them
    //   compute_at(g, y):      inside g's loop over y, produce the f region that one iteration needs
    //   store_root() / store_at(g, y) with compute_at further in: keep the storage outside, so
    //                          values computed in earlier iterations are reused (sliding window)
    //                          and the buffer folds to the rows still live (storage folding)
    //   compute_inline():      substitute f's definition into every use (the default)
    Func &compute_root();
    Func &compute_at(const Func &f, const VarOrRVar &var);
    Func &compute_at(const LoopLevel &level);
    Func &compute_inline();
    Func &store_root();
    Func &store_at(const Func &f, const VarOrRVar &var);
    Func &store_at(const LoopLevel &level);
    // Keep only `factor` rows of dimension var (a constant; indices taken
    // modulo factor): a circular buffer, instead of the fold Kiln picks for a
    // sliding window (the next power of two >= the window). The Func must be
    // stored outside the loop it is computed in, and its region in var must
    // move toward larger coordinates as that loop advances (fold_forward =
    // false: toward smaller ones). A factor smaller than the window its
    // consumers need at once is an error (checked at run time when the
    // window's size is not known before).
    //   f.store_root().compute_at(g, y).fold_storage(y, 3)   // g(x, y) reads f(x, y - 1 .. y + 1)
    Func &fold_storage(const Var &var, Expr factor, bool fold_forward = true);
    // The order of the dimensions in memory, innermost first, for the
    // buffers Kiln allocates (not the output buffers, laid out by their
    // caller); the dimensions not named keep their places. Indexing is
    // unchanged: f.reorder_storage(y, x) stores f column by column.
    Func &reorder_storage(const std::vector<Var> &dims);
    template<typename... Args> Func &reorder_storage(const Var &a, const Var &b, Args &&...rest) {
        return reorder_storage(std::vector<Var>{a, b, rest...});
    }
    // Wrappers: a new Func that copies f's values, placed and scheduled like
    // any Func, with f's pure Vars. Calls to f are redirected to it:
    //   f.in(g)       g's calls (asking again returns the same wrapper)
    //   f.in({g, h})  the calls of g and h, to one shared wrapper
    //   f.in()        every other call (consumers without their own wrapper)
    //
    //   g(x) = f(x - 1) + f(x + 1);  f.in(g).compute_at(g, xo);
    //     ->  f_in_g(x) = f(x);  g(x) = f_in_g(x - 1) + f_in_g(x + 1)
    Func in(const Func &consumer);
    Func in(const std::vector<Func> &consumers);
    Func in();
    // As in(consumers), but the new Func is a copy of f's whole definition
    // (pure and updates, and the schedule f has now) instead of a copy of
    // its values: the consumers named get their own f, computed and
    // scheduled on its own (as Halide's clone_in). Named f_clone_in_g
    // (f_clone_in_g_h for several); asking again returns the same clone.
    //   g(x) = f(x) + 1;  h(x) = f(x) * 2;  f.clone_in(h).compute_at(h, x):
    //     ->  f_clone_in_h = a copy of f;  h(x) = f_clone_in_h(x) * 2;  g still calls f
    Func clone_in(const Func &consumer);
    Func clone_in(const std::vector<Func> &consumers);
    // NPU target (docs/npu.md): the memory the Func's buffer lives in, and
    // ping-pong buffering: two copies of its buffer (and of the tiles its
    // stage stages and computes) used by alternate iterations of the loop it
    // is computed in, so the DMA of one iteration overlaps the compute of the
    // previous one. Other targets ignore both.
    Func &store_in(MemoryType m);
    Func &double_buffer();
    // NPU target: software pipelining of the loop the Func is computed at
    // (docs/npu.md, "Software pipelining"): the Func's instructions and those
    // after them in the loop's body run one iteration behind the ones before
    // them, so iteration k + 1's first stage is issued before iteration k's
    // second. What the first stage computes for the second must be
    // double_buffer()ed. Other targets ignore it.
    //   for (kb) { S = Q K[kb]; P = exp(S); O += P V[kb] }    (block_pv.software_pipeline())
    //   ->  for (t < n + 1) { if (t < n) S, P of block t; if (t > 0) O += P V[t - 1] }
    Func &software_pipeline();
    // Autodiff (docs/autodiff.md, "Saving forward values"): keep this forward
    // Func for the backward pass instead of recomputing it there. A pipeline
    // that does not output the Func (the backward pass) reads it from
    // saved_buffer(); forward_with_residuals() (Derivative.h) is the forward
    // pass that writes it. Residual::Bits keeps one bit per point, the
    // result of the one comparison with a constant the backward pass reads
    // the Func through (a ReLU's `v >= 0`), packed 8 points to a byte along
    // dimension 0 in a uint8 buffer named "<f>_bits". Residual::None undoes it.
    //   bias_add.save(Residual::Bits);   // .sched: bias_add: save(bits)
    Func &save(Residual how = Residual::Whole);
    // A lower-precision copy, where the gradient may lose that precision: a
    // float Func saved as Float(16) or BFloat(16), rounded to nearest even
    // by the forward pass into a buffer "<f>_float16" / "<f>_bfloat16" (2
    // bytes a point) and widened back where the backward pass reads it.
    //   gelu_in.save(BFloat(16));        // .sched: gelu_in: save(bfloat16)
    Func &save(Type narrow);
    // The buffer the backward pass reads a saved Func from: a uint8 buffer
    // "<f>_bits" for Bits, a 16-bit one "<f>_float16" or "<f>_bfloat16" for
    // the narrow copies, else a buffer of the Func's type named after it.
    ImageParam saved_buffer() const;
    // Compute exactly [min, min + extent) of dimension var (checked at run time for outputs).
    Func &bound(const Var &var, Expr min, Expr extent);
    // Widen the region computed of dimension var so that its min is
    // remainder modulo modulus and its extent a multiple of modulus
    // (constants, 0 <= remainder < modulus), as Halide's align_bounds: the
    // simplifier then knows the parity (or any residue) of the region's
    // coordinates, e.g. a demosaic's x % 2 in every tile. For an output the
    // region is its buffer's, so the kernel checks on entry that the buffer
    // is aligned so (error -15, kiln_error_constraint_violated).
    //   out.align_bounds(x, 2).align_bounds(y, 2);   // .sched: out: align_bounds(x, 2) align_bounds(y, 2)
    Func &align_bounds(const Var &var, Expr modulus, Expr remainder = 0);
    // The buffer the Func is realized into when it is an output of the
    // pipeline (one per Tuple element: output_buffers()): its fields as
    // Exprs for bound() and schedules, and constraints on them (Param.h).
    //   f.output_buffer().dim(0).set_bounds(0, 256);  f.split(x, xo, xi, f.output_buffer().width() / 4);
    OutputImageParam output_buffer() const;
    std::vector<OutputImageParam> output_buffers() const;

    // JIT: compile for the host and run into the caller's buffer(s): one,
    // or one per Tuple element (a Realization).
    template<typename T, int D> void realize(Halide::Runtime::Buffer<T, D> &out, const Target &t = Target::host()) {
        realize_raw({out.raw_buffer()}, t);
    }
    void realize(Realization &out, const Target &t = Target::host());
    Realization realize(std::vector<int> sizes, const Target &t = Target::host());
    void realize_raw(const std::vector<halide_buffer_t *> &outs, const Target &t);
    // Compile now, as the first realize() would (Pipeline::compile_jit).
    void compile_jit(const Target &t = Target::host());

    // The C++ a generator would emit, and the lowered loop nest, as text.
    void compile_to_cpp(const std::string &path, const std::string &fn_name = "", const Target &t = Target::host());
    std::string lowered_stmt(const Target &t = Target::host());

    const std::shared_ptr<internal::FunctionContents> &contents() const { return func; }

private:
    Stage stage0() const { return Stage(func, 0); }
    std::shared_ptr<internal::FunctionContents> func;
};

// A Func defined inline, as Halide's lambda: lambda(x, y, in(y, x)) is a
// Func f (named "lambda", then "lambda_1", ... in a process) with
// f(x, y) = in(y, x).
Func lambda(const std::vector<Var> &vars, const Expr &e);
inline Func lambda(const Var &x, const Expr &e) { return lambda(std::vector<Var>{x}, e); }
inline Func lambda(const Var &x, const Var &y, const Expr &e) { return lambda(std::vector<Var>{x, y}, e); }
inline Func lambda(const Var &x, const Var &y, const Var &z, const Expr &e) {
    return lambda(std::vector<Var>{x, y, z}, e);
}

}  // namespace kiln
