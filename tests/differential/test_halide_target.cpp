// The oracle's target (apps/common/halide_target.h) against CPUID on the
// machine the tests run on: Halide may use a feature only if the CPU has it.
// Nothing here assumes a CPU; each check reads the bits it needs.
#include <catch2/catch.hpp>

#include <cpuid.h>

#include "diff.h"

namespace {

struct Cpuid {
    unsigned l1_ecx = 0, l7_ebx = 0, l7_ecx = 0, l7_edx = 0;
    Cpuid() {
        unsigned a, b, c, d;
        if (__get_cpuid(1, &a, &b, &c, &d)) l1_ecx = c;
        if (__get_cpuid_max(0, nullptr) >= 7) {
            __cpuid_count(7, 0, a, b, c, d);
            l7_ebx = b;
            l7_ecx = c;
            l7_edx = d;
        }
    }
    static bool bit(unsigned reg, int i) { return (reg >> i) & 1u; }
    bool sse41() const { return bit(l1_ecx, 19); }
    bool avx() const { return bit(l1_ecx, 28); }
    bool fma() const { return bit(l1_ecx, 12); }
    bool f16c() const { return bit(l1_ecx, 29); }
    bool avx2() const { return bit(l7_ebx, 5); }
    bool avx512f() const { return bit(l7_ebx, 16); }
    bool avx512_skylake() const {  // VL, BW, DQ, CD
        return bit(l7_ebx, 31) && bit(l7_ebx, 30) && bit(l7_ebx, 17) && bit(l7_ebx, 28);
    }
    bool avx512_cannonlake() const { return avx512_skylake() && bit(l7_ebx, 21) && bit(l7_ecx, 1); }  // IFMA, VBMI
    bool avx512_fp16() const { return bit(l7_edx, 23); }
};

// Every x86 feature `t` asks for, the CPU has.
void check_runnable(const Halide::Target &t, const Cpuid &cpu) {
    using T = Halide::Target;
    INFO("target " << t.to_string());
    CHECK(cpu.avx512_fp16() == kiln_halide::cpu_has_avx512_fp16());
    if (t.has_feature(T::SSE41)) CHECK(cpu.sse41());
    if (t.has_feature(T::AVX)) CHECK(cpu.avx());
    if (t.has_feature(T::FMA)) CHECK(cpu.fma());
    if (t.has_feature(T::F16C)) CHECK(cpu.f16c());
    if (t.has_feature(T::AVX2)) CHECK(cpu.avx2());
    if (t.has_feature(T::AVX512)) CHECK(cpu.avx512f());
    if (t.has_feature(T::AVX512_Skylake)) CHECK(cpu.avx512_skylake());
    if (t.has_feature(T::AVX512_Cannonlake)) CHECK(cpu.avx512_cannonlake());
    // sapphirerapids makes LLVM free to emit AVX512-FP16 (vmovw, ...).
    if (t.has_feature(T::AVX512_SapphireRapids)) CHECK(cpu.avx512_fp16());
}

}  // namespace

TEST_CASE("halide target: the JIT and AOT targets use only what CPUID reports", "[halide_target]") {
    Cpuid cpu;
    check_runnable(kiln_halide::jit_target(), cpu);
    check_runnable(kiln_halide::host_target(), cpu);
    CHECK(kd::H::host() == kiln_halide::jit_target());
    CHECK(kd::H::strict_float().without_feature(Halide::Target::StrictFloat) == kiln_halide::jit_target());
}

TEST_CASE("halide target: avx512_sapphirerapids is kept exactly when CPUID reports AVX512-FP16", "[halide_target]") {
    // A target as Halide 14's detection builds it on a CPU with AVX-VNNI and
    // AVX512-BF16 (AMD Zen 5, Intel Sapphire Rapids).
    Halide::Target spr("x86-64-linux-sse41-avx-f16c-fma-avx2-avx512-avx512_skylake-avx512_cannonlake-"
                       "avx512_sapphirerapids");
    Halide::Target r = kiln_halide::runnable(spr);
    CHECK(r.has_feature(Halide::Target::AVX512_SapphireRapids) == Cpuid().avx512_fp16());
    // Nothing else is touched.
    CHECK(r.without_feature(Halide::Target::AVX512_SapphireRapids) ==
          spr.without_feature(Halide::Target::AVX512_SapphireRapids));
    Halide::Target plain("x86-64-linux-sse41-avx-avx2");
    CHECK(kiln_halide::runnable(plain) == plain);
}

TEST_CASE("halide target: a uint16 pipeline runs through Halide's JIT on this CPU", "[halide_target]") {
    // The kind of pipeline that hit AVX512-FP16 instructions (SIGILL) in
    // Halide's code on Zen 5: 16-bit arithmetic vectorized at 32 lanes.
    Halide::Var x("x"), y("y");
    Halide::Func in("in"), f("f");
    in(x, y) = Halide::cast<uint16_t>(x * 37 + y * 11);
    f(x, y) = Halide::cast<uint16_t>((Halide::cast<uint32_t>(in(x, y)) + in(x + 1, y) + in(x, y + 1)) / 3);
    f.vectorize(x, 32);
    Halide::Buffer<uint16_t> out = f.realize({128, 8}, kiln_halide::jit_target());
    for (int yy = 0; yy < 8; yy++)
        for (int xx = 0; xx < 128; xx++) {
            auto v = [](int a, int b) { return (uint32_t)(uint16_t)(a * 37 + b * 11); };
            REQUIRE(out(xx, yy) == (uint16_t)((v(xx, yy) + v(xx + 1, yy) + v(xx, yy + 1)) / 3));
        }
}
