// The ideal instruction stream of an algorithm (codegen/NpuIdeal.h): the
// least GM traffic and vector / matrix work any schedule of it needs,
// checked against counts by hand (softmax, layernorm, a 3x3 blur, a matrix
// product), and a lower bound of the simulated kernels' cycles.
#include <catch2/catch.hpp>

#include "codegen/NpuIdeal.h"
#include "npu_pipelines.h"

using namespace npu_pipelines;
using internal::npu_ideal_stream;
using internal::NpuIdealStream;

namespace {

const npu::Machine &machine() { return npu::default_machine(); }

// Cycles of one f32 element-op over n points.
double ops(double n) { return n * 4.0 / machine().vector_bytes_per_cycle; }

}  // namespace

TEST_CASE("ideal stream of softmax: its input and output once, 8 element-ops a point", "[npu][ideal]") {
    const npu::Machine &m = machine();
    Softmax s;
    s.fused(8, true);
    Pipeline p(s.output);
    NpuIdealStream st = npu_ideal_stream(p, {{"input", {W, H}}, {"output", {W, H}}}, m);
    CHECK(st.gm_read_bytes == (int64_t)W * H * 4);
    CHECK(st.gm_write_bytes == (int64_t)W * H * 4);
    CHECK(st.read_cycles == Approx(W * H * 4.0 / m.rate(npu::Pipe::MTE2).bytes_per_cycle));
    CHECK(st.write_cycles == Approx(W * H * 4.0 / m.rate(npu::Pipe::MTE3).bytes_per_cycle));
    // row_max: one TROWMAX over the rows (its initial value is none); exps:
    // the fused TROWEXPANDSUB and a TEXP; row_sum: one TROWSUM; output: the
    // fused TROWEXPANDDIV.
    CHECK(st.vector_cycles_of.at("row_max") == Approx(m.reduce_factor * ops(W * H)));
    CHECK(st.vector_cycles_of.at("exps") == Approx((1 + m.transcendental_factor) * ops(W * H)));
    CHECK(st.vector_cycles_of.at("row_sum") == Approx(m.reduce_factor * ops(W * H)));
    CHECK(st.vector_cycles_of.at("output") == Approx(ops(W * H)));
    CHECK(st.matrix_cycles == 0);
    CHECK(st.roofline_cycles() == Approx(std::max(st.vector_cycles, st.read_cycles)));
    // No schedule beats it: the simulated kernel takes at least as long.
    Buffer<float, 2> in = make_input(), out(W, H);
    json r = run_npu(p, in, out, "ideal_softmax");
    CHECK(r["cycles"].get<double>() >= st.roofline_cycles());
    CHECK(r["pipes"]["V"]["busy_cycles"].get<double>() >= st.vector_cycles);
}

TEST_CASE("ideal stream of layernorm: gamma and beta once, per-row work over the rows only", "[npu][ideal]") {
    const npu::Machine &m = machine();
    LayerNorm l;
    l.fused(8, true);
    Pipeline p(l.output);
    NpuIdealStream st = npu_ideal_stream(
        p, {{"input", {W, H}}, {"gamma", {W}}, {"beta", {W}}, {"output", {W, H}}}, m);
    CHECK(st.gm_read_bytes == (int64_t)W * H * 4 + 2 * W * 4);
    // sum: a reduce op; sum_sq: the difference once (d * d shares it), its
    // square and a reduce op; normalized: a subtraction and a product; output:
    // a product and a sum, per point. mean (a division) and inv_std (a
    // division, a sum, a square root and the reciprocal's division) per row.
    CHECK(st.vector_cycles_of.at("sum") == Approx(m.reduce_factor * ops(W * H)));
    CHECK(st.vector_cycles_of.at("sum_sq") == Approx((2 + m.reduce_factor) * ops(W * H)));
    CHECK(st.vector_cycles_of.at("normalized") == Approx(2 * ops(W * H)));
    CHECK(st.vector_cycles_of.at("output") == Approx(2 * ops(W * H)));
    CHECK(st.vector_cycles_of.at("mean") == Approx(ops(H)));
    CHECK(st.vector_cycles_of.at("inv_std") == Approx((3 + m.transcendental_factor) * ops(H)));
}

