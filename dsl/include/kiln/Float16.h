// Host values of Kiln's 16-bit float types: kiln::float16_t (Float(16), IEEE
// half precision) and kiln::bfloat16_t (BFloat(16), the top half of a
// float32), for the elements of Buffers and for cast<float16_t>(e).
//
// Each holds its 16 bits. Made from a float or a double it rounds to nearest,
// ties to even (NaN stays NaN, too large becomes infinity, subnormals are
// kept); read as a float it is exact. Arithmetic goes through float.
//
//   kiln::float16_t h(0.1f);       // bits 0x2e66, 0.0999755859375
//   float f = h;                   // exact
//   Buffer<kiln::bfloat16_t> b(64, 64);   // halide_type_t {bfloat, 16}
#pragma once
#include <cstdint>

#include <HalideRuntime.h>

#include "Type.h"
#include "kiln_float16.h"

namespace kiln {

namespace internal {
// One 16-bit float format: its bits from a double or float, and as a float.
template<uint16_t (*FromDouble)(double), uint16_t (*FromFloat)(float), float (*ToFloat)(uint16_t)>
struct Small16 {
    Small16() = default;
    explicit Small16(double d) : bits(FromDouble(d)) {}
    explicit Small16(float f) : bits(FromFloat(f)) {}
    explicit Small16(int i) : bits(FromDouble((double)i)) {}
    static Small16 make_from_bits(uint16_t b) {
        Small16 r;
        r.bits = b;
        return r;
    }
    uint16_t to_bits() const { return bits; }
    operator float() const { return ToFloat(bits); }
    bool is_nan() const { return ToFloat(bits) != ToFloat(bits); }
    // Equal bits (NaN == NaN, 0 != -0), unlike the floats' ==.
    bool same_bits(const Small16 &o) const { return bits == o.bits; }

private:
    uint16_t bits = 0;
};
}  // namespace internal

using float16_t = internal::Small16<kiln_float16_from_double, kiln_float16_from_float, kiln_float16_to_float>;
using bfloat16_t = internal::Small16<kiln_bfloat16_from_double, kiln_bfloat16_from_float, kiln_bfloat16_to_float>;

template<> struct TypeOf<float16_t> { static Type get() { return Float(16); } };
template<> struct TypeOf<bfloat16_t> { static Type get() { return BFloat(16); } };

}  // namespace kiln

template<>
HALIDE_ALWAYS_INLINE constexpr halide_type_t halide_type_of<kiln::float16_t>() {
    return halide_type_t(halide_type_float, 16);
}
template<>
HALIDE_ALWAYS_INLINE constexpr halide_type_t halide_type_of<kiln::bfloat16_t>() {
    return halide_type_t(halide_type_bfloat, 16);
}
