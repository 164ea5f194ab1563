// Loop-nest synthesis and producer injection.
//
// Each stage of a Func becomes a loop nest from its splits, fuses and
// reorders; each non-inlined Func's loop nest (all stages, in order) is
// injected at its compute level, and its storage (a Realize) at its store
// level. Loop bounds are symbolic: stage s of f loops over the region
// [f.s<s>.<v>.min, f.s<s>.<v>.max] that bounds inference defines later.
//
//   blur_x.compute_at(out, y):
//     produce out {
//      for (out.s0.y, ...) {
//       realize blur_x(...) {
//        produce blur_x { for (blur_x.s0.y, ...) { for (blur_x.s0.x, ...) { blur_x(...) = ... } } }
//        consume blur_x { for (out.s0.x, ...) { out(...) = blur_x(...) + ... } }
//     }}}
//
// A split of v into vo, vi (factor k) gives loops over vo and vi and
//   let f.s0.v = vo*k + vi + f.s0.v.loop_min                     (RoundUp, GuardWithIf)
//   let f.s0.v = min(vo*k, f.s0.v.loop_extent - k) + vi + ...     (ShiftInwards)
// with `if (f.s0.v <= f.s0.v.loop_max)` around the body for GuardWithIf.
//
// Checks the compute_at / store_at sites: a site must be a loop that
// encloses every use of the Func; the error lists all legal sites. A Func
// computed per vector of its consumer (compute_at a vectorized loop, or an
// unscheduled reduction whose innermost site is one) goes just outside that
// loop and is vectorized with the consumer's lanes:
//   f(x, y) = maximum(in(x + r, y));  f.vectorize(x, 8):
//     for (f.s0.x.x, ...) { produce maximum { for (maximum.s1.r.x, ...) {
//       vectorized for (maximum.s1.x.x_vec, 0, 8) { maximum(...) = max(...) } } } ... }
#pragma once
#include "RealizationOrder.h"

namespace kiln {
namespace internal {

// The tail strategy a split gets: its own, or for Auto, ShiftInwards in a
// pure definition, GuardWithIf for an RVar or an output's update, RoundUp
// for an update's pure variable.
TailStrategy resolve_tail(TailStrategy t, bool is_rvar, int stage, bool is_output);
// Is n (a split's variable) an RVar of d, or split from one?
bool is_rvar_name(const Definition &d, const std::string &n);

// The loop nest of stage `stage` of f (before bounds inference), in pieces
// that compute_with can interleave: the loop-bound lets, the loops
// (outermost first) and the body inside them (split lets, guards, Provide).
struct StageNest {
    struct Loop {
        std::string name, user_name;  // "f.s0.x.xo", "xo"
        ForType type;
    };
    std::vector<std::pair<std::string, Expr>> lets;
    std::vector<Loop> loops;
    Stmt body;
};
StageNest stage_nest(const FunctionContents &f, int stage, bool is_output);
StageNest stage_nest(const FunctionContents &f, int stage, bool is_output, const StageSchedule &sched);
// loops[from..] around body: For(name, name.loop_min, name.loop_extent).
Stmt wrap_loops(const std::vector<StageNest::Loop> &loops, size_t from, Stmt body);
Stmt wrap_lets(const std::vector<std::pair<std::string, Expr>> &lets, Stmt body);
// The assembled loop nest of one stage.
Stmt build_stage(const FunctionContents &f, int stage, bool is_output);

// Is f an output computed at a loop of another output (compute_at(g, v)
// with both outputs of the pipeline)? Such an output is a by-product of
// g's loops: computed where the schedule says, per iteration the region g
// reads, and stored in its own buffer instead of an allocation; bounds
// inference proves its iterations write the whole buffer.
//   mean, output outputs; mean.compute_at(output, y):
//     produce output { for (output.s0.y, ...) {
//       produce mean { mean(output.s0.y) = ... }  consume mean { for (output.s0.x, ...) { output(...) = ... } } } }
bool computed_within_output(const FunctionContents &f, const std::vector<std::string> &outputs);

Stmt schedule_functions(const std::vector<std::string> &outputs, const std::vector<std::string> &order,
                        const Environment &env);

}  // namespace internal
}  // namespace kiln
