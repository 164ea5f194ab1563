// Compute 16-bit floats (Float(16), BFloat(16)) in float32, rounding back to
// 16 bits after every operation, so that each operation gives the 16-bit
// result nearest its exact value, as Halide defines them.
//
//   f(x) = a(x) * b(x) + c(x)     (all float16)
//     ->  f(x) = float16(float32(float16(float32(a(x)) * float32(b(x)))) + float32(c(x)))
//
// Afterwards a 16-bit float value is only ever loaded, stored, bound to a
// name, broadcast or converted: float32 <-> 16 bits, and float64 -> 16 bits
// directly. Comparisons, selects and math functions of 16-bit values read
// them widened to float32; an integer becomes 16 bits through float64
// (exact up to 2^53), another 16-bit type through float32 (exact). So code generators need only those
// conversions (dsl/codegen/CodeGen_Float16.cpp) and the 16 bits in memory.
// Constants stay 16-bit (FloatImm rounds its value to its type).
//
// Run right after schedule_functions(), before the simplifier can fold a
// 16-bit expression as if it were float32 (nothing after it builds 16-bit
// arithmetic).
#pragma once
#include "ir/IR.h"

namespace kiln {
namespace internal {

Stmt emulate_float16(const Stmt &s);

}  // namespace internal
}  // namespace kiln
