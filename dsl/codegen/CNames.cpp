#include "CNames.h"

#include <cctype>

namespace kiln {
namespace internal {

bool is_c_identifier(const std::string &s) {
    return !s.empty() && !std::isdigit((unsigned char)s[0]) && c_mangle(s) == s;
}

std::string c_mangle(const std::string &name) {
    std::string r;
    for (char c : name) {
        if (c == '$') r += "__";  // blur$1, a renamed Func: blur__1, apart from a Func named blur_1
        else r += std::isalnum((unsigned char)c) ? c : '_';
    }
    return r;
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
