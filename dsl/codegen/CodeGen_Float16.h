// What the C++ code generator emits for 16-bit floats (Float(16),
// BFloat(16)): after lower/EmulateFloat16.h they are only loaded, stored,
// named, broadcast and converted, so a kernel holds them as their bits
// (uint16_t, and uint16 vectors typedef'd float16xN / bfloat16xN) and calls
// the conversions of runtime/kiln_float16.h, which it includes after the
// prologue when it uses them.
//
//   float16(f32 * f32)  ->  kiln_cvt_f32_f16<uint16_t>(a * b)
//   float32(h) (x8)     ->  kiln_cvt_f16_f32<float32x8>(h)
//   float16(0.1)        ->  (uint16_t)0x2e66
#pragma once
#include <string>

#include "ir/IR.h"

namespace kiln {
namespace internal {

// The C text of cast<to>(value), one of from or to a 16-bit float; `to_c` is
// the C type of the result.
std::string float16_cast(Type from, Type to, const std::string &value, const std::string &to_c);

// A 16-bit float constant: its bits.
std::string float16_literal(const FloatImm *op);

// runtime/kiln_float16.h, pasted after the prologue by kernels that convert.
const std::string &float16_source_text();

}  // namespace internal
}  // namespace kiln
