// 16-bit floats as bits: float16 (IEEE binary16: 1 sign, 5 exponent and 10
// mantissa bits) and bfloat16 (the top half of a float32: 1, 8 and 7).
//
// Both are held as uint16_t. Narrowing rounds to nearest, ties to even;
// values past the largest finite one become infinity; subnormals are kept;
// a NaN stays a NaN, made quiet, with the top bits of its payload. Widening
// to float32 is exact.
//
//   kiln_float16_from_double(1.0 / 3)  ->  0x3555 (0.333251953125)
//   kiln_bfloat16_from_float(1.00390625f) ->  0x3f80 (1.0: the tie goes to even)
//
// One copy serves the compiler (dsl/include/kiln/Float16.h includes it),
// host code, and every kernel that reads or writes a 16-bit float
// (dsl/codegen/CodeGen_Float16.cpp pastes it after the prologue). After the
// prologue it also defines the vector conversions kernels call: F16C's
// vcvtph2ps/vcvtps2ph (_mm256_cvtph_ps, _mm512_cvtps_ph, ...) where the
// target has them, these scalar routines lane by lane otherwise.
#ifndef KILN_FLOAT16_H
#define KILN_FLOAT16_H

#include <cstdint>
#include <cstring>

// |d| rounded to a float of `ebits` exponent and `mbits` mantissa bits, as bits.
inline uint16_t kiln_small_float_from_double(double d, int ebits, int mbits) {
    uint64_t x;
    std::memcpy(&x, &d, sizeof(x));
    const uint32_t sign = (uint32_t)(x >> 63) << (ebits + mbits);
    const uint64_t ax = x & 0x7fffffffffffffffull;
    const uint32_t inf = ((1u << ebits) - 1) << mbits;
    if (ax > 0x7ff0000000000000ull)  // NaN: quiet, with the payload's top bits
        return (uint16_t)(sign | inf | (1u << (mbits - 1)) | (uint32_t)((ax >> (52 - mbits)) & ((1u << mbits) - 1)));
    const int bias = (1 << (ebits - 1)) - 1, min_exp = 1 - bias;
    const int e = (int)(ax >> 52) - 1023;  // a double subnormal is far below the result's range
    // The result counts units of 2^(max(e, min_exp) - mbits): drop s bits of the 53-bit significand.
    const int s = 52 - mbits + (e < min_exp ? min_exp - e : 0);
    if (s > 53) return (uint16_t)sign;  // below half the smallest subnormal (zeros too)
    const uint64_t m = (ax & 0xfffffffffffffull) | (1ull << 52);
    uint64_t q = m >> s;
    const uint64_t rem = m & ((1ull << s) - 1), half = 1ull << (s - 1);
    if (rem > half || (rem == half && (q & 1))) q++;
    // A normal's exponent field is added to q's leading one (a carry moves it up).
    const uint64_t bits = e < min_exp ? q : ((uint64_t)(e + bias - 1) << mbits) + q;
    return (uint16_t)(sign | (bits >= inf ? inf : (uint32_t)bits));
}

inline uint16_t kiln_float16_from_double(double d) { return kiln_small_float_from_double(d, 5, 10); }
inline uint16_t kiln_bfloat16_from_double(double d) { return kiln_small_float_from_double(d, 8, 7); }
inline uint16_t kiln_float16_from_float(float f) { return kiln_small_float_from_double((double)f, 5, 10); }

// The top half of f's bits, rounded by adding just under half of the lower
// half (one more when the kept part is odd); a NaN keeps its top bits, quiet.
inline uint16_t kiln_bfloat16_from_float(float f) {
    uint32_t x;
    std::memcpy(&x, &f, sizeof(x));
    if ((x & 0x7fffffffu) > 0x7f800000u) return (uint16_t)((x >> 16) | 0x40);
    return (uint16_t)((x + 0x7fffu + ((x >> 16) & 1)) >> 16);
}

inline float kiln_float16_to_float(uint16_t h) {
    const uint32_t sign = (uint32_t)(h & 0x8000) << 16, e = (h >> 10) & 0x1f, m = h & 0x3ff;
    uint32_t x;
    if (e == 0) {  // zero or subnormal: m units of 2^-24, exact in float
        float r = (float)m * 5.9604644775390625e-8f;
        return sign ? -r : r;
    }
    if (e == 31) x = sign | 0x7f800000u | (m << 13) | (m ? 0x400000u : 0);  // infinity, or a quiet NaN
    else x = sign | ((e + 112) << 23) | (m << 13);
    float f;
    std::memcpy(&f, &x, sizeof(f));
    return f;
}

inline float kiln_bfloat16_to_float(uint16_t b) {
    const uint32_t x = (uint32_t)b << 16;
    float f;
    std::memcpy(&f, &x, sizeof(f));
    return f;
}

