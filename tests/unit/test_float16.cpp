// The 16-bit float types: conversions of runtime/kiln_float16.h over every
// float16 and bfloat16 pattern against references (ldexp, and the CPU's F16C
// instructions where it has them), bfloat16's rounding cases, the host types
// kiln::float16_t / bfloat16_t, Type's accessors and printing, and constants.
#include <catch2/catch.hpp>

#include <cmath>
#include <cstring>

#include "ir/IR.h"
#include "ir/IRPrinter.h"
#include "ir/Simplify.h"
#include "kiln/kiln.h"

using namespace kiln;
using namespace kiln::internal;

namespace {

uint32_t bits_of(float f) {
    uint32_t x;
    std::memcpy(&x, &f, 4);
    return x;
}
float float_of(uint32_t x) {
    float f;
    std::memcpy(&f, &x, 4);
    return f;
}

// float16 bits decoded from the definition: (-1)^s 2^(e-15) (1 + m/1024), subnormals 2^-14 m/1024.
double reference_f16(uint16_t h) {
    int s = h >> 15, e = (h >> 10) & 31, m = h & 1023;
    double v = e == 0 ? std::ldexp(m, -24) : e == 31 ? (m ? NAN : INFINITY) : std::ldexp(1024 + m, e - 25);
    return s ? -v : v;
}

#if defined(__x86_64__)
__attribute__((target("f16c"))) float f16c_to_float(uint16_t h) {
    typedef short v8hi __attribute__((vector_size(16)));
    v8hi x = {(short)h};
    return __builtin_ia32_vcvtph2ps(x)[0];
}
__attribute__((target("f16c"))) uint16_t f16c_from_float(float f) {
    typedef float v4sf __attribute__((vector_size(16)));
    v4sf x = {f};
    return (uint16_t)__builtin_ia32_vcvtps2ph(x, 0)[0];  // imm 0: round to nearest even
}
bool has_f16c() {
    __builtin_cpu_init();
    return __builtin_cpu_supports("avx2");  // every AVX2 CPU has F16C
}
#else
bool has_f16c() { return false; }
float f16c_to_float(uint16_t) { return 0; }
uint16_t f16c_from_float(float) { return 0; }
#endif

}  // namespace

TEST_CASE("float16: every pattern widens to its exact value", "[float16]") {
    int bad = 0, bad_f16c = 0;
    const bool f16c = has_f16c();
    for (int i = 0; i < 65536; i++) {
        const uint16_t h = (uint16_t)i;
        float got = kiln_float16_to_float(h);
        double want = reference_f16(h);
        if (std::isnan(want)) {
            // A NaN stays a NaN with its sign and payload, made quiet.
            const uint32_t x = bits_of(got);
            bad += !(std::isnan(got) && (x >> 31) == (h >> 15u) && ((x >> 13) & 0x3ff) == ((h & 0x3ffu) | 0x200));
        } else {
            bad += !((double)got == want && std::signbit(got) == std::signbit(want));
        }
        if (f16c) bad_f16c += bits_of(f16c_to_float(h)) != bits_of(got);
    }
    CHECK(bad == 0);
    CHECK(bad_f16c == 0);
}

TEST_CASE("float16: every pattern round-trips, and floats narrow as F16C does", "[float16]") {
    int bad = 0;
    for (int i = 0; i < 65536; i++) {
        const uint16_t h = (uint16_t)i;
        float f = kiln_float16_to_float(h);
        if (std::isnan(f)) bad += kiln_float16_from_float(f) != (h | 0x200);  // quiet
        else bad += kiln_float16_from_float(f) != h || kiln_float16_from_double(f) != h;
    }
    CHECK(bad == 0);
    if (!has_f16c()) return;
    // A spread of float patterns (every exponent, both signs, NaNs and
    // subnormals among them): the same bits as the CPU's conversion.
    int mismatches = 0;
    uint32_t first = 0;
    for (uint64_t x = 0; x <= 0xffffffffull; x += 4099) {
        float f = float_of((uint32_t)x);
        if (kiln_float16_from_float(f) != f16c_from_float(f) && mismatches++ == 0) first = (uint32_t)x;
    }
    INFO("first mismatch at float bits " << first);
    CHECK(mismatches == 0);
}

TEST_CASE("float16: ties go to even, overflow to infinity, underflow through subnormals", "[float16]") {
    CHECK(kiln_float16_from_double(1.0 + 1.0 / 2048) == 0x3c00);       // tie: even is 1.0
    CHECK(kiln_float16_from_double(1.0 + 3.0 / 2048) == 0x3c02);       // tie: even is above
    CHECK(kiln_float16_from_double(65504.0) == 0x7bff);                // the largest finite
    CHECK(kiln_float16_from_double(65519.99) == 0x7bff);
    CHECK(kiln_float16_from_double(65520.0) == 0x7c00);                // tie to even: infinity
    CHECK(kiln_float16_from_double(-1e10) == 0xfc00);
    CHECK(kiln_float16_from_double(std::ldexp(1.0, -24)) == 0x0001);   // the smallest subnormal
    CHECK(kiln_float16_from_double(std::ldexp(1.0, -25)) == 0x0000);   // half of it: tie to even 0
    CHECK(kiln_float16_from_double(std::ldexp(1.5, -25)) == 0x0001);
    CHECK(kiln_float16_from_double(-std::ldexp(1.0, -26)) == 0x8000);  // -0
    CHECK(kiln_float16_from_double(std::ldexp(1023.5, -24)) == 0x0400);  // rounds up into the normals
    CHECK(kiln_float16_from_double(0.1) == 0x2e66);
}

