// 16-bit floats through the NPU code generator: bf16 and f16 inputs loaded
// as they are in GM and widened by TCVT, float32 compute, outputs narrowed
// by TCVT before the TSTORE, and matrix operands kept 16-bit for TMATMUL
// (f32 accumulation in L0C). Each kernel equals the host target's output
// bitwise (the same conversions and float32 operations) and a float64
// reference within a stated tolerance; misuses are CompileErrors.
#include <catch2/catch.hpp>

#include <cmath>
#include <cstring>
#include <map>
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

using bf16 = kiln::bfloat16_t;

template<typename T, int D>
int count_different_bits(const Buffer<T, D> &a, const Buffer<T, D> &b) {
    int bad = 0;
    a.for_each_element([&](const int *pos) {
        T x = a(pos), y = b(pos);
        bad += std::memcmp(&x, &y, sizeof(T)) != 0;
    });
    return bad;
}

// Relative tolerance of a bf16 result: half a unit in the last place of an
// 8-bit significand (2^-8 of the value's binade, so at most 2^-8 relative).
constexpr double kBf16Rel = 1.0 / 256;

// relu(A B + bias) with bf16 A, B, bias and output, f32 products and sum
// (M x N x K), with its operands (the same values in every test) set and
// the host's output computed before any schedule: k in order for every point.
struct Bf16Gemm {
    const int M, N, K;
    ImageParam A{BFloat(16), 2, "A"}, B{BFloat(16), 2, "B"}, bias{BFloat(16), 1, "bias"};
    Var x{"x"}, y{"y"};
    RDom k;
    Func matmul{"matmul"}, output{"output"};
    Buffer<bf16, 2> a, b, host, npu;
    Buffer<bf16, 1> bs;
    Bf16Gemm(int M, int N, int K) : M(M), N(N), K(K), k(0, K, "k"), a(K, M), b(N, K), host(N, M), npu(N, M), bs(N) {
        matmul(x, y) = 0.0f;
        matmul(x, y) += cast<float>(A(k, y)) * cast<float>(B(x, k));
        output(x, y) = cast<bf16>(max(matmul(x, y) + cast<float>(bias(x)), 0.0f));
        for (int j = 0; j < M; j++)
            for (int i = 0; i < K; i++) a(i, j) = bf16(std::sin(0.37f * i + 0.11f * j));
        for (int j = 0; j < K; j++)
            for (int i = 0; i < N; i++) b(i, j) = bf16(std::cos(0.23f * i - 0.07f * j));
        for (int i = 0; i < N; i++) bs(i) = bf16(0.5f * std::sin(0.3f * i));
        A.set(a);
        B.set(b);
        bias.set(bs);
        output.realize(host);
    }
    // C in tiles of nt columns x mt rows, the nt-column panels outermost,
    // each tile's K in slices of ks accumulated in L0C (double-buffered):
    // schedules/gemm/npu_512.sched's loops, B's panel left to the caller.
    Var xo{"xo"}, yo{"yo"}, xi{"xi"}, yi{"yi"};
    void split_k_tiles(int nt, int mt, int ks) {
        RVar ko("ko"), ki("ki");
        output.tile(x, y, xo, yo, xi, yi, nt, mt).reorder(xi, yi, yo, xo);
        matmul.compute_at(output, yo).store_in(MemoryType::L0C).double_buffer();
        matmul.update().split(k, ko, ki, ks).reorder(ki, x, y, ko);
    }
    // The NPU's output (in npu) under the schedule given since; its report.
    json run(const std::string &fn) {
        return run_npu_args(Pipeline(output), {{"A", a}, {"B", b}, {"bias", bs}, {"output", npu}}, fn);
    }
    // schedules/gemm/npu_512.sched's loops with B's panel in L1 at the
    // panel loop, run: bitwise the host's and race-free; its report.
    json run_with_panel(const std::string &fn) {
        split_k_tiles(256, 64, 64);
        B.in(matmul).compute_at(output, xo).store_in(MemoryType::L1);
        json rep = run(fn);
        CHECK(count_different_bits(host, npu) == 0);
        CHECK(rep["race_count"] == 0);
        return rep;
    }
};

}  // namespace

