// The Halide 14 target that every use of Halide in Kiln's repository goes
// through: the differential tests' oracle, the interop tier's AOT library,
// the bench's twins.
//
// Halide 14's host detection sets avx512_sapphirerapids on any CPU with
// AVX-VNNI and AVX512-BF16, and that feature makes LLVM compile for the
// `sapphirerapids` CPU, whose code may use AVX512-FP16 instructions (vmovw,
// ...). AMD Zen 5 has the first two and not the third, so Halide's own code
// dies with SIGILL there. The functions here start from Halide's choice and
// drop what CPUID says the CPU lacks:
//
//   CPUID.(EAX=7, ECX=0):EDX[23] == 0   ->   target.without_feature(AVX512_SapphireRapids)
//
// Header-only, so that a CMake try_run probe (tests/interop) can use it too.
#pragma once

#if defined(__x86_64__) || defined(__i386__)
#include <cpuid.h>
#endif

#include "Halide.h"

namespace kiln_halide {

// CPUID's AVX512-FP16 bit (leaf 7, sub-leaf 0, EDX bit 23).
inline bool cpu_has_avx512_fp16() {
#if defined(__x86_64__) || defined(__i386__)
    unsigned eax = 0, ebx = 0, ecx = 0, edx = 0;
    if (__get_cpuid_max(0, nullptr) < 7) return false;
    __cpuid_count(7, 0, eax, ebx, ecx, edx);
    return (edx >> 23) & 1u;
#else
    return false;
#endif
}

// `t` without the features this CPU cannot run.
inline Halide::Target runnable(Halide::Target t) {
    if (t.has_feature(Halide::Target::AVX512_SapphireRapids) && !cpu_has_avx512_fp16())
        t = t.without_feature(Halide::Target::AVX512_SapphireRapids);
    return t;
}

// For Halide's JIT (HL_JIT_TARGET is still honoured, then corrected).
inline Halide::Target jit_target() { return runnable(Halide::get_jit_target_from_environment()); }

// For Halide's ahead-of-time generators run on this machine.
inline Halide::Target host_target() { return runnable(Halide::get_host_target()); }

}  // namespace kiln_halide
