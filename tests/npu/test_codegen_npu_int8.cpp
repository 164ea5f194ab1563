// int8 matrix products through the NPU code generator: int8 operands
// staged through L1 into L0A / L0B, TMATMUL summing in int32 in L0C, and
// the epilogue (a per-column int32 bias, ReLU, requantization to int8 or a
// conversion to float16) applied by the fix pipe as the accumulator is
// stored to GM, with no vector pass. Each kernel equals the host target's
// output bitwise, and the host's an independent reference; schedules and
// epilogues the fix pipe cannot take are CompileErrors.
#include <catch2/catch.hpp>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <string>

#include <kiln/Float16.h>
#include <kiln/kiln.h>
#include <nlohmann/json.hpp>

#include "analysis/ConcreteSizes.h"
#include "autoschedule/NpuCost.h"
#include "error/expect_error.h"
#include "npu_pipelines.h"

using namespace kiln;
using nlohmann::json;
using npu_pipelines::run_npu_args;

namespace {

// The requantization scale: sums of 256 products of int8 values spread
// around +-80000, so the outputs cover int8's range and saturate at both ends.
constexpr float kScale = 1.0f / 1024;

// Deterministic int8 values over the whole range.
int8_t value(uint32_t i, uint32_t seed) {
    uint32_t s = (i + 1) * 2654435761u ^ seed * 40503u;
    s ^= s >> 13;
    s *= 1274126177u;
    return (int8_t)(uint8_t)(s >> 24);
}

// out = epilogue(Σ_k A(k, y) B(x, k)) with int8 A, B, an int32 bias and
// the output of type `out_type`: int8 requantizes relu(acc + bias) by
// kScale; float16 converts (acc + bias) * kScale; int32 stores acc itself.
struct Int8Gemm {
    const int M, N, K;
    ImageParam A{Int(8), 2, "A"}, B{Int(8), 2, "B"}, bias{Int(32), 1, "bias"};
    Var x{"x"}, y{"y"};
    RDom k;
    Func matmul{"matmul"}, output{"output"};
    Buffer<int8_t, 2> a, b;
    Buffer<int32_t, 1> bs;
    Int8Gemm(int M, int N, int K, Type out_type = Int(8)) : M(M), N(N), K(K), k(0, K, "k"), a(K, M), b(N, K), bs(N) {
        matmul(x, y) = 0;
        matmul(x, y) += cast<int32_t>(A(k, y)) * cast<int32_t>(B(x, k));
        if (out_type == Int(8))
            output(x, y) = saturating_cast<int8_t>(round(cast<float>(max(matmul(x, y) + bias(x), 0)) * kScale));
        else if (out_type == Float(16))
            output(x, y) = cast<kiln::float16_t>(cast<float>(matmul(x, y) + bias(x)) * kScale);
        else
            output(x, y) = matmul(x, y);
        for (int j = 0; j < M; j++)
            for (int i = 0; i < K; i++) a(i, j) = value(i + K * j, 1);
        for (int j = 0; j < K; j++)
            for (int i = 0; i < N; i++) b(i, j) = value(i + N * j, 2);
        for (int i = 0; i < N; i++) bs(i) = (i % 7 - 3) * 20000;
        A.set(a);
        B.set(b);
        bias.set(bs);
    }
    int64_t sum(int i, int j) const {
        int64_t s = 0;
        for (int q = 0; q < K; q++) s += (int64_t)a(q, j) * b(i, q);
        return s;
    }
    template<typename T>
    json run(Buffer<T, 2> &out, const std::string &fn) {
        return run_npu_args(Pipeline(output), {{"A", a}, {"B", b}, {"bias", bs}, {"output", out}}, fn);
    }
    // The tile schedule of the tests: rows x N tiles, the accumulator per tile in L0C, double-buffered.
    void rows(int r) {
        Var yo("yo"), yi("yi");
        output.bound(x, 0, N).split(y, yo, yi, r);
        matmul.compute_at(output, yo).store_in(MemoryType::L0C).double_buffer();
    }
};

// saturate(round_to_nearest_even(relu(s + bias) * scale)), from int64 sums.
int8_t requantize(int64_t s, int32_t bias) {
    int64_t v = std::max<int64_t>(s + bias, 0);
    float r = std::nearbyint((float)v * kScale);
    return (int8_t)std::min(127.0f, std::max(-128.0f, r));
}

}  // namespace

