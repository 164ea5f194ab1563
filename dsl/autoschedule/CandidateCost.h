// The predicted cost of the Funcs' current schedules, as the search
// weighs a candidate: the pipeline lowered to its loop nest, the loops
// counted (analysis/LoopCounts.h) at the estimated sizes and priced by the
// cost model (CostModel.h).
//
//   Sizes sz = sizes_for(outs, {{"blur_y", {4096, 4096}}}, "autoschedule");
//   PipelineCost c = cost_of_schedule(outs, {"blur_y"}, target, sz, baseline, machine);
//   c.total.compute, c.total.memory, c.funcs["blur_x"].recompute ...
#pragma once
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "CostModel.h"
#include "analysis/ConcreteSizes.h"
#include "analysis/LoopCounts.h"
#include "ir/Function.h"
#include "kiln/Target.h"

namespace kiln {
namespace internal {

// The outputs' sizes (outputs not given: 1024 in every dimension), the
// values LoopCounts needs, and each input buffer's bytes.
struct Sizes {
    std::map<std::string, std::vector<int>> given;
    ConcreteSizes concrete;
    std::map<std::string, int64_t> input_bytes;
};

// `caller` names the function in errors about the estimates.
Sizes sizes_for(const std::vector<std::shared_ptr<FunctionContents>> &outs,
                const std::map<std::string, std::vector<int>> &estimates, const std::string &caller);

// The predicted cost of the Funcs' current schedules; `outside` (if given)
// gets where they read an input or write an output outside the buffers of
// the given sizes (a vectorized or tiled loop rounded past the edge; the
// kernel would refuse those buffers at run time): "name:dim" -> what
// happens there.
PipelineCost cost_of_schedule(const std::vector<std::shared_ptr<FunctionContents>> &outs,
                              const std::vector<std::string> &out_names, const Target &t, const Sizes &sz,
                              const LoopCounts &baseline, const MachineModel &m, LoopCounts *counts_out = nullptr,
                              std::map<std::string, std::string> *outside = nullptr, CountMemo *memo = nullptr);

}  // namespace internal
}  // namespace kiln
