#include "CNames.h"

#include <cctype>

namespace kiln {
namespace internal {

bool is_c_identifier(const std::string &s) {
    if (s.empty() || std::isdigit((unsigned char)s[0])) return false;
    for (char c : s)
        if (!std::isalnum((unsigned char)c) && c != '_') return false;
    return true;
}

const char *halide_type_code_name(TypeCode c) {
    switch (c) {
    case TypeCode::Int: return "halide_type_int";
    case TypeCode::UInt: return "halide_type_uint";
    case TypeCode::Float: return "halide_type_float";
    }
    return "halide_type_int";
}

}  // namespace internal
}  // namespace kiln
