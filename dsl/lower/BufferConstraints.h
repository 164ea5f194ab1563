// Buffer constraints: what Dimension::set_min / set_extent / set_stride /
// set_bounds said about the buffers of the inputs and outputs. Each
// constrained field is asserted once, below the outermost lets and before
// every other check (a buffer that breaks one is refused with
// kiln_error_constraint_violated and a message naming the buffer, the
// field, both values and the call), and is then replaced by its value
// everywhere, so lowering sees known mins, extents and strides.
//
//   input.dim(1).set_stride(64);  out.output_buffer().dim(0).set_bounds(0, 256):
//     for (out.s0.x, out.min.0, out.extent.0) ... input[(out.s0.y - input.min.1) * input.stride.1 + ...]
//   ->
//     assert(input.stride.1 == 64, ...)  assert(out.min.0 == 0, ...)  assert(out.extent.0 == 256, ...)
//     for (out.s0.x, 0, 256) ... input[(out.s0.y - input.min.1) * 64 + ...]
//
// Runs after storage flattening (which names the strides) and the entry
// checks; `checks` false (no_asserts, a lowering stopped early) only
// substitutes. Expects every output buffer used (f.output_buffer().width())
// to belong to an output of this pipeline; says which is not otherwise.
#pragma once
#include "RealizationOrder.h"

namespace kiln {
namespace internal {

Stmt add_buffer_constraints(const Stmt &s, const std::string &kernel, const Environment &env,
                            const std::vector<std::string> &outputs, bool checks);

// The NPU target does not check buffers on entry: a CompileError naming the
// first constrained buffer, instead of trusting the constraint silently; nor
// does it write an output from another output's loops (computed_within_output).
void check_npu_buffer_constraints(const Environment &env, const std::vector<std::string> &outputs);

// The NPU kernel takes scalar Params as float32 or int32: a CompileError
// naming the first Param of a 16-bit float type (Float(16), BFloat(16)),
// rather than passing it as a float. (16-bit buffers and Funcs are the NPU
// code generator's: dsl/codegen/NpuSelect.cpp.)
void check_npu_types(const Environment &env);

}  // namespace internal
}  // namespace kiln
