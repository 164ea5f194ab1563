// The backward cases of apps/bench: each backward generator (blur3x3_grad,
// elementwise_chain_grad, bias_gelu_grad, softmax_grad, layernorm_grad,
// gemm_grad, conv_bn_relu_grad, attention_grad) under its host_tiled schedule,
// timed as forward + backward (the forward generator then the backward one,
// a training step's two kernels) against the forward generator alone, in
// the same process and run. The backward pipeline recomputes the forward
// values it needs (docs/autodiff.md section 5), so its cost includes them;
// gemm_grad, conv_bn_relu_grad and attention_grad are also timed with some
// saved by the forward pass (save()).
// Each case also gets Halide 14's propagate_adjoints on the same algorithm
// (grad_halide.h), hand-scheduled and Li2018-scheduled.
#include "case_util.h"
#include "grad_halide.h"
#include "suite.h"

namespace kiln_bench {

namespace {

int grad_image_size(const SuiteOptions &o) { return o.quick ? 1024 : 4096; }

// entries: "kiln forward" (entries[0], the reference of "x kiln"), "kiln
// backward" and "kiln fwd+bwd", so "x kiln" of the last is (forward +
// backward) / forward.
CaseResult forward_and_backward(const SuiteOptions &o, const std::string &name, KilnRunner &fwd,
                                const std::vector<FBuf *> &fwd_outs, KilnRunner &bwd,
                                const std::vector<FBuf *> &bwd_outs, double bytes) {
    CaseResult c;
    c.name = name;
    c.schedule = fwd.schedule_path() + " + " + bwd.schedule_path();
    c.bytes = bytes;
    c.entries.push_back(run_kiln(fwd, fwd_outs, o.runs));
    c.entries.back().system = "kiln forward";
    c.entries.push_back(run_kiln(bwd, bwd_outs, o.runs));
    c.entries.back().system = "kiln backward";
    c.entries.back().same_work = false;
    std::vector<halide_buffer_t *> f_raw, b_raw;
    for (FBuf *b : fwd_outs) f_raw.push_back(b->raw_buffer());
    for (FBuf *b : bwd_outs) b_raw.push_back(b->raw_buffer());
    c.entries.push_back(run_anchor(
        "kiln fwd+bwd",
        [&] {
            fwd.realize(f_raw);
            bwd.realize(b_raw);
        },
        o.runs, "the forward kernel, then the backward kernel", false));
    return c;
}

// "kiln fwd+bwd <schedule>": bwd's twin under `schedule`, which saves
// forward Funcs (save()), as a training step runs it: the forward pass
// writing the residuals (and `out`), then the backward kernel reading them
// instead of computing them again; before it, rows "kiln forward
// <schedule>" and "kiln backward <schedule>" time each kernel alone. `residuals` are the saved Funcs' buffers,
// in name order; one may be `out` itself, when the schedule saves the
// forward output (the backward kernel then reads it; it costs no bytes).
// The row's error is its gradients' against `reference`, the recomputing
// pair's, accepted up to `tolerance` (-1: the case's) where the saving
// schedule adds in another order.
struct Saved {
    std::string func;
    Halide::Runtime::Buffer<void> buffer;
};
void add_saved_row(const SuiteOptions &o, CaseResult &c, const KilnRunner &bwd, const std::string &schedule,
                   std::vector<Saved> residuals, FBuf &out, const std::vector<FBuf *> &grads,
                   const std::vector<FBuf *> &reference, double tolerance = -1) {
    std::unique_ptr<KilnRunner> saved = bwd.twin(schedule);
    std::vector<halide_buffer_t *> f_raw = {out.raw_buffer()}, b_raw;
    std::string what;
    size_t bytes = 0;
    for (Saved &r : residuals) {
        saved->bind_saved(r.func, r.buffer);
        what += (what.empty() ? "" : ", ") + r.func;
        if (r.buffer.raw_buffer()->host == out.raw_buffer()->host) continue;
        f_raw.push_back(r.buffer.raw_buffer());
        bytes += r.buffer.size_in_bytes();
    }
    kiln::Pipeline forward = saved->forward_pass();
    for (FBuf *g : grads) b_raw.push_back(g->raw_buffer());
    // Each kernel alone too (the forward's runs leave the residuals written
    // for the backward's), so that the pair can be checked against its parts.
    c.entries.push_back(run_anchor(
        "kiln forward " + schedule, [&] { forward.realize_raw(f_raw, KilnRunner::target()); }, o.runs,
        "the forward kernel writing what " + schedule + ".sched saves", false));
    c.entries.push_back(run_anchor("kiln backward " + schedule, [&] { saved->realize(b_raw); }, o.runs,
                                   "the backward kernel reading what " + schedule + ".sched saves", false));
    c.entries.push_back(run_anchor(
        "kiln fwd+bwd " + schedule,
        [&] {
            forward.realize_raw(f_raw, KilnRunner::target());
            saved->realize(b_raw);
        },
        o.runs,
        "forward writing what " + schedule + ".sched saves of " + what + " (" + std::to_string(bytes) +
            " bytes), then the backward kernel reading it",
        false));
    check_against(c.entries.back(), grads, reference);
    c.entries.back().tolerance = tolerance;
}

}  // namespace

CaseResult bench_blur3x3_grad(const SuiteOptions &o) {
    const int n = grad_image_size(o);
    FBuf in = random_buffer({n, n}, 0, 1, 31), d_out = random_buffer({n, n}, -1, 1, 32), out(n, n), d_in(n, n);
    KilnRunner fwd("blur3x3", {}, "host_tiled"), bwd("blur3x3_grad", {}, "host_tiled");
    fwd.bind("input", in);
    bwd.bind("input", in), bwd.bind("d_output", d_out);
    CaseResult c = forward_and_backward(o, "blur3x3 grad " + std::to_string(n) + "^2", fwd, {&out}, bwd, {&d_in},
                                        8.0 * n * n);
    halide_blur3x3_grad(o, c, in, d_out, d_in);
    return c;
}

CaseResult bench_softplus_grad(const SuiteOptions &o) {
    const int n = grad_image_size(o);
    FBuf in = random_buffer({n, n}, -4, 4, 33), d_out = random_buffer({n, n}, -1, 1, 34), out(n, n), d_in(n, n);
    KilnRunner fwd("elementwise_chain", {"variant=softplus"}, "host_tiled"),
        bwd("elementwise_chain_grad", {"variant=softplus"}, "host_tiled");
    fwd.bind("input", in);
    bwd.bind("input", in), bwd.bind("d_output", d_out);
    CaseResult c = forward_and_backward(o, "softplus grad " + std::to_string(n) + "^2", fwd, {&out}, bwd, {&d_in},
                                        8.0 * n * n);
    halide_softplus_grad(o, c, in, d_out, d_in);
    return c;
}

CaseResult bench_bias_gelu_grad(const SuiteOptions &o) {
    const int cols = o.quick ? 256 : 1024, rows = o.quick ? 512 : 4096;
    FBuf in = random_buffer({cols, rows}, -4, 4, 35), bias = random_buffer({cols}, -1, 1, 36),
         d_out = random_buffer({cols, rows}, -1, 1, 37), out(cols, rows), d_in(cols, rows), d_bias(cols);
    KilnRunner fwd("bias_gelu", {}, "host_tiled"), bwd("bias_gelu_grad", {}, "host_tiled");
    fwd.bind("input", in), fwd.bind("bias", bias);
    bwd.bind("input", in), bwd.bind("bias", bias), bwd.bind("d_output", d_out);
    CaseResult c = forward_and_backward(o, "bias+gelu grad " + std::to_string(rows) + "x" + std::to_string(cols),
                                        fwd, {&out}, bwd, {&d_in, &d_bias}, 8.0 * cols * rows);
    halide_bias_gelu_grad(o, c, in, bias, d_out, d_in, d_bias);
    return c;
}

CaseResult bench_softmax_grad(const SuiteOptions &o) {
    const int cols = o.quick ? 256 : 1024, rows = o.quick ? 512 : 4096;
    FBuf in = random_buffer({cols, rows}, -8, 8, 38), d_out = random_buffer({cols, rows}, -1, 1, 39),
         out(cols, rows), d_in(cols, rows);
    KilnRunner fwd("softmax", {}, "host_tiled"), bwd("softmax_grad", {}, "host_tiled");
    fwd.bind("input", in);
    bwd.bind("input", in), bwd.bind("d_output", d_out);
    CaseResult c = forward_and_backward(o, "softmax grad " + std::to_string(rows) + "x" + std::to_string(cols), fwd,
                                        {&out}, bwd, {&d_in}, 8.0 * cols * rows);
    halide_softmax_grad(o, c, in, d_out, d_in);
    // The forward pass saving the exponentials and the row sums (saved.sched),
    // the backward kernel reading them instead of the input: no row maximum,
    // no exp. Its forward pass sums each row in lanes: the gradients agree
    // within rounding.
    FBuf exps(cols, rows), row_sum(rows), grad(cols, rows);
    add_saved_row(o, c, bwd, "saved", {{"exps", exps}, {"row_sum", row_sum}}, out, {&grad}, {&d_in}, 1e-4);
    // Saving only each row's maximum and sum (saved_stats.sched): the
    // backward kernel computes the exponentials again, per band of rows.
    FBuf row_max(rows), sums(rows), grad_stats(cols, rows);
    add_saved_row(o, c, bwd, "saved_stats", {{"row_max", row_max}, {"row_sum", sums}}, out, {&grad_stats}, {&d_in},
                  1e-4);
    return c;
}

CaseResult bench_layernorm_grad(const SuiteOptions &o) {
    const int cols = o.quick ? 256 : 1024, rows = o.quick ? 512 : 4096;
    FBuf in = random_buffer({cols, rows}, -2, 2, 40), gamma = random_buffer({cols}, 0.5, 1.5, 41),
         beta = random_buffer({cols}, -0.5, 0.5, 42), d_out = random_buffer({cols, rows}, -1, 1, 43),
         out(cols, rows), d_in(cols, rows), d_gamma(cols), d_beta(cols);
    KilnRunner fwd("layernorm", {}, "host_tiled"), bwd("layernorm_grad", {}, "host_tiled");
    for (KilnRunner *k : {&fwd, &bwd}) {
        k->bind("input", in), k->bind("gamma", gamma), k->bind("beta", beta);
        k->set("epsilon", "1e-5");
    }
    bwd.bind("d_output", d_out);
    CaseResult c = forward_and_backward(o, "layernorm grad " + std::to_string(rows) + "x" + std::to_string(cols),
                                        fwd, {&out}, bwd, {&d_in, &d_gamma, &d_beta}, 8.0 * cols * rows);
    halide_layernorm_grad(o, c, in, gamma, beta, d_out, d_in, d_gamma, d_beta);
    // The forward pass saving each row's statistics (saved.sched), the
    // backward kernel summing no row. Its column sums add in another order
    // than host_tiled.sched's (bands of rows): the gradients agree within rounding.
    FBuf mean(rows), sum_sq(rows), inv_std(rows), grads[3] = {FBuf(cols, rows), FBuf(cols), FBuf(cols)};
    add_saved_row(o, c, bwd, "saved", {{"inv_std", inv_std}, {"mean", mean}, {"sum_sq", sum_sq}}, out,
                  {&grads[0], &grads[1], &grads[2]}, {&d_in, &d_gamma, &d_beta}, 1e-4);
    return c;
}

CaseResult bench_gemm_relu_grad(const SuiteOptions &o) {
    const int n = o.quick ? 128 : 512;
    FBuf a = random_buffer({n, n}, -1, 1, 44), b = random_buffer({n, n}, -1, 1, 45),
         bias = random_buffer({n}, -1, 1, 46), d_out = random_buffer({n, n}, -1, 1, 47), out(n, n), d_a(n, n),
         d_b(n, n), d_bias(n);
    KilnRunner fwd("gemm", {"activation=relu"}, "host_tiled"), bwd("gemm_grad", {"activation=relu"}, "host_tiled");
    for (KilnRunner *k : {&fwd, &bwd}) k->bind("A", a), k->bind("B", b), k->bind("bias", bias);
    bwd.bind("d_output", d_out);
    CaseResult c = forward_and_backward(o, "gemm+bias+relu grad " + std::to_string(n), fwd, {&out}, bwd,
                                        {&d_a, &d_b, &d_bias}, 16.0 * n * n);
    c.flops = 2.0 * n * n * n;
    halide_gemm_relu_grad(o, c, a, b, bias, d_out, d_a, d_b, d_bias);
    // The forward pass saving bias_add (saved.sched) or the ReLU's bit of it
    // (saved_mask.sched), instead of the backward kernel computing the
    // product again.
    FBuf whole(n, n), grads[3] = {FBuf(n, n), FBuf(n, n), FBuf(n)};
    Halide::Runtime::Buffer<uint8_t> bits((n + 7) / 8, n);
    add_saved_row(o, c, bwd, "saved", {{"bias_add", whole}}, out, {&grads[0], &grads[1], &grads[2]},
                  {&d_a, &d_b, &d_bias});
    add_saved_row(o, c, bwd, "saved_mask", {{"bias_add", bits}}, out, {&grads[0], &grads[1], &grads[2]},
                  {&d_a, &d_b, &d_bias});
    return c;
}

CaseResult bench_conv_bn_relu_grad(const SuiteOptions &o) {
    // The forward case's layer (suite_compute.cpp): 56x56, 64 -> 64 channels.
    const int W = o.quick ? 16 : 56, H = W, Cin = o.quick ? 32 : 64, Cout = Cin;
    FBuf in = random_buffer({Cin, W + 2, H + 2}, -1, 1, 41), w = random_buffer({Cout, Cin, 3, 3}, -0.2f, 0.2f, 42),
         bias = random_buffer({Cout}, -0.5, 0.5, 43), mean = random_buffer({Cout}, -0.5, 0.5, 44),
         variance = random_buffer({Cout}, 0.5, 2, 45), gamma = random_buffer({Cout}, 0.5, 1.5, 46),
         beta = random_buffer({Cout}, -0.5, 0.5, 47), d_out = random_buffer({Cout, W, H}, -1, 1, 48), out(Cout, W, H),
         d_in(Cin, W + 2, H + 2), d_w(Cout, Cin, 3, 3), d_bias(Cout), d_gamma(Cout), d_beta(Cout);
    KilnRunner fwd("conv_bn_relu", {}, "host_tiled"), bwd("conv_bn_relu_grad", {}, "host_tiled");
    for (KilnRunner *k : {&fwd, &bwd}) {
        k->bind("input", in), k->bind("weights", w), k->bind("bias", bias), k->bind("mean", mean);
        k->bind("variance", variance), k->bind("gamma", gamma), k->bind("beta", beta);
        k->set("epsilon", "1e-5");
    }
    bwd.bind("d_output", d_out);
    CaseResult c = forward_and_backward(
        o, "conv3x3+bn+relu grad " + std::to_string(W) + "x" + std::to_string(H) + "x" + std::to_string(Cin), fwd,
        {&out}, bwd, {&d_in, &d_w, &d_bias, &d_gamma, &d_beta},
        4.0 * ((double)Cin * (W + 2) * (H + 2) + (double)Cout * Cin * 9 + (double)Cout * W * H));
    c.flops = 2.0 * Cout * Cin * 9.0 * W * H;
    halide_conv_bn_relu_grad(o, c, {&in, &w, &bias, &mean, &variance, &gamma, &beta}, d_out,
                             {&d_in, &d_w, &d_bias, &d_gamma, &d_beta});
    // The forward pass saving the convolution (saved.sched) instead of the
    // backward kernel computing it again: one product of three.
    FBuf conv(Cout, W, H), grads[5] = {FBuf(Cin, W + 2, H + 2), FBuf(Cout, Cin, 3, 3), FBuf(Cout), FBuf(Cout),
                                       FBuf(Cout)};
    add_saved_row(o, c, bwd, "saved", {{"conv_out", conv}}, out, {&grads[0], &grads[1], &grads[2], &grads[3], &grads[4]},
                  {&d_in, &d_w, &d_bias, &d_gamma, &d_beta});
    return c;
}

CaseResult bench_attention_grad(const SuiteOptions &o) {
    // The forward case's head (suite_attention.cpp), its sizes given at run
    // time to both kernels (attention_grad has no dim and seq parameters).
    const int d = 64, seq = o.quick ? 128 : 1024;
    FBuf q = random_buffer({d, seq}, -1, 1, 51), k = random_buffer({d, seq}, -1, 1, 52),
         v = random_buffer({d, seq}, -1, 1, 53), d_out = random_buffer({d, seq}, -1, 1, 54), out(d, seq),
         d_q(d, seq), d_k(d, seq), d_v(d, seq);
    KilnRunner fwd("attention", {}, "host_tiled"), bwd("attention_grad", {}, "host_tiled");
    for (KilnRunner *r : {&fwd, &bwd}) r->bind("Q", q), r->bind("K", k), r->bind("V", v);
    bwd.bind("d_output", d_out);
    CaseResult c = forward_and_backward(o, "attention grad seq " + std::to_string(seq) + " d " + std::to_string(d),
                                        fwd, {&out}, bwd, {&d_q, &d_k, &d_v}, 4.0 * 4.0 * d * seq);
    c.flops = 4.0 * (double)seq * seq * d;  // the forward's Q Kᵀ and P V
    halide_attention_grad(o, c, {&q, &k, &v}, d_out, {&d_q, &d_k, &d_v});
    // The forward pass saving P and the row sums (saved.sched), the backward
    // kernel reading them and the output: four products instead of six. Its
    // row sums add in lanes: the gradients agree within rounding.
    FBuf probs(seq, seq), row_sum(seq), grads[3] = {FBuf(d, seq), FBuf(d, seq), FBuf(d, seq)};
    add_saved_row(o, c, bwd, "saved", {{"output", out}, {"probs", probs}, {"row_sum", row_sum}}, out,
                  {&grads[0], &grads[1], &grads[2]}, {&d_q, &d_k, &d_v}, 1e-4);
    return c;
}

}  // namespace kiln_bench