TEST_CASE("int8 GEMM + bias + ReLU + requantize on the NPU: int8 operands, int32 in L0C, the epilogue on the fix "
          "pipe",
          "[npu][codegen][int8][matmul]") {
    const int M = 256, N = 128, K = 256, R = 32;
    Int8Gemm g(M, N, K);
    Buffer<int8_t, 2> host(N, M), npu(N, M);
    g.output.realize(host);
    g.rows(R);
    json rep = g.run(npu, "gemm_int8");
    int bad_host = 0, bad_npu = 0, saturated = 0, zero = 0;
    for (int j = 0; j < M; j++)
        for (int i = 0; i < N; i++) {
            int8_t want = requantize(g.sum(i, j), g.bs(i));
            bad_host += host(i, j) != want;
            bad_npu += npu(i, j) != host(i, j);
            saturated += want == 127;
            zero += want == 0;
        }
    CHECK(bad_host == 0);
    CHECK(bad_npu == 0);
    // The data exercise saturation and ReLU.
    CHECK(saturated > 0);
    CHECK(zero > 0);
    CHECK(rep["race_count"] == 0);
    const int tiles = M / R;
    CHECK(rep["instructions_by_op"]["TMATMUL"] == tiles);
    // The epilogue is the TSTORE from L0C, one per tile on the fix pipe; no vector instruction, nothing in UB.
    CHECK(rep["instructions_by_op"]["TSTORE"] == tiles);
    CHECK(rep["instructions_by_family"].value("vector", 0) == 0);
    CHECK(rep["pipes"]["V"]["instructions"] == 0);
    CHECK(rep["peak_bytes"]["UB"] == 0);
    CHECK(rep["dma_bytes"].count("GM->UB") == 0);
    // Bytes: A and B once as int8 (B and the bias before the loop), the bias once as int32, the output as int8.
    CHECK(rep["dma_bytes"]["GM->L1"] == M * K + K * N + 4 * N);
    CHECK(rep["dma_bytes"]["L0C->GM"] == M * N);
    CHECK(rep["gm_write_bytes"] == M * N);
    // A 32 x 128 x 256 int8 product is 2 x 8 x (256 / 32) = 128 cycles (twice the bf16 rate); a few flags per tile.
    const int busy = rep["pipes"]["M"]["busy_cycles"], products = 128 * tiles;
    CHECK(busy >= products);
    CHECK(busy <= products + 5 * tiles);
    // The fix pipe reads each tile's int32 accumulator at 128 B/cycle: 32 x 128 x 4 / 128 = 128 cycles.
    CHECK(rep["pipes"]["FIX"]["busy_cycles"] >= 128 * tiles);
}

TEST_CASE("int8 GEMM with a split K and an L1 panel: int8 k-slices accumulate in int32", "[npu][codegen][int8][matmul]") {
    // As the bf16 split-K test: 64 x 256 tiles, B's int8 panel in L1 per
    // x tile, K in slices of 64 added in increasing k; the bias moves
    // with the x tiles, so each tile loads its 256 values.
    const int M = 256, N = 512, K = 256, KS = 64, MT = 64, NT = 256;
    Int8Gemm g(M, N, K);
    Buffer<int8_t, 2> host(N, M), npu(N, M);
    g.output.realize(host);
    Var xo("xo"), yo("yo"), xi("xi"), yi("yi");
    RVar ko("ko"), ki("ki");
    g.output.tile(g.x, g.y, xo, yo, xi, yi, NT, MT).reorder(xi, yi, yo, xo);
    g.matmul.compute_at(g.output, yo).store_in(MemoryType::L0C).double_buffer();
    g.matmul.update().split(g.k, ko, ki, KS).reorder(ki, g.x, g.y, ko);
    g.B.in(g.matmul).compute_at(g.output, xo).store_in(MemoryType::L1);
    json rep = g.run(npu, "gemm_int8_split_k");
    int bad = 0;
    for (int j = 0; j < M; j++)
        for (int i = 0; i < N; i++) bad += npu(i, j) != host(i, j);
    CHECK(bad == 0);
    CHECK(rep["race_count"] == 0);
    const int tiles = (M / MT) * (N / NT), slices = K / KS;
    CHECK(rep["instructions_by_op"]["TMATMUL"] == tiles);
    CHECK(rep["instructions_by_op"]["TMATMUL_ACC"] == tiles * (slices - 1));
    CHECK(rep["instructions_by_family"].value("vector", 0) == 0);
    // GM -> L1: B once (its panels), A once per x tile, the bias once per tile.
    CHECK(rep["dma_bytes"]["GM->L1"] == K * N + (N / NT) * M * K + tiles * 4 * NT);
    CHECK(rep["dma_bytes"]["L1->L0B"] == tiles * K * NT);
    CHECK(rep["dma_bytes"]["L1->L0A"] == tiles * MT * K);
}

