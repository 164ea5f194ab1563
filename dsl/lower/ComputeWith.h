// Horizontal fusion (compute_with): a group of stages that share loops.
//
// z2.compute_with(z1, y): the parent z1 and the child z2 run in one loop
// nest from y outward; in each iteration of the innermost fused loop the
// parent's inner loops run first, then the child's. The fused loop covers the
// union of both ranges, and each stage is guarded to its own range:
//
//   for (z1.s0.y, z1.s0.y.fused_min, z1.s0.y.fused_extent) {
//    if (z1.s0.y.loop_min <= z1.s0.y && z1.s0.y <= z1.s0.y.loop_max) { for (z1.s0.x, ...) { z1(...) = ... } }
//    if (z2.s0.y.loop_min <= z1.s0.y && z1.s0.y <= z2.s0.y.loop_max) {
//     let z2.s0.y = z1.s0.y                        (NoAlign; AlignStart/AlignEnd shift it)
//     for (z2.s0.x, ...) { z2(...) = ... } } }
//
// The parent stage may be an update: s2.update(0).compute_with(s1.update(0),
// r.x) runs s1's pure definition, then s2's, then one loop over r.x with
// s1's update and s2's. A child's stages before the fused one run before
// the parent's fused stage, its later stages after the parent's last.
//
// The produce of a group is nested: produce z1 { produce z2 { ... } }, and
// its consumers likewise, so that bounds inference finds each member's
// producer and consumers.
#pragma once
#include "RealizationOrder.h"

namespace kiln {
namespace internal {

// Legality of every compute_with in the pipeline (user errors naming both
// stages): the parent is in the pipeline and neither is inlined; both have the
// same compute level (an output's children: outputs, or Funcs computed at the
// root, whose storage is then the root); neither depends on the other;
// the loops from the fused one outward have the same names in both and are
// neither vectorized nor unrolled and of one kind; a child is not itself a
// parent. A stage whose Func and parent the pipeline neither computes nor
// inlines is not checked: an input's wrapper for a consumer of another
// pipeline (env holds every wrapper of an input the pipeline reads).
// Precondition: inline_functions has run.
void check_compute_with(const Environment &env, const std::vector<std::string> &outputs);

// The Funcs with a stage fused into `parent` (in name order).
std::vector<std::string> fused_children(const Environment &env, const std::string &parent);
// The Func `f` is fused into, or "".
std::string fusion_parent(const FunctionContents &f);

// produce parent { produce child... { every stage of the group } }; each
// member's stages are built as an output's when `outputs` names it.
Stmt build_group_produce(const Environment &env, const std::string &parent, const std::vector<std::string> &outputs);
// consume parent { consume child... { body } }
Stmt wrap_group_consume(const Environment &env, const std::string &parent, Stmt body);

}  // namespace internal
}  // namespace kiln
