// The prologue of every C++ file Kiln emits (dsl/codegen/CodeGen_C.cpp pastes
// kiln_runtime.h, this file and kiln_shuffles.h, its strided loads and
// interleaves, at the top of each kernel), so that the emitted file
// compiles with only HalideRuntime.h on the include path.
//
// The helpers work on scalars and on GCC/Clang vector types alike; the
// kernel itself typedefs the vector types it uses, e.g.
//   typedef float float32x8 __attribute__((vector_size(32)));
// A vector of N lanes where N is not a power of two is stored in the next
// power of two; loads, stores, gathers and scatters then take N explicitly.
// Bool vectors are masks: signed integer lanes that are all ones (true) or
// zero (false), as GCC's vector comparisons produce.
//
// Semantics are the IR's (dsl/ir/IR.h): integer division and modulo are
// Euclidean (0 <= a % b < |b|) and x / 0 == x % 0 == 0; float modulo is
// a - b * floor(a / b); min and max are select(a < b, a, b) and
// select(a > b, a, b), as in Halide.
#ifndef KILN_PROLOGUE_H
#define KILN_PROLOGUE_H

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <type_traits>
#include <utility>

#include <HalideRuntime.h>

#ifndef KILN_RUNTIME_H  // pasted in front of this file in emitted kernels
#include "kiln_runtime.h"
#endif

