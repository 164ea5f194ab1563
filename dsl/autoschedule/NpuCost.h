// The NPU search's cost model: a pipeline's schedule for the tile-NPU,
// lowered with the estimated sizes substituted and put through the NPU's
// passes (instruction selection, buffer placement, sync insertion: the
// kernel the code generator would print), then timed from its instruction
// stream with the simulator's own cost rules (npu::instr_cost and the
// machine file) and a model of how the pipes overlap:
//
//   for (yo = 0; yo < 32; yo++) {        32 trips, its buffers double-buffered
//       TLOAD   input -> UB      MTE2  512 cycles busy (+200 latency)
//       TROWMAX ...              V      32
//       TEXP    ...              V     512 (4x: transcendental)
//       ...
//       TSTORE  UB -> output     MTE3  512
//   }
//     -> per trip: the busiest pipe (V, 1064 cycles), overlapped with the
//        loads and stores of the neighbouring trips: 31 x 1064 + one trip
//        with every pipe in turn and the DMA latencies.
//
// A loop whose buffers are single-buffered runs its trips one after
// another: each trip's load waits for the previous trip's vector work. A
// loop across cores divides its trips by the machine's cores. The kernel's
// time is its top-level items in order. The simulator (autotune) is exact;
// this model only ranks candidates and is checked against it in the tests.
#pragma once
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "ir/Function.h"
#include "kiln/Target.h"

namespace kiln {
namespace internal {

struct NpuCostEstimate {
    double cycles = 0;                        // predicted kernel time
    std::map<std::string, uint64_t> busy;     // cycles each pipe is busy, summed over the kernel ("V", "MTE2", ...)
    uint64_t gm_read = 0, gm_write = 0;       // bytes the DMA moves from and to GM
    std::map<std::string, uint64_t> peak;     // on-chip memory -> bytes of the buffers live at once
    int instructions = 0;                     // tile instructions executed (not counting flags)
    bool exact_trips = true;                  // false: a loop's trip count was not a constant (counted once)
    std::string bottleneck() const;           // the busiest pipe
    std::string to_string() const;            // "34120 cycles; busy V 95%, MTE2 48%; GM 1.0 MiB in, 1.0 MiB out; UB 128 KiB"
};

// The estimate for `outs` as they are scheduled now, on target t (an NPU
// target), with `values` (ConcreteSizes::values) for the buffers' sizes.
// Throws CompileError where the schedule does not compile for the NPU
// (what the code generator would say: a buffer that does not fit, a form
// the NPU has no instructions for).
NpuCostEstimate npu_predict(const std::vector<std::shared_ptr<FunctionContents>> &outs, const Target &t,
                            const std::map<std::string, int64_t> &values);

}  // namespace internal
}  // namespace kiln