#if defined(KILN_PROLOGUE_H)
namespace {

// ---- Vector conversions of kernels (after the prologue: kiln_lanes) ----
//
// kiln_cvt_f16_f32<VF>(h): the float32 vector VF of the float16 bits h (a
// uint16 vector of as many lanes, or a scalar), and kiln_cvt_f32_f16<VH>(f)
// back; likewise kiln_cvt_bf16_f32 and kiln_cvt_f32_bf16 by integer lanes.
// A double narrows lane by lane (kiln_cvt_f64_f16, kiln_cvt_f64_bf16).

// Lanes [i, i + K) of v as a K-lane vector T of the same element bits, and back.
template<typename T, typename V>
inline T kiln_lanes_at(const V &v, int i) {
    T r;
    std::memcpy(&r, (const char *)&v + i * (sizeof(V) / kiln_lanes<V>), sizeof(T));
    return r;
}
template<typename T, typename V>
inline void kiln_set_lanes_at(V &v, int i, const T &x) {
    std::memcpy((char *)&v + i * (sizeof(V) / kiln_lanes<V>), &x, sizeof(T));
}

typedef short kiln_i16x8 __attribute__((vector_size(16)));
typedef short kiln_i16x16 __attribute__((vector_size(32)));
typedef float kiln_f32x8 __attribute__((vector_size(32)));
typedef float kiln_f32x16 __attribute__((vector_size(64)));

template<typename VF, typename VH>
inline VF kiln_cvt_f16_f32(VH h) {
    constexpr int N = kiln_lanes<VF>;
    if constexpr (N == 1) {
        return kiln_float16_to_float(h);
    } else {
        VF r = {};
        int i = 0;
#if defined(__AVX512F__)
        for (; i + 16 <= N; i += 16)  // _mm512_cvtph_ps
            kiln_set_lanes_at(r, i, __builtin_ia32_vcvtph2ps512_mask(kiln_lanes_at<kiln_i16x16>(h, i), kiln_f32x16{},
                                                                    (unsigned short)-1, 4));
#endif
#if defined(__F16C__)
        for (; i + 8 <= N; i += 8)  // _mm256_cvtph_ps
            kiln_set_lanes_at(r, i, __builtin_ia32_vcvtph2ps256(kiln_lanes_at<kiln_i16x8>(h, i)));
#endif
        for (; i < N; i++) r[i] = kiln_float16_to_float(h[i]);
        return r;
    }
}

template<typename VH, typename VF>
inline VH kiln_cvt_f32_f16(VF f) {
    constexpr int N = kiln_lanes<VF>;
    if constexpr (N == 1) {
        return kiln_float16_from_float(f);
    } else {
        VH r = {};
        int i = 0;
#if defined(__AVX512F__)
        for (; i + 16 <= N; i += 16)  // _mm512_cvtps_ph(f, _MM_FROUND_TO_NEAREST_INT): ties to even
            kiln_set_lanes_at(r, i, __builtin_ia32_vcvtps2ph512_mask(kiln_lanes_at<kiln_f32x16>(f, i), 0,
                                                                    kiln_i16x16{}, (unsigned short)-1));
#endif
#if defined(__F16C__)
        for (; i + 8 <= N; i += 8)  // _mm256_cvtps_ph(f, _MM_FROUND_TO_NEAREST_INT)
            kiln_set_lanes_at(r, i, __builtin_ia32_vcvtps2ph256(kiln_lanes_at<kiln_f32x8>(f, i), 0));
#endif
        for (; i < N; i++) r[i] = kiln_float16_from_float(f[i]);
        return r;
    }
}

template<typename VF, typename VH>
inline VF kiln_cvt_bf16_f32(VH b) {
    if constexpr (kiln_lanes<VF> == 1) {
        return kiln_bfloat16_to_float(b);
    } else {
        typedef uint32_t U __attribute__((vector_size(sizeof(VF))));
        U x = __builtin_convertvector(b, U) << 16;
        VF r;
        std::memcpy(&r, &x, sizeof(r));
        return r;
    }
}

template<typename VH, typename VF>
inline VH kiln_cvt_f32_bf16(VF f) {
    if constexpr (kiln_lanes<VF> == 1) {
        return kiln_bfloat16_from_float(f);
    } else {
        typedef uint32_t U __attribute__((vector_size(sizeof(VF))));
        U x;
        std::memcpy(&x, &f, sizeof(x));
        U nan = (U)((x & 0x7fffffffu) > 0x7f800000u);
        U rounded = (x + 0x7fffu + ((x >> 16) & 1)) >> 16, quiet = (x >> 16) | 0x40;
        return __builtin_convertvector((nan & quiet) | (~nan & rounded), VH);
    }
}

template<typename VH, typename VD>
inline VH kiln_cvt_f64_f16(VD d) {
    return kiln_lanewise<VH>(d, [](double x) { return kiln_float16_from_double(x); });
}
template<typename VH, typename VD>
inline VH kiln_cvt_f64_bf16(VD d) {
    return kiln_lanewise<VH>(d, [](double x) { return kiln_bfloat16_from_double(x); });
}

}  // namespace
#endif  // KILN_PROLOGUE_H

#endif  // KILN_FLOAT16_H
