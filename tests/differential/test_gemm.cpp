// GEMM + bias + activation (generators/gemm.cpp) under its three shipped
// schedule files against the same algorithm in Halide 14 with the same
// files applied (halide_apply), on sizes that are and are not multiples of
// the register tiles (2 vectors x 8 rows, x 12 rows in host_tiled), and
// smaller than one tile (host_tiled's fallback specialization); and the
// fusion report of each schedule.
//
// Tolerance. The product sums k = 0, 1, ..., K-1 in order from 0 in every
// schedule of both libraries (the k loop is moved, never split), and Halide
// runs with strict_float (no FMA contraction), so the product and the bias
// are bit-exact and ReLU is compared exactly. GELU calls tanh, which Kiln
// takes from the C library and Halide from its own polynomial: a few ulps
// of tanh, amplified by 1 + tanh(u) where tanh(u) is near -1 (large negative
// inputs, where GELU is near 0); hence 1e-5 relative error against
// max(|halide|, 1e-2), i.e. absolute 1e-7 for outputs below 0.01.
#include "patterns.h"

namespace {

bool is_relu(const std::string &act) { return act == "relu"; }

// The algorithm of generators/gemm.cpp in Halide, scheduled by `file`.
Halide::Func halide_gemm(const kiln::Buffer<float> &a, const kiln::Buffer<float> &b, const kiln::Buffer<float> &bias,
                         const std::string &act, const kiln::ScheduleFile &file) {
    using namespace Halide;
    Buffer<float> A(*a.raw_buffer()), B(*b.raw_buffer()), Bias(*bias.raw_buffer());
    Var x("x"), y("y");
    RDom k(0, A.dim(0).extent(), "k");
    Func b_in(B), matmul("matmul"), bias_add("bias_add"), output("output");
    matmul(x, y) = 0.0f;
    matmul(x, y) += A(k, y) * b_in(x, k);
    bias_add(x, y) = matmul(x, y) + Bias(x);
    Expr v = bias_add(x, y);
    if (is_relu(act)) output(x, y) = max(v, 0.0f);
    else output(x, y) = 0.5f * v * (1.0f + tanh(0.7978845608f * (v + 0.044715f * v * v * v)));
    kd::halide_apply(file, {{"matmul", matmul}, {"bias_add", bias_add}, {"output", output}, {"B", b_in}}, {{"k", k}},
                     {{"B.width", B.dim(0).extent()}, {"A.height", A.dim(1).extent()}});
    return output;
}

void check_gemm(const std::string &act, const std::string &schedule) {
    kiln::ScheduleFile file = kiln::ScheduleFile::load(kd::schedule_path("gemm", schedule));
    kd::KilnGenerator g({"gemm", {"activation=" + act}}, file);
    // (N, M, K): multiples of the tiles and not.
    // Below one register tile only host_tiled (its fallback specialization):
    // unfused and fused shift whole vectors (and fused its 8-row tiles) inwards.
    for (auto [n, m, k] : {std::tuple{64, 24, 32}, {45, 19, 13}, {100, 13, 70}, {5, 12, 1}, {31, 5, 33}, {33, 1, 5}}) {
        if ((n < 32 || m < 12) && schedule != "host_tiled") continue;
        INFO("gemm activation=" << act << " under " << schedule << ".sched, N=" << n << " M=" << m << " K=" << k);
        kiln::Buffer<float> a = kd::random_buffer({k, m}, -1, 1, 1), b = kd::random_buffer({n, k}, -1, 1, 2),
                            bias = kd::random_buffer({n}, -1, 1, 3);
        kd::Out<float> out("output", {n, m});
        Halide::Buffer<float> hout(*out.halide.raw_buffer());
        halide_gemm(a, b, bias, act, file).realize(hout, kd::H::strict_float());
        g.set("A", a);
        g.set("B", b);
        g.set("bias", bias);
        g.realize({out.kiln.raw_buffer()});
        if (is_relu(act)) kd::compare(out);  // bit-exact
        else kd::compare_relative(out, 1e-5, 1e-2);
    }
}

}  // namespace

TEST_CASE("gemm: relu, every schedule file, against Halide", "[pattern][gemm]") {
    for (const std::string &s : kd::kSchedules) check_gemm("relu", s);
}

TEST_CASE("gemm: gelu, every schedule file, against Halide", "[pattern][gemm]") {
    for (const std::string &s : kd::kSchedules) check_gemm("gelu", s);
}

// The product (N x M floats) and the biased product are the intermediates;
// with a cache smaller than them but larger than a register tile, each one
// a schedule eliminates saves its size written and read back.
TEST_CASE("gemm: fusion report, bytes saved = 2 x size of each eliminated intermediate", "[pattern][gemm][report]") {
    const int n = 128, m = 96, k = 64;
    const int64_t cache = 16 * 1024, intermediate = (int64_t)n * m * 4;
    std::map<std::string, std::vector<int>> sizes = {{"output", {n, m}}, {"A", {k, m}}, {"B", {n, k}}, {"bias", {n}}};
    std::map<std::string, kiln::PipelineReport> r;
    for (const std::string &s : kd::kSchedules) {
        kiln::ScheduleFile file = kiln::ScheduleFile::load(kd::schedule_path("gemm", s));
        kd::KilnGenerator g({"gemm"}, file);
        r[s] = g.pipeline().report(sizes, kiln::Target::host(), cache);
    }
    CHECK(r["unfused"].bytes_saved() == 0);
    // Unfused, matmul and bias_add are written and read back; fused, neither.
    CHECK(r["unfused"].memory_bytes - r["fused"].memory_bytes == 2 * (2 * intermediate));
    CHECK(r["unfused"].memory_bytes - r["host_tiled"].memory_bytes == 2 * (2 * intermediate));
    // The fused schedule's own baseline moves matmul to the root (bias_add
    // stays inlined there): one intermediate.
    CHECK(r["fused"].bytes_saved() == 2 * intermediate);
    CHECK(r["fused"].memory_bytes == r["fused"].input_bytes + r["fused"].output_bytes);
    CHECK(r["fused"].exact);
}
