// exp, expm1, log and tanh of float32 over GCC/Clang vectors: the part of
// the prologue of every C++ file Kiln emits that computes transcendental
// functions. dsl/codegen/CodeGen_C.cpp pastes kiln_runtime.h,
// kiln_prologue.h, this file and kiln_shuffles.h at the top of each kernel
// (CodeGen_NPU.cpp the first three, and the NPU simulator includes it for
// TEXP, TLOG and TTANH); the functions build on the prologue's vector
// traits, selects and libm wrappers.
#ifndef KILN_VECTOR_MATH_H
#define KILN_VECTOR_MATH_H

#ifndef KILN_PROLOGUE_H  // pasted in front of this file in emitted kernels
#include "kiln_prologue.h"
#endif

namespace {

// ---- exp, expm1, log and tanh of float32, vectorized ----
//
// The C library computes these one lane at a time; here they are written
// once over GCC vectors (a scalar float is a vector of one lane), so the
// vector body of a loop and its scalar tail give the same bits. Accuracy,
// with and without fast_math: exp within 1 ulp, log within 2, tanh within
// 2.5 (3.5 under fast_math) of the exact result over the whole float range
// (tests/correctness/test_vector_math.cpp sweeps float32 bit patterns at
// 1, 4, 8 and 16 lanes against double-precision libm); inf, nan, 0 and
// denormals behave as in libm. float64 stays lane by lane on the C library.
//
// exp(x):   x = n ln2 + r, |r| <= ln2/2 (ln2 split in two so n ln2 is exact),
//           n rounded by adding 1.5 * 2^23 (no int conversion), e^r by a
//           degree-6 minimax polynomial (error < 2^-29 relative), then
//           scaled by 2^n: one vscalefps with AVX-512, otherwise two
//           multiplications by normal powers of two. The input is clamped to
//           [-104, 89], where the scaling itself gives 0 and inf: no
//           overflow, underflow or nan select.
// log(x):   x = m 2^e with m in [0.75, 1.5) (vgetmantps/vgetexpps with
//           AVX-512, otherwise from the bits), f = m - 1,
//           log(m) = f - f^2/2 + f^3 h(f) with h a degree-6 minimax
//           polynomial (no division); 0, negative, inf and nan in one
//           vfixupimmps with AVX-512, two selects otherwise.
// tanh(x):  u = expm1(2|x|), tanh = sign(x) u / (u + 2); expm1 keeps small
//           arguments accurate (no 1 - 2/(e^2x + 1) cancellation). Under
//           fast_math a cheaper version of the same, within 3.5 ulp
//           (kiln_tanh_fast_f32 below).
//
// fast_math lets g++ reassociate float arithmetic, which would fold
// (x - n ln2_hi) - n ln2_lo into x - n (ln2_hi + ln2_lo) and (y + c) - c into
// y; kiln_opaque hides a value from those rewrites (it emits no instruction).

template<typename V> struct kiln_f32_vector {
    static constexpr int lanes = kiln_lanes<V>;
    typedef float F __attribute__((vector_size(lanes * 4)));
    typedef int32_t I __attribute__((vector_size(lanes * 4)));
};

template<typename F, typename I>
inline F kiln_f32_bits(I i) { return (F)i; }
template<typename F, typename I>
inline I kiln_i32_bits(F f) { return (I)f; }

// The asm is empty; its operand constraint keeps v in a vector register
// (a vector wider than the registers is hidden half by half).
#if defined(__x86_64__)
#define KILN_OPAQUE(v) __asm__("" : "+v"(v))
#elif defined(__aarch64__)
#define KILN_OPAQUE(v) __asm__("" : "+w"(v))
#else
#define KILN_OPAQUE(v) __asm__("" : "+m"(v))
#endif
template<size_t Bytes> struct kiln_f32_of_bytes {
    typedef float F __attribute__((vector_size(Bytes)));
};
template<typename F> inline F kiln_opaque(F v) {
    if constexpr (sizeof(F) == 4) {  // one lane: hide the float itself
        float s = v[0];
        KILN_OPAQUE(s);
        v[0] = s;
    } else if constexpr (sizeof(F) > kiln_vector_register_bytes) {
        typename kiln_f32_of_bytes<sizeof(F) / 2>::F half[2];
        static_assert(sizeof(half) == sizeof(F), "two halves");
        std::memcpy(half, &v, sizeof(F));
        half[0] = kiln_opaque(half[0]);
        half[1] = kiln_opaque(half[1]);
        std::memcpy(&v, half, sizeof(F));
    } else {
        KILN_OPAQUE(v);
    }
    return v;
}
#undef KILN_OPAQUE

// Whether F is a vector the AVX-512 instructions take as a whole: 64
// bytes, or 16 and 32 with AVX512VL (Kiln's avx512 target has it).
template<typename F>
constexpr bool kiln_avx512_vector =
#if defined(__AVX512F__) && defined(__AVX512VL__)
    sizeof(F) == 64 || sizeof(F) == 32 || sizeof(F) == 16;
#elif defined(__AVX512F__)
    sizeof(F) == 64;
#else
    false;
#endif

// min(c, v) and max(c, v) lane by lane, nan in v staying nan: one minps
// or maxps (kiln_min). Written as the select, g++ folds min into the bit
// operations before it (tanh's |x|) as a compare and a masked and, which
// took 15% longer in kiln_tanh_fast_f32's loop (Zen 4), and makes each
// clamp of kiln_exp_f32 a compare into a mask register and a masked move.
template<typename F> inline F kiln_min_of_const(float c, F v) { return kiln_min(F{} + c, v); }
template<typename F> inline F kiln_max_of_const(float c, F v) { return kiln_max(F{} + c, v); }

// Adding kiln_round_magic to |t| < 2^22 rounds it to an integer (ties to
// even) and leaves n + 254 in the low bits of the sum.
constexpr float kiln_round_magic = 12583166.0f;  // 1.5 * 2^23 + 254

// n = round(x / ln2) and r = x - n ln2, for |x| < 2^21; y is the rounding sum.
// c is what the rounding of r lost: r + c is x - n ln2 to about 2^-40.
template<typename F> inline F kiln_exp_reduce(F x, F &r, F &y, F &c) {
    y = x * 1.44269504088896341f + kiln_round_magic;
    F n = kiln_opaque(y) - kiln_round_magic;
    F r_hi = kiln_opaque(x - n * 0.693359375f);  // ln2 high part: 9 significant bits, so n * it is exact
    r = kiln_opaque(r_hi - n * -2.12194440e-4f);  // ln2 low part
    c = kiln_opaque((r_hi - r) - n * -2.12194440e-4f);
    return n;
}

// v * 2^n for integral n in [-150, 128], y as kiln_exp_reduce left it;
// correctly rounded (so also for denormal and infinite results).
template<typename F, typename I> inline F kiln_scale_by_exp2(F v, F n, F y) {
#if defined(__AVX512F__)
    if constexpr (kiln_avx512_vector<F>) {
        if constexpr (sizeof(F) == 64) return __builtin_ia32_scalefps512_mask(v, n, v, (unsigned short)-1, 4);
        if constexpr (sizeof(F) == 32) return __builtin_ia32_scalefps256_mask(v, n, v, (unsigned char)-1);
        if constexpr (sizeof(F) == 16) return __builtin_ia32_scalefps128_mask(v, n, v, (unsigned char)-1);
    }
#endif
    // 2^(n-k) 2^k, both normal: k = -64 below n = -115, else 1 (n = 128 at
    // the top). v 2^(n-k) is exact, so the result is rounded once.
    const I k_bits = n < -115.0f ? I{} + ((-64 + 127) << 23) : I{} + ((1 + 127) << 23);
    // (y << 23) is (n + 254) << 23 modulo 2^32, so this is 2^(n-k).
    const F scale = kiln_f32_bits<F>((I)((kiln_i32_bits<F, I>(y) << 23) - k_bits));
    return kiln_opaque(v * scale) * kiln_f32_bits<F>(k_bits);
}

template<typename F, typename I> inline F kiln_exp_f32(F x) {
    // Clamped (nan stays nan): e^89 overflows and e^-104 rounds to 0.
    F xc = kiln_max_of_const(-104.0f, kiln_min_of_const(89.0f, x));
    F r, y, c;
    F n = kiln_exp_reduce(xc, r, y, c);
    // e^(r+c) = 1 + r + (r^2 g(r) + c), g minimax on |r| <= ln2/2: the
    // small terms first and the 1 last, so that only the last addition
    // costs half an ulp.
    // g in pairs of terms on r^2 (two multiply-adds deep after r^2, not four).
    F r2 = r * r;
    F g = (r2 * 1.363909180e-03f + (r * 8.373751238e-03f + 4.167274246e-02f)) * r2 +
          (r * 1.666646495e-01f + 4.999996702e-01f);
    return kiln_scale_by_exp2<F, I>(1.0f + kiln_opaque(r + kiln_opaque(r2 * g + c)), n, y);
}

// e^x - 1 for x <= 88 (tanh's argument is at most 18.2): e^r - 1 by a
// minimax polynomial, then 2^n (e^r - 1) + (2^n - 1), exact at n = 0.
template<typename F, typename I> inline F kiln_expm1_f32(F x) {
    F xc = kiln_max_of_const(-30.0f, x);  // expm1 is -1 to float precision below -17
    F r, y, c;
    kiln_exp_reduce(xc, r, y, c);  // c is below tanh's accuracy
    F g = r * 1.984588127e-04f + 1.394066846e-03f;
    g = g * r + 8.333389459e-03f;
    g = g * r + 4.166636043e-02f;
    g = g * r + 1.666666637e-01f;
    g = g * r + 5.000000044e-01f;
    F p = r + (r * r) * g;
    F s = kiln_f32_bits<F>((I)((kiln_i32_bits<F, I>(y) - 127) << 23));  // 2^n, n in [-44, 127]
    return s * p + kiln_opaque(s - 1.0f);
}

// x = (1 + f) 2^e with 1 + f in [0.75, 1.5), for positive finite x
// (denormals too): vgetmantps and vgetexpps with AVX-512, otherwise from
// the bits (a denormal scaled by 2^23 first). Both give the same f and e.
template<typename F, typename I> inline F kiln_log_split(F x, F &e) {
#if defined(__AVX512F__)
    if constexpr (kiln_avx512_vector<F>) {
        F m, ex;  // m in [0.75, 1.5) (interval 3, sign of x); ex = floor(log2 x)
        if constexpr (sizeof(F) == 64) {
            m = __builtin_ia32_getmantps512_mask(x, 3, x, (unsigned short)-1, 4);
            ex = __builtin_ia32_getexpps512_mask(x, x, (unsigned short)-1, 4);
        } else if constexpr (sizeof(F) == 32) {
            m = __builtin_ia32_getmantps256_mask(x, 3, x, (unsigned char)-1);
            ex = __builtin_ia32_getexpps256_mask(x, x, (unsigned char)-1);
        } else {
            m = __builtin_ia32_getmantps128_mask(x, 3, x, (unsigned char)-1);
            ex = __builtin_ia32_getexpps128_mask(x, x, (unsigned char)-1);
        }
        e = m < 1.0f ? ex + 1.0f : ex;
        return m - 1.0f;
    }
#endif
    I tiny = x < 1.17549435e-38f;
    I bits = kiln_i32_bits<F, I>(tiny ? x * 8388608.0f : x);
    // Offset the mantissa by 1 - 0.75 before taking the exponent field.
    I adj = bits + (0x3f800000 - 0x3f400000);
    e = __builtin_convertvector((I)(adj >> 23), F) - (tiny ? F{} + (127.0f + 23.0f) : F{} + 127.0f);
    return kiln_f32_bits<F>((I)((adj & 0x007fffff) + 0x3f400000)) - 1.0f;
}

template<typename F, typename I> inline F kiln_log_f32(F x) {
    F ef;
    F f = kiln_log_split<F, I>(x, ef);
    // h = (log(1+f) - f + f^2/2) / f^3, minimax, in pairs of terms on f^2
    // and f^4 (three multiply-adds deep, not six: the loop's chain is
    // latency bound).
    F f2 = f * f;
    F h01 = f * -2.499636064e-01f + 3.333347070e-01f;
    F h23 = f * -1.678881754e-01f + 1.998231969e-01f;
    F h46 = f2 * 5.559725415e-02f + (f * -1.211413719e-01f + 1.490444136e-01f);
    F h = (f2 * f2) * h46 + (f2 * h23 + h01);
    F lm = kiln_opaque(f + f2 * (f * h - 0.5f));
    F result = ef * 0.693359375f + kiln_opaque(lm + ef * -2.12194440e-4f);
    // +inf and nan give themselves; 0 gives -inf, the rest (negative, -inf, nan) nan.
#if defined(__AVX512F__)
    if constexpr (kiln_avx512_vector<F>) {
        // vfixupimmps: per class of x, a 4-bit answer (0 keeps result, 1 is x,
        // 2 x quieted, 3 nan, 4 -inf, 5 +inf); from the high nibble down:
        // positive, negative, +inf, -inf, one, zero, signalling nan, nan.
        const I table = I{} + 0x03530421;
        if constexpr (sizeof(F) == 64)
            return __builtin_ia32_fixupimmps512_mask(result, x, table, 0, (unsigned short)-1, 4);
        if constexpr (sizeof(F) == 32) return __builtin_ia32_fixupimmps256_mask(result, x, table, 0, (unsigned char)-1);
        if constexpr (sizeof(F) == 16) return __builtin_ia32_fixupimmps128_mask(result, x, table, 0, (unsigned char)-1);
    }
#endif
    result = x < __builtin_inff() ? result : x;
    return x > 0.0f ? result : x == 0.0f ? F{} - __builtin_inff() : F{} + __builtin_nanf("");
}

template<typename F, typename I> inline F kiln_tanh_f32(F x) {
    const I sign = kiln_i32_bits<F, I>(x) & INT32_MIN;
    F ax = kiln_f32_bits<F>(kiln_i32_bits<F, I>(x) ^ sign);
    // From 9.02 on, tanh rounds to 1 in float, and so does the formula at 9.1.
    F u = kiln_expm1_f32<F, I>(2.0f * (ax > 9.1f ? F{} + 9.1f : ax));
    // Near 0, u / (u + 2) keeps the relative accuracy; away from it,
    // 1 - 2 / (u + 2) is within an ulp of 1 in absolute terms, so that
    // 1 + tanh(x) for negative x (GELU) does not magnify the error. One
    // division for both.
    I small = ax < 0.55f;
    F t = (small ? u : F{} - 2.0f) / (u + 2.0f) + kiln_f32_bits<F>(~small & 0x3f800000);
    return kiln_f32_bits<F>(kiln_i32_bits<F, I>(t) ^ sign);  // nan stays nan
}

// tanh under fast_math (the code generator calls kiln_tanh_fast there):
// the same u / (u + 2) with u = e^{2|x|} - 1, cheaper. 2|x| = n ln2 + 2r
// with one constant for ln2/2 (its error, n 1e-9, is below tanh's accuracy
// where n is large), e^{2r} - 1 by a degree-6 minimax polynomial (relative
// error 1.3e-8), no compensation term, and one formula for every |x| (no
// select of 1 - 2 / (u + 2) away from 0). About 22 instructions to
// kiln_tanh_f32's 31; within 3.5 ulp over every float32 (kiln_tanh_f32:
// 2.5), 1.5 ulp of 1 near +-1 (1 + tanh(x) for negative x, GELU, loses
// twice kiln_tanh_f32's absolute error).
template<typename F, typename I> inline F kiln_tanh_fast_f32(F x) {
    const I sign = kiln_i32_bits<F, I>(x) & INT32_MIN;
    F a = kiln_f32_bits<F>(kiln_i32_bits<F, I>(x) ^ sign);
    a = kiln_min_of_const(9.1f, a);  // as kiln_tanh_f32: tanh rounds to 1 there; nan stays nan
    F y = a * 2.885390043e+00f + kiln_round_magic;  // n = round(2a / ln2)
    F n = kiln_opaque(y) - kiln_round_magic;
    F r = a - n * 3.465735912e-01f;  // |r| <= ln2/4
    F pm1 = r * (((((r * 8.884814382e-02f + 2.677284479e-01f) * r + 6.666752100e-01f) * r + 1.333323479e+00f) * r +
                  1.999999881e+00f) * r + 2.0f);  // e^{2r} - 1
    F s = kiln_f32_bits<F>((I)((kiln_i32_bits<F, I>(y) - 127) << 23));  // 2^n, n in [0, 27]
    F u = s * pm1 + kiln_opaque(s - 1.0f);  // exact at n = 0
    F t = u / (u + 2.0f);
    return kiln_f32_bits<F>(kiln_i32_bits<F, I>(t) ^ sign);
}

// Dispatch: float32 scalars and vectors to the functions above, float64 to
// the C library lane by lane.
#define KILN_F32_MATH(name, libm)                                                                  \
    template<typename V> inline V kiln_##name(V x) {                                               \
        if constexpr (std::is_same<kiln_elem_t<V>, float>::value) {                                \
            using F = typename kiln_f32_vector<V>::F;                                              \
            using I = typename kiln_f32_vector<V>::I;                                              \
            if constexpr (kiln_lanes<V> == 1) {                                                    \
                F v = {x};                                                                         \
                return kiln_##name##_f32<F, I>(v)[0];                                              \
            } else {                                                                               \
                return kiln_##name##_f32<F, I>(x);                                                 \
            }                                                                                      \
        } else {                                                                                   \
            return kiln_lanewise(x, [](auto v) { return libm(v); });                               \
        }                                                                                          \
    }
KILN_F32_MATH(exp, kiln_libm_exp)
KILN_F32_MATH(log, kiln_libm_log)
KILN_F32_MATH(tanh, kiln_libm_tanh)
KILN_F32_MATH(tanh_fast, kiln_libm_tanh)
#undef KILN_F32_MATH

}  // namespace

#endif  // KILN_VECTOR_MATH_H
