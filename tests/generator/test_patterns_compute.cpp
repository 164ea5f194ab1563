// The compute-bound fusion patterns compiled ahead of time under their three
// shipped schedules: every schedule computes what the unfused one computes,
// bit for bit (they only move the same operations), on sizes that are not
// multiples of the tiles, and the unfused one matches a plain C++ reference.
#include "aot.h"
#include "gemm_gelu_fused.h"
#include "gemm_gelu_host_tiled.h"
#include "gemm_gelu_unfused.h"
#include "gemm_relu_fused.h"
#include "gemm_relu_host_tiled.h"
#include "gemm_relu_unfused.h"

using namespace aot;

namespace {

using GemmKernel = int (*)(halide_buffer_t *, halide_buffer_t *, halide_buffer_t *, halide_buffer_t *);

// Runs the three kernels on the same inputs; the fused and tiled outputs
// must equal the unfused one. Returns the unfused output.
Buffer<float> gemm_agree(const GemmKernel (&k)[3], Buffer<float> &a, Buffer<float> &b, Buffer<float> &bias) {
    const int n = b.dim(0).extent(), m = a.dim(1).extent();
    Buffer<float> ref(n, m), got(n, m);
    REQUIRE(k[0](a.raw_buffer(), b.raw_buffer(), bias.raw_buffer(), ref.raw_buffer()) == 0);
    for (int i = 1; i < 3; i++) {
        INFO((i == 1 ? "fused" : "host_tiled") << " against unfused");
        got.fill(0.0f);
        REQUIRE(k[i](a.raw_buffer(), b.raw_buffer(), bias.raw_buffer(), got.raw_buffer()) == 0);
        std::string first;
        int bad = count_mismatches(ref, got, first);
        INFO("first mismatch at " << first);
        CHECK(bad == 0);
    }
    return ref;
}

}  // namespace

TEST_CASE("generator: gemm schedules agree and compute relu(A B + bias) and gelu(A B + bias)", "[generator][gemm]") {
    const int n = 75, m = 21, k = 37;  // not multiples of the 2-vector x 8-row tile
    Buffer<float> a(k, m), b(n, k), bias(n);
    fill_random(a, -1, 1, 1);
    fill_random(b, -1, 1, 2);
    fill_random(bias, -1, 1, 3);
    Buffer<float> relu = gemm_agree({gemm_relu_unfused, gemm_relu_fused, gemm_relu_host_tiled}, a, b, bias);
    Buffer<float> gelu = gemm_agree({gemm_gelu_unfused, gemm_gelu_fused, gemm_gelu_host_tiled}, a, b, bias);
    int bad = 0;
    for (int y = 0; y < m; y++)
        for (int x = 0; x < n; x++) {
            float s = 0;
            for (int i = 0; i < k; i++) s += a(i, y) * b(x, i);  // the same order of additions
            float v = s + bias(x);
            bad += relu(x, y) != std::max(v, 0.0f);
            double g = 0.5 * v * (1 + std::tanh(0.7978845608 * (v + 0.044715 * v * v * v)));
            bad += std::abs(gelu(x, y) - g) > 1e-5 * std::max(std::abs(g), 1e-2);
        }
    CHECK(bad == 0);
}
