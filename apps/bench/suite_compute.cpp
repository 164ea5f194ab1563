// The compute-bound cases of apps/bench: GEMM + bias + activation and the
// folded Conv + BN + ReLU. The Halide programs are the generators'
// algorithms under schedules/<generator>/host_tiled.sched, with
// natural_vector_size taken from Halide's host target as Kiln takes it from
// its own; unscheduled if `scheduled` is false (for Halide's autoschedulers).
#include "anchors.h"
#include "case_util.h"
#include "suite.h"

namespace kiln_bench {

namespace {

using namespace Halide;

int vector_size() { return get_host_target().natural_vector_size<float>(); }

// schedules/gemm/host_tiled.sched. B is read through Func(B), so that
// B.in(matmul) can be scheduled as Kiln's wrapper of the input is.
Pipeline halide_gemm(Buffer<float> A, Buffer<float> B, Buffer<float> bias, Activation act, bool scheduled) {
    Var x("x"), y("y"), xo("xo"), yo("yo"), xi("xi"), yi("yi");
    RDom k(0, A.width(), "k");
    Func b_in(B), matmul("matmul"), output("output");
    matmul(x, y) = 0.0f;
    matmul(x, y) += A(k, y) * b_in(x, k);
    Expr v = matmul(x, y) + bias(x);
    output(x, y) = act == Activation::Relu ? max(v, 0.0f)
                                           : 0.5f * v * (1.0f + tanh(0.7978845608f * (v + 0.044715f * v * v * v)));
    if (!scheduled) return Pipeline(output);
    const int n = vector_size();
    Expr tiled = Expr(B.width()) >= n * 2 && Expr(A.height()) >= n * 3 / 4;  // the specialization, then the fallback
    output.specialize(tiled).split(x, xo, xi, n * 2).split(y, yo, yi, n * 3 / 4).reorder(xi, yi, yo, xo);
    output.specialize(tiled).vectorize(xi, n).unroll(xi).unroll(yi).parallel(xo);
    output.split(x, xo, xi, n * 2, TailStrategy::GuardWithIf).split(y, yo, yi, n * 3 / 4, TailStrategy::GuardWithIf);
    output.reorder(xi, yi, yo, xo).parallel(xo);
    matmul.compute_at(output, yo);
    matmul.specialize(tiled).vectorize(x, n).unroll(x).unroll(y);
    matmul.update(0).reorder(x, y, k);
    matmul.update(0).specialize(tiled).vectorize(x, n).unroll(x).unroll(y);
    b_in.in(matmul).compute_at(output, xo);
    return Pipeline(output);
}

// schedules/conv_bn_folded/host_tiled.sched; layout (c, x, y), c innermost.
Pipeline halide_conv_folded(Buffer<float> in, Buffer<float> w, Buffer<float> bias, Buffer<float> mean,
                            Buffer<float> variance, Buffer<float> gamma, Buffer<float> beta, float eps, bool scheduled) {
    Var c("c"), x("x"), y("y"), ci("ci"), rx("rx"), ry("ry"), cv("cv"), xv("xv");
    Func scale("scale"), folded_w("folded_w"), folded_b("folded_b"), conv("conv"), output("output");
    scale(c) = gamma(c) / sqrt(variance(c) + eps);
    folded_w(c, ci, rx, ry) = w(c, ci, rx, ry) * scale(c);
    folded_b(c) = (bias(c) - mean(c)) * scale(c) + beta(c);
    RDom r(0, in.dim(0).extent(), 0, 3, 0, 3, "r");
    conv(c, x, y) = folded_b(c);
    conv(c, x, y) += folded_w(c, r.x, r.y, r.z) * in(r.x, x + r.y, y + r.z);
    output(c, x, y) = max(conv(c, x, y), 0.0f);
    if (!scheduled) return Pipeline(output);
    const int n = vector_size();
    scale.compute_root();
    folded_w.compute_root().vectorize(c, n);
    folded_b.compute_root().vectorize(c, n);
    output.tile(c, x, cv, xv, n * 2, n * 3 / 4).vectorize(cv, n).unroll(cv).unroll(xv).parallel(y);
    conv.compute_at(output, c).vectorize(c, n, TailStrategy::GuardWithIf).unroll(c).unroll(x);
    conv.update(0).reorder(c, x, r.x, r.y, r.z).vectorize(c, n).unroll(c).unroll(x);
    return Pipeline(output);
}

CaseResult gemm_case(const SuiteOptions &o, int n, Activation act) {
    const bool relu = act == Activation::Relu;
    FBuf A = random_buffer({n, n}, -1, 1, 31), B = random_buffer({n, n}, -1, 1, 32),
         bias = random_buffer({n}, -1, 1, 33), out(n, n);
    KilnRunner k("gemm", {relu ? "activation=relu" : "activation=gelu"}, "host_tiled");
    k.bind("A", A), k.bind("B", B), k.bind("bias", bias);
    CaseResult c;
    c.name = std::string(relu ? "gemm+bias+relu " : "gemm+bias+gelu ") + std::to_string(n);
    c.schedule = k.schedule_path();
    c.bytes = 4.0 * (3.0 * n * n + n);
    c.flops = 2.0 * n * n * (double)n;
    c.tolerance = 1e-3;  // sums of n products in different orders (blocked, FMA-contracted)
    c.entries.push_back(run_kiln(k, {&out}, o.runs));
    FBuf h_out = zeros_like(out);
    c.entries.push_back(run_halide(
        [&](bool sc) { return halide_gemm(halide_view(A), halide_view(B), halide_view(bias), act, sc); }, {&h_out},
        {&out}, o));
    check_against(c.entries.back(), {&h_out}, {&out});

    FBuf s_out = zeros_like(out);
    c.entries.push_back(run_anchor("openblas sgemm", [&] { blas_sgemm(n, n, n, A.data(), B.data(), s_out.data()); },
                                   o.runs, "sgemm alone: no bias, no activation (output not compared)", false));
    c.entries.push_back(run_anchor(
        "openblas sgemm+pass",
        [&] {
            blas_sgemm(n, n, n, A.data(), B.data(), s_out.data());
            bias_activation_pass(n, n, bias.data(), act, s_out.data());
        },
        o.runs, "sgemm, then a separate bias+activation pass over C"));
    check_against(c.entries.back(), {&s_out}, {&out});
    DnnlMatmul dnnl(n, n, n, act);
    FBuf d_out = zeros_like(out);
    c.entries.push_back(run_anchor("onednn matmul+post-op",
                                   [&] { dnnl.run(A.data(), B.data(), bias.data(), d_out.data()); }, o.runs,
                                   "matmul with bias and an eltwise post-op"));
    check_against(c.entries.back(), {&d_out}, {&out});
    return c;
}

}  // namespace

CaseResult bench_gemm_512(const SuiteOptions &o) { return gemm_case(o, o.quick ? 128 : 512, Activation::Relu); }
CaseResult bench_gemm_1024(const SuiteOptions &o) { return gemm_case(o, o.quick ? 256 : 1024, Activation::Relu); }
CaseResult bench_gemm_2048(const SuiteOptions &o) { return gemm_case(o, o.quick ? 256 : 2048, Activation::Relu); }
CaseResult bench_gemm_gelu(const SuiteOptions &o) { return gemm_case(o, o.quick ? 256 : 1024, Activation::GeluTanh); }

CaseResult bench_conv_bn_relu(const SuiteOptions &o) {
    // A ResNet-style layer: 56x56, 64 -> 64 channels, 3x3 (quick: 16x16, 32 -> 32: the
    // schedule's tile is 2 vectors of channels, shifted inwards, so at least 32).
    const int W = o.quick ? 16 : 56, H = W, Cin = o.quick ? 32 : 64, Cout = Cin;
    FBuf in = random_buffer({Cin, W + 2, H + 2}, -1, 1, 41), w = random_buffer({Cout, Cin, 3, 3}, -0.2f, 0.2f, 42),
         bias = random_buffer({Cout}, -0.5, 0.5, 43), mean = random_buffer({Cout}, -0.5, 0.5, 44),
         variance = random_buffer({Cout}, 0.5, 2, 45), gamma = random_buffer({Cout}, 0.5, 1.5, 46),
         beta = random_buffer({Cout}, -0.5, 0.5, 47), out(Cout, W, H);
    const float eps = 1e-5f;
    KilnRunner k("conv_bn_folded", {}, "host_tiled");
    k.bind("input", in), k.bind("weights", w), k.bind("bias", bias), k.bind("mean", mean);
    k.bind("variance", variance), k.bind("gamma", gamma), k.bind("beta", beta);
    k.set("epsilon", "1e-5");
    CaseResult c;
    c.name = "conv3x3+bn+relu " + std::to_string(W) + "x" + std::to_string(H) + "x" + std::to_string(Cin);
    c.schedule = k.schedule_path();
    c.bytes = 4.0 * ((double)Cin * (W + 2) * (H + 2) + (double)Cout * Cin * 9 + (double)Cout * W * H);
    c.flops = 2.0 * Cout * Cin * 9.0 * W * H;
    c.tolerance = 1e-3;
    c.entries.push_back(run_kiln(k, {&out}, o.runs));
    FBuf h_out = zeros_like(out);
    c.entries.push_back(run_halide(
        [&](bool sc) {
            return halide_conv_folded(halide_view(in), halide_view(w), halide_view(bias), halide_view(mean),
                                      halide_view(variance), halide_view(gamma), halide_view(beta), eps, sc);
        },
        {&h_out}, {&out}, o));
    check_against(c.entries.back(), {&h_out}, {&out});

    // oneDNN: convolution + bias + ReLU on weights folded once beforehand, as
    // an inference framework folds BN at load time.
    FBuf fw = zeros_like(w), fb = zeros_like(bias);
    for (int co = 0; co < Cout; co++) {
        const float s = gamma(co) / std::sqrt(variance(co) + eps);
        fb(co) = (bias(co) - mean(co)) * s + beta(co);
        for (int ci = 0; ci < Cin; ci++)
            for (int rx = 0; rx < 3; rx++)
                for (int ry = 0; ry < 3; ry++) fw(co, ci, rx, ry) = w(co, ci, rx, ry) * s;
    }
    DnnlConvRelu dnnl(H + 2, W + 2, Cin, Cout, 3, 3, true);
    FBuf d_out = zeros_like(out);
    c.entries.push_back(run_anchor("onednn conv+relu", [&] { dnnl.run(in.data(), fw.data(), fb.data(), d_out.data()); },
                                   o.runs, "NHWC convolution + bias + ReLU post-op, BN folded into the weights beforehand"));
    check_against(c.entries.back(), {&d_out}, {&out});
    return c;
}

}  // namespace kiln_bench