TEST_CASE("bf16 LayerNorm on the NPU: loads of bf16 rows, TCVT to f32, a bf16 output, equals the host and a float64 "
          "reference",
          "[npu][codegen][f16]") {
    const int W = 1024, H = 64;
    ImageParam input(BFloat(16), 2, "input"), gamma(BFloat(16), 1, "gamma"), beta(BFloat(16), 1, "beta");
    Var x("x"), y("y"), yo("yo"), yi("yi");
    RDom r(0, W, "r");
    Func sum("sum"), mean("mean"), sum_sq("sum_sq"), inv_std("inv_std"), output("output");
    sum(y) = 0.0f;
    sum(y) += cast<float>(input(r, y));
    mean(y) = sum(y) / (float)W;
    Expr d = cast<float>(input(r, y)) - mean(y);
    sum_sq(y) = 0.0f;
    sum_sq(y) += d * d;
    inv_std(y) = 1.0f / sqrt(sum_sq(y) / (float)W + 1e-5f);
    output(x, y) = cast<bf16>((cast<float>(input(x, y)) - mean(y)) * inv_std(y) * cast<float>(gamma(x)) +
                              cast<float>(beta(x)));
    output.bound(x, 0, W).split(y, yo, yi, 8).double_buffer();
    for (Func f : {sum, mean, sum_sq, inv_std}) f.compute_at(output, yo).double_buffer();

    Buffer<bf16, 2> in(W, H), host(W, H), npu(W, H);
    Buffer<bf16, 1> g(W), b(W);
    for (int j = 0; j < H; j++)
        for (int i = 0; i < W; i++) in(i, j) = bf16(3.0f * std::sin(0.01f * i + 0.3f * j) + 0.05f * j);
    for (int i = 0; i < W; i++) g(i) = bf16(1.0f + 0.25f * std::cos(0.03f * i)), b(i) = bf16(0.1f * std::sin(0.07f * i));
    input.set(in);
    gamma.set(g);
    beta.set(b);
    output.realize(host);
    json rep = run_npu_args(Pipeline(output), {{"input", in}, {"gamma", g}, {"beta", b}, {"output", npu}},
                            "layernorm_bf16");
    CHECK(count_different_bits(host, npu) == 0);
    // Against float64 from the same bf16 inputs: the output's rounding plus float32's error in the statistics.
    int bad = 0;
    for (int j = 0; j < H; j++) {
        double s = 0, ss = 0;
        for (int i = 0; i < W; i++) s += (float)in(i, j);
        double m = s / W;
        for (int i = 0; i < W; i++) ss += ((float)in(i, j) - m) * ((float)in(i, j) - m);
        double inv = 1 / std::sqrt(ss / W + 1e-5);
        for (int i = 0; i < W; i++) {
            double want = ((float)in(i, j) - m) * inv * (float)g(i) + (float)b(i);
            bad += !(std::fabs((float)npu(i, j) - want) <= kBf16Rel * std::fabs(want) + 1e-5);
        }
    }
    CHECK(bad == 0);
    CHECK(rep["race_count"] == 0);
    // 16-bit traffic: the rows once, gamma and beta once, the output once, 2 bytes each.
    CHECK(rep["gm_read_bytes"] == 2 * (W * H + 2 * W));
    CHECK(rep["gm_write_bytes"] == 2 * W * H);
    // One widening per loaded tile (input, once per tile; gamma and beta once) and one narrowing per output tile.
    CHECK(rep["instructions_by_op"]["TCVT"] == 2 * H / 8 + 2);
}

TEST_CASE("bf16 GEMM on the NPU: bf16 operands through L1 and L0A/L0B into TMATMUL, f32 in L0C, a bf16 output",
          "[npu][codegen][f16][matmul]") {
    const int M = 256, N = 128, K = 256;
    Bf16Gemm g(M, N, K);
    Var yo("yo"), yi("yi");
    g.output.bound(g.x, 0, N).split(g.y, yo, yi, 32).double_buffer();
    g.matmul.compute_at(g.output, yo).store_in(MemoryType::L0C).double_buffer();
    json rep = g.run("gemm_bf16");
    Buffer<bf16, 2> &a = g.a, &bb = g.b, &host = g.host, &npu = g.npu;
    Buffer<bf16, 1> &bs = g.bs;
    CHECK(count_different_bits(host, npu) == 0);
    // Against float64: the bf16 rounding of the output, plus float32 accumulation (K ulps of the sum of |terms|).
    int bad = 0;
    for (int j = 0; j < M; j++)
        for (int i = 0; i < N; i++) {
            double s = 0, mag = 0;
            for (int q = 0; q < K; q++) s += (double)(float)a(q, j) * (float)bb(i, q), mag += std::fabs((double)(float)a(q, j) * (float)bb(i, q));
            double want = std::max(s + (float)bs(i), 0.0);
            bad += !(std::fabs((float)npu(i, j) - want) <= kBf16Rel * std::fabs(want) + K * std::ldexp(mag, -24));
        }
    CHECK(bad == 0);
    CHECK(rep["race_count"] == 0);
    CHECK(rep["instructions_by_op"]["TMATMUL"] == M / 32);
    // A, B and the bias move as bf16: 2 bytes an element, GM -> L1 (B and the bias once, before the loop; the
    // bias for the fix pipe's epilogue).
    CHECK(rep["dma_bytes"]["GM->L1"] == 2 * (M * K + K * N + N));
    // One TMATMUL of 32 x 128 x 256 bf16 is 2 x 8 x 16 = 256 cycles (512 with f32 operands); the M pipe
    // also runs a few flag instructions per tile.
    const int busy = rep["pipes"]["M"]["busy_cycles"], products = 256 * (M / 32);
    CHECK(busy >= products);
    CHECK(busy <= products + 5 * (M / 32));
}

