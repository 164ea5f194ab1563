// The loop nests the fusion report counts (Pipeline::report, Report.cpp),
// for the analyses that count the same baseline (codegen/NpuIdeal.h).
#pragma once
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "kiln/Target.h"
#include "lower/RealizationOrder.h"
#include "lower/SlidingWindow.h"

namespace kiln {
namespace internal {

// The pipeline's loop nest (lower() stopped at LowerStop::LoopNest) as
// scheduled, or with `unfused` every computed Func moved to
// compute_root/store_root first: the baseline the report compares against
// (with `materialize_inlined` the inlined Funcs too, for the distinct points
// each needs). Both drop the fold_storage() directives and horizontal
// fusion. `sliding` (if given) gets what became of each Func stored outside
// the loop it is computed in. On a host target an output that copies a Func
// computed at the root computes it in its buffer where the sizes allow, as
// host code does (realize_into_outputs, the Func keeping its name: its
// stages are counted as its own, with no allocation and no copy); `into`
// (if given) gets each such Func and its output.
Stmt report_loop_nest(const std::vector<std::shared_ptr<FunctionContents>> &outs, const Target &t, bool unfused,
                      bool materialize_inlined = false, SlidingReports *sliding = nullptr,
                      std::map<std::string, std::string> *into = nullptr);

}  // namespace internal
}  // namespace kiln
