#include "CodeGen_Float16.h"

#include <cstdio>

#include "kiln_float16.h"

// The runtime file, embedded at build time by cmake/KilnEmbed.cmake.
extern const char kiln_embedded_kiln_float16_h[];

namespace kiln {
namespace internal {

namespace {

// The helpers' short name of a float type: f16, bf16, f32, f64.
std::string short_name(Type t) {
    internal_assert(t.is_float()) << "16-bit float conversion with " << t.to_string();
    return (t.is_bfloat() ? "bf" : "f") + std::to_string(t.bits());
}

}  // namespace

std::string float16_cast(Type from, Type to, const std::string &value, const std::string &to_c) {
    // emulate_float16 leaves these: 16 bits <-> float32, float64 -> 16 bits.
    bool ok = (from.is_float16_or_bfloat16() && to == Float(32, to.lanes())) ||
              (to.is_float16_or_bfloat16() && (from.element_of() == Float(32) || from.element_of() == Float(64)));
    internal_assert(ok) << "cast from " << from.to_string() << " to " << to.to_string()
                        << " reached codegen; emulate_float16 should have gone through float32";
    return "kiln_cvt_" + short_name(from) + "_" + short_name(to) + "<" + to_c + ">(" + value + ")";
}

std::string float16_literal(const FloatImm *op) {
    uint16_t bits = op->type.is_bfloat() ? kiln_bfloat16_from_double(op->value) : kiln_float16_from_double(op->value);
    char buf[32];
    std::snprintf(buf, sizeof(buf), "(uint16_t)0x%04x", (unsigned)bits);
    return buf;
}

const std::string &float16_source_text() {
    static const std::string text = std::string(kiln_embedded_kiln_float16_h) + "\n";
    return text;
}

}  // namespace internal
}  // namespace kiln