TEST_CASE("bf16 GEMM's bias, ReLU and bf16 conversion run on the fix pipe's store from L0C",
          "[npu][codegen][f16][matmul][fix]") {
    // relu(A B + bias) of an f32 accumulator with a bf16 bias and output is
    // one TSTORE from L0C per tile whose epilogue adds the bias (a bf16 row
    // in L1, widened on the way), applies ReLU and rounds to bf16, as the
    // int8 kernels requantize: no vector instruction, no UB tile, no MTE3
    // store. Bitwise the host's (the same f32 add and max, the same
    // rounding), race-free, and the cost model times it as the simulator.
    const int M = 256, N = 128, K = 256, R = 32;
    Bf16Gemm g(M, N, K);
    Var yo("yo"), yi("yi");
    g.output.bound(g.x, 0, N).split(g.y, yo, yi, R);
    g.matmul.compute_at(g.output, yo).store_in(MemoryType::L0C).double_buffer();
    json rep = g.run("gemm_bf16_fix");
    CHECK(count_different_bits(g.host, g.npu) == 0);
    CHECK(rep["race_count"] == 0);
    const int tiles = M / R;
    CHECK(rep["instructions_by_family"].value("vector", 0) == 0);
    CHECK(rep["instructions_by_op"]["TSTORE"] == tiles);
    CHECK(rep["peak_bytes"].value("UB", 0) == 0);
    // The output leaves L0C as bf16, 2 bytes an element; the bias row is loaded once (it does not move with yo).
    CHECK(rep["dma_bytes"]["L0C->GM"] == 2 * M * N);
    CHECK(rep["dma_bytes"].value("UB->GM", 0) == 0);
    CHECK(rep["dma_bytes"].value("L0C->UB", 0) == 0);
    CHECK(rep["dma_bytes"]["GM->L1"] == 2 * (M * K + K * N + N));
    // The fix pipe reads each 32 x 128 f32 accumulator at 128 B/cycle: 128 cycles a tile, and its flags.
    const int fix = rep["pipes"]["FIX"]["busy_cycles"];
    CHECK(fix >= 128 * tiles);
    CHECK(fix <= 128 * tiles + 4 * tiles);
    const std::string src = Pipeline(g.output).compile_to_cpp_source("gemm_bf16_fix_src", Target("npu"));
    CHECK_THAT(src, Contains("Fix().bias(kiln_tile(core, Mem::L1, kiln_addr(") &&
                        Contains("1, 128, 1, 128, \"output.bias\", DType::BF16)).relu());") && !Contains("TCVT"));
    std::vector<std::shared_ptr<internal::FunctionContents>> outs{g.output.contents()};
    auto sizes = internal::concrete_sizes(outs, {{"output", {N, M}}, {"A", {K, M}}, {"B", {N, K}}, {"bias", {N}}}, "test");
    const internal::NpuCostEstimate e = internal::npu_predict(outs, Target("npu"), sizes.values);
    CHECK(e.gm_write == rep["gm_write_bytes"].get<uint64_t>());
    CHECK(e.busy.at("V") == 0);
    CHECK(e.cycles == Approx(rep["cycles"].get<double>()).epsilon(0.001));
}

TEST_CASE("the fix pipe's epilogues of float accumulators: f16 with a scale, f32 with an f32 bias, the sum alone",
          "[npu][codegen][f16][matmul][fix]") {
    // f16 operands, f32 sums; each output one fix-pipe store from L0C,
    // bitwise the host's, with no vector instruction.
    const int M = 64, N = 64, K = 128;
    ImageParam A(Float(16), 2, "A"), B(Float(16), 2, "B"), b16(Float(16), 1, "b16"), b32(Float(32), 1, "b32");
    Var x("x"), y("y"), yo("yo"), yi("yi");
    RDom k(0, K, "k");
    Buffer<kiln::float16_t, 2> a(K, M), b(N, K);
    Buffer<kiln::float16_t, 1> bias16(N);
    Buffer<float, 1> bias32(N);
    for (int j = 0; j < M; j++)
        for (int i = 0; i < K; i++) a(i, j) = kiln::float16_t(std::sin(0.37f * i + 0.11f * j));
    for (int j = 0; j < K; j++)
        for (int i = 0; i < N; i++) b(i, j) = kiln::float16_t(std::cos(0.23f * i - 0.07f * j));
    for (int i = 0; i < N; i++) bias16(i) = kiln::float16_t(0.5f * std::sin(0.3f * i)), bias32(i) = 0.25f * std::cos(0.2f * i);
    A.set(a), B.set(b), b16.set(bias16), b32.set(bias32);
    struct Case {
        const char *name, *fix;
        Type type;
    };
    for (const Case &c : {Case{"f16_relu_scale", "Fix().bias(", Float(16)}, Case{"f32_bias", "Fix().bias(", Float(32)},
                          Case{"f32_sum", "v_output_stride_1), kiln_tile(core, Mem::L0C, kiln_addr(", Float(32)}}) {
        INFO(c.name);
        const std::string name = c.name;
        Func matmul("matmul"), output("output");
        matmul(x, y) = 0.0f;
        matmul(x, y) += cast<float>(A(k, y)) * cast<float>(B(x, k));
        if (name == "f16_relu_scale")
            output(x, y) = cast<kiln::float16_t>(max(matmul(x, y) + cast<float>(b16(x)), 0.0f) * 0.25f);
        else if (name == "f32_bias")
            output(x, y) = matmul(x, y) + b32(x);
        else
            output(x, y) = matmul(x, y);
        output.bound(x, 0, N).split(y, yo, yi, 16);
        matmul.compute_at(output, yo).store_in(MemoryType::L0C).double_buffer();
        const halide_type_t ht(halide_type_float, (uint8_t)c.type.bits());
        Halide::Runtime::Buffer<> host(ht, N, M), npu(ht, N, M);
        output.realize(host);
        json rep = run_npu_args(Pipeline(output), {{"A", a}, {"B", b}, {"b16", bias16}, {"b32", bias32}, {"output", npu}},
                                "gemm_fix_" + name);
        CHECK(std::memcmp(host.data(), npu.data(), host.size_in_bytes()) == 0);
        CHECK(rep["race_count"] == 0);
        CHECK(rep["instructions_by_family"].value("vector", 0) == 0);
        CHECK(rep["dma_bytes"]["L0C->GM"] == (int)c.type.bytes() * M * N);
        const std::string src = Pipeline(output).compile_to_cpp_source("gemm_fix_src_" + name, Target("npu"));
        CHECK_THAT(src, Contains(c.fix));
        if (name == "f16_relu_scale") CHECK_THAT(src, Contains(".relu().scale(") && Contains("DType::F16)).relu()"));
    }
}

