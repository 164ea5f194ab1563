// Compilation targets: "host" (detected), or "x86-64-linux-avx2" style
// strings with features appended ("host-fast_math-no_asserts"); "npu" is
// "host-npu", the tile-NPU target.
#pragma once
#include <set>
#include <string>

#include "Type.h"

namespace kiln {

struct Target {
    // NPU: generate a tile-NPU kernel (docs/npu.md) run by the simulator, behind a host stub.
    enum Feature { SSE41, AVX, AVX2, FMA, AVX512, FastMath, NoAsserts, Trace, NPU };
    std::set<Feature> features;

    Target() = default;
    explicit Target(const std::string &s);  // throws CompileError listing valid names
    static Target host();

    bool has(Feature f) const { return features.count(f) != 0; }
    Target with(Feature f) const {
        Target t = *this;
        t.features.insert(f);
        return t;
    }
    // Widest SIMD register in bytes: 64 (avx512), 32 (avx2/avx), 16 otherwise.
    int vector_bytes() const;
    // Lanes of t that fill one SIMD register.
    int natural_vector_size(Type t) const { return vector_bytes() / t.bytes(); }
    std::string to_string() const;
    // The -m flags the host compiler needs for this target.
    std::string compiler_flags() const;
};

}  // namespace kiln
