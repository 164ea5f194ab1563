// Helpers of the fuzz tier. Every fuzz case is seeded and bounded: CI runs a
// few seconds per case; a long run scales the iteration counts:
//
//   KILN_FUZZ_ITERS=100000 ctest --test-dir build -L fuzz      (or KILN_FUZZ_SEED=n for other seeds)
//
// KILN_FUZZ_ITERS is the number of random cases of the cheapest kind
// (expressions); dearer kinds (JIT-compiled pipelines) take a fixed fraction
// of it. A failure prints its seed and case so it can be replayed and then
// saved, minimized, as a regression test.
#pragma once
#include <cstdint>
#include <cstdlib>
#include <string>

namespace kiln_fuzz {

// KILN_FUZZ_ITERS scaled by `per_mille` / 1000, at least 1; `ci_default`
// when the variable is unset.
inline int iterations(int ci_default, int per_mille = 1000) {
    const char *v = std::getenv("KILN_FUZZ_ITERS");
    if (!v || !*v) return ci_default;
    long long n = std::atoll(v) * per_mille / 1000;
    return n < 1 ? 1 : (int)n;
}

// The base seed: KILN_FUZZ_SEED, else a fixed one so that CI is reproducible.
inline uint32_t seed(uint32_t fixed) {
    const char *v = std::getenv("KILN_FUZZ_SEED");
    return v && *v ? (uint32_t)std::strtoul(v, nullptr, 10) : fixed;
}

}  // namespace kiln_fuzz
