// Make the names of a pipeline's Funcs unique.
//
// Two Funcs may be given one name (a helper that builds a blur, called twice).
// Schedules, loops, buffers and kernels refer to Funcs by name, so before
// anything else the pipeline renames all but the first-made Func of each
// name, as Halide does: blur, blur$1, blur$2 ... in order of creation. The
// renaming changes the user's Funcs (f.name() then reads "blur$1") and every
// reference to them: calls, compute_at/store_at levels and compute_with
// targets made from the Func objects, and the wrapped name of their in()
// wrappers. A .sched file, applied to the renamed pipeline, names them
// "blur$1" (and "blur$0" for the first); plain "blur" is then ambiguous.
//
//   Func a("blur"), b("blur");       // b made after a
//   a(x) = in(x) * 2;  b(x) = a(x - 1) + a(x + 1);  a.compute_at(b, x);
//     ->  blur(x) = in(x) * 2;  blur$1(x) = blur(x - 1) + blur(x + 1);
//         blur.compute_at(blur$1, x)
//
// A wrapper made for a consumer by name (f.in(g)) whose name two Funcs share
// cannot be told apart: a CompileError asks for distinct names.
#pragma once
#include <memory>
#include <vector>

#include "ir/Function.h"

namespace kiln {
namespace internal {

// `funcs`: every Func of the pipeline, each once.
void make_names_unique(const std::vector<std::shared_ptr<FunctionContents>> &funcs);

}  // namespace internal
}  // namespace kiln