TEST_CASE("the NPU autoscheduler's cost model counts the fix pipe's int8 store as the simulator does",
          "[npu][autoschedule][int8][matmul]") {
    // The model times the instruction stream without executing it; a fused
    // store from L0C writes GM in the output's type (1 byte), not the
    // accumulator's (4), and carries the bias, ReLU and scale.
    const int M = 256, N = 128, K = 256;
    for (Type t : {Int(8), Float(16)}) {
        INFO(t.to_string());
        Int8Gemm g(M, N, K, t);
        g.rows(32);
        std::vector<std::shared_ptr<internal::FunctionContents>> outs{g.output.contents()};
        auto sizes = internal::concrete_sizes(outs, {{"output", {N, M}}, {"A", {K, M}}, {"B", {N, K}}, {"bias", {N}}}, "test");
        const internal::NpuCostEstimate e = internal::npu_predict(outs, Target("npu"), sizes.values);
        json rep;
        if (t == Int(8)) {
            Buffer<int8_t, 2> npu(N, M);
            rep = g.run(npu, "gemm_int8_predict");
        } else {
            Buffer<kiln::float16_t, 2> npu(N, M);
            rep = g.run(npu, "gemm_int8_f16_predict");
        }
        CHECK(e.gm_write == rep["gm_write_bytes"].get<uint64_t>());
        CHECK(e.gm_write == (uint64_t)N * M * t.bytes());
        CHECK(e.gm_read == rep["gm_read_bytes"].get<uint64_t>());
        CHECK(e.cycles == Approx(rep["cycles"].get<double>()).epsilon(0.001));
    }
}

TEST_CASE("int8 GEMM to float16 and to int32 through the fix pipe", "[npu][codegen][int8][matmul]") {
    const int M = 64, N = 64, K = 128;
    SECTION("float16: (acc + bias) * scale, converted on the way") {
        Int8Gemm g(M, N, K, Float(16));
        Buffer<kiln::float16_t, 2> host(N, M), npu(N, M);
        g.output.realize(host);
        g.rows(16);
        json rep = g.run(npu, "gemm_int8_f16");
        int bad = 0, bad_ref = 0;
        for (int j = 0; j < M; j++)
            for (int i = 0; i < N; i++) {
                kiln::float16_t h = host(i, j), n = npu(i, j);
                bad += std::memcmp(&h, &n, sizeof h) != 0;
                kiln::float16_t want((float)(int32_t)(g.sum(i, j) + g.bs(i)) * kScale);
                bad_ref += std::memcmp(&h, &want, sizeof h) != 0;
            }
        CHECK(bad == 0);
        CHECK(bad_ref == 0);
        CHECK(rep["race_count"] == 0);
        CHECK(rep["instructions_by_family"].value("vector", 0) == 0);
        CHECK(rep["gm_write_bytes"] == 2 * M * N);
    }
    SECTION("int32: the sums themselves") {
        Int8Gemm g(M, N, K, Int(32));
        Buffer<int32_t, 2> host(N, M), npu(N, M);
        g.output.realize(host);
        g.rows(16);
        json rep = g.run(npu, "gemm_int8_i32");
        int bad = 0, bad_ref = 0;
        for (int j = 0; j < M; j++)
            for (int i = 0; i < N; i++) bad += npu(i, j) != host(i, j), bad_ref += host(i, j) != g.sum(i, j);
        CHECK(bad == 0);
        CHECK(bad_ref == 0);
        CHECK(rep["race_count"] == 0);
        CHECK(rep["gm_write_bytes"] == 4 * M * N);
    }
}

