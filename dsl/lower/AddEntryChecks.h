// Entry checks: assertions, at the top of the kernel, that every input
// buffer covers the region the schedule reads, every output buffer the region
// the pipeline writes, and every scalar parameter its declared range.
//
//   assert(input.min.0 <= (out.min.0 - 1) && (out.min.0 + out.extent.0) <= input.min.0 + input.extent.0,
//          kiln_error_input_too_small, "blur: input 'input' is read over [", ..., "] in dimension 0 ...")
//
// A split factor computed at run time (of Params and buffer fields, e.g.
// f.output_buffer().width() / 4) is asserted positive
// (kiln_error_bad_split_factor): a factor of 0 would compute nothing.
//
// An output computed at a loop of another output (ScheduleFunctions.h,
// computed_within_output) writes only what that loop computes: its buffer
// must not be larger (kiln_error_output_too_large).
//
// They go after the outermost lets (which define the output regions) and
// before any allocation or loop. Dropped by the no_asserts target feature.
// Null pointers, types, dimensions and strides are checked by codegen's
// argument unpacking, before these run.
#pragma once
#include "BoundsInference.h"
#include "Lower.h"

namespace kiln {
namespace internal {

Stmt add_entry_checks(const Stmt &s, const std::string &kernel, const PipelineRegions &regions,
                      const std::map<std::string, std::shared_ptr<ParameterContents>> &params, const Environment &env);

}  // namespace internal
}  // namespace kiln
