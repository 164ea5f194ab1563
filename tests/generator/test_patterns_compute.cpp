// The compute-bound fusion patterns compiled ahead of time under their three
// shipped schedules: every schedule computes what the unfused one computes,
// bit for bit (they only move the same operations), on sizes that are not
// multiples of the tiles, and the unfused one matches a plain C++ reference.
#include "aot.h"
#include "attention_fused.h"
#include "attention_host_tiled.h"
#include "attention_npu.h"
#include "attention_online_host.h"
#include "attention_online_planes_host.h"
#include "attention_online_planes_npu.h"
#include "attention_unfused.h"
#include "conv_bn_folded_fused.h"
#include "conv_bn_folded_host_tiled.h"
#include "conv_bn_folded_unfused.h"
#include "conv_bn_relu_fused.h"
#include "conv_bn_relu_host_tiled.h"
#include "conv_bn_relu_unfused.h"
#include "gemm_gelu_fused.h"
#include "gemm_gelu_host_tiled.h"
#include "gemm_gelu_unfused.h"
#include "gemm_relu_fused.h"
#include "gemm_relu_host_tiled.h"
#include "gemm_relu_unfused.h"
#include "gemm_gelu_npu.h"
#include "gemm_relu_npu.h"

#include <vector>

using namespace aot;

namespace {

// Runs schedule i (0 unfused, 1 fused, 2 host_tiled) into `out` with run(i,
// out); fused and host_tiled must equal unfused bit for bit (they only move
// the same operations). Returns the unfused output.
template<typename Run>
Buffer<float> schedules_agree(const std::vector<int> &extents, Run run) {
    Buffer<float> ref(extents), got(extents);
    REQUIRE(run(0, ref) == 0);
    for (int i = 1; i < 3; i++) {
        INFO((i == 1 ? "fused" : "host_tiled") << " against unfused");
        got.fill(0.0f);
        REQUIRE(run(i, got) == 0);
        std::string first;
        int bad = count_mismatches(ref, got, first);
        INFO("first mismatch at " << first);
        CHECK(bad == 0);
    }
    return ref;
}

using GemmKernel = int (*)(halide_buffer_t *, halide_buffer_t *, halide_buffer_t *, halide_buffer_t *);

Buffer<float> gemm_agree(const GemmKernel (&k)[3], Buffer<float> &a, Buffer<float> &b, Buffer<float> &bias) {
    return schedules_agree({b.dim(0).extent(), a.dim(1).extent()}, [&](int i, Buffer<float> &out) {
        return k[i](a.raw_buffer(), b.raw_buffer(), bias.raw_buffer(), out.raw_buffer());
    });
}

}  // namespace

