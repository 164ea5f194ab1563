// The autoscheduler's search for a tile-NPU target (NpuSearch.cpp): tile
// shapes that fit the on-chip memories, what is computed per tile or
// inlined, double buffering and cores, each candidate costed from the
// instruction stream the NPU's code generator would emit (NpuCost.h);
// with autotune, the best candidates run on the simulator.
#pragma once
#include <map>
#include <string>
#include <vector>

#include "kiln/Autoschedule.h"

namespace kiln {
namespace internal {

AutoscheduleResult npu_autoschedule(const Pipeline &p, const Target &t,
                                    const std::map<std::string, std::vector<int>> &estimates,
                                    const AutoscheduleOptions &o);

// The simulated time of p as scheduled now on NPU target t, zero-filled
// buffers of the given sizes: cycles / 1e6 (ms at a nominal 1 GHz).
double simulated_ms(const Pipeline &p, const Target &t, const std::map<std::string, std::vector<int>> &sizes);

// The explanation's machine line for an NPU target: the machine file's
// name, cores and memories, and the unit of the predictions.
std::string npu_machine_text();

}  // namespace internal
}  // namespace kiln
