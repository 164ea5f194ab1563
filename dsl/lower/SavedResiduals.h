// Read the forward Funcs a backward pass saved (Func::save()) from the
// buffers the forward pass wrote, instead of computing them again.
//
// A saved Func is read from its buffer by every pipeline that computes
// neither it (as an output) nor its Bits encoder; the Funcs only it needed
// leave that pipeline. Whole (save()):
//
//   bias_add.save();   bias_add_adjoint(x, y) = select(bias_add(x, y) >= 0.0f, d_output(x, y), 0.0f)
//     ->  bias_add_adjoint(x, y) = select(bias_add[buffer](x, y) >= 0.0f, d_output(x, y), 0.0f)
//         (bias_add and matmul are no longer computed)
//
// Bits (save(bits)): each call must be compared with one constant, the same
// comparison everywhere; the comparison becomes a bit of the uint8 buffer
// "<f>_bits", 8 points of dimension 0 to a byte:
//
//     ->  bias_add_adjoint(x, y) = select(((bias_add_bits(x / 8, y) >> uint8(x % 8)) & 1) == 1, ...)
//
// Float16, BFloat16 (save(Float(16)), save(BFloat(16))): each call reads the
// 16-bit buffer "<f>_float16" / "<f>_bfloat16", widened to f's type:
//
//     ->  bias_add_adjoint(x, y) = select(float32(bias_add_float16[buffer](x, y)) >= 0.0f, ...)
//
// A saved Func's in() wrappers stay Funcs of the pipeline that read the
// buffer, so a schedule can stage the saved values for a reader as it
// stages an input (a copy per panel, say):
//
//   probs.save();   probs.in(V_adjoint);   V_adjoint(c, j) += probs_in_V_adjoint(j, r) * g(c, r)
//     ->  probs_in_V_adjoint(j, i) = probs[buffer](j, i)
//
// Run by find_environment() on its copies, after wrap_calls.
#pragma once
#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "RealizationOrder.h"
#include "kiln/Func.h"

namespace kiln {
namespace internal {

// A forward Func a pipeline reads from a buffer.
struct SavedResidual {
    std::string func;  // the saved Func's name
    Residual how = Residual::Whole;
    std::shared_ptr<ParameterContents> buffer;
    // Bits: the comparison the pipeline reads the Func through, of the
    // Variable "value" (the Func's value at a point).
    Expr condition;
};

// Rewrite env (lowering copies) so that the calls of `outputs` and the Funcs
// they reach to saved Funcs read the saved buffers, and drop the Funcs no
// output reaches any more. Returns what is read, ordered by Func name.
std::vector<SavedResidual> read_saved_residuals(Environment &env, const std::vector<std::string> &outputs);

// Sizes for the residual buffers `sizes` does not give (autodiff/Residuals.cpp):
// the extents of the box the `backward` pipeline reads of the buffer at its
// outputs' sizes, under its current schedules; where that box is not
// constant, the size of a forward output with as many dimensions (a saved
// Func is computed over such a domain; dimension 0 in bytes of 8 points for
// bits). Others are left out.
void residual_sizes(const std::vector<SavedResidual> &saved, const std::vector<Func> &forward,
                    const std::vector<Func> &backward, const Target &t,
                    std::map<std::string, std::vector<int>> &sizes);

// The extents of the boxes the pipeline of `outputs` reads of the input
// buffers `inputs` (bounds inference under the Funcs' current schedules), at
// the outputs' `sizes`; an input whose box is not constant there, or all of
// them if an output has no size, is left out.
std::map<std::string, std::vector<int>> read_extents(const std::vector<Func> &outputs,
                                                     const std::set<std::string> &inputs,
                                                     const std::map<std::string, std::vector<int>> &sizes,
                                                     const Target &t);

// The FunctionContents of each Func.
std::vector<std::shared_ptr<FunctionContents>> contents_of(const std::vector<Func> &fs);

// Copies of the Funcs the outputs reach, with their names, definitions and
// schedules, calling each other: a pipeline whose Funcs are scheduled apart
// from the originals (the forward pass kiln-gen -s auto schedules on its own).
std::vector<Func> copy_pipeline(const std::vector<Func> &outputs);

}  // namespace internal
}  // namespace kiln
