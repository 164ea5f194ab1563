// 16-bit floats against Halide 14: arithmetic rounded after every operation
// and conversions from float32, on float16 and bfloat16 inputs of every
// pattern, vectorized. Both libraries hold the same bits in their buffers;
// they agree on every result but NaNs (compare_bits).
#include "diff.h"

#include <type_traits>

namespace {

const int kAll = 65536;

template<typename T>
kiln::Buffer<T> every_pattern(uint32_t shift = 0) {
    kiln::Buffer<T> b(kAll);
    for (int i = 0; i < kAll; i++) b(i) = T::make_from_bits((uint16_t)(i + shift));
    return b;
}

// Kiln's or Halide's Float(16) and BFloat(16).
template<typename L>
auto types16() {
    if constexpr (std::is_same<L, kd::K>::value) return std::make_pair(kiln::Float(16), kiln::BFloat(16));
    else return std::make_pair(Halide::Float(16), Halide::BFloat(16));
}

// The same bits wherever Kiln's result is not a NaN (the correctness tier
// checks those against the C++ reference). For a NaN, from a NaN input or
// from inf - inf, Halide 14 gives float16 infinity and some bfloat16 NaNs -0
// (its rounding carries out of the payload); Kiln a quiet NaN, as F16C does.
template<typename T>
void compare_bits(const kd::Out<T> &o) {
    int bad = 0, nans = 0;
    std::string first;
    for (int i = 0; i < kAll; i++) {
        T k = o.kiln(i), h = o.halide(i);
        if (k.is_nan()) {
            nans++;
            continue;
        }
        if (k.same_bits(h)) continue;
        if (bad++ == 0) first = std::to_string(i) + ": kiln " + std::to_string(k.to_bits()) + ", halide " +
                                std::to_string(h.to_bits());
    }
    INFO(o.name << ": " << bad << " mismatches; first at " << first << "; " << nans << " NaNs not compared");
    CHECK(bad == 0);
}

// Halide rounding every result as Kiln does. On a host with AVX512-FP16,
// Halide's target keeps avx512_sapphirerapids (halide_target.h), which lets
// LLVM narrow float32 to bfloat16 with VCVTNEPS2BF16; that instruction
// treats denormal inputs as zero and flushes denormal results, so a
// bfloat16 sum with a denormal operand came out one unit apart (kiln 0x8318,
// halide 0x8319 for 0x0010 * 0x0319 + 0x0010 - max(...)). Kiln rounds
// denormals to nearest even like every other conversion, as Halide does
// without that feature, which this test then compares with.
Halide::Target rounding_target() {
    return kd::H::strict_float().without_feature(Halide::Target::AVX512_SapphireRapids);
}

}  // namespace

TEST_CASE("float16: float16 and bfloat16 arithmetic equals Halide 14's", "[float16]") {
    kiln::Buffer<kiln::float16_t> a = every_pattern<kiln::float16_t>(), b = every_pattern<kiln::float16_t>(12345);
    kiln::Buffer<kiln::bfloat16_t> c = every_pattern<kiln::bfloat16_t>(), d = every_pattern<kiln::bfloat16_t>(777);
    kiln::Buffer<float> f(kAll);
    for (int i = 0; i < kAll; i++) f(i) = (float)a(i) * 1.7f + (float)i;  // a spread of float32 values
    kd::Out<kiln::float16_t> h_arith("h_arith", {kAll}), h_narrow("h_narrow", {kAll});
    kd::Out<kiln::bfloat16_t> b_arith("b_arith", {kAll}), b_narrow("b_narrow", {kAll});
    kd::run(
        [&](auto lib) {
            using L = decltype(lib);
            auto [f16, bf16] = types16<L>();
            typename L::ImageParam pa(f16, 1, "a"), pb(f16, 1, "b"), pc(bf16, 1, "c"), pd(bf16, 1, "d"),
                pf(L::f32, 1, "f");
            L::set(pa, a), L::set(pb, b), L::set(pc, c), L::set(pd, d), L::set(pf, f);
            typename L::Var x("x");
            typename L::Func ha("h_arith"), hn("h_narrow"), ba("b_arith"), bn("b_narrow");
            ha(x) = pa(x) * pb(x) + pa(x) - min(pa(x), pb(x));
            hn(x) = cast(f16, pf(x));
            ba(x) = pc(x) * pd(x) + pc(x) - max(pc(x), pd(x));
            bn(x) = cast(bf16, pf(x));
            for (auto *g : {&ha, &hn, &ba, &bn}) g->vectorize(x, 16);
            return typename L::Pipeline({ha, hn, ba, bn});
        },
        {h_arith.pair(), h_narrow.pair(), b_arith.pair(), b_narrow.pair()}, rounding_target());
    compare_bits(h_arith);
    compare_bits(h_narrow);
    compare_bits(b_arith);
    compare_bits(b_narrow);
}
