// GEMM + bias + activation (generators/gemm.cpp) under its three shipped
// schedules against the same algorithm and schedules in Halide 14, on sizes
// that are and are not multiples of the 2-vector x 8-row register tile; and
// the fusion report of each schedule.
//
// Tolerance. The product sums k = 0, 1, ..., K-1 in order from 0 in every
// schedule of both libraries (the k loop is moved, never split), and Halide
// runs with strict_float (no FMA contraction), so the product and the bias
// are bit-exact and ReLU is compared exactly. GELU calls tanh, which Kiln
// takes from the C library and Halide from its own polynomial: a few ulps
// of tanh, amplified by 1 + tanh(u) where tanh(u) is near -1 (large negative
// inputs, where GELU is near 0); hence 1e-5 relative error against
// max(|halide|, 1e-2), i.e. absolute 1e-7 for outputs below 0.01.
#include "pattern_diff.h"

namespace {

enum class Act { Relu, Gelu };
enum class Sched { Unfused, Fused, HostTiled };

const char *sched_file(Sched s) {
    return s == Sched::Unfused ? "gemm/unfused.sched" : s == Sched::Fused ? "gemm/fused.sched" : "gemm/host_tiled.sched";
}

// The Halide program: the algorithm of generators/gemm.cpp and the schedule
// of schedules/gemm/<s>.sched, written with Halide's API.
Halide::Func halide_gemm(const kiln::Buffer<float> &a, const kiln::Buffer<float> &b, const kiln::Buffer<float> &bias,
                         Act act, Sched s, int vec) {
    using namespace Halide;
    Buffer<float> A(*a.raw_buffer()), B(*b.raw_buffer()), Bias(*bias.raw_buffer());
    Var x("x"), y("y"), xi("xi"), yi("yi");
    RDom k(0, A.dim(0).extent(), "k");
    Func matmul("matmul"), bias_add("bias_add"), output("output");
    matmul(x, y) = 0.0f;
    matmul(x, y) += A(k, y) * B(x, k);
    bias_add(x, y) = matmul(x, y) + Bias(x);
    Expr v = bias_add(x, y);
    if (act == Act::Relu) output(x, y) = max(v, 0.0f);
    else output(x, y) = 0.5f * v * (1.0f + tanh(0.7978845608f * (v + 0.044715f * v * v * v)));
    if (s == Sched::Unfused) {
        output.vectorize(x, vec);
        bias_add.compute_root().vectorize(x, vec);
        matmul.compute_root().vectorize(x, vec);
        matmul.update(0).reorder(x, k, y).vectorize(x, vec, TailStrategy::GuardWithIf);
    } else {
        output.tile(x, y, xi, yi, vec * 2, 8).vectorize(xi, vec).unroll(xi).unroll(yi);
        if (s == Sched::HostTiled) output.parallel(y);
        matmul.compute_at(output, x).vectorize(x, vec).unroll(x).unroll(y);
        matmul.update(0).reorder(x, y, k).vectorize(x, vec).unroll(x).unroll(y);
    }
    return output;
}

void check_gemm(Act act, Sched s, int n, int m, int k) {
    INFO("gemm " << (act == Act::Relu ? "relu" : "gelu") << " " << sched_file(s) << ", N=" << n << " M=" << m
                 << " K=" << k);
    kiln::Buffer<float> a = kd::random_tensor({k, m}, 1), b = kd::random_tensor({n, k}, 2),
                        bias = kd::random_tensor({n}, 3);
    kd::Out<float> out("output", {n, m});
    const int vec = kiln::Target::host().natural_vector_size(kiln::Float(32));

    Halide::Func h = halide_gemm(a, b, bias, act, s, vec);
    Halide::Buffer<float> hout(*out.halide.raw_buffer());
    h.realize(hout, kd::H::strict_float());

    kd::GeneratorRun g("gemm", {act == Act::Relu ? "activation=relu" : "activation=gelu"}, sched_file(s));
    g.bind("A", a);
    g.bind("B", b);
    g.bind("bias", bias);
    g.realize({out.kiln.raw_buffer()});

    if (act == Act::Relu) kd::compare(out);  // bit-exact
    else kd::check_relative(out, 1e-5, 1e-2);
}

// Sizes: multiples of the tile (2 vectors x 8 rows) and not.
const int kSizes[][3] = {{64, 16, 32}, {45, 19, 13}, {100, 9, 70}};

}  // namespace

TEST_CASE("gemm: relu, every schedule, against Halide", "[pattern][gemm]") {
    for (Sched s : {Sched::Unfused, Sched::Fused, Sched::HostTiled})
        for (const auto &sz : kSizes) check_gemm(Act::Relu, s, sz[0], sz[1], sz[2]);
}

TEST_CASE("gemm: gelu, every schedule, against Halide", "[pattern][gemm]") {
    for (Sched s : {Sched::Unfused, Sched::Fused, Sched::HostTiled})
        for (const auto &sz : kSizes) check_gemm(Act::Gelu, s, sz[0], sz[1], sz[2]);
}

// The product (N x M floats) and the biased product are the intermediates;
// with a cache smaller than them but larger than a register tile, each
// eliminated one saves its size written and read back.
TEST_CASE("gemm: fusion report, bytes saved = 2 x size of each eliminated intermediate", "[pattern][gemm][report]") {
    const int n = 128, m = 96, k = 64;
    const int64_t cache = 16 * 1024, intermediate = (int64_t)n * m * 4;
    std::map<std::string, std::vector<int>> sizes = {{"output", {n, m}}, {"A", {k, m}}, {"B", {n, k}}, {"bias", {n}}};
    auto report = [&](Sched s) {
        kd::GeneratorRun g("gemm", {}, sched_file(s));
        return g.pipeline.report(sizes, kiln::Target::host(), cache);
    };
    kiln::PipelineReport unfused = report(Sched::Unfused), fused = report(Sched::Fused),
                         tiled = report(Sched::HostTiled);
    CHECK(unfused.bytes_saved() == 0);
    // Unfused: matmul and bias_add are written and read back; fused: neither.
    CHECK(unfused.memory_bytes - fused.memory_bytes == 2 * (2 * intermediate));
    CHECK(unfused.memory_bytes - tiled.memory_bytes == 2 * (2 * intermediate));
    // The fused schedule's own baseline moves matmul to the root (bias_add
    // stays inlined there): one intermediate.
    CHECK(fused.bytes_saved() == 2 * intermediate);
    CHECK(fused.memory_bytes == fused.input_bytes + fused.output_bytes);
    CHECK(fused.exact);
}