TEST_CASE("float16: bfloat16 rounds to nearest even and keeps NaN quiet", "[float16]") {
    CHECK(kiln_bfloat16_from_float(1.0f) == 0x3f80);
    CHECK(kiln_bfloat16_from_float(1.00390625f) == 0x3f80);  // 1 + 2^-8, a tie: even is 1.0
    CHECK(kiln_bfloat16_from_float(1.01171875f) == 0x3f82);  // 1 + 3 * 2^-8, a tie: even is above
    CHECK(kiln_bfloat16_from_float(float_of(0x3f808001)) == 0x3f81);  // just past the tie
    CHECK(kiln_bfloat16_from_float(float_of(0x7f7fffff)) == 0x7f80);  // FLT_MAX: infinity
    CHECK(kiln_bfloat16_from_float(-INFINITY) == 0xff80);
    CHECK(kiln_bfloat16_from_float(float_of(0x7f800001)) == 0x7fc0);  // payload below the top half: still a NaN
    CHECK(kiln_bfloat16_from_float(float_of(0xffc12345)) == 0xffc1);
    CHECK(kiln_bfloat16_from_float(float_of(0x00008000)) == 0x0000);  // subnormal tie: even
    CHECK(kiln_bfloat16_from_float(float_of(0x00018000)) == 0x0002);
    // float64 rounds once: through float32 this one would tie and go to even.
    CHECK(kiln_bfloat16_from_double(1.0 + 1.0 / 256 + 1.0 / (1ll << 40)) == 0x3f81);
    int bad = 0;
    for (int i = 0; i < 65536; i++) {
        const uint16_t b = (uint16_t)i;
        float f = kiln_bfloat16_to_float(b);
        bad += bits_of(f) != (uint32_t)b << 16;
        if (std::isnan(f)) bad += kiln_bfloat16_from_float(f) != (b | 0x40);
        else bad += kiln_bfloat16_from_float(f) != b || kiln_bfloat16_from_double(f) != b;
    }
    CHECK(bad == 0);
}

TEST_CASE("float16: host types, Type accessors and printing", "[float16]") {
    float16_t h(0.1f);
    CHECK(h.to_bits() == 0x2e66);
    CHECK((float)h == 0.0999755859375f);
    CHECK(bfloat16_t(3.0).to_bits() == 0x4040);
    CHECK(float16_t::make_from_bits(0x7e00).is_nan());
    CHECK(halide_type_of<float16_t>() == halide_type_t(halide_type_float, 16));
    CHECK(halide_type_of<bfloat16_t>() == halide_type_t(halide_type_bfloat, 16));
    Buffer<bfloat16_t> b(4);
    CHECK(b.type().code == halide_type_bfloat);

    CHECK(type_of<float16_t>() == Float(16));
    CHECK(type_of<bfloat16_t>() == BFloat(16));
    CHECK(Float(16).is_float());
    CHECK(BFloat(16).is_float());
    CHECK(BFloat(16).is_bfloat());
    CHECK_FALSE(Float(16).is_bfloat());
    CHECK_FALSE(BFloat(16).is_int_or_uint());
    CHECK((int)BFloat(16).code() == halide_type_bfloat);
    CHECK(Float(16).to_string() == "float16");
    CHECK(BFloat(16, 8).to_string() == "bfloat16x8");
    CHECK(Float(32).can_represent(BFloat(16)));
    CHECK(Float(32).can_represent(Float(16)));
    CHECK_FALSE(Float(16).can_represent(BFloat(16)));
    CHECK_FALSE(BFloat(16).can_represent(Float(16)));
    CHECK_FALSE(Float(16).can_represent(Float(32)));
    CHECK_FALSE(Float(16).can_represent(Int(16)));

    // Constants hold the value of their type; casts fold to it.
    const FloatImm *c = make_const(Float(16), 0.1).as<FloatImm>();
    REQUIRE(c);
    CHECK(c->value == 0.0999755859375);
    CHECK(as_const_float(simplify(cast<bfloat16_t>(Expr(1.00390625f))))[0] == 1.0);
    CHECK(to_string(make_const(Float(16), 1.5)) == "float16(1.500000)");
    CHECK(to_string(cast(BFloat(16), Variable::make(Float(32), "v"))) == "bfloat16(v)");
    // float32(float16(v)) is not v: the simplifier keeps the rounding.
    Expr v = Variable::make(Float(32), "v");
    CHECK(to_string(simplify(cast<float>(cast<float16_t>(v)))) == "float32(float16(v))");
    Expr w = Variable::make(Float(16), "w");
    CHECK(to_string(simplify(cast<float16_t>(cast<float>(w)))) == "w");
    // float16 with bfloat16: both become float32.
    CHECK((Variable::make(Float(16), "a") + Variable::make(BFloat(16), "b")).type() == Float(32));
}
