// Emit a lowered function as one self-contained, readable C++17 translation
// unit: the runtime prologue (runtime/kiln_runtime.h, kiln_prologue.h,
// kiln_vector_math.h, kiln_shuffles.h), the vector typedefs it uses,
// `extern "C" int NAME(args...)` and `extern "C" int NAME_argv(void **args)`.
//
// Names: every char of an IR name outside [A-Za-z0-9_] becomes '_'; names that
// would clash (with a keyword, a type, a kiln_/halide_ helper or another name)
// get a '_' suffix. Buffer B arrives as `halide_buffer_t *B_buffer`, is checked
// (kiln_check_buffer) and unpacked into `T *B` and `B_min_0`, `B_extent_0`,
// `B_stride_0`, ... Bool vectors are masks (signed lanes of all ones or zero)
// whose lane width follows the comparison that made them.
//
// The IR
//   parallel for (blur.s0.y, 0, h) {
//    for (blur.s0.x.xo, 0, (w / 8)) {
//     blur[ramp(((blur.s0.x.xo * 8) + (blur.s0.y * blur.stride.1)), 1, 8)] =
//         (in[ramp(((blur.s0.x.xo * 8) + (blur.s0.y * blur.stride.1)), 1, 8)] * x8(2.000000f))
// becomes
//   #pragma omp parallel for num_threads(kiln_num_threads())
//   for (int32_t blur_s0_y = 0; blur_s0_y < h; ++blur_s0_y) {
//       for (int32_t blur_s0_x_xo = 0, blur_s0_x_xo_end = w >> 3; blur_s0_x_xo < blur_s0_x_xo_end; ++blur_s0_x_xo) {
//           kiln_store(blur + ((blur_s0_x_xo * 8) + (blur_s0_y * blur_stride_1)),
//                      kiln_load<float32x8>(in + ((blur_s0_x_xo * 8) + ...)) * kiln_broadcast<float32x8>(2.0f));
#pragma once
#include <functional>
#include <string>
#include <vector>

#include "kiln/Target.h"
#include "lower/Lower.h"

namespace kiln {
namespace internal {

std::string codegen_cpp(const LoweredFunc &f, const Target &t);

// The `kiln_error("KERNEL: ...", args...);` call that reports a failed
// AssertStmt with `message` (string parts and scalar Exprs, the latter printed
// by `print` as a cast's operand), for both code generators.
std::string assert_error_call(const std::string &kernel, const std::vector<Expr> &message,
                              const std::function<std::string(const Expr &)> &print);

// The text of runtime/kiln_runtime.cpp, which a JIT module compiles in, and
// of runtime/kiln_runtime.h.
const std::string &runtime_source_text();
const char *runtime_header_text();

// The prologue every emitted kernel starts with (kiln_runtime.h, then
// kiln_prologue.h, kiln_vector_math.h and kiln_shuffles.h), verbatim: the JIT precompiles it once per cache directory.
const std::string &prologue_source_text();

}  // namespace internal
}  // namespace kiln
