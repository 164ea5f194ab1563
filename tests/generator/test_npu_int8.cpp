// gemm_int8 (int8 A and B, int32 bias, int8 output requantized by the
// default scale 1/1024) on the tile-NPU under schedules/gemm/npu.sched,
// built by kiln_add_library: equal to the host target's kernel of the same
// generator (unfused.sched) and to an int64 reference, value for value.
#include <cmath>

#include "aot.h"
#include "gemm_int8_host.h"
#include "gemm_int8_npu.h"

using namespace aot;

TEST_CASE("generator: gemm_int8 on the npu target (depth=256) against the host and an int64 reference",
          "[generator][npu][int8]") {
    const int M = 80, N = 128, K = 256;  // M not a multiple of the 16-row tiles
    Buffer<int8_t> a(K, M), b(N, K), host(N, M), npu(N, M);
    Buffer<int32_t> bias(N);
    fill_random(a, -128, 128, 3);
    fill_random(b, -128, 128, 4);
    fill_random(bias, -100000, 100000, 5);
    REQUIRE(gemm_int8_host(a, b, bias, host) == 0);
    REQUIRE(gemm_int8_npu(a, b, bias, npu) == 0);
    int bad_npu = 0, bad_ref = 0, saturated = 0, zero = 0;
    for (int y = 0; y < M; y++)
        for (int x = 0; x < N; x++) {
            int64_t s = bias(x);
            for (int k = 0; k < K; k++) s += (int64_t)a(k, y) * b(x, k);
            float r = std::nearbyint((float)std::max<int64_t>(s, 0) * (1.0f / 1024));
            int8_t want = (int8_t)std::min(127.0f, std::max(-128.0f, r));
            bad_npu += npu(x, y) != host(x, y);
            bad_ref += host(x, y) != want;
            saturated += want == 127;
            zero += want == 0;
        }
    CHECK(bad_npu == 0);
    CHECK(bad_ref == 0);
    CHECK(saturated > 0);
    CHECK(zero > 0);
}