TEST_CASE("an epilogue of a float accumulator the fix pipe cannot apply stays on the vector unit",
          "[npu][codegen][f16][matmul][fix]") {
    // GELU (tanh), and ReLU before the bias (the fix pipe adds the bias
    // first): the accumulator moves L0C -> UB through the fix pipe, the
    // vector unit computes the epilogue and MTE3 stores it, still bitwise
    // the host's.
    const int M = 64, N = 128, K = 128;
    for (int form = 0; form < 2; form++) {
        INFO((form == 0 ? "gelu" : "relu before the bias"));
        Bf16Gemm g(M, N, K);
        Expr v = g.matmul(g.x, g.y) + cast<float>(g.bias(g.x));
        Expr e = form == 0 ? 0.5f * v * (1.0f + tanh(0.7978845608f * (v + 0.044715f * v * v * v)))
                           : max(g.matmul(g.x, g.y), 0.0f) + cast<float>(g.bias(g.x));
        Func out("out");
        out(g.x, g.y) = cast<bf16>(e);
        Buffer<bf16, 2> host(N, M), npu(N, M);
        out.realize(host);
        Var yo("yo"), yi("yi");
        out.bound(g.x, 0, N).split(g.y, yo, yi, 16);
        g.matmul.compute_at(out, yo).store_in(MemoryType::L0C).double_buffer();
        json rep = run_npu_args(Pipeline(out), {{"A", g.a}, {"B", g.b}, {"bias", g.bs}, {"out", npu}},
                                form == 0 ? "gemm_gelu_vector" : "gemm_relu_first_vector");
        CHECK(count_different_bits(host, npu) == 0);
        CHECK(rep["race_count"] == 0);
        CHECK(rep["instructions_by_family"].value("vector", 0) > 0);
        CHECK(rep["dma_bytes"]["L0C->UB"] == 4 * M * N);  // the f32 accumulator into UB
        CHECK(rep["dma_bytes"]["UB->GM"] == 2 * M * N);
        CHECK(rep["dma_bytes"].value("L0C->GM", 0) == 0);
        const std::string src = Pipeline(out).compile_to_cpp_source(form == 0 ? "gelu_src" : "relu_first_src", Target("npu"));
        CHECK_THAT(src, !Contains("Fix()"));
    }
}

