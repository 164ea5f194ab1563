// Targets: parsing "host" / "x86-64-linux[-feature...]", host detection,
// and the compiler flags of each feature.
#include "kiln/Target.h"

#include "ir/Error.h"

#include <sstream>
#include <vector>

#include "ir/Error.h"

namespace kiln {

namespace {

struct FeatureName {
    Target::Feature feature;
    const char *name;
    const char *flags;  // for the host compiler; "" if none
};
// In to_string() order.
const FeatureName feature_names[] = {
    {Target::SSE41, "sse41", "-msse4.1"},
    {Target::AVX, "avx", "-mavx"},
    {Target::AVX2, "avx2", "-mavx2 -mfma -mf16c"},  // F16C: every AVX2 CPU has it
    {Target::FMA, "fma", "-mfma"},
    {Target::AVX512, "avx512", "-mavx512f -mavx512bw -mavx512dq -mavx512vl -mavx2 -mfma -mf16c"},
    {Target::FastMath, "fast_math", ""},
    {Target::NoAsserts, "no_asserts", ""},
    {Target::Trace, "trace", ""},
    {Target::NPU, "npu", ""},
};

bool is_isa_feature(Target::Feature f) { return f <= Target::AVX512; }

#if defined(__aarch64__)
const char *const arch_os = "arm-64-linux";
#else
const char *const arch_os = "x86-64-linux";
#endif

std::string valid_names() {
    std::string s = std::string("\"host\" or \"") + arch_os + "\", followed by features joined with '-': ";
    for (size_t i = 0; i < sizeof(feature_names) / sizeof(feature_names[0]); i++)
        s += (i ? ", " : "") + std::string(feature_names[i].name);
    return s;
}

std::set<Target::Feature> isa_features(const Target &t) {
    std::set<Target::Feature> r;
    for (Target::Feature f : t.features)
        if (is_isa_feature(f)) r.insert(f);
    return r;
}

}  // namespace

Target Target::host() {
    Target t;
#if defined(__x86_64__) || defined(__i386__)
    __builtin_cpu_init();
    if (__builtin_cpu_supports("sse4.1")) t.features.insert(SSE41);
    if (__builtin_cpu_supports("avx")) t.features.insert(AVX);
    if (__builtin_cpu_supports("avx2")) t.features.insert(AVX2);
    if (__builtin_cpu_supports("fma")) t.features.insert(FMA);
    if (__builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw")) t.features.insert(AVX512);
#endif
    return t;
}

Target::Target(const std::string &s) {
    std::string rest;
    if (s == "npu" || s.rfind("npu-", 0) == 0) {
        *this = Target("host" + s.substr(3));
        features.insert(NPU);
        return;
    }
    if (s == "host" || s.rfind("host-", 0) == 0) {
        *this = host();
        rest = s.substr(4);
    } else if (s.rfind(arch_os, 0) == 0) {
        rest = s.substr(std::string(arch_os).size());
    } else {
        user_error << "Unknown target \"" << s << "\". A target is " << valid_names() << " (e.g. \"host-fast_math\", \""
                   << arch_os << "-avx2-fma\").";
    }
    user_assert(rest.empty() || rest[0] == '-')
        << "Unknown target \"" << s << "\". A target is " << valid_names() << ".";
    std::istringstream parts(rest);
    std::string part;
    std::getline(parts, part, '-');  // the empty part before the first '-'
    while (std::getline(parts, part, '-')) {
        bool found = false;
        for (const FeatureName &f : feature_names) {
            if (part == f.name) {
                features.insert(f.feature);
                found = true;
            }
        }
        user_assert(found) << "Unknown feature \"" << part << "\" in target \"" << s << "\". A target is "
                           << valid_names() << ".";
    }
}

int Target::vector_bytes() const {
    if (has(AVX512)) return 64;
    if (has(AVX2) || has(AVX)) return 32;
    return 16;
}

std::string Target::to_string() const {
    std::string s = arch_os;
    for (const FeatureName &f : feature_names)
        if (has(f.feature)) s += std::string("-") + f.name;
    return s;
}

// -march=native when the target's instruction sets are exactly the host's;
// otherwise the -m flags of each feature.
std::string Target::compiler_flags() const {
    if (isa_features(*this) == isa_features(host())) return "-march=native";
    std::vector<std::string> flags;
    for (const FeatureName &f : feature_names) {
        if (!has(f.feature)) continue;
        std::istringstream words(f.flags);
        for (std::string w; words >> w;) {
            bool seen = false;
            for (const std::string &x : flags) seen |= x == w;
            if (!seen) flags.push_back(w);
        }
    }
    std::string s;
    for (const std::string &w : flags) s += (s.empty() ? "" : " ") + w;
    return s;
}

}  // namespace kiln
