// Vocabulary of schedules: tail strategies, loop kinds, loop levels.
#pragma once
#include <memory>
#include <string>

#include "RDom.h"
#include "Var.h"

namespace kiln {

namespace internal {
struct FunctionContents;
}

// What a split does when the factor does not divide the extent.
enum class TailStrategy {
    Auto,          // ShiftInwards for pure definitions; for updates GuardWithIf on
                   // reduction vars and on the pure vars of output Funcs (whose
                   // buffers cannot grow), RoundUp on the pure vars of others
    GuardWithIf,   // if (x <= x.max) around the body of the last iteration
    ShiftInwards,  // shift the last iteration back so it ends at x.max (recomputes a few points)
    RoundUp,       // compute past x.max up to a multiple of the factor
};

// LaneFallback is made by lowering only (a schedule cannot ask for it): the
// serial loop, one iteration per lane, that a vectorized loop with a guard
// runs where the guard fails at one of the vector's ends (a GuardWithIf tail,
// an RDom where()). It runs at most a few times per loop nest, so the host
// code generator asks the C++ compiler not to unroll it.
enum class ForType { Serial, Parallel, Vectorized, Unrolled, LaneFallback };

// How compute_with lines up the iterations of two stages whose ranges of a
// fused loop differ. The fused loop covers both; each stage runs only in its
// own range.
enum class LoopAlignStrategy {
    AlignStart,  // the child's first iteration runs with the parent's first
    AlignEnd,    // the child's last iteration runs with the parent's last
    NoAlign,     // the same loop value in both (same coordinate, or tile index)
    Auto,        // NoAlign
};

// What prefetch() does with the part of a prefetched box outside the
// buffer (as Halide's): skip the prefetch (GuardWithIf), shrink the box to
// the buffer (Clamp), or prefetch it as it is (NonFaulting: the host's
// prefetch instructions never fault).
enum class PrefetchBoundStrategy { Clamp, GuardWithIf, NonFaulting };

// Where a Func's buffer lives on the tile-NPU target (docs/npu.md): GM (the
// host's memory), UB (the vector unit's buffer), L1, L0A, L0B, L0C. Auto: GM
// for compute_root Funcs and outputs, UB for Funcs computed inside a loop.
enum class MemoryType { Auto, GM, UB, L1, L0A, L0B, L0C };

// How Func::save() keeps a forward Func for the backward pass
// (docs/autodiff.md): None, recomputed where the backward pass reads it (the
// default); Whole, its values; Bits, one bit per point, the result of the
// one comparison the backward pass reads it through (a ReLU's `v >= 0`);
// Float16 and BFloat16, its values rounded to that 16-bit float type, which
// the backward pass reads widened back (save(Float(16)), save(BFloat(16))).
enum class Residual { None, Whole, Bits, Float16, BFloat16 };

const char *to_string(TailStrategy);
const char *to_string(ForType);
const char *to_string(MemoryType);
const char *to_string(LoopAlignStrategy);
const char *to_string(PrefetchBoundStrategy);
const char *to_string(Residual);  // its .sched word: "none", "whole", "bits", "float16", "bfloat16"

// A Var or an RVar, wherever a schedule directive names a dimension.
class VarOrRVar {
public:
    VarOrRVar(const Var &v) : name_(v.name()), is_rvar(false) {}
    VarOrRVar(const RVar &r) : name_(r.name()), is_rvar(true) {}
    VarOrRVar(const RDom &r) : name_(RVar(r).name()), is_rvar(true) {}
    VarOrRVar(const std::string &n, bool rv) : name_(n), is_rvar(rv) {}
    const std::string &name() const { return name_; }
    bool rvar() const { return is_rvar; }

private:
    std::string name_;
    bool is_rvar;
};

class Func;

// Where a Func is computed or stored: inlined, at the root of the pipeline,
// or inside the loop over `var` of Func `func`.
class LoopLevel {
public:
    LoopLevel() = default;  // inlined
    LoopLevel(const Func &f, const VarOrRVar &v);
    static LoopLevel root();
    static LoopLevel inlined() { return LoopLevel(); }
    bool is_root() const { return kind == Root; }
    bool is_inlined() const { return kind == Inlined; }
    const std::string &func() const { return func_name; }
    const std::string &var() const { return var_name; }
    std::string to_string() const;  // "root", "inline", "blur_y.x"
    bool operator==(const LoopLevel &o) const {
        return kind == o.kind && func_name == o.func_name && var_name == o.var_name;
    }
    // The Func a level made from a Func object names (null for levels made
    // by name), so that the level follows it when the pipeline makes Func
    // names unique (lower/UniqueNames.h).
    const std::weak_ptr<internal::FunctionContents> &func_contents() const { return contents; }
    void rename_func(const std::string &n) { func_name = n; }

private:
    enum Kind { Inlined, Root, At } kind = Inlined;
    std::string func_name, var_name;
    std::weak_ptr<internal::FunctionContents> contents;
};

}  // namespace kiln
