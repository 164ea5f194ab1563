// The NPU search's cost model: a pipeline's schedule for the tile-NPU,
// lowered with the estimated sizes substituted into its loops' extents and
// put through the NPU's passes (instruction selection, buffer placement,
// software pipelining, sync insertion: the kernel the code generator would
// print; a pipelined loop's first trip issues its first stage alone and
// its last trip its second stage alone, and an L1 panel's k-slices load
// on the first trips of their loops only, as the guards say); then the
// instructions one core issues are unrolled from the kernel's loops and
// timed by the simulator's own scheduling pass (npu::schedule_core: issue
// order, one in-order queue per pipe, flags, DMA latency, the machine
// file's cost rules), without executing them:
//
//   for (yo = core; yo < 32; yo += 8) {      core 0's share: 4 trips
//       kiln_pp = kiln_iter++ & 1;           the double buffers' parity
//       WAIT_FLAG(V, MTE2, 1 + kiln_pp)      -> WAIT_FLAG(V, MTE2, 1), then 2, ...
//       TLOAD   input -> UB                  MTE2, 16 x 1024 f32
//       ...
//   }
//     -> 4 x the body's instructions, with their shapes, pipes and flags,
//        scheduled as the simulator schedules them: 5062 cycles
//
// A loop across cores gives the first core ceil(trips / cores) tiles, and
// its transfers their part of the GM bandwidth the cores it keeps busy
// share (the machine's gm.bytes_per_cycle over those cores), as in the
// simulator. A
// top-level loop of more than 8 trips runs 8; beyond that the time grows by
// the last 4 trips' average (the steady state, once double buffering has
// filled). Several such loops (a Func through GM, then the output) are
// unrolled whole, since one difference cannot tell their trips apart. So
// the prediction is the simulated cycle count where nothing is capped, and
// close to it where one loop is.
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
    double cycles = 0;                        // predicted kernel time (the slowest core's)
    std::map<std::string, uint64_t> busy;     // cycles each pipe of that core is busy ("V", "MTE2", ...)
    uint64_t gm_read = 0, gm_write = 0;       // bytes the DMA moves from and to GM (that core's x the cores)
    std::map<std::string, uint64_t> peak;     // on-chip memory -> bytes of the buffers live at once
    int instructions = 0;                     // instructions that core issues, flags included
    bool exact_trips = true;                  // false: a loop's trip count was not a constant (counted once)
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
