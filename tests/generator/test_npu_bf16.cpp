// The bf16 variants of gemm, layernorm and softmax (type=bfloat16) on the
// tile-NPU, built by kiln_add_library: each equals the host target's
// kernel of the same variant bit for bit, and a float64 reference computed
// from the same bf16 inputs within a stated tolerance: half a bf16 unit in
// the last place of the result (2^-8 of its magnitude) plus the float32
// error of the computation (for GEMM, K units of 2^-24 of the sum of the
// products' magnitudes; for the row statistics 1e-5).
#include <kiln/Float16.h>

#include <cmath>

#include "aot.h"
#include "gemm_bf16_host.h"
#include "gemm_bf16_npu.h"
#include "layernorm_bf16_host.h"
#include "layernorm_bf16_npu.h"
#include "softmax_bf16_host.h"
#include "softmax_bf16_npu.h"

using namespace aot;
using kiln::bfloat16_t;

namespace {

constexpr double kHalfUlp = 1.0 / 256;

int count_different_bits(const Buffer<bfloat16_t> &a, const Buffer<bfloat16_t> &b) {
    int n = 0;
    a.for_each_element([&](int x, int y) { n += a(x, y).to_bits() != b(x, y).to_bits(); });
    return n;
}

}  // namespace

TEST_CASE("generator: gemm type=bfloat16 on the npu target (depth=256) against the host and float64",
          "[generator][npu][bf16]") {
    const int M = 80, N = 128, K = 256;  // M not a multiple of the 16-row tiles
    Buffer<bfloat16_t> a(K, M), b(N, K), bias(N), host(N, M), npu(N, M);
    fill_random(a, -1.0, 1.0, 3);
    fill_random(b, -1.0, 1.0, 4);
    fill_random(bias, -0.5, 0.5, 5);
    REQUIRE(gemm_bf16_host(a, b, bias, host) == 0);
    REQUIRE(gemm_bf16_npu(a, b, bias, npu) == 0);
    CHECK(count_different_bits(host, npu) == 0);
    int bad = 0;
    for (int y = 0; y < M; y++)
        for (int x = 0; x < N; x++) {
            double s = 0, mag = 0;
            for (int k = 0; k < K; k++) {
                double p = (double)(float)a(k, y) * (float)b(x, k);
                s += p, mag += std::fabs(p);
            }
            double want = std::max(s + (float)bias(x), 0.0);
            bad += !(std::fabs((float)npu(x, y) - want) <= kHalfUlp * std::fabs(want) + K * std::ldexp(mag, -24));
        }
    CHECK(bad == 0);
}

TEST_CASE("generator: layernorm and softmax type=bfloat16 on the npu target (width=1024) against the host and "
          "float64",
          "[generator][npu][bf16]") {
    const int W = 1024, rows = 37;  // not a multiple of the 8-row tiles
    Buffer<bfloat16_t> in(W, rows), gamma(W), beta(W), host(W, rows), npu(W, rows);
    fill_random(in, -4.0, 4.0, 6);
    fill_random(gamma, 0.5, 1.5, 7);
    fill_random(beta, -1.0, 1.0, 8);
    REQUIRE(layernorm_bf16_host(in, gamma, beta, 1e-5f, host) == 0);
    REQUIRE(layernorm_bf16_npu(in, gamma, beta, 1e-5f, npu) == 0);
    CHECK(count_different_bits(host, npu) == 0);
    int bad = 0;
    for (int y = 0; y < rows; y++) {
        double s = 0, ss = 0;
        for (int x = 0; x < W; x++) s += (float)in(x, y);
        const double mean = s / W;
        for (int x = 0; x < W; x++) ss += ((float)in(x, y) - mean) * ((float)in(x, y) - mean);
        const double inv = 1 / std::sqrt(ss / W + 1e-5);
        for (int x = 0; x < W; x++) {
            double want = ((float)in(x, y) - mean) * inv * (float)gamma(x) + (float)beta(x);
            bad += !(std::fabs((float)npu(x, y) - want) <= kHalfUlp * std::fabs(want) + 1e-5);
        }
    }
    CHECK(bad == 0);

    REQUIRE(softmax_bf16_host(in, host) == 0);
    REQUIRE(softmax_bf16_npu(in, npu) == 0);
    CHECK(count_different_bits(host, npu) == 0);
    bad = 0;
    for (int y = 0; y < rows; y++) {
        double m = -INFINITY, s = 0;
        for (int x = 0; x < W; x++) m = std::max(m, (double)(float)in(x, y));
        for (int x = 0; x < W; x++) s += std::exp((float)in(x, y) - m);
        for (int x = 0; x < W; x++) {
            double want = std::exp((float)in(x, y) - m) / s;
            // float32 exp and a float32 sum of 1024 terms: 1e-5 of the value besides the rounding.
            bad += !(std::fabs((float)npu(x, y) - want) <= (kHalfUlp + 1e-5) * want);
        }
    }
    CHECK(bad == 0);
}
