// An output that only copies a Func computed at the root, out(x, y) =
// f(x, y), computes f in the output's buffer instead of in an allocation of
// its own, when f's region is the output's (a test at run time; otherwise
// f is computed in its allocation and copied, as before). f's producer is
// emitted once: the realization is the output's buffer or an allocation as
// the test decides, and storage flattening addresses either through the
// strides it chooses then. A generator's Output set() from an adjoint with
// update definitions is such a copy (docs/autodiff.md): the adjoint is
// computed at the root, then copied into the Output.
//
//   realize f([f.x.min, f.x.extent]) {        let f.in_place = (f.x.min == out.min.0) && (f.x.extent == out.extent.0)
//    produce f {                              realize f([f.x.min, f.x.extent]) in out if (f.in_place) {
//     for (...) f(x) = g(x)                     produce f {
//     for (...) f(e) = f(e) + h(r)       ->      for (...) f(x) = g(x)
//    }                                           for (...) f(e) = f(e) + h(r)
//    consume f {                                }
//     produce out {                             consume f {
//      for (...) out(x) = f(x)                   if (!f.in_place) produce out { for (...) out(x) = f(x) }
//
// The output must be the only reader of f, its one definition a store of
// f at its own coordinates, of f's type, and f's updates must each write
// part of f (an edge, a column, a point): an update of every point (a sum
// per point over an RDom) keeps f in its allocation, where
// promote_accumulators and hoist_invariant_loads keep such sums in
// registers, which they do not do for an output's stores. f's bounds are those bounds
// inference gave its realization; when they are the output buffer's, every
// point f writes is a point of the output, and every point of the output
// is written by f. An output shares no memory with an input (checked on
// entry), so writing it while f's stages read the inputs is safe.
//
// Expects the statement before storage flattening (Realize, Provide and
// calls by name) and after bounds inference. Host targets only: the NPU's
// code generator places its buffers itself.
//
// A Func stored with another dimension innermost (reorder_storage) is
// left alone: the output's layout is not its own. `env` gives the Funcs'
// schedules.
//
// With `rename` false (the fusion report), the pass writes the choice as
// two branches instead: if (the test) produce f (no realize of f; f keeps
// its name) else the realize as before, so that a count of the loop nest
// charges f's stages to f and no allocation or copy. `into`, if given, gets
// each such f and its output.
#pragma once
#include <map>
#include <string>
#include <vector>

#include "RealizationOrder.h"
#include "ir/IR.h"

namespace kiln {
namespace internal {

Stmt realize_into_outputs(const Stmt &s, const std::vector<std::string> &outputs, const Environment &env,
                          bool rename = true,
                          std::map<std::string, std::string> *into = nullptr);

}  // namespace internal
}  // namespace kiln