TEST_CASE("bf16 GEMM with a split K and an L1 panel: k-slices accumulate in L0C, B's panel serves every row tile",
          "[npu][codegen][f16][matmul]") {
    // 256 x 512 x 256 in 64 x 256 tiles of C, x tiles outermost: B's
    // 256 x 256 panel is loaded into L1 once per x tile (B.in(matmul) at
    // xo, store_in(L1)) and serves the 4 row tiles inside it; each tile's
    // K runs as 4 k-slices of 64 (split(k, ko, ki, 64), ko outermost), each
    // a TMOV of the panel's rows into L0B and a TLOAD of A's 64 x 64 window,
    // double-buffered, accumulated in L0C (TMATMUL for the first slice,
    // TMATMUL_ACC after). The slices run in increasing k, so each sum is the
    // host's sum in the host's order: the output is bitwise the host's.
    const int M = 256, N = 512, K = 256, KS = 64, MT = 64, NT = 256;
    Bf16Gemm g(M, N, K);
    json rep = g.run_with_panel("gemm_split_k");
    const int tiles = (M / MT) * (N / NT), slices = K / KS;
    CHECK(rep["instructions_by_op"]["TMATMUL"] == tiles);
    CHECK(rep["instructions_by_op"]["TMATMUL_ACC"] == tiles * (slices - 1));
    // GM -> L1: B once (its panels), A once per x tile, the bias row per tile.
    CHECK(rep["dma_bytes"]["GM->L1"] == 2 * (K * N + (N / NT) * M * K + tiles * NT));
    // L1 -> L0A / L0B: every tile moves its A slices and the panel's rows.
    CHECK(rep["dma_bytes"]["L1->L0B"] == 2 * tiles * K * NT);
    CHECK(rep["dma_bytes"]["L1->L0A"] == 2 * tiles * MT * K);
    // The panel is loaded in its k-slices: the first panel's by its first
    // row tile, the next panel's by this panel's tiles (a prefetch, below),
    // rather than whole before the tiles: one TLOAD per slice and panel,
    // beside A's per slice and tile and the bias's per tile.
    CHECK(rep["instructions_by_op"]["TLOAD"] == tiles * slices + (N / NT) * slices + tiles);
    const std::string src = Pipeline(g.output).compile_to_cpp_source("gemm_split_k_src", Target("npu"));
    INFO(src);
    // L1 has room for a second panel beside the first (128 KiB each) and
    // A's slices: the panel is a ring of 8 slice slots, slice ko of panel
    // xo in slot (xo * 4 + ko) % 8. The first panel is loaded by the first
    // row tile; with 4 row tiles (too few to load in row parts) the next
    // panel's slice s by row tile 1 + s * 3 / 4, into its slot.
    CHECK_THAT(src, Contains("if (v_output_s0_x_xo == (int32_t)0 && v_output_s0_y_yo == (int32_t)0) core.TLOAD("
                             "kiln_tile(core, Mem::L1, kiln_addr(") &&
                        Contains("(kiln_npu_mod((v_matmul_s1_k_x_ko + (v_output_s0_x_xo * (int32_t)4)), (int32_t)8) * "
                                 "(int32_t)64)) * 512u, 64, 256, 64, 256, \"B_in_matmul\", DType::BF16), v_B_gm.at(") &&
                        Contains("(v_output_s0_y_yo - ((int32_t)0)) == kiln_npu_min((v_output_s0_y_yo_loop_extent) - 1, "
                                 "1 + (v_matmul_s1_k_x_ko - ((int32_t)0)) * ((v_output_s0_y_yo_loop_extent) - 1) / 4)) "
                                 "core.TLOAD(") &&
                        Contains("(kiln_npu_mod(((v_matmul_s1_k_x_ko + (v_output_s0_x_xo * (int32_t)4)) + (int32_t)4), "
                                 "(int32_t)8) * (int32_t)64)) * 512u"));
    // Its slots are a queue: 4 free slots (the second panel's) counted
    // before the loops, each prefetch waits for one, each slice's last move
    // (the last row tile's) frees its slot, and the first move of a slice
    // waits for its load (the first panel's and the prefetched ones counted
    // on two events); all 8 slots drained after the loops.
    const std::string free_set = "core.SET_FLAG(Pipe::MTE1, Pipe::MTE2, 1);\n", free_wait = "core.WAIT_FLAG(Pipe::MTE1, Pipe::MTE2, 1);\n";
    std::string sets, waits;
    for (int s = 0; s < slices; s++) sets += "    " + free_set;
    for (int s = 0; s < 2 * slices; s++) waits += "    " + free_wait;
    CHECK_THAT(src, Contains(sets + "    core.SET_FLAG(Pipe::MTE1, Pipe::MTE2, 2);") && !Contains(sets + "    " + free_set) &&
                        Contains(waits) && !Contains(waits + "    " + free_wait) &&
                        Contains("== (v_output_s0_y_yo_loop_extent) - 1) core.SET_FLAG(Pipe::MTE1, Pipe::MTE2, 1);") &&
                        Contains("if (v_output_s0_x_xo == (int32_t)0 && v_output_s0_y_yo == (int32_t)0) "
                                 "core.WAIT_FLAG(Pipe::MTE2, Pipe::MTE1, 1);") &&
                        Contains("if (v_output_s0_x_xo != (int32_t)0 && v_output_s0_y_yo == (int32_t)0) "
                                 "core.WAIT_FLAG(Pipe::MTE2, Pipe::MTE1, 2);"));
}

TEST_CASE("the next L1 panel loads in row parts spread over the row tiles into the ring's free slots",
          "[npu][codegen][f16][matmul]") {
    // 320 x 512 x 512: B's panel (512 x 256 bf16, 256 KiB) and A's two
    // slices leave L1 room for 7 of the next panel's 8 slices: a ring of 15
    // slots. With 5 row tiles the next panel loads in 4 row parts a slice,
    // one part per slice iteration over the panel's last 32 (so no TLOAD
    // of 32 KiB stalls A's slice loads behind it); the part of slice 7 into
    // the slot of this panel's slice 0 comes after the last tile's move of
    // it. Bitwise the host's, race-free, the same GM bytes as loading each
    // panel once.
    const int M = 320, N = 512, K = 512, KS = 64, MT = 64, NT = 256;
    Bf16Gemm g(M, N, K);
    json rep = g.run_with_panel("gemm_ring_parts");
    const int tiles = (M / MT) * (N / NT), slices = K / KS, panels = N / NT, parts = 4;
    CHECK(rep["dma_bytes"]["GM->L1"] == 2 * (K * N + panels * M * K + tiles * NT));  // and the bias row per tile
    // A per slice and tile, the bias per tile, the first panel per slice, the next in parts.
    CHECK(rep["instructions_by_op"]["TLOAD"] == tiles * slices + tiles + slices + (panels - 1) * slices * parts);
    CHECK(rep["peak_bytes"]["L1"] == 15 * KS * NT * 2 + 2 * MT * KS * 2 + NT * 2);  // slots, A's slices, the bias
    const std::string src = Pipeline(g.output).compile_to_cpp_source("gemm_ring_parts_src", Target("npu"));
    INFO(src);
    CHECK_THAT(src, Contains("(v_output_s0_y_yo_loop_extent) >= 5 && ") && Contains("(int32_t)15) * (int32_t)64)") &&
                        Contains(", 16, 256, \"B_in_matmul\", DType::BF16)") &&
                        Contains(" % 4 == 0) core.WAIT_FLAG(Pipe::MTE1, Pipe::MTE2, 1);") &&
                        Contains(" % 4 == 3) core.SET_FLAG(Pipe::MTE2, Pipe::MTE1, 2);"));
}

