// The tile-NPU code generator: a pipeline's loop nest becomes a C++ kernel
// written against runtime/npu/kiln_npu.h (tiles, DMA, vector instructions,
// flags), plus a host stub with the host target's ABI that runs the kernel
// on the simulator:
//
//   extern "C" int NAME(halide_buffer_t *in..., T param..., halide_buffer_t *out...);
//   extern "C" int NAME_argv(void **args);
//   extern "C" const char *NAME_npu_report(void);   // the last run's SimReport as JSON
//
// The stub simulates on the machine in $KILN_NPU_MACHINE (a machine file),
// else the default one, with races as errors (kiln_error_npu); with
// $KILN_NPU_TRACE set it writes the Chrome trace of the run to that path.
// See docs/npu.md, "Scheduling for the NPU".
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "kiln/Target.h"
#include "lower/Lower.h"

namespace kiln {
namespace internal {

std::string codegen_npu(const std::vector<std::shared_ptr<FunctionContents>> &outputs, const std::string &name,
                        const std::vector<LoweredArgument> &args, const Target &t);

}  // namespace internal
}  // namespace kiln