TEST_CASE("generator: gemm schedules agree and compute relu(A B + bias) and gelu(A B + bias)", "[generator][gemm]") {
    const int n = 75, m = 21, k = 37;  // not multiples of the tiles (2 vectors x 8 or 12 rows)
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

TEST_CASE("generator: gemm host_tiled at sizes smaller than its register tile", "[generator][gemm]") {
    // host_tiled's tuned loops need N >= 2 vectors and M >= natural_vector_size*3/4
    // (its tiles are shifted inwards); smaller products take its fallback
    // specialization. Every mix of M, N, K in {1, 5, 12, 31, 33} against the
    // plain product (the same order of additions, so exact). (unfused and
    // fused vectorize by whole vectors, shifted inwards: they still need N of
    // at least one vector.)
    const int sizes[] = {1, 5, 12, 31, 33};
    int failed = 0, bad = 0;
    for (int m : sizes)
        for (int n : sizes)
            for (int k : sizes) {
                Buffer<float> a(k, m), b(n, k), bias(n), got(n, m);
                fill_random(a, -1, 1, m);
                fill_random(b, -1, 1, n + 7);
                fill_random(bias, -1, 1, k + 3);
                got.fill(-99.0f);
                failed += gemm_relu_host_tiled(a.raw_buffer(), b.raw_buffer(), bias.raw_buffer(), got.raw_buffer()) != 0;
                for (int y = 0; y < m; y++)
                    for (int x = 0; x < n; x++) {
                        float s = 0;
                        for (int i = 0; i < k; i++) s += a(i, y) * b(x, i);
                        bad += got(x, y) != std::max(s + bias(x), 0.0f);
                    }
            }
    CHECK(failed == 0);
    CHECK(bad == 0);
}

namespace {

using ConvKernel = int (*)(halide_buffer_t *, halide_buffer_t *, halide_buffer_t *, halide_buffer_t *,
                           halide_buffer_t *, halide_buffer_t *, halide_buffer_t *, float, halide_buffer_t *);

// The three schedules of a conv_bn generator on the same tensors.
Buffer<float> conv_agree(const ConvKernel (&k)[3], std::vector<Buffer<float>> &in, int cout, int w, int h) {
    return schedules_agree({cout, w, h}, [&](int i, Buffer<float> &out) {
        return k[i](in[0].raw_buffer(), in[1].raw_buffer(), in[2].raw_buffer(), in[3].raw_buffer(),
                    in[4].raw_buffer(), in[5].raw_buffer(), in[6].raw_buffer(), 1e-5f, out.raw_buffer());
    });
}

// How many elements of `got` (Cout, W, H) differ from a double-precision
// conv + BN + ReLU of the inputs beyond float rounding.
int conv_mismatches(const Buffer<float> &got, const std::vector<Buffer<float>> &in) {
    const int cin = in[0].dim(0).extent();
    int bad = 0;
    for (int y = 0; y < got.dim(2).extent(); y++)
        for (int x = 0; x < got.dim(1).extent(); x++)
            for (int c = 0; c < got.dim(0).extent(); c++) {
                double s = in[2](c);
                for (int ry = 0; ry < 3; ry++)
                    for (int rx = 0; rx < 3; rx++)
                        for (int ci = 0; ci < cin; ci++) s += (double)in[1](c, ci, rx, ry) * in[0](ci, x + rx, y + ry);
                double bn = (s - in[3](c)) * in[5](c) / std::sqrt(in[4](c) + 1e-5) + in[6](c);
                double want = std::max(bn, 0.0);
                // float sums against a double reference; folding moves the BN multiply inside the sum
                bad += std::abs(got(c, x, y) - want) > 1e-4 * std::max(1.0, std::abs(want));
            }
    return bad;
}

// input, weights, bias, mean, variance, gamma, beta
std::vector<Buffer<float>> conv_inputs(int cin, int cout, int w, int h) {
    std::vector<Buffer<float>> in = {Buffer<float>(cin, w + 2, h + 2), Buffer<float>(cout, cin, 3, 3),
                                     Buffer<float>(cout), Buffer<float>(cout), Buffer<float>(cout),
                                     Buffer<float>(cout), Buffer<float>(cout)};
    for (size_t i = 0; i < in.size(); i++) fill_random(in[i], i == 4 ? 0.1 : -1, i == 4 ? 2 : 1, (unsigned)i + 1);
    return in;
}

// softmax(Q Kᵀ / √d) V in float64 for query row i (Q, K, V as (d, seq)): its d outputs.
std::vector<double> attention_row_float64(const Buffer<float> &q, const Buffer<float> &k, const Buffer<float> &v,
                                          int i) {
    const int d = q.dim(0).extent(), seq = k.dim(1).extent();
    std::vector<double> s(seq), out(d);
    double m = -1e300, sum = 0;
    for (int j = 0; j < seq; j++) {
        s[j] = 0;
        for (int r = 0; r < d; r++) s[j] += (double)q(r, i) * k(r, j);
        m = std::max(m, s[j]);
    }
    for (int j = 0; j < seq; j++) sum += s[j] = std::exp((s[j] - m) / std::sqrt((double)d));
    for (int c = 0; c < d; c++) {
        for (int j = 0; j < seq; j++) out[c] += s[j] * v(c, j);
        out[c] /= sum;
    }
    return out;
}

}  // namespace

TEST_CASE("generator: conv host_tiled below its tile of 2 channel vectors x 6 pixels", "[generator][conv][regression]") {
    // Was -6 ("input 'beta' is read over [-24, 7]") for 8 output channels:
    // the tile, shifted inwards, started before channel 0. Such sizes now
    // take the schedule's fallback specialization.
    for (int cout : {1, 8, 31})
        for (int w : {1, 5, 7}) {
            INFO("Cout " << cout << ", W " << w);
            std::vector<Buffer<float>> in = conv_inputs(3, cout, w, 2);
            for (ConvKernel k : {conv_bn_relu_host_tiled, conv_bn_folded_host_tiled}) {
                Buffer<float> out(cout, w, 2);
                out.fill(-99.0f);
                REQUIRE(k(in[0].raw_buffer(), in[1].raw_buffer(), in[2].raw_buffer(), in[3].raw_buffer(),
                          in[4].raw_buffer(), in[5].raw_buffer(), in[6].raw_buffer(), 1e-5f, out.raw_buffer()) == 0);
                CHECK(conv_mismatches(out, in) == 0);
            }
        }
}

TEST_CASE("generator: conv_bn_relu and conv_bn_folded schedules agree and match a plain convolution",
          "[generator][conv]") {
    const int cin = 7, cout = 48, w = 11, h = 5;  // Cout and W not multiples of the 2-vector x 6-pixel tile
    std::vector<Buffer<float>> in = conv_inputs(cin, cout, w, h);
    Buffer<float> unfolded =
        conv_agree({conv_bn_relu_unfused, conv_bn_relu_fused, conv_bn_relu_host_tiled}, in, cout, w, h);
    Buffer<float> folded =
        conv_agree({conv_bn_folded_unfused, conv_bn_folded_fused, conv_bn_folded_host_tiled}, in, cout, w, h);
    CHECK(conv_mismatches(unfolded, in) == 0);
    CHECK(conv_mismatches(folded, in) == 0);
}

TEST_CASE("generator: attention schedules agree and compute softmax(Q K^T / sqrt(d)) V", "[generator][attention]") {
    const int d = 24, seq = 37;  // seq not a multiple of the 8-row block, d not of the vector
    Buffer<float> q(d, seq), k(d, seq), v(d, seq);
    fill_random(q, -1, 1, 1);
    fill_random(k, -1, 1, 2);
    fill_random(v, -1, 1, 3);
    using AttnKernel = int (*)(halide_buffer_t *, halide_buffer_t *, halide_buffer_t *, halide_buffer_t *);
    const AttnKernel kernels[3] = {attention_unfused, attention_fused, attention_host_tiled};
    Buffer<float> ref = schedules_agree({d, seq}, [&](int i, Buffer<float> &out) {
        return kernels[i](q.raw_buffer(), k.raw_buffer(), v.raw_buffer(), out.raw_buffer());
    });
    int bad = 0;
    for (int i = 0; i < seq; i++) {
        const std::vector<double> o = attention_row_float64(q, k, v, i);
        for (int c = 0; c < d; c++) bad += std::abs(ref(c, i) - o[c]) > 1e-5;
    }
    CHECK(bad == 0);
}

TEST_CASE("generator: attention on the npu target (dim=64 seq=128) equals the host target", "[generator][npu]") {
    const int d = 64, seq = 128, queries = 100;  // queries not a multiple of the NPU's 32-row tiles
    Buffer<float> q(d, queries), k(d, seq), v(d, seq), host(d, queries), npu(d, queries);
    fill_random(q, -1, 1, 1);
    fill_random(k, -1, 1, 2);
    fill_random(v, -1, 1, 3);
    REQUIRE(attention_fused(q.raw_buffer(), k.raw_buffer(), v.raw_buffer(), host.raw_buffer()) == 0);
    REQUIRE(attention_npu(q.raw_buffer(), k.raw_buffer(), v.raw_buffer(), npu.raw_buffer()) == 0);
    int differ = 0;
    host.for_each_element([&](int x, int y) { differ += host(x, y) != npu(x, y); });
    CHECK(differ == 0);
}

TEST_CASE("generator: flash attention (algorithm=online_planes) on the npu target equals the host target",
          "[generator][npu][online]") {
    // dim=64 seq=256 key_block=64: four key blocks merged into the running state per 32-row tile.
    const int d = 64, seq = 256, queries = 100;  // queries not a multiple of the NPU's 32-row tiles
    Buffer<float> q(d, queries), k(d, seq), v(d, seq), planes(d, queries), online(d, queries), npu(d, queries);
    fill_random(q, -2, 2, 1);
    fill_random(k, -2, 2, 2);
    fill_random(v, -1, 1, 3);
    REQUIRE(attention_online_planes_host(q.raw_buffer(), k.raw_buffer(), v.raw_buffer(), planes.raw_buffer()) == 0);
    REQUIRE(attention_online_host(q.raw_buffer(), k.raw_buffer(), v.raw_buffer(), online.raw_buffer()) == 0);
    REQUIRE(attention_online_planes_npu(q.raw_buffer(), k.raw_buffer(), v.raw_buffer(), npu.raw_buffer()) == 0);
    // online_planes is the online algorithm's arithmetic in its order: the same output on the host, and the
    // NPU's is the host's bit for bit.
    int differ_host = 0, differ_npu = 0;
    planes.for_each_element([&](int x, int y) {
        differ_host += planes(x, y) != online(x, y);
        differ_npu += planes(x, y) != npu(x, y);
    });
    CHECK(differ_host == 0);
    CHECK(differ_npu == 0);
    // Against a float64 softmax over all keys at once: within 1e-5 relative to max(1, |output|).
    double worst = 0;
    for (int i = 0; i < queries; i++) {
        const std::vector<double> o = attention_row_float64(q, k, v, i);
        for (int c = 0; c < d; c++) worst = std::max(worst, std::abs(npu(c, i) - o[c]) / std::max(1.0, std::abs(o[c])));
    }
    INFO("NPU against float64: " << worst);
    CHECK(worst < 1e-5);
}

TEST_CASE("generator: gemm (relu and gelu) on the npu target (depth=128) equals the host target", "[generator][npu]") {
    const int M = 100, N = 128, K = 128;  // M not a multiple of the NPU's 32-row tiles
    Buffer<float> a(K, M), b(N, K), bias(N), host(N, M), npu(N, M);
    fill_random(a, -1.0, 1.0);
    fill_random(b, -1.0, 1.0, 2);
    fill_random(bias, -0.5, 0.5, 3);
    for (auto [fused, on_npu] : {std::pair{gemm_relu_fused, gemm_relu_npu}, std::pair{gemm_gelu_fused, gemm_gelu_npu}}) {
        REQUIRE(fused(a.raw_buffer(), b.raw_buffer(), bias.raw_buffer(), host.raw_buffer()) == 0);
        REQUIRE(on_npu(a.raw_buffer(), b.raw_buffer(), bias.raw_buffer(), npu.raw_buffer()) == 0);
        int differ = 0;
        host.for_each_element([&](int x, int y) { differ += host(x, y) != npu(x, y); });
        CHECK(differ == 0);
    }
}
