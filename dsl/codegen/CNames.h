// Names as they appear in emitted C++ and in the generated ABI, for the code
// generators and the generator driver (which checks the names users give).
#pragma once
#include <string>

#include "kiln/Type.h"

namespace kiln {
namespace internal {

// A C identifier: [A-Za-z_][A-Za-z0-9_]* ("blur_x" yes; "blur-x", "3x" no).
bool is_c_identifier(const std::string &s);

// An IR name in C identifier characters: each character other than a letter,
// a digit or '_' becomes '_' ("f.s0.x" -> "f_s0_x"). The result may start
// with a digit; CodeGen_C then prefixes "v_" (and the NPU code always does).
std::string c_mangle(const std::string &name);

// Whether an emitted kernel may not use id for a name of its own: a C++
// keyword, a name of the prologue (kiln_*, halide_*, __*, INT*, UINT*) or a
// type name (int32_t, uint8x16, float32x8, bfloat16x8).
bool is_reserved_c_name(const std::string &id);

// The halide_type_code_t enumerator of a type code, as C++ text:
//   TypeCode::Float  ->  "halide_type_float"
const char *halide_type_code_name(TypeCode c);

}  // namespace internal
}  // namespace kiln