namespace {

// ---- Scalars and vectors alike ----

template<typename V, bool Scalar = std::is_arithmetic<V>::value>
struct kiln_vector_traits {
    using elem = V;
    static constexpr int lanes = 1;
};
template<typename V>
struct kiln_vector_traits<V, false> {
    using elem = std::remove_cv_t<std::remove_reference_t<decltype(std::declval<V &>()[0])>>;
    static constexpr int lanes = (int)(sizeof(V) / sizeof(elem));
};
template<typename V> using kiln_elem_t = typename kiln_vector_traits<V>::elem;
template<typename V> constexpr int kiln_lanes = kiln_vector_traits<V>::lanes;

// f applied to every lane of x (or to x itself when it is a scalar), into
// R, a vector of as many lanes (or a scalar); R is V unless given.
template<typename R = void, typename V, typename F>
inline std::conditional_t<std::is_void<R>::value, V, R> kiln_lanewise(V x, F f) {
    if constexpr (kiln_lanes<V> == 1) {
        return f(x);
    } else {
        std::conditional_t<std::is_void<R>::value, V, R> r = {};
        for (int i = 0; i < kiln_lanes<V>; i++) r[i] = f(x[i]);
        return r;
    }
}
template<typename V, typename F>
inline V kiln_lanewise(V x, V y, F f) {
    if constexpr (kiln_lanes<V> == 1) {
        return f(x, y);
    } else {
        V r = {};
        for (int i = 0; i < kiln_lanes<V>; i++) r[i] = f(x[i], y[i]);
        return r;
    }
}

// ---- Building vectors ----

// x - 0 is x for every value (-0 and NaN included); the scalar operand of a
// vector operation is broadcast, which compiles to one broadcast instruction
// (a loop over the lanes became one masked insert per lane).
template<typename V, typename T>
inline V kiln_broadcast(T x) {
    return (kiln_elem_t<V>)x - V{};
}
// A ramp is a broadcast plus a constant vector {0, 1, 2, ...} times the
// stride: a lane-by-lane loop became one insert per lane.
template<typename V, size_t... I>
inline V kiln_iota(std::index_sequence<I...>) {
    return V{(kiln_elem_t<V>)I...};
}
template<typename V, typename T>
inline V kiln_ramp(T base, T stride) {
    const V iota = kiln_iota<V>(std::make_index_sequence<kiln_lanes<V>>());
    return kiln_broadcast<V>(base) + iota * kiln_broadcast<V>(stride);
}

// ---- Memory: dense (p[0..N-1]) and scatter (gathers: after wide vectors) ----
//
// A dense access of a whole vector of the buffer's own element type is a
// typed (unaligned) vector access, not a memcpy: a memcpy may alias any
// object, so after each such store g++ reloaded every loop invariant that
// lives in memory (a parallel loop body's captured variables, the lanes of
// an rfactor intermediate on the stack), and it kept a small stack array
// that is loaded and stored whole in memory instead of in a register.
// Partial vectors (N lanes of a wider type) and element types that differ
// from the buffer's still go through memcpy.

template<typename V, int N = kiln_lanes<V>, typename T>
inline V kiln_load(const T *p) {
    static_assert(sizeof(T) == sizeof(kiln_elem_t<V>), "element size mismatch");
    using E = kiln_elem_t<V>;
    if constexpr (N == kiln_lanes<V> && kiln_lanes<V> > 1 && std::is_same<std::remove_cv_t<T>, E>::value) {
        typedef E U __attribute__((vector_size(sizeof(V)), aligned(alignof(E))));
        return *(const U *)p;
    } else {
        V v = {};
        std::memcpy(&v, p, N * sizeof(T));
        return v;
    }
}
template<int N = 0, typename T, typename V>
inline void kiln_store(T *p, V v) {
    static_assert(sizeof(T) == sizeof(kiln_elem_t<V>), "element size mismatch");
    using E = kiln_elem_t<V>;
    if constexpr ((N == 0 || N == kiln_lanes<V>) && kiln_lanes<V> > 1 && std::is_same<T, E>::value) {
        typedef E U __attribute__((vector_size(sizeof(V)), aligned(alignof(E))));
        *(U *)p = v;
    } else {
        std::memcpy(p, &v, (N ? N : kiln_lanes<V>) * sizeof(T));
    }
}
// Lanes are written in order, so the last of several equal indices wins.
template<int N = 0, typename T, typename I, typename V>
inline void kiln_scatter(T *p, I index, V v) {
    for (int i = 0; i < (N ? N : kiln_lanes<V>); i++) p[index[i]] = (T)v[i];
}

// ---- The C library's math on scalars ----
//
// kiln_libm_NAME(float) and (double) are the C library's NAMEf and NAME,
// through GCC's builtins (the very functions std::NAME calls): including
// <cmath> would cost every JIT compilation a tenth of a second of parsing.
#define KILN_LIBM(name)                                                                            \
    inline float kiln_libm_##name(float v) { return __builtin_##name##f(v); }                      \
    inline double kiln_libm_##name(double v) { return __builtin_##name(v); }
KILN_LIBM(sqrt)
KILN_LIBM(sin)
KILN_LIBM(cos)
KILN_LIBM(tan)
KILN_LIBM(asin)
KILN_LIBM(acos)
KILN_LIBM(atan)
KILN_LIBM(sinh)
KILN_LIBM(cosh)
KILN_LIBM(asinh)
KILN_LIBM(acosh)
KILN_LIBM(atanh)
KILN_LIBM(trunc)
KILN_LIBM(floor)
KILN_LIBM(ceil)
KILN_LIBM(nearbyint)
KILN_LIBM(exp)
KILN_LIBM(log)
KILN_LIBM(tanh)
#undef KILN_LIBM
inline float kiln_libm_pow(float a, float b) { return __builtin_powf(a, b); }
inline double kiln_libm_pow(double a, double b) { return __builtin_pow(a, b); }
inline float kiln_libm_atan2(float a, float b) { return __builtin_atan2f(a, b); }
inline double kiln_libm_atan2(double a, double b) { return __builtin_atan2(a, b); }

// <cmath>'s float constants, which emitted NPU kernels name.
#ifndef INFINITY
#define INFINITY (__builtin_inff())
#endif
#ifndef NAN
#define NAN (__builtin_nanf(""))
#endif

// ---- Vectors wider than a register ----
//
// g++ compiles a comparison of integer vectors wider than the target's
// vector register lane by lane (an extract, a compare and a set per lane),
// and a select on such a mask with an extract and a cmov per lane; float
// min and max become long spills. Split in halves down to the register's
// width, each half is one compare and one blend, e.g. 64 uint16 lanes with
// AVX-512: two vpcmpuw and two masked moves instead of 64 cmov. Kernels
// compare and select through the helpers below; other arithmetic g++
// splits well by itself.
#if defined(__AVX512F__)
constexpr size_t kiln_vector_register_bytes = 64;
#elif defined(__AVX__)
constexpr size_t kiln_vector_register_bytes = 32;
#else
constexpr size_t kiln_vector_register_bytes = 16;
#endif
template<typename V>
constexpr bool kiln_wide = kiln_lanes<V> > 1 && sizeof(V) > kiln_vector_register_bytes;
template<typename V> struct kiln_half {
    typedef kiln_elem_t<V> H __attribute__((vector_size(sizeof(V) / 2)));
};
template<typename V> using kiln_half_t = typename kiln_half<V>::H;
template<typename V> inline kiln_half_t<V> kiln_low_half(const V &v) {
    kiln_half_t<V> h;
    std::memcpy(&h, &v, sizeof(h));
    return h;
}
template<typename V> inline kiln_half_t<V> kiln_high_half(const V &v) {
    kiln_half_t<V> h;
    std::memcpy(&h, (const char *)&v + sizeof(h), sizeof(h));
    return h;
}
template<typename V, typename H> inline V kiln_concat(const H &lo, const H &hi) {
    static_assert(2 * sizeof(H) == sizeof(V), "two halves");
    V v;
    std::memcpy(&v, &lo, sizeof(H));
    std::memcpy((char *)&v + sizeof(H), &hi, sizeof(H));
    return v;
}

// ---- Widening integer lanes ----
//
// kiln_widen<W>(v): v's integer lanes extended to W's wider integer lanes
// (as many), with zeros if v's lanes are unsigned, with copies of the sign
// if they are signed: what C's conversion does. g++ 12 compiles
// __builtin_convertvector to wider lanes piece by piece: uint8x8 to
// uint16x8 is two vpmovzxbw of 4-byte pieces, a shift and a join, uint16x8
// to int32x8 two vpmovzxwd and an insert, so hist_equalize's bytes became
// floats in eleven instructions. x86 widens a register's worth in one
// vpmovzx / vpmovsx, from memory too (SSE4.1: 16-byte results, AVX2: 32,
// AVX-512: 64; bytes to 16 bits there need AVX512BW); other targets convert
// in doubling steps. A W wider than a register stays g++'s conversion, one
// instruction per register.
template<size_t Bytes, bool Signed> struct kiln_int_of_bytes;
template<> struct kiln_int_of_bytes<1, true> { typedef int8_t T; };
template<> struct kiln_int_of_bytes<2, true> { typedef int16_t T; };
template<> struct kiln_int_of_bytes<4, true> { typedef int32_t T; };
template<> struct kiln_int_of_bytes<8, true> { typedef int64_t T; };
template<> struct kiln_int_of_bytes<1, false> { typedef uint8_t T; };
template<> struct kiln_int_of_bytes<2, false> { typedef uint16_t T; };
template<> struct kiln_int_of_bytes<4, false> { typedef uint32_t T; };
template<> struct kiln_int_of_bytes<8, false> { typedef uint64_t T; };
#if defined(__SSE4_1__) && defined(__GNUC__) && !defined(__clang__)
// Whether one vpmovzx / vpmovsx makes a Result-byte register of To-byte
// lanes from From-byte lanes.
constexpr bool kiln_has_pmovx(size_t result, size_t from, size_t to) {
    (void)from, (void)to;
#if defined(__AVX512F__)
#if !defined(__AVX512BW__)
    if (result == 64 && from == 1 && to == 2) return false;
#endif
    if (result == 64) return true;
#endif
#if defined(__AVX2__)
    if (result == 32) return true;
#endif
    return result == 16;
}
// That instruction on c, a register whose low bytes are the lanes.
#define KILN_PMOVX(R, S, D, f, ...)                                                                      \
    if constexpr (sizeof(W) == R && sizeof(E) == S && sizeof(kiln_elem_t<W>) == D)                     \
        return (W)(std::is_signed<E>::value ? __builtin_ia32_pmovsx##f(c __VA_ARGS__) : __builtin_ia32_pmovzx##f(c __VA_ARGS__));
template<typename W, typename E, typename C> inline W kiln_pmovx(C c) {
    KILN_PMOVX(16, 1, 2, bw128) KILN_PMOVX(16, 1, 4, bd128) KILN_PMOVX(16, 1, 8, bq128)
    KILN_PMOVX(16, 2, 4, wd128) KILN_PMOVX(16, 2, 8, wq128) KILN_PMOVX(16, 4, 8, dq128)
#if defined(__AVX2__)
    KILN_PMOVX(32, 1, 2, bw256) KILN_PMOVX(32, 1, 4, bd256) KILN_PMOVX(32, 1, 8, bq256)
    KILN_PMOVX(32, 2, 4, wd256) KILN_PMOVX(32, 2, 8, wq256) KILN_PMOVX(32, 4, 8, dq256)
#endif
#if defined(__AVX512F__)
    typedef int I32 __attribute__((vector_size(64)));
    typedef long long I64 __attribute__((vector_size(64)));
    KILN_PMOVX(64, 1, 4, bd512_mask, , I32{}, (unsigned short)-1)
    KILN_PMOVX(64, 1, 8, bq512_mask, , I64{}, (unsigned char)-1)
    KILN_PMOVX(64, 2, 4, wd512_mask, , I32{}, (unsigned short)-1)
    KILN_PMOVX(64, 2, 8, wq512_mask, , I64{}, (unsigned char)-1)
    KILN_PMOVX(64, 4, 8, dq512_mask, , I64{}, (unsigned char)-1)
#endif
#if defined(__AVX512BW__)
    typedef short I16 __attribute__((vector_size(64)));
    KILN_PMOVX(64, 1, 2, bw512_mask, , I16{}, (unsigned)-1)
#endif
    __builtin_unreachable();  // kiln_has_pmovx said there is one
}
#undef KILN_PMOVX
#else
constexpr bool kiln_has_pmovx(size_t, size_t, size_t) { return false; }
template<typename W, typename E, typename C> W kiln_pmovx(C c);  // never called
#endif
template<typename W, typename V> inline W kiln_widen(V v) {
    typedef kiln_elem_t<V> E;
    constexpr size_t from = sizeof(E), to = sizeof(kiln_elem_t<W>);
    static_assert(kiln_lanes<V> == kiln_lanes<W> && to > from, "wider lanes, as many");
    if constexpr (kiln_wide<W>) {
        // Split into halves here (joined through memcpy), camera_pipe's
        // int16x64 -> int32x64 colour matrix ran 1.7x slower than g++'s
        // own conversion of the whole vector.
        return __builtin_convertvector(v, W);
    } else if constexpr (kiln_has_pmovx(sizeof(W), from, to)) {
        // Char, short or int lanes, as the builtins take them.
        typedef typename kiln_int_of_bytes<from, true>::T L;
        typedef std::conditional_t<from == 1, char, L> C __attribute__((vector_size(sizeof(V) > 16 ? sizeof(V) : 16)));
        if constexpr (sizeof(V) == sizeof(C)) {
            return kiln_pmovx<W, E>((C)v);
        } else {  // v as the first lane of a register (a vmovq or vmovd; a copy through memory stalls)
            typedef typename kiln_int_of_bytes<sizeof(V), true>::T B;
            typedef B R __attribute__((vector_size(sizeof(C))));
            return kiln_pmovx<W, E>((C)R{__builtin_bit_cast(B, v)});
        }
    } else if constexpr (to == 2 * from) {
        return __builtin_convertvector(v, W);
    } else {  // a step to lanes twice as wide, of v's signedness
        typedef typename kiln_int_of_bytes<2 * from, std::is_signed<E>::value>::T N;
        typedef N NV __attribute__((vector_size(2 * sizeof(V))));
        return kiln_widen<W>(__builtin_convertvector(v, NV));
    }
}

// ---- Gathers ----
//
// kiln_gather<V, N>(p, index): p[index[0]], ..., p[index[N - 1]]. Filled
// lane by lane, a register is one chain of dependent inserts (g++ merges
// each lane into the whole register: 16 masked broadcasts in a row for 16
// floats with AVX-512). Filled as 16-byte pieces joined by shuffles, the
// pieces' inserts run side by side: per gathered lane on Zen 4, 0.21 ns
// instead of 0.32 for 16 floats, 0.22 instead of 0.59 for 32 uint16s.
// Two registers wide, each register is filled so and the two joined
// through memory (a shuffle across registers cost more): 64 uint16s with
// AVX-512 0.25 ns instead of 0.63, 64 uint8s with AVX2 0.29 instead of
// 0.50, 32 floats with AVX-512 0.28 instead of 0.40. Wider vectors (32
// floats with AVX2: 0.84 ns instead of 0.44) and partial ones go lane by
// lane, as does everything without SSE4.1 (plain x86-64: no byte insert,
// and the joins went through memory; 32 uint8s took 5.7 ns a lane).
template<typename V, typename H, size_t... I>
inline V kiln_join(H lo, H hi, std::index_sequence<I...>) {
    return __builtin_shufflevector(lo, hi, (int)I...);
}
template<typename V, typename T, typename I>
inline V kiln_gather_piece(const T *p, const I &index, int first) {
    if constexpr (sizeof(V) > 16) {
        typedef kiln_half_t<V> H;
        return kiln_join<V>(kiln_gather_piece<H>(p, index, first),
                            kiln_gather_piece<H>(p, index, first + kiln_lanes<H>),
                            std::make_index_sequence<kiln_lanes<V>>());
    } else {
        V v = {};
        for (int i = 0; i < kiln_lanes<V>; i++) v[i] = (kiln_elem_t<V>)p[index[first + i]];
        return v;
    }
}
#if defined(__SSE4_1__)
constexpr bool kiln_gathers_in_pieces = true;
#else
constexpr bool kiln_gathers_in_pieces = false;
#endif
template<typename V, int N = kiln_lanes<V>, typename T, typename I>
inline V kiln_gather(const T *p, I index) {
    constexpr bool pieces = kiln_gathers_in_pieces && N == kiln_lanes<V> && sizeof(V) > 16;
    if constexpr (pieces && !kiln_wide<V>) {
        return kiln_gather_piece<V>(p, index, 0);
    } else if constexpr (pieces && sizeof(V) == 2 * kiln_vector_register_bytes) {
        typedef kiln_half_t<V> H;
        return kiln_concat<V>(kiln_gather_piece<H>(p, index, 0), kiln_gather_piece<H>(p, index, kiln_lanes<H>));
    } else {
        V v = {};
        for (int i = 0; i < N; i++) v[i] = (kiln_elem_t<V>)p[index[i]];
        return v;
    }
}

// a op b lane by lane: a mask (or a bool for scalars).
#define KILN_COMPARE(name, op)                                                                   \
    template<typename V> inline auto name(V a, V b) {                                          \
        if constexpr (kiln_wide<V>) {                                                          \
            return kiln_concat<decltype(a op b)>(name(kiln_low_half(a), kiln_low_half(b)),      \
                                                 name(kiln_high_half(a), kiln_high_half(b)));   \
        } else {                                                                               \
            return a op b;                                                                     \
        }                                                                                      \
    }
KILN_COMPARE(kiln_eq, ==)
KILN_COMPARE(kiln_ne, !=)
KILN_COMPARE(kiln_lt, <)
KILN_COMPARE(kiln_le, <=)
KILN_COMPARE(kiln_gt, >)
KILN_COMPARE(kiln_ge, >=)
#undef KILN_COMPARE

// c ? a : b lane by lane; c is a mask of a's lane width.
template<typename M, typename V> inline V kiln_select(M c, V a, V b) {
    static_assert(sizeof(M) == sizeof(V), "a mask of the values' lane width");
    if constexpr (kiln_wide<V>) {
        return kiln_concat<V>(kiln_select(kiln_low_half(c), kiln_low_half(a), kiln_low_half(b)),
                              kiln_select(kiln_high_half(c), kiln_high_half(a), kiln_high_half(b)));
    } else {
        return c ? a : b;
    }
}

// ---- Arithmetic with the IR's semantics ----

// min and max of a register of float or double lanes: one minps or maxps
// (minpd, maxpd), which compute a < b ? a : b and a > b ? a : b, nan
// included. Written as those selects, g++ 12 makes a compare into a mask
// and a masked move (max(x, 0): a compare and an and) when one side is a
// constant: the clamps of hist_equalize's output. Scalars stay selects
// (minss measured the same, and the builtin would keep g++ from
// vectorizing a loop of them).
template<bool Max, typename V> inline V kiln_float_min_max(V a, V b) {
    constexpr bool f32 = std::is_same<kiln_elem_t<V>, float>::value;
    if constexpr (kiln_lanes<V> == 1 || !(f32 || std::is_same<kiln_elem_t<V>, double>::value)) {
        return Max ? (a > b ? a : b) : (a < b ? a : b);
#if defined(__AVX512F__)
    } else if constexpr (sizeof(V) == 64) {
        if constexpr (f32) return Max ? __builtin_ia32_maxps512_mask(a, b, a, (unsigned short)-1, 4)
                                      : __builtin_ia32_minps512_mask(a, b, a, (unsigned short)-1, 4);
        else return Max ? __builtin_ia32_maxpd512_mask(a, b, a, (unsigned char)-1, 4)
                        : __builtin_ia32_minpd512_mask(a, b, a, (unsigned char)-1, 4);
#endif
#if defined(__AVX__)
    } else if constexpr (sizeof(V) == 32) {
        if constexpr (f32) return Max ? __builtin_ia32_maxps256(a, b) : __builtin_ia32_minps256(a, b);
        else return Max ? __builtin_ia32_maxpd256(a, b) : __builtin_ia32_minpd256(a, b);
#endif
#if defined(__SSE2__)
    } else if constexpr (sizeof(V) == 16) {
        if constexpr (f32) return Max ? __builtin_ia32_maxps(a, b) : __builtin_ia32_minps(a, b);
        else return Max ? __builtin_ia32_maxpd(a, b) : __builtin_ia32_minpd(a, b);
#endif
    } else {
        return Max ? (a > b ? a : b) : (a < b ? a : b);
    }
}

template<typename T>
inline T kiln_min(T a, T b) {
    if constexpr (kiln_wide<T>) return kiln_concat<T>(kiln_min(kiln_low_half(a), kiln_low_half(b)),
                                                       kiln_min(kiln_high_half(a), kiln_high_half(b)));
    else return kiln_float_min_max<false>(a, b);
}
template<typename T>
inline T kiln_max(T a, T b) {
    if constexpr (kiln_wide<T>) return kiln_concat<T>(kiln_max(kiln_low_half(a), kiln_low_half(b)),
                                                       kiln_max(kiln_high_half(a), kiln_high_half(b)));
    else return kiln_float_min_max<true>(a, b);
}

// The rounding average (a + b + 1) / 2 of unsigned 8- or 16-bit lanes,
// without the wider type the IR computes it in (CodeGen_C.cpp emits it for
// cast<T>((cast<W>(a) + cast<W>(b) + 1) / 2)): one pavgb or pavgw per
// register. Written as in the IR, each average widened both operands to
// two or four registers, added and shifted them there and narrowed back,
// about a dozen instructions. (a | b) - ((a ^ b) >> 1) is the same value
// for other widths and instruction sets.
template<typename V> inline V kiln_rounding_average(V a, V b) {
    using E = kiln_elem_t<V>;
    static_assert(std::is_unsigned<E>::value && sizeof(E) <= 2, "kiln_rounding_average: unsigned 8- or 16-bit lanes");
    constexpr bool bytes = sizeof(E) == 1;
    if constexpr (kiln_wide<V>) {
        return kiln_concat<V>(kiln_rounding_average(kiln_low_half(a), kiln_low_half(b)),
                              kiln_rounding_average(kiln_high_half(a), kiln_high_half(b)));
#if defined(__AVX512BW__)
    } else if constexpr (kiln_lanes<V> > 1 && sizeof(V) == 64) {
        typedef char C __attribute__((vector_size(64)));
        typedef short S __attribute__((vector_size(64)));
        if constexpr (bytes) return (V)__builtin_ia32_pavgb512_mask((C)a, (C)b, (C)a, ~0ull);
        else return (V)__builtin_ia32_pavgw512_mask((S)a, (S)b, (S)a, ~0u);
#endif
#if defined(__AVX2__)
    } else if constexpr (kiln_lanes<V> > 1 && sizeof(V) == 32) {
        typedef char C __attribute__((vector_size(32)));
        typedef short S __attribute__((vector_size(32)));
        if constexpr (bytes) return (V)__builtin_ia32_pavgb256((C)a, (C)b);
        else return (V)__builtin_ia32_pavgw256((S)a, (S)b);
#endif
#if defined(__SSE2__)
    } else if constexpr (kiln_lanes<V> > 1 && sizeof(V) == 16) {
        typedef char C __attribute__((vector_size(16)));
        typedef short S __attribute__((vector_size(16)));
        if constexpr (bytes) return (V)__builtin_ia32_pavgb128((C)a, (C)b);
        else return (V)__builtin_ia32_pavgw128((S)a, (S)b);
#endif
    } else {
        return (V)((a | b) - (V)((a ^ b) >> 1));
    }
}

// Integer division rounding so that the remainder is never negative; x / 0 == 0.
template<typename T>
inline T kiln_div(T a, T b) {
    using E = kiln_elem_t<T>;
    static_assert(std::is_integral<E>::value, "kiln_div is for integers");
    if constexpr (kiln_lanes<T> == 1) {
        if (b == 0) return 0;
        if constexpr (std::is_signed<E>::value) {
            if (b == -1) return (T)(0u - (std::make_unsigned_t<T>)a);  // wraps for the minimum
            T q = (T)(a / b), r = (T)(a % b);
            if (r < 0) q = b > 0 ? (T)(q - 1) : (T)(q + 1);
            return q;
        } else {
            return (T)(a / b);
        }
    } else {
        // Without a per-lane branch: divide by 1 where b == 0 and clear
        // those lanes afterwards.
        const T zero = {};
        const T b_is_zero = (T)(b == zero);  // all ones where b == 0
        const T safe_b = b - b_is_zero;      // b, or 1 where b == 0
        if constexpr (std::is_signed<E>::value) {
            // Where a < 0, divide a + 1 (truncating), then step one away
            // from zero: -1 for b > 0, +1 for b < 0. a + 1 never overflows
            // and min / -1 cannot occur; the step wraps for min / -1 (as
            // the scalar path does), so it is taken in unsigned lanes.
            typedef std::make_unsigned_t<E> U __attribute__((vector_size(sizeof(T))));
            const T a_neg = (T)(a < zero);  // -1 where a < 0
            const T b_neg = (T)(b < zero);
            T q = (a - a_neg) / safe_b;
            q = (T)((U)q + (U)(a_neg & (-1 - 2 * b_neg)));
            return q & ~b_is_zero;
        } else {
            return (a / safe_b) & ~b_is_zero;
        }
    }
}

// Shifts of integers: a negative amount shifts the other way, and an amount
// of the type's width or more shifts every bit out (an arithmetic right
// shift of a negative value leaves -1). Left shifts are done unsigned, where
// they wrap.
template<typename E, typename S>
inline E kiln_shift_lane(E a, S b, bool left) {
    constexpr int bits = 8 * sizeof(E);
    int n;
    if constexpr (std::is_signed<S>::value) {
        if (b < 0) left = !left;
        n = b <= -bits || b >= bits ? bits : (int)(b < 0 ? -b : b);
    } else {
        n = b >= (S)bits ? bits : (int)b;
    }
    if (left) return n >= bits ? (E)0 : (E)((std::make_unsigned_t<E>)a << n);
    if (n >= bits) return std::is_signed<E>::value && a < 0 ? (E)-1 : (E)0;
    return (E)(a >> n);
}
// The amount has a's width and its own signedness.
template<typename T, typename S> inline T kiln_shift(T a, S b, bool left) {
    if constexpr (kiln_lanes<T> == 1) {
        return kiln_shift_lane(a, b, left);
    } else {
        T r = a;
        for (int i = 0; i < kiln_lanes<T>; i++) r[i] = kiln_shift_lane(a[i], b[i], left);
        return r;
    }
}
template<typename T, typename S> inline T kiln_shl(T a, S b) { return kiln_shift(a, b, true); }
template<typename T, typename S> inline T kiln_shr(T a, S b) { return kiln_shift(a, b, false); }
template<typename T> inline T kiln_not(T a) { return (T)~a; }

// Bit counts in the integer's own width; leading and trailing zeros of 0 are the width.
template<typename E> inline unsigned long long kiln_bits_of(E v) { return (std::make_unsigned_t<E>)v; }
template<typename T> inline T kiln_count_leading_zeros(T x) {
    return kiln_lanewise(x, [](auto v) {
        constexpr int bits = 8 * sizeof(v);
        return (decltype(v))(v == 0 ? bits : __builtin_clzll(kiln_bits_of(v)) - (64 - bits));
    });
}
template<typename T> inline T kiln_count_trailing_zeros(T x) {
    return kiln_lanewise(x, [](auto v) { return (decltype(v))(v == 0 ? 8 * sizeof(v) : __builtin_ctzll(kiln_bits_of(v))); });
}
template<typename T> inline T kiln_popcount(T x) {
    return kiln_lanewise(x, [](auto v) { return (decltype(v))__builtin_popcountll(kiln_bits_of(v)); });
}

// Euclidean remainder of integers (0 <= r < |b|, x % 0 == 0); for floats
// a - b * floor(a / b).
template<typename T>
inline T kiln_mod(T a, T b) {
    using E = kiln_elem_t<T>;
    if constexpr (std::is_floating_point<E>::value) {
        return a - b * kiln_lanewise(a / b, [](E v) { return kiln_libm_floor(v); });
    } else if constexpr (kiln_lanes<T> == 1) {
        if (b == 0) return 0;
        if constexpr (std::is_signed<E>::value) {
            if (b == -1) return 0;
            T r = (T)(a % b);
            if (r < 0) r = b > 0 ? (T)(r + b) : (T)(r - b);
            return r;
        } else {
            return (T)(a % b);
        }
    } else {
        // a - q * b is in range, but q * b need not be (-128 % 3 in int8:
        // q * b = -129): unsigned lanes wrap where signed ones overflow.
        typedef std::make_unsigned_t<E> U __attribute__((vector_size(sizeof(T))));
        const T zero = {};
        return (T)((U)a - (U)kiln_div(a, b) * (U)b) & ~(T)(b == zero);
    }
}

// ---- sqrt and rounding to an integer: one instruction per register ----
//
// The C library's sqrt, floor, ceil and nearbyint are exact operations
// (IEEE square root; rounding to an integral value), and so are the vector
// instructions: sqrtps and roundps (rndscaleps with AVX-512) give every lane
// the bits the library gives it alone, without the call per lane that g++
// makes of sqrtf (it must set errno for negative inputs). Op is
// kiln_op_sqrt or a rounding immediate: 9 towards -inf, 10 towards +inf,
// 12 the current mode (ties to even by default), each with the precision
// exception suppressed. Vectors wider than a register split in halves;
// other widths and instruction sets go lane by lane.
constexpr int kiln_op_sqrt = -1;
template<int Op, typename V, typename F> inline V kiln_exact_math(V x, F lane) {
    typedef kiln_elem_t<V> E;
    constexpr bool f32 = std::is_same<E, float>::value;
    if constexpr (kiln_lanes<V> == 1 || !(f32 || std::is_same<E, double>::value)) {
        return kiln_lanewise(x, lane);
    } else if constexpr (kiln_wide<V>) {
        return kiln_concat<V>(kiln_exact_math<Op>(kiln_low_half(x), lane),
                              kiln_exact_math<Op>(kiln_high_half(x), lane));
#if defined(__AVX512F__)
    } else if constexpr (sizeof(V) == 64) {
        if constexpr (Op == kiln_op_sqrt && f32) return __builtin_ia32_sqrtps512_mask(x, x, (unsigned short)-1, 4);
        else if constexpr (Op == kiln_op_sqrt) return __builtin_ia32_sqrtpd512_mask(x, x, (unsigned char)-1, 4);
        else if constexpr (f32) return __builtin_ia32_rndscaleps_mask(x, Op, x, (unsigned short)-1, 4);
        else return __builtin_ia32_rndscalepd_mask(x, Op, x, (unsigned char)-1, 4);
#endif
#if defined(__AVX__)
    } else if constexpr (sizeof(V) == 32) {
        if constexpr (Op == kiln_op_sqrt && f32) return __builtin_ia32_sqrtps256(x);
        else if constexpr (Op == kiln_op_sqrt) return __builtin_ia32_sqrtpd256(x);
        else if constexpr (f32) return __builtin_ia32_roundps256(x, Op);
        else return __builtin_ia32_roundpd256(x, Op);
#endif
#if defined(__SSE4_1__)
    } else if constexpr (sizeof(V) == 16) {
        if constexpr (Op == kiln_op_sqrt && f32) return __builtin_ia32_sqrtps(x);
        else if constexpr (Op == kiln_op_sqrt) return __builtin_ia32_sqrtpd(x);
        else if constexpr (f32) return __builtin_ia32_roundps(x, Op);
        else return __builtin_ia32_roundpd(x, Op);
#endif
    } else {
        return kiln_lanewise(x, lane);
    }
}
template<typename V> inline V kiln_sqrt(V x) {
    return kiln_exact_math<kiln_op_sqrt>(x, [](auto v) { return kiln_libm_sqrt(v); });
}
template<typename V> inline V kiln_floor(V x) {
    return kiln_exact_math<9>(x, [](auto v) { return kiln_libm_floor(v); });
}
template<typename V> inline V kiln_ceil(V x) {
    return kiln_exact_math<10>(x, [](auto v) { return kiln_libm_ceil(v); });
}
// Ties to even (the default rounding mode), as Halide's round().
template<typename V> inline V kiln_round(V x) {
    return kiln_exact_math<12>(x, [](auto v) { return kiln_libm_nearbyint(v); });
}
template<typename V> inline V kiln_trunc(V x) {
    return kiln_exact_math<11>(x, [](auto v) { return kiln_libm_trunc(v); });
}

// ---- Other math on float vectors, lane by lane (scalars call kiln_libm_ directly) ----

#define KILN_LANEWISE_LIBM(name) \
    template<typename V> inline V kiln_##name(V x) { return kiln_lanewise(x, [](auto v) { return kiln_libm_##name(v); }); }
KILN_LANEWISE_LIBM(sin)
KILN_LANEWISE_LIBM(cos)
KILN_LANEWISE_LIBM(tan)
KILN_LANEWISE_LIBM(asin)
KILN_LANEWISE_LIBM(acos)
KILN_LANEWISE_LIBM(atan)
KILN_LANEWISE_LIBM(sinh)
KILN_LANEWISE_LIBM(cosh)
KILN_LANEWISE_LIBM(asinh)
KILN_LANEWISE_LIBM(acosh)
KILN_LANEWISE_LIBM(atanh)
#undef KILN_LANEWISE_LIBM
template<typename V> inline V kiln_pow(V x, V y) {
    return kiln_lanewise(x, y, [](auto a, auto b) { return kiln_libm_pow(a, b); });
}
template<typename V> inline V kiln_atan2(V y, V x) {
    return kiln_lanewise(y, x, [](auto a, auto b) { return kiln_libm_atan2(a, b); });
}

// ---- exp, expm1, log and tanh of float32: kiln_vector_math.h ----

// ---- Prefetch (Func::prefetch) ----
//
// Every cache line of a box of elements starting at p into the cache:
// box = {extent_0, stride_0, extent_1, stride_1, ...} in elements,
// innermost dimension first. A prefetch never faults, so a box partly
// outside its buffer (PrefetchBoundStrategy::NonFaulting) is harmless.

template<typename T>
inline void kiln_prefetch_box(const T *p, const int32_t *box, int d) {
    const int32_t extent = box[2 * d], stride = box[2 * d + 1];
    if (d > 0) {
        for (int32_t i = 0; i < extent; i++) kiln_prefetch_box(p + (int64_t)i * stride, box, d - 1);
    } else if (stride == 1) {
        const char *c = (const char *)p;
        const int64_t bytes = (int64_t)extent * (int64_t)sizeof(T);
        for (int64_t b = 0; b < bytes; b += 64) __builtin_prefetch(c + b);
        if (bytes > 0) __builtin_prefetch(c + bytes - 1);
    } else {
        for (int32_t i = 0; i < extent; i++) __builtin_prefetch(p + (int64_t)i * stride);
    }
}
template<typename T, size_t N>
inline void kiln_prefetch(const T *p, const int32_t (&box)[N]) {
    static_assert(N % 2 == 0, "kiln_prefetch: an extent and a stride per dimension");
    kiln_prefetch_box(p, box, (int)N / 2 - 1);
}

// ---- Storage of intermediates ----

// A 64-byte-aligned heap block of `count` elements of `elem_size` bytes
// (a cache line, and one AVX-512 vector: dense vector loads from the start of
// a row never straddle two lines), freed when it goes out of scope (also on
// an early error return). ptr is null when the allocation failed.
// Blocks of more than INT32_MAX elements are refused: kernels index with int32.
// The blocks come from the runtime's per-thread caches (kiln_heap_alloc,
// kiln_runtime.cpp), out of line: inlined at every intermediate, g++ -O3
// unrolled the caches' loops into each kernel, which had cost a GEMM with
// four intermediates half of its compile time.
struct kiln_heap {
    void *ptr = nullptr;
    long long count = 0, bytes = 0;
    size_t size = 0;  // of the block ptr points to
    kiln_heap(long long n, size_t elem_size) : count(n < 0 ? 0 : n) {
        if ((unsigned long long)count > (1ull << 62) / elem_size) {
            bytes = 1ll << 62;
            return;
        }
        bytes = count * (long long)elem_size;
        if (count > INT32_MAX) return;
        ptr = kiln_heap_alloc((size_t)((bytes + 63) / 64 * 64 + 64), &size);
    }
    ~kiln_heap() {
        if (ptr) kiln_heap_free(ptr, size);
    }
    kiln_heap(const kiln_heap &) = delete;
    kiln_heap &operator=(const kiln_heap &) = delete;
};

// The argument checks (kiln_check_buffer, kiln_check_no_overlap) are the
// runtime's (kiln_runtime.cpp), compiled once rather than in every kernel.

}  // namespace

#endif  // KILN_PROLOGUE_H