TEST_CASE("the generated int8 kernel reads as the fix pipe's store", "[npu][codegen][int8][matmul]") {
    Int8Gemm g(64, 64, 128);
    g.rows(16);
    std::string src = Pipeline(g.output).compile_to_cpp_source("gemm_int8_src", Target("npu"));
    CHECK_THAT(src, Catch::Contains("DType::I8"));
    CHECK_THAT(src, Catch::Contains(".relu().scale("));
    CHECK_THAT(src, Catch::Contains("Fix().bias(kiln_tile(core, Mem::L1"));
    CHECK_THAT(src, Catch::Contains("core.TMATMUL("));
}

TEST_CASE("NPU errors of int8 matrix products and their epilogues", "[npu][codegen][int8][error]") {
    auto source = [](Func f) { return Pipeline(f).compile_to_cpp_source("bad", Target("npu")); };
    Var x("x"), y("y"), yo("yo"), yi("yi");
    ImageParam A(Int(8), 2, "A"), B(Int(8), 2, "B");
    ImageParam bias(Int(32), 1, "bias");
    RDom k(0, 64, "k");
    SECTION("an epilogue the fix pipe cannot apply") {
        Func matmul("matmul"), output("output");
        matmul(x, y) = 0;
        matmul(x, y) += cast<int32_t>(A(k, y)) * cast<int32_t>(B(x, k));
        output(x, y) = cast<int8_t>(matmul(x, y) / 256);  // a truncating cast of a division: no fix-pipe step
        output.bound(x, 0, 64).split(y, yo, yi, 16);
        matmul.compute_at(output, yo).store_in(MemoryType::L0C);
        REQUIRE_COMPILE_ERROR(source(output),
                              Contains("NPU target: Func output reads the int32 accumulator matmul in L0C; its int8 "
                                       "value") &&
                                  Contains("is not saturating_cast<int8_t>(round(...)) of a float32") &&
                                  Contains("write output in that form"));
    }
    SECTION("an int32 Func in UB for the vector unit") {
        Func matmul("matmul"), biased("biased"), output("output");
        matmul(x, y) = 0;
        matmul(x, y) += cast<int32_t>(A(k, y)) * cast<int32_t>(B(x, k));
        biased(x, y) = matmul(x, y) + bias(x);
        output(x, y) = saturating_cast<int8_t>(round(cast<float>(biased(x, y)) * 0.01f));
        output.bound(x, 0, 64).split(y, yo, yi, 16);
        matmul.compute_at(output, yo).store_in(MemoryType::L0C);
        biased.compute_at(output, yo);
        REQUIRE_COMPILE_ERROR(source(output),
                              Contains("NPU target: Func biased has type int32 and is stored in UB; the vector unit "
                                       "computes float tiles") &&
                                  Contains("compute it in float32, or store it in L1 or L0C"));
    }
    SECTION("int8 products summed in float32") {
        Func matmul("matmul"), output("output");
        matmul(x, y) = 0.0f;
        matmul(x, y) += cast<float>(A(k, y)) * cast<float>(B(x, k));
        output(x, y) = matmul(x, y);
        output.bound(x, 0, 64).split(y, yo, yi, 16);
        matmul.compute_at(output, yo).store_in(MemoryType::L0C);
        REQUIRE_COMPILE_ERROR(source(output), Contains("NPU target: Func matmul accumulates i8 products in f32; the "
                                                       "matrix unit sums int8 products in int32, so give matmul type "
                                                       "int32"));
    }
    SECTION("the epilogue over another tile than the accumulator's") {
        Func matmul("matmul"), output("output");
        matmul(x, y) = 0;
        matmul(x, y) += cast<int32_t>(A(k, y)) * cast<int32_t>(B(x, k));
        output(x, y) = matmul(x, y);
        Var xo("xo"), xi("xi");
        output.bound(x, 0, 64).split(y, yo, yi, 16).split(x, xo, xi, 32).reorder(xi, yi, xo, yo);
        matmul.compute_at(output, yo).store_in(MemoryType::L0C);
        REQUIRE_COMPILE_ERROR(source(output), Contains("NPU target: Func output reads the int32 accumulator matmul in "
                                                       "L0C; its 16 x 32 tile is not the accumulator's 16 x 64 tile"));
    }
}
