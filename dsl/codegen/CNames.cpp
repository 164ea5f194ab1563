#include "CNames.h"

#include <cctype>
#include <cstring>
#include <set>

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

bool is_reserved_c_name(const std::string &id) {
    static const std::set<std::string> words = {
        "alignas", "alignof", "and", "and_eq", "asm", "auto", "bitand", "bitor", "bool", "break", "case", "catch",
        "char", "char16_t", "char32_t", "class", "compl", "const", "const_cast", "constexpr", "continue",
        "decltype", "default", "delete", "do", "double", "dynamic_cast", "else", "enum", "explicit", "export",
        "extern", "false", "float", "for", "friend", "goto", "if", "inline", "int", "long", "mutable", "namespace",
        "new", "noexcept", "not", "not_eq", "nullptr", "operator", "or", "or_eq", "private", "protected", "public",
        "register", "reinterpret_cast", "return", "short", "signed", "sizeof", "static", "static_assert",
        "static_cast", "struct", "switch", "template", "this", "thread_local", "throw", "true", "try", "typedef",
        "typeid", "typename", "union", "unsigned", "using", "virtual", "void", "volatile", "wchar_t", "while",
        "xor", "xor_eq", "std", "size_t", "main", "args", "INFINITY", "NAN"};
    if (words.count(id)) return true;
    for (const char *prefix : {"kiln_", "halide_", "__", "INT", "UINT"}) {
        if (id.compare(0, std::strlen(prefix), prefix) == 0) return true;
    }
    // Type names: int32_t, uint8x16, float32x8, ...
    size_t i = id.compare(0, 4, "uint") == 0 ? 4 : id.compare(0, 3, "int") == 0 ? 3 : id.compare(0, 5, "float") == 0 ? 5
             : id.compare(0, 6, "bfloat") == 0 ? 6 : 0;
    return i > 0 && i < id.size() && std::isdigit((unsigned char)id[i]);
}

const char *halide_type_code_name(TypeCode c) {
    switch (c) {
    case TypeCode::Int: return "halide_type_int";
    case TypeCode::UInt: return "halide_type_uint";
    case TypeCode::Float: return "halide_type_float";
    case TypeCode::BFloat: return "halide_type_bfloat";
    }
    return "halide_type_int";
}

}  // namespace internal
}  // namespace kiln
