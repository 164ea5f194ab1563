// The shuffles of the prologue of every C++ file Kiln emits: loads that
// read whole vectors and rearrange their lanes, and the interleave of two
// vectors. dsl/codegen/CodeGen_C.cpp pastes kiln_runtime.h, kiln_prologue.h
// and then this file at the top of each kernel; the helpers build on the
// prologue's vector traits, dense loads and halves of wide vectors.
#ifndef KILN_SHUFFLES_H
#define KILN_SHUFFLES_H

#ifndef KILN_PROLOGUE_H  // pasted in front of this file in emitted kernels
#include "kiln_prologue.h"
#endif

namespace {

// ---- Strided and repeated-lane loads: dense loads and shuffles ----
//
// What vectorize makes of f(2 * x) and f(x / 2): lanes that a gather would
// read one at a time, read instead as whole vectors and rearranged with
// constant shuffles (one or two instructions each). Neither touches an
// element the lanes do not read, so both are safe at the very end (or
// start) of a buffer. V has N lanes, a power of two.

// kiln_load_stride<V, S>(p): p[0], p[S], ..., p[S * (N - 1)], 2 <= S <= N.
// S dense vectors cover them: vector j < S - 1 starts at p + j * N, the last
// ends at the last element read (overlapping the one before it). Two-input
// shuffles merge them one at a time.
template<int N, int S>
constexpr int kiln_stride_start(int j) {
    return j < S - 1 ? j * N : S * (N - 1) + 1 - N;
}
// Lane i of the result after merging vector J (the second operand; for
// J == 1 the first operand is vector 0).
template<int N, int S, int J>
constexpr int kiln_stride_lane(int i) {
    const int j = S * i / N < S - 1 ? S * i / N : S - 1, at = S * i - kiln_stride_start<N, S>(j);
    if (J == 1) return j == 0 ? at : j == 1 ? N + at : 0;
    return j == J ? N + at : i;
}
template<typename V, int S, int J, size_t... I>
inline V kiln_stride_merge(V so_far, V v, std::index_sequence<I...>) {
    return __builtin_shufflevector(so_far, v, kiln_stride_lane<kiln_lanes<V>, S, J>((int)I)...);
}
template<typename V, int S, int J = 1, typename T>
inline V kiln_load_stride(const T *p, V so_far) {
    constexpr int N = kiln_lanes<V>;
    V v = kiln_load<V>(p + kiln_stride_start<N, S>(J));
    V merged = kiln_stride_merge<V, S, J>(so_far, v, std::make_index_sequence<N>());
    if constexpr (J + 1 < S) return kiln_load_stride<V, S, J + 1>(p, merged);
    else return merged;
}
template<typename V, int S, typename T>
inline V kiln_load_stride(const T *p) {
    static_assert(S >= 2 && S <= kiln_lanes<V>, "kiln_load_stride: a stride from 2 to the lanes");
    return kiln_load_stride<V, S, 1>(p, kiln_load<V>(p));
}

// kiln_load_repeat<V, D>(p, b): lanes p[(b + i) / D] (floor division),
// each element repeated D times; D a power of two, at most N / 2. With
// q = b / D and r = b - q * D, the lanes read the M = (r + N - 1) / D + 1
// elements p[q .. q + M - 1], N / D or N / D + 1 of them: two dense loads of
// N / D lanes, the first at p[q] and the second ending at p[q + M - 1], and
// one shuffle, chosen by r.
template<typename V, int D, int R, typename H, size_t... I>
inline V kiln_repeat_lanes(H lo, H hi, std::index_sequence<I...>) {
    constexpr int N = kiln_lanes<V>, L = N / D, M = (R + N - 1) / D + 1;
    return __builtin_shufflevector(lo, hi, (int)((R + I) / D < L ? (R + I) / D : L + (R + I) / D - (M - L))...);
}
template<typename V, int D, int R = 0, typename T>
inline V kiln_load_repeat_at(const T *p, int r) {
    constexpr int N = kiln_lanes<V>, L = N / D, M = (R + N - 1) / D + 1;
    if constexpr (R + 1 < D) {
        if (r != R) return kiln_load_repeat_at<V, D, R + 1>(p, r);
    }
    using E = kiln_elem_t<V>;
    typedef E H __attribute__((vector_size(sizeof(E) * L)));
    return kiln_repeat_lanes<V, D, R>(kiln_load<H>(p), kiln_load<H>(p + (M - L)), std::make_index_sequence<N>());
}
template<typename V, int D, typename T, typename I>
inline V kiln_load_repeat(const T *p, I b) {
    static_assert(D >= 2 && (D & (D - 1)) == 0 && 2 * D <= kiln_lanes<V>,
                  "kiln_load_repeat: a power-of-two divisor, at most half the lanes");
    I q = b / D, r = b - q * D;
    if (r < 0) q -= 1, r += D;
    return kiln_load_repeat_at<V, D>(p + q, (int)r);
}

// ---- Interleaving two vectors ----
//
// What a select on the parity of the vectorized variable becomes
// (dsl/lower/InterleaveSelects.h): the even lanes computed as one vector
// and the odd lanes as another, then merged. kiln_interleave<V>(a, b), for
// a and b of half V's lanes: a[0], b[0], a[1], b[1], ... Wider than a
// register, each half of the result is one two-input shuffle (g++ spread
// one shuffle of the whole width over many instructions). When the
// operands fit a register, each half of the result shuffles the whole
// operands (lanes 0..N/2 - 1 of a and b for the low half, the rest for the
// high one): taking the operands' halves first went through the stack, a
// store of each operand and two narrower reloads, because g++ keeps a
// value whose bytes are copied out in memory.
template<typename V, typename H, size_t... I>
inline V kiln_interleave_lanes(H a, H b, std::index_sequence<I...>) {
    return __builtin_shufflevector(a, b, (int)(I % 2 ? kiln_lanes<H> + I / 2 : I / 2)...);
}
// Lanes K * N .. K * N + N - 1 of the interleave of a and b, N their lanes.
template<int K, typename H, size_t... I>
inline H kiln_interleave_part(H a, H b, std::index_sequence<I...>) {
    constexpr int N = kiln_lanes<H>;
    return __builtin_shufflevector(a, b, (int)((K * N + I) % 2 ? N + (K * N + I) / 2 : (K * N + I) / 2)...);
}
template<typename V, typename H>
inline V kiln_interleave(H a, H b) {
    static_assert(2 * kiln_lanes<H> == kiln_lanes<V>, "kiln_interleave: two halves of the result");
    if constexpr (kiln_wide<V> && !kiln_wide<H> && kiln_lanes<H> >= 2) {
        constexpr auto lanes = std::make_index_sequence<kiln_lanes<H>>();
        return kiln_concat<V>(kiln_interleave_part<0>(a, b, lanes), kiln_interleave_part<1>(a, b, lanes));
    } else if constexpr (kiln_wide<V> && kiln_lanes<H> >= 2) {
        return kiln_concat<V>(kiln_interleave<H>(kiln_low_half(a), kiln_low_half(b)),
                              kiln_interleave<H>(kiln_high_half(a), kiln_high_half(b)));
    } else {
        return kiln_interleave_lanes<V>(a, b, std::make_index_sequence<kiln_lanes<V>>());
    }
}

// ---- A table of bytes read with shuffles ----
//
// kiln_lookup<V, S>(table, index): table[index[i]] for 64 lanes of bytes
// from a table of S bytes, S a multiple of 128 (a curve or a histogram's
// map held on the stack). With AVX-512 VBMI each 128-byte block is one
// two-register byte permute of the indices' low 7 bits, kept where the
// indices' high bits name the block: S / 128 permutes and blends instead of
// 64 scalar loads. Indices are in [0, S), as every read of the table is;
// otherwise (and without VBMI) a gather. The indices are 32-bit, or the
// 16- or 8-bit value a 32-bit index was cast from (narrowed to bytes from
// two registers or one instead of four).
template<typename V, int S, typename T, typename I>
inline V kiln_lookup(const T *table, I index) {
    typedef kiln_elem_t<I> E;
    static_assert(sizeof(T) == 1 && kiln_lanes<V> == 64 && S % 128 == 0, "kiln_lookup: 64 bytes from 128-byte blocks");
    static_assert(kiln_lanes<I> == 64 && std::is_integral<E>::value && sizeof(E) != 8, "kiln_lookup: 64 integer indices");
#if defined(__AVX512VBMI__)
    constexpr int per = 64 / sizeof(E);  // indices in a 64-byte register
    typedef uint8_t B __attribute__((vector_size(64)));
    typedef E P __attribute__((vector_size(64)));
    typedef uint8_t Q __attribute__((vector_size(per)));
    B low, block;
    for (int c = 0; c < 64 / per; c++) {  // narrowed a register at a time (g++ splits wider vectors lane by lane)
        P part;
        std::memcpy(&part, (const char *)&index + 64 * c, 64);
        Q l = __builtin_convertvector(part & 127, Q), h = __builtin_convertvector(part >> 7, Q);
        std::memcpy((char *)&low + per * c, &l, per);
        std::memcpy((char *)&block + per * c, &h, per);
    }
    B r = {};
    for (int k = 0; k < S / 128; k++) {
        B a, b;
        std::memcpy(&a, table + 128 * k, 64);
        std::memcpy(&b, table + 128 * k + 64, 64);
        r = block == (uint8_t)k ? __builtin_shuffle(a, b, low) : r;
    }
    return (V)r;
#else
    return kiln_gather<V>(table, index);
#endif
}

}  // namespace

#endif  // KILN_SHUFFLES_H
