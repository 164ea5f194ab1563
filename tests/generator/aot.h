// Helpers of the generator tier: the kernels compiled ahead of time by
// kiln_add_library() (tests/generator/CMakeLists.txt), called on the same
// buffers, and the error messages they report.
#pragma once
#include <catch2/catch.hpp>

#include <HalideBuffer.h>

#include <cmath>
#include <cstdint>
#include <functional>
#include <random>
#include <string>

#include "bias_gelu_fused.h"
#include "bias_gelu_host_tiled.h"
#include "bias_gelu_unfused.h"
#include "blur3x3_auto.h"
#include "blur3x3_fused.h"
#include "blur3x3_host_tiled.h"
#include "blur3x3_npu.h"
#include "blur3x3_unfused.h"
#include "forward_ad_fused.h"
#include "forward_ad_host_tiled.h"
#include "forward_ad_unfused.h"
#include "harris_auto.h"
#include "harris_fused.h"
#include "harris_host_tiled.h"
#include "harris_npu.h"
#include "harris_unfused.h"
#include "layernorm_fused.h"
#include "layernorm_host_tiled.h"
#include "layernorm_long_npu.h"
#include "layernorm_npu.h"
#include "layernorm_unfused.h"
#include "many_users_fused.h"
#include "many_users_host_tiled.h"
#include "many_users_unfused.h"
#include "softmax_fused.h"
#include "softmax_host_tiled.h"
#include "softmax_long_npu.h"
#include "softmax_npu.h"
#include "softmax_online_long_npu.h"
#include "softmax_unfused.h"
#include "softplus_auto.h"
#include "softplus_fused.h"
#include "softplus_host_tiled.h"
#include "softplus_npu.h"
#include "softplus_unfused.h"
#include "subtract_mean_fused.h"
#include "subtract_mean_host_tiled.h"
#include "subtract_mean_unfused.h"
#include "tanh_affine_auto.h"
#include "tanh_affine_fused.h"
#include "tanh_affine_host_tiled.h"
#include "tanh_affine_npu.h"
#include "tanh_affine_unfused.h"
#include "unsharp_auto.h"
#include "unsharp_fused.h"
#include "unsharp_host_tiled.h"
#include "unsharp_u8_auto.h"
#include "unsharp_u8_fused.h"
#include "unsharp_u8_host_tiled.h"
#include "unsharp_u8_unfused.h"
#include "unsharp_unfused.h"

namespace aot {

template<typename T, int D = Halide::Runtime::AnyDims> using Buffer = Halide::Runtime::Buffer<T, D>;

// A kernel with its scalar arguments bound: (input, output) -> error code.
using Kernel = std::function<int(halide_buffer_t *, halide_buffer_t *)>;

// The three schedules of one generator configuration, unfused first.
struct Schedules {
    const char *name;
    Kernel unfused, fused, host_tiled;
    Kernel automatic = nullptr;  // kiln-gen -s auto, where the tier builds one
};

// Uniform values in [lo, hi) from a fixed seed.
template<typename T>
void fill_random(Buffer<T> &b, double lo, double hi, unsigned seed = 1) {
    std::mt19937 rng(seed);
    std::uniform_real_distribution<double> dist(lo, hi);
    b.for_each_value([&](T &v) { v = (T)dist(rng); });
}

// Points where a and b differ (bit for bit: the schedules compute the same
// IEEE operations in the same order), and the first of them.
template<typename T>
int count_mismatches(const Buffer<T> &a, const Buffer<T> &b, std::string &first, double rel = 0, double scale = 0) {
    int n = 0;
    a.for_each_element([&](const int *pos) {
        T x = a(pos), y = b(pos);
        if (x == y || (std::isnan((double)x) && std::isnan((double)y))) return;
        if (rel > 0 && std::fabs((double)x - (double)y) <= rel * std::max(std::fabs((double)x), scale)) return;
        if (n++ == 0) {
            first = "(" + std::to_string(pos[0]);
            for (int d = 1; d < a.dimensions(); d++) first += ", " + std::to_string(pos[d]);
            first += "): " + std::to_string((double)x) + " vs " + std::to_string((double)y);
        }
    });
    return n;
}

// The messages reported through the Kiln error handler while it lives.
class ErrorCapture {
public:
    ErrorCapture() { previous = kiln_set_error_handler(&ErrorCapture::handler); }
    ~ErrorCapture() { kiln_set_error_handler(previous); }
    static const std::string &last() { return message(); }
    static void clear() { message().clear(); }

private:
    static std::string &message() {
        static std::string m;
        return m;
    }
    static void handler(const char *m) { message() = m; }
    kiln_error_handler_t previous;
};

}  // namespace aot