TEST_CASE("an L1 panel per row tile loads in k-slices with no guard, a double-buffered one loads whole",
          "[npu][codegen][f16][matmul]") {
    // B's panel computed at the row tile's loop (yo, inside xo): no loop
    // lies between it and the k-slices, so every tile loads its slices
    // unguarded. Double-buffered, its copies alternate with the tiles and
    // it is loaded whole, as before. Both are bitwise the host's and race-free.
    const int M = 128, N = 256, K = 256, KS = 64, MT = 64, NT = 256;
    const int tiles = (M / MT) * (N / NT), slices = K / KS;
    for (bool db : {false, true}) {
        INFO("double-buffered panel: " << db);
        Bf16Gemm g(M, N, K);
        g.split_k_tiles(NT, MT, KS);
        Func panel = g.B.in(g.matmul);
        panel.compute_at(g.output, g.yo).store_in(MemoryType::L1);
        if (db) panel.double_buffer();
        json rep = g.run(db ? "gemm_panel_per_tile_db" : "gemm_panel_per_tile");
        CHECK(count_different_bits(g.host, g.npu) == 0);
        CHECK(rep["race_count"] == 0);
        // A per slice and tile, the bias per tile, and the panel per tile: in slices, or whole.
        CHECK(rep["instructions_by_op"]["TLOAD"] == tiles * slices + tiles + (db ? tiles : tiles * slices));
        CHECK(rep["dma_bytes"]["GM->L1"] == 2 * tiles * (MT * K + K * NT + NT));
    }
}

TEST_CASE("the NPU autoscheduler takes a bf16 GEMM too large for row strips in column panels",
          "[npu][autoschedule][f16][matmul]") {
    // 512 x 512 x 512: a strip of whole rows would need all of B (512 KiB)
    // beside it, so the search takes column panels with K in slices, as
    // schedules/gemm/npu_512.sched does by hand, and must be no more than
    // 1.2x its cycles on the same machine.
    const int M = 512, N = 512, K = 512;
    Bf16Gemm hand(M, N, K), g(M, N, K);
    Var xo("xo"), yo("yo"), xi("xi"), yi("yi");
    RVar ko("ko"), ki("ki");
    hand.output.tile(hand.x, hand.y, xo, yo, xi, yi, 256, 64).reorder(xi, yi, yo, xo);
    hand.B.in(hand.matmul).compute_at(hand.output, xo).store_in(MemoryType::L1);
    hand.matmul.compute_at(hand.output, yo).store_in(MemoryType::L0C).double_buffer();
    hand.matmul.update().split(hand.k, ko, ki, 64).reorder(ki, hand.x, hand.y, ko);
    json rh = hand.run("gemm_512_hand");

    AutoscheduleResult a =
        autoschedule(Pipeline(g.output), Target("npu"), {{"output", {N, M}}, {"A", {K, M}}, {"B", {N, K}}, {"bias", {N}}},
                     AutoscheduleOptions::reproducible());
    INFO(a.schedule_text << a.explanation);
    CHECK_THAT(a.schedule_text, Contains("reorder(xi, yi, yo, xo)") && Contains("matmul: compute_at(output, yo) store_in(L0C)"));
    CHECK_THAT(a.explanation, Contains("panels of "));
    json r = g.run("gemm_512_auto");
    CHECK(count_different_bits(g.host, g.npu) == 0);
    CHECK(r["race_count"] == 0);
    CHECK(a.predicted.total() == Approx(r["cycles"].get<double>()).epsilon(0.02));
    CHECK(r["cycles"].get<double>() <= 1.2 * rh["cycles"].get<double>());
    // The hand schedule is written for one core; on a machine of one core
    // the search finds its shape (256-column panels, 64-row tiles, K in
    // slices of 64, B's panel in L1): within 2% of its cycles.
    npu_pipelines::OneCoreMachine machine;
    Bf16Gemm one(M, N, K);
    json rh1 = hand.run("gemm_512_hand_one_core");
    AutoscheduleResult a1 =
        autoschedule(Pipeline(one.output), Target("npu"), {{"output", {N, M}}, {"A", {K, M}}, {"B", {N, K}}, {"bias", {N}}},
                     AutoscheduleOptions::reproducible());
    INFO(a1.schedule_text);
    CHECK_THAT(a1.schedule_text, Contains("B.in(matmul): compute_at(output, xo) store_in(L1)") &&
                                     Contains("split(k.x, ko, ki, "));
    json r1 = one.run("gemm_512_auto_one_core");
    CHECK(count_different_bits(one.host, one.npu) == 0);
    CHECK(r1["cycles"].get<double>() <= 1.02 * rh1["cycles"].get<double>());
}