TEST_CASE("ideal stream of a 3x3 blur: the input once, no halo, the edges free", "[npu][ideal]") {
    Blur b;
    b.npu(64, 32, true);
    NpuIdealStream st = npu_ideal_stream(Pipeline(b.output), {{"input", {W, H}}, {"output", {W, H}}}, machine());
    CHECK(st.gm_read_bytes == (int64_t)W * H * 4);
    // Each Func once per point of the baseline (compute_root): blur_x over
    // the output's rows and one more above and below; the clamp is the
    // DMA's (edges replicated by the load), no vector work.
    CHECK(st.vector_cycles_of.at("blur_x") == Approx(3 * ops(W * (H + 2))));
    CHECK(st.vector_cycles_of.at("output") == Approx(3 * ops(W * H)));
    CHECK(st.vector_cycles_of.at(b.clamped.name()) == 0);
}

TEST_CASE("ideal stream of a matrix product: M N K MACs at the matrix unit's rate", "[npu][ideal]") {
    const npu::Machine &m = machine();
    const int M = 256, N = 128, K = 64;
    ImageParam A(Float(32), 2, "A"), B(Float(32), 2, "B");
    Var x("x"), y("y");
    RDom k(0, K, "k");
    Func matmul("matmul"), out("out");
    matmul(x, y) = 0.0f;
    matmul(x, y) += A(k, y) * B(x, k);
    out(x, y) = max(matmul(x, y), 0.0f);
    NpuIdealStream st = npu_ideal_stream(Pipeline(out), {{"A", {K, M}}, {"B", {N, K}}, {"out", {N, M}}}, m);
    CHECK(st.matrix_cycles == Approx((double)M * N * K / (m.matrix_m * m.matrix_n * m.matrix_k(npu::DType::F32))));
    CHECK(st.vector_cycles_of.at("matmul") == 0);  // the product is the matrix unit's, the 0 a constant
    CHECK(st.vector_cycles_of.at("out") == Approx(ops(M * N)));
    CHECK(st.gm_read_bytes == 4 * ((int64_t)K * M + N * K));
    // Buffers larger than the product reads (B with 4 K rows, A with more
    // columns): the ideal reads what the algorithm does, not the buffers.
    st = npu_ideal_stream(Pipeline(out), {{"A", {2 * K, M}}, {"B", {N, 4 * K}}, {"out", {N, M}}}, m);
    CHECK(st.gm_read_bytes == 4 * ((int64_t)K * M + N * K));
}

TEST_CASE("ideal stream of a bf16 row pipeline: each input element widened once, scalars free", "[npu][ideal]") {
    ImageParam input(BFloat(16), 2, "input");
    Var x("x"), y("y");
    RDom r(0, W, "r");
    Func row_max("row_max"), out("out");
    row_max(y) = type_min(Float(32));
    row_max(y) = max(row_max(y), cast<float>(input(r, y)));
    // Two Funcs read the input as float32; 1 / sqrt(64.0f) is the S pipe's.
    out(x, y) = cast<bfloat16_t>((cast<float>(input(x, y)) - row_max(y)) * (1.0f / sqrt(64.0f)));
    out.bound(x, 0, W);
    NpuIdealStream st = npu_ideal_stream(Pipeline(out), {{"input", {W, H}}, {"out", {W, H}}}, machine());
    CHECK(st.gm_read_bytes == (int64_t)W * H * 2);
    CHECK(st.vector_cycles_of.at("input (widened)") == Approx(ops(W * H)));
    CHECK(st.vector_cycles_of.at("row_max") == Approx(machine().reduce_factor * ops(W * H)));
    CHECK(st.vector_cycles_of.at("out") == Approx(3 * ops(W * H)));  // the difference, the product, the rounding
}
