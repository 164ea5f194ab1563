// The NPU figures of the fusion report: the kernel a schedule makes for the
// tile-NPU target, run on the simulator with zero-filled buffers of the
// report's sizes (scalar inputs 0), so the report gains what the machine
// would do: cycles, GM bytes per direction, DMA bytes per path, the
// on-chip footprint (peak bytes) per memory, the bytes of the buffers
// live at once against their sum without sharing (buffer placement), the
// busy ratio per pipe, and two rooflines: that of the stream generated
// (max of GM read / MTE2's rate, GM write / MTE3's, the V and M pipes' busy
// cycles) and that of the algorithm's ideal stream (codegen/NpuIdeal.h:
// inputs and outputs once, each value computed once with fused ops), which
// a schedule's extra loads and instructions do not raise.
// Zeros give the figures of any input: the simulator's costs depend on
// shapes, addresses and flags, never on values (tests/npu checks this).
//
//   kiln-gen width=1024 -g softmax -s schedules/softmax/npu.sched -t npu -e report
//     ->  softmax.report.txt ends with
//         NPU (simulated, 1 core(s), machine default): 21588 cycles; GM read 524288 B, ...
#pragma once
#include <map>
#include <string>
#include <vector>

#include "kiln/Pipeline.h"
#include "kiln/Target.h"

namespace kiln {
namespace internal {

struct NpuReportFigures {
    std::string text;  // the lines appended to the report's text
    std::string json;  // a JSON object, the report's "npu" member
};

// `model_bytes`: the fusion report's NPU traffic model (PipelineReport::npu_memory_bytes()), printed
// beside the simulator's GM bytes. Throws CompileError when the kernel cannot be compiled or the
// simulator rejects it.
NpuReportFigures npu_report_figures(const Pipeline &p, const std::string &fn, const std::vector<Argument> &args,
                                    const std::map<std::string, std::vector<int>> &sizes, const Target &t,
                                    int64_t model_bytes);

}  // namespace internal
}  // namespace kiln