TEST_CASE("the NPU autoscheduler leaves no operand panel behind when row strips win",
          "[npu][autoschedule][f16][matmul]") {
    // The search tries column panels, which stage B in L1 through
    // B.in(matmul): a wrapper kept in the image, not in a Func's schedule.
    // Row strips win at this size; the pipeline must then compile with no
    // trace of the panels' wrapper (it named loops the strips do not have).
    const int M = 256, N = 128, K = 128;
    Bf16Gemm g(M, N, K);
    AutoscheduleResult a =
        autoschedule(Pipeline(g.output), Target("npu"), {{"output", {N, M}}, {"A", {K, M}}, {"B", {N, K}}, {"bias", {N}}},
                     AutoscheduleOptions::reproducible());
    INFO(a.schedule_text << a.explanation);
    CHECK_THAT(a.explanation, Contains("panels of 128 columns"));  // tried
    CHECK_THAT(a.schedule_text, Contains("split(y, yo, yi, ") && !Contains(".in("));
    json r = g.run("gemm_strips_auto");
    CHECK(count_different_bits(g.host, g.npu) == 0);
}

TEST_CASE("a k-slice of an L1 panel must be whole rows of it", "[npu][codegen][f16][matmul][error]") {
    ImageParam A(BFloat(16), 2, "A"), B(BFloat(16), 2, "B");
    Var x("x"), y("y"), xo("xo"), yo("yo"), xi("xi"), yi("yi");
    RVar ko("ko"), ki("ki");
    RDom k(0, 256, "k");
    Func matmul("matmul"), output("output");
    matmul(x, y) = 0.0f;
    matmul(x, y) += cast<float>(A(k, y)) * cast<float>(B(x, k));
    output(x, y) = matmul(x, y);
    output.tile(x, y, xo, yo, xi, yi, 128, 32);
    matmul.compute_at(output, xo).store_in(MemoryType::L0C);
    matmul.update().split(k, ko, ki, 64).reorder(ki, x, y, ko);
    // A's panel (32 rows x all of K) in L1: its k-slices are columns.
    Func a_in = A.in(matmul);
    a_in.compute_at(output, xo).store_in(MemoryType::L1);
    REQUIRE_COMPILE_ERROR(Pipeline(output).compile_to_cpp_source("bad", Target("npu")),
                          Contains("NPU target: Func matmul multiplies " + a_in.name() + ", an operand panel in L1 "
                                   "of 32 x 256, by windows 32 x 64 at column ") &&
                              Contains("a k-slice is moved L1 -> L0A as whole rows of the panel (tiles have no row "
                                       "stride of their own), so stage in L1 the operand whose rows run along k "
                                       "(B(x, k), N columns: " + a_in.name() + " must span the columns of matmul's "
                                       "tile) and load the other from GM per k-slice, or do not split k"));
}

TEST_CASE("a Func in L1 is a copy of an input's window, read only by matrix updates",
          "[npu][codegen][f16][error]") {
    ImageParam B(BFloat(16), 2, "B");
    Var x("x"), y("y"), xo("xo"), yo("yo"), xi("xi"), yi("yi");
    Func b_in("b_in"), out("out");
    b_in(x, y) = B(x, y);
    out(x, y) = cast<float>(b_in(x, y)) * 2.0f;
    out.tile(x, y, xo, yo, xi, yi, 64, 8);
    b_in.compute_at(out, xo).store_in(MemoryType::L1);
    REQUIRE_COMPILE_ERROR(Pipeline(out).compile_to_cpp_source("bad", Target("npu")),
                          Contains("NPU target: Func out reads b_in, which is stored in L1 (store_in(L1)); the "
                                   "vector pipe (V) reaches only UB and L1 holds matrix operands, so read b_in only "
                                   "in a matrix update (an operand panel), or store_in(UB) it"));
    Func scaled("scaled"), out2("out2");
    scaled(x, y) = cast<float>(B(x, y)) * 2.0f;
    out2(x, y) = scaled(x, y);
    out2.tile(x, y, xo, yo, xi, yi, 64, 8);
    scaled.compute_at(out2, xo).store_in(MemoryType::L1);
    REQUIRE_COMPILE_ERROR(Pipeline(out2).compile_to_cpp_source("bad", Target("npu")),
                          Contains("NPU target: Func scaled is stored in L1, but it is computed and read by the "
                                   "vector pipe (V), which reaches only UB: L1 holds matrix operands, which only "
                                   "DMA writes, so a Func in L1 must be a copy of a window of an input or a "
                                   "compute_root Func of its type"));
}

TEST_CASE("f16 and bf16 elementwise: arithmetic on 16-bit values rounds where the host rounds", "[npu][codegen][f16]") {
    for (Type t : {Float(16), BFloat(16)}) {
        INFO(t.to_string());
        ImageParam in(t, 2, "in");
        Var x("x"), y("y"), xo("xo"), yo("yo"), xi("xi"), yi("yi");
        Func f("f"), out("out");
        // 16-bit arithmetic: each operation rounds to 16 bits (two TCVTs in the middle of the expression).
        f(x, y) = in(x, y) * in(x, y) + cast(t, 1.5f);
        out(x, y) = cast(t, exp(cast<float>(f(x, y)) * 0.25f));
        out.tile(x, y, xo, yo, xi, yi, 64, 8);
        f.compute_at(out, xo);  // a 16-bit Func in UB
        const int W = 256, H = 32;
        Halide::Runtime::Buffer<void> data(halide_type_t(t.is_bfloat() ? halide_type_bfloat : halide_type_float, 16),
                                           W, H),
            host(data.type(), W, H), npu(data.type(), W, H);
        for (int j = 0; j < H; j++)
            for (int i = 0; i < W; i++) {
                float v = std::sin(0.05f * i) * 2 + 0.1f * j;
                uint16_t bits = t.is_bfloat() ? bf16(v).to_bits() : kiln::float16_t(v).to_bits();
                ((uint16_t *)data.data())[j * W + i] = bits;
            }
        in.set(data);
        out.realize(host);
        json rep = run_npu_args(Pipeline(out), {{"in", data}, {"out", npu}}, t.is_bfloat() ? "ew_bf16" : "ew_f16");
        CHECK(std::memcmp(host.data(), npu.data(), W * H * 2) == 0);
        CHECK(rep["race_count"] == 0);
        CHECK(rep["gm_read_bytes"] == 2 * W * H);
    }
}

TEST_CASE("NPU legality errors of 16-bit types", "[npu][codegen][f16][error]") {
    auto source = [](Func f) { return Pipeline(f).compile_to_cpp_source("bad", Target("npu")); };
    Var x("x"), y("y"), yo("yo"), yi("yi");
    {
        ImageParam A(BFloat(16), 2, "A"), B(Float(32), 2, "B");
        RDom k(0, 64, "k");
        Func matmul("matmul"), output("output");
        matmul(x, y) = 0.0f;
        matmul(x, y) += cast<float>(A(k, y)) * B(x, k);
        output(x, y) = matmul(x, y);
        output.bound(x, 0, 64).split(y, yo, yi, 16);
        matmul.compute_at(output, yo).store_in(MemoryType::L0C);
        REQUIRE_COMPILE_ERROR(source(output), Contains("NPU target: Func matmul multiplies A (bf16) by B (f32); the "
                                                       "matrix unit takes two operands of one type"));
    }
    {
        ImageParam in(BFloat(16), 2, "in");
        Func mid("mid"), out("out");
        mid(x, y) = cast<bf16>(cast<float>(in(x, y)) * 2.0f);
        out(x, y) = cast<float>(mid(x, y));
        out.bound(x, 0, 64).bound(y, 0, 16).split(y, yo, yi, 8);
        mid.compute_root().bound(x, 0, 64).bound(y, 0, 16).split(y, yo, yi, 8);
        REQUIRE_COMPILE_ERROR(source(out), Contains("NPU target: Func mid is a bfloat16 Func stored in GM; the NPU "
                                                    "code generator keeps GM intermediates in float32"));
    }
    {
        ImageParam A(Float(16), 2, "A"), B(Float(16), 2, "B");
        RDom k(0, 64, "k");
        Func matmul("matmul"), output("output");
        matmul(x, y) = cast<kiln::float16_t>(0.0f);
        matmul(x, y) += A(k, y) * B(x, k);
        output(x, y) = cast<float>(matmul(x, y));
        output.bound(x, 0, 64).split(y, yo, yi, 16);
        matmul.compute_at(output, yo).store_in(MemoryType::L0C);
        REQUIRE_COMPILE_ERROR(source(output), Contains("NPU target: Func matmul is stored in L0C as float16; the "
                                                       "matrix unit accumulates in float32"));
    }
}

TEST_CASE("a bf16 stencil loads its halo once as bf16 and widens it once per tile", "[npu][codegen][f16][stencil]") {
    ImageParam in(BFloat(16), 2, "in");
    Var x("x"), y("y"), xo("xo"), yo("yo"), xi("xi"), yi("yi");
    Func clamped = BoundaryConditions::repeat_edge(in);
    Func blur_x("blur_x"), out("out");
    blur_x(x, y) = (cast<float>(clamped(x - 1, y)) + cast<float>(clamped(x, y)) + cast<float>(clamped(x + 1, y))) / 3;
    out(x, y) = cast<bf16>((blur_x(x, y - 1) + blur_x(x, y) + blur_x(x, y + 1)) / 3);
    out.tile(x, y, xo, yo, xi, yi, 64, 32).double_buffer();
    blur_x.compute_at(out, xo).double_buffer();
    const int W = 256, H = 64, tiles = (W / 64) * (H / 32);
    Halide::Runtime::Buffer<void> data(halide_type_t(halide_type_bfloat, 16), W, H), host(data.type(), W, H),
        npu(data.type(), W, H);
    for (int j = 0; j < H; j++)
        for (int i = 0; i < W; i++) ((uint16_t *)data.data())[j * W + i] = bf16(std::sin(0.07f * i) + 0.03f * j).to_bits();
    in.set(data);
    out.realize(host);
    json rep = run_npu_args(Pipeline(out), {{"in", data}, {"out", npu}}, "blur_bf16");
    CHECK(std::memcmp(host.data(), npu.data(), W * H * 2) == 0);
    CHECK(rep["race_count"] == 0);
    // Per tile one bf16 window of 34 rows of 66 values (132 bytes, moved as 160), widened by one TCVT; the
    // output narrowed by another.
    CHECK(rep["gm_read_bytes"] == tiles * 34 * 160);
    CHECK(rep["instructions_by_op"]["TLOAD"] == tiles);
    CHECK(rep["instructions_by_op"]["TCVT"] == 2 * tiles);
    CHECK(rep["instructions_by_op"]["TEXTRACT"] == 2 * tiles);
}
