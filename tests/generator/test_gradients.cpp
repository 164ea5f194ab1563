// The backward generators (blur3x3_grad, elementwise_chain_grad,
// bias_gelu_grad, softmax_grad, layernorm_grad, gemm_grad, conv_bn_relu_grad,
// attention_grad) compiled ahead of time under each of their schedules:
// each gradient equals a plain C++ reference gradient computed in float64
// from the same float32 inputs, and the fused and host_tiled schedules equal
// the unfused one bit for bit, but for the host_tiled schedules that add a
// sum's terms in another order (bias_gelu_grad, layernorm_grad and
// attention_grad: host_tiled_reorders_sums), checked against the
// reference within the stated tolerance. Sizes are
// not multiples of any split or vector factor and the buffers do not start
// at 0; d_output covers a region inside the input's, so the adjoint is zero
// at some inputs and the repeated edges of the blur receive the sums of
// several output points.
#include <kiln/Float16.h>

#include "aot.h"
#include "attention_grad_fused.h"
#include "attention_grad_host_tiled.h"
#include "attention_grad_saved.h"
#include "attention_grad_unfused.h"
#include "bias_gelu_grad_fused.h"
#include "bias_gelu_grad_host_tiled.h"
#include "bias_gelu_grad_unfused.h"
#include "blur3x3_grad_fused.h"
#include "blur3x3_grad_host_tiled.h"
#include "blur3x3_grad_unfused.h"
#include "gemm_relu_grad_fused.h"
#include "gemm_relu_grad_host_tiled.h"
#include "gemm_relu_grad_saved.h"
#include "gemm_relu_grad_saved_mask.h"
#include "gemm_relu_grad_auto.h"
#include "gemm_relu_grad_unfused.h"
#include "conv_bn_relu_grad_fused.h"
#include "conv_bn_relu_grad_host_tiled.h"
#include "conv_bn_relu_grad_saved.h"
#include "conv_bn_relu_grad_unfused.h"
#include "layernorm_grad_fused.h"
#include "layernorm_grad_host_tiled.h"
#include "layernorm_grad_saved.h"
#include "layernorm_grad_saved_bf16.h"
#include "layernorm_grad_saved_f16.h"
#include "layernorm_grad_unfused.h"
#include "softmax_grad_fused.h"
#include "softmax_grad_host_tiled.h"
#include "softmax_grad_auto_bf16.h"
#include "softmax_grad_saved.h"
#include "softmax_grad_saved_stats.h"
#include "softmax_grad_unfused.h"
#include "softplus_grad_fused.h"
#include "softplus_grad_host_tiled.h"
#include "softplus_grad_npu.h"
#include "softplus_grad_unfused.h"
#include "tanh_affine_grad_fused.h"
#include "tanh_affine_grad_host_tiled.h"
#include "tanh_affine_grad_npu.h"
#include "tanh_affine_grad_unfused.h"

using namespace aot;
using kiln::bfloat16_t;
using kiln::float16_t;

namespace {

const int W = 517, H = 101, X0 = -3, Y0 = 4;

// A backward kernel with its scalars bound: the buffers, inputs then outputs.
using Multi = std::function<int(const std::vector<halide_buffer_t *> &)>;

struct Backward {
    const char *name;
    Multi unfused, fused, host_tiled;
    std::vector<Buffer<float>> inputs;   // the forward inputs, then d_output
    std::vector<Buffer<float>> outputs;  // shaped like the gradients, filled with 17 before each run
    // host_tiled adds its sums in another order than unfused (bands of
    // rows by rfactor): checked against the reference, not bit for bit.
    bool host_tiled_reorders_sums = false;
};

// Runs a backward kernel: the inputs, the saved residuals if any, then the outputs.
std::vector<Buffer<float>> run(const Multi &k, Backward &b, std::vector<Buffer<void>> residuals = {}) {
    std::vector<Buffer<float>> outs;
    std::vector<halide_buffer_t *> args;
    for (auto &in : b.inputs) args.push_back(in.raw_buffer());
    for (auto &r : residuals) args.push_back(r.raw_buffer());
    for (const auto &o : b.outputs) {
        outs.push_back(o.copy());
        outs.back().fill(17.0f);
    }
    for (auto &o : outs) args.push_back(o.raw_buffer());
    REQUIRE(k(args) == 0);
    return outs;
}

// Gradients of another schedule against unfused's, bit for bit.
void check_bit_exact(const Backward &b, const std::string &schedule, const std::vector<Buffer<float>> &ref,
                     const std::vector<Buffer<float>> &got) {
    for (size_t i = 0; i < ref.size(); i++) {
        INFO(b.name << " " << schedule << " against unfused, gradient " << i);
        std::string first;
        int n = count_mismatches(ref[i], got[i], first);
        INFO("first mismatch at " << first);
        CHECK(n == 0);
    }
}

// A schedule's gradients against the reference: |got - want| <= rel *
// max(|want|, scale[i]) for output i.
void check_close(const Backward &b, const std::string &schedule, const std::vector<Buffer<double>> &want, double rel,
                 const std::vector<double> &scale, const std::vector<Buffer<float>> &got) {
    for (size_t i = 0; i < got.size(); i++) {
        INFO(b.name << " " << schedule << ", gradient " << i << " against the C++ reference");
        int bad = 0;
        std::string first;
        got[i].for_each_element([&](const int *pos) {
            double g = got[i](pos), w = want[i](pos);
            if (std::fabs(g - w) <= rel * std::max(std::fabs(w), scale[i])) return;
            if (bad++ == 0) first = "(" + std::to_string(pos[0]) + ", ...): " + std::to_string(g) + " vs " + std::to_string(w);
        });
        INFO("first mismatch at " << first);
        CHECK(bad == 0);
    }
}

// The unfused kernel against the reference (check_close), then the other
// schedules against unfused, bit for bit (or host_tiled against the
// reference, when it reorders sums).
void check(Backward &b, const std::vector<Buffer<double>> &want, double rel, const std::vector<double> &scale) {
    std::vector<Buffer<float>> ref = run(b.unfused, b);
    check_close(b, "unfused", want, rel, scale, ref);
    check_bit_exact(b, "fused", ref, run(b.fused, b));
    if (b.host_tiled_reorders_sums)
        check_close(b, "host_tiled", want, rel, scale, run(b.host_tiled, b));
    else
        check_bit_exact(b, "host_tiled", ref, run(b.host_tiled, b));
}

// A schedule that saves forward Funcs (save(), docs/autodiff.md): its
// forward kernel (the forward inputs: every input but d_output, the last)
// writes `out` and the residuals, which its backward kernel reads; the
// gradients equal unfused's bit for bit, since the forward kernel computes
// the saved values as the backward kernel would.
void check_saved(Backward &b, const char *schedule, const Multi &forward, const Multi &backward, Buffer<float> out,
                 std::vector<Buffer<void>> residuals) {
    std::vector<halide_buffer_t *> args;
    for (size_t i = 0; i + 1 < b.inputs.size(); i++) args.push_back(b.inputs[i].raw_buffer());
    args.push_back(out.raw_buffer());
    for (auto &r : residuals) args.push_back(r.raw_buffer());
    REQUIRE(forward(args) == 0);
    check_bit_exact(b, std::string(schedule) + " (forward, then backward)", run(b.unfused, b), run(backward, b, residuals));
}

// A schedule that saves lower-precision copies (save(float16),
// save(bfloat16)): the gradients within rel * max(|unfused's|, scale[i]) of
// unfused's, which reads the float32 values.
void check_saved_close(Backward &b, const char *schedule, const Multi &forward, const Multi &backward,
                       std::vector<Buffer<void>> residuals, double rel, const std::vector<double> &scale) {
    std::vector<halide_buffer_t *> args;
    for (size_t i = 0; i + 1 < b.inputs.size(); i++) args.push_back(b.inputs[i].raw_buffer());
    Buffer<float> out = b.inputs[0].copy();
    args.push_back(out.raw_buffer());
    for (auto &r : residuals) args.push_back(r.raw_buffer());
    REQUIRE(forward(args) == 0);
    std::vector<Buffer<float>> ref = run(b.unfused, b), got = run(backward, b, residuals);
    for (size_t i = 0; i < ref.size(); i++) {
        INFO(b.name << " " << schedule << " against unfused, gradient " << i << ", tolerance " << rel);
        std::string first;
        int n = count_mismatches(ref[i], got[i], first, rel, scale[i]);
        INFO("first mismatch at " << first);
        CHECK(n == 0);
    }
}

// An input-shaped buffer with random values.
Buffer<float> image(double lo, double hi, unsigned seed) {
    Buffer<float> b(W, H);
    b.set_min(X0, Y0);
    fill_random(b, lo, hi, seed);
    return b;
}

// d_output over [X0 + 2, X0 + W - 5) x [Y0 + 1, Y0 + H - 3), inside the input.
Buffer<float> inner_adjoint(unsigned seed) {
    Buffer<float> b(W - 7, H - 4);
    b.set_min(X0 + 2, Y0 + 1);
    fill_random(b, -1, 1, seed);
    return b;
}

Buffer<double> zeros_like(const Buffer<float> &b) {
    std::vector<int> sizes;
    for (int d = 0; d < b.dimensions(); d++) sizes.push_back(b.dim(d).extent());
    Buffer<double> z(sizes);
    for (int d = 0; d < b.dimensions(); d++) z.translate(d, b.dim(d).min());
    z.fill(0.0);
    return z;
}

auto pointwise(Buffer<float> &in, Buffer<float> &d_out, const std::function<double(double)> &derivative) {
    Buffer<double> want = zeros_like(in);
    d_out.for_each_element([&](int x, int y) { want(x, y) = d_out(x, y) * derivative(in(x, y)); });
    return want;
}

}  // namespace

TEST_CASE("generator: blur3x3_grad equals the transposed blur", "[generator][grad]") {
    auto k = [](auto f) { return Multi([=](const auto &b) { return f(b[0], b[1], b[2]); }); };
    Backward b{"blur3x3_grad", k(blur3x3_grad_unfused), k(blur3x3_grad_fused), k(blur3x3_grad_host_tiled),
               {image(0, 1, 1), inner_adjoint(2)}, {image(0, 0, 3)}};
    for (int past : {-1, 0, 2}) {
        if (past == 0) b.inputs[1] = image(-1, 1, 4);  // d_output over the whole input: every edge clamps
        if (past == 2) {
            // d_output 2 points past the input on each side: the edge and
            // corner sums run 3 times per row (host_tiled leaves those loops
            // whole; one of the 3 has every tap inside d_output).
            Buffer<float> wide(W + 4, H + 4);
            wide.set_min(X0 - 2, Y0 - 2);
            fill_random(wide, -1, 1, 5);
            b.inputs[1] = wide;
        }
        // Each output point sends d/9 to the 3x3 points it read, clamped to the input.
        Buffer<float> &d_out = b.inputs[1];
        Buffer<double> want = zeros_like(b.outputs[0]);
        auto clamp = [](int v, int lo, int n) { return std::min(std::max(v, lo), lo + n - 1); };
        d_out.for_each_element([&](int x, int y) {
            for (int dy = -1; dy <= 1; dy++)
                for (int dx = -1; dx <= 1; dx++) want(clamp(x + dx, X0, W), clamp(y + dy, Y0, H)) += d_out(x, y) / 9.0;
        });
        INFO((past < 0 ? "d_output inside the input" : past == 0 ? "d_output over the input" : "d_output past the input"));
        // float32 sums of up to 9 (at a corner, 4 x 4 + ...) thirds of thirds: 1e-5 of the scale 1 of d_output.
        check(b, {want}, 1e-5, {1.0});
    }
}

TEST_CASE("generator: elementwise_chain_grad equals the derivative of the chain", "[generator][grad]") {
    auto k = [](auto f, float a, float c) {
        return Multi([=](const auto &b) { return f(b[0], a, c, b[1], b[2]); });
    };
    {
        Backward b{"softplus_grad", k(softplus_grad_unfused, 1, 0), k(softplus_grad_fused, 1, 0),
                   k(softplus_grad_host_tiled, 1, 0), {image(-6, 6, 5), inner_adjoint(6)}, {image(0, 0, 7)}};
        // d softplus / dx = exp(x) / (exp(x) + 1): float32 exp, add, divide, multiply: 1e-5 relative.
        Buffer<double> want = pointwise(b.inputs[0], b.inputs[1], [](double x) { return std::exp(x) / (std::exp(x) + 1); });
        check(b, {want}, 1e-5, {1e-3});
        // The tile-NPU (npu.sched): d_output padded with zeros outside its region by the DMA.
        check_bit_exact(b, "npu", run(b.unfused, b), run(k(softplus_grad_npu, 1, 0), b));
    }
    {
        const float a = 0.75f, c = -0.25f;
        Backward b{"tanh_affine_grad", k(tanh_affine_grad_unfused, a, c), k(tanh_affine_grad_fused, a, c),
                   k(tanh_affine_grad_host_tiled, a, c), {image(-3, 3, 8), inner_adjoint(9)}, {image(0, 0, 10)}};
        // d tanh(a x + c) / dx = a (1 - tanh^2): 1e-5 of the scale a of the derivative.
        Buffer<double> want = pointwise(b.inputs[0], b.inputs[1], [=](double x) {
            double t = std::tanh((double)a * x + c);
            return a * (1 - t * t);
        });
        check(b, {want}, 1e-5, {a});
        check_bit_exact(b, "npu", run(b.unfused, b), run(k(tanh_affine_grad_npu, a, c), b));
    }
}

TEST_CASE("generator: bias_gelu_grad equals GELU's derivative and its sum over rows", "[generator][grad]") {
    auto k = [](auto f) { return Multi([=](const auto &b) { return f(b[0], b[1], b[2], b[3], b[4]); }); };
    Buffer<float> bias(W);
    bias.set_min(X0);
    fill_random(bias, -1, 1, 11);
    Buffer<float> d_bias(W);
    d_bias.set_min(X0);
    Backward b{"bias_gelu_grad", k(bias_gelu_grad_unfused), k(bias_gelu_grad_fused), k(bias_gelu_grad_host_tiled),
               {image(-3, 3, 12), bias, inner_adjoint(13)}, {image(0, 0, 14), d_bias}, true};
    const double kk = 0.7978845608, c = 0.044715;
    auto gelu_derivative = [&](double v) {
        double t = std::tanh(kk * (v + c * v * v * v));
        return 0.5 * (1 + t) + 0.5 * v * (1 - t * t) * kk * (1 + 3 * c * v * v);
    };
    Buffer<float> &in = b.inputs[0], &d_out = b.inputs[2];
    Buffer<double> want_in = zeros_like(in), want_bias = zeros_like(d_bias);
    d_out.for_each_element([&](int x, int y) {
        double g = d_out(x, y) * gelu_derivative((double)in(x, y) + bias(x));
        want_in(x, y) = g;
        want_bias(x) += g;
    });
    // d_input: 1e-5 of the scale 1 of d_output; d_bias, a float32 sum of H - 4
    // terms of size up to about 1.1: 1e-5 of the row count.
    check(b, {want_in, want_bias}, 1e-5, {1.0, (double)H});
}

TEST_CASE("generator: softmax_grad equals the softmax Jacobian times d_output", "[generator][grad]") {
    auto k = [](auto f) { return Multi([=](const auto &b) { return f(b[0], b[1], b[2]); }); };
    Backward b{"softmax_grad", k(softmax_grad_unfused), k(softmax_grad_fused), k(softmax_grad_host_tiled),
               {image(-2, 2, 15), inner_adjoint(16)}, {image(0, 0, 17)}};
    Buffer<float> &in = b.inputs[0], &d_out = b.inputs[1];
    Buffer<double> want = zeros_like(in);
    // p = softmax of the row; d_input = p * (d - sum_j d_j p_j), d = 0 outside d_output.
    for (int y = d_out.dim(1).min(); y <= d_out.dim(1).max(); y++) {
        double m = -1e300, total = 0, dot = 0;
        for (int x = X0; x < X0 + W; x++) m = std::max(m, (double)in(x, y));
        for (int x = X0; x < X0 + W; x++) total += std::exp(in(x, y) - m);
        for (int x = d_out.dim(0).min(); x <= d_out.dim(0).max(); x++) dot += d_out(x, y) * std::exp(in(x, y) - m) / total;
        for (int x = X0; x < X0 + W; x++) {
            double d = x >= d_out.dim(0).min() && x <= d_out.dim(0).max() ? d_out(x, y) : 0.0;
            want(x, y) = std::exp(in(x, y) - m) / total * (d - dot);
        }
    }
    // Values of order 1 / W (2e-3): 1e-4 relative, 1e-7 absolute for the
    // small ones (float32 row sums of W terms; the row maximum's share, zero
    // in exact arithmetic, is rounding of that size).
    check(b, {want}, 1e-4, {1e-3});

    // saved.sched: the forward kernel writes the exponentials and each row's
    // sum, which the backward kernel reads. Its row sums add in lanes: the
    // reference's tolerance.
    Buffer<float> out = image(0, 0, 23), exps = image(0, 0, 24), row_sum(H);
    row_sum.set_min(Y0);
    REQUIRE(softmax_grad_saved_forward(in, out, exps, row_sum) == 0);
    auto backward = Multi([](const auto &a) { return softmax_grad_saved(a[0], a[1], a[2], a[3], a[4]); });
    check_close(b, "saved (forward, then backward)", {want}, 1e-4, {1e-3},
                run(backward, b, {Buffer<void>(exps), Buffer<void>(row_sum)}));

    // saved_stats.sched: the forward kernel writes each row's maximum and
    // sum, and the backward kernel computes the exponentials again; its
    // [forward] section gives the forward pass's exponentials a schedule of
    // their own (the backward's row buffer does not exist there) and sums
    // each row in lanes: within the saved schedule's tolerance.
    std::vector<Buffer<void>> stats;
    for (int i = 0; i < 2; i++) {  // row_max, row_sum
        Buffer<float> r(H);
        r.set_min(Y0);
        stats.push_back(Buffer<void>(r));
    }
    check_saved_close(b, "saved_stats",
                      [](const auto &a) { return softmax_grad_saved_stats_forward(a[0], a[1], a[2], a[3]); },
                      [](const auto &a) { return softmax_grad_saved_stats(a[0], a[1], a[2], a[3], a[4]); }, stats,
                      1e-4, {1e-3});

    // kiln_add_library(... SCHEDULE auto NARROW_RESIDUALS bfloat16
    // RESIDUAL_BUDGET 3145728): the search saves the exponentials as a
    // bfloat16 copy (the whole ones do not fit the budget) and each row's
    // sum whole. The copy's rounding (2^-9 relative) moves the gradients by
    // 2e-3 to 4e-3 of max(|unfused's|, 1e-3) at most (measured): within 8e-3.
    Buffer<bfloat16_t> exps_bf16(W, H);
    exps_bf16.set_min(X0, Y0);
    check_saved_close(b, "auto, bfloat16 residuals",
                      [](const auto &a) { return softmax_grad_auto_bf16_forward(a[0], a[1], a[2], a[3]); },
                      [](const auto &a) { return softmax_grad_auto_bf16(a[0], a[1], a[2], a[3], a[4]); },
                      {Buffer<void>(exps_bf16), Buffer<void>(row_sum)}, 8e-3, {1e-3});
}

TEST_CASE("generator: layernorm_grad equals the layer norm's gradients", "[generator][grad]") {
    const float epsilon = 1e-5f;
    auto k = [=](auto f) { return Multi([=](const auto &b) { return f(b[0], b[1], b[2], epsilon, b[3], b[4], b[5], b[6]); }); };
    Buffer<float> gamma(W), beta(W);
    gamma.set_min(X0), beta.set_min(X0);
    fill_random(gamma, 0.5, 1.5, 18);
    fill_random(beta, -1, 1, 19);
    Buffer<float> d_gamma(W), d_beta(W);
    d_gamma.set_min(X0), d_beta.set_min(X0);
    Backward b{"layernorm_grad", k(layernorm_grad_unfused), k(layernorm_grad_fused), k(layernorm_grad_host_tiled),
               {image(-2, 2, 20), gamma, beta, inner_adjoint(21)}, {image(0, 0, 22), d_gamma, d_beta}, true};
    Buffer<float> &in = b.inputs[0], &d_out = b.inputs[3];
    Buffer<double> want_in = zeros_like(in), want_gamma = zeros_like(d_gamma), want_beta = zeros_like(d_beta);
    // xhat = (x - mean) * inv_std, g = d * gamma (0 outside d_output):
    // d_input = inv_std / N * (N g - sum g - xhat sum(g xhat)); d_gamma = sum over rows of d * xhat, d_beta of d.
    for (int y = d_out.dim(1).min(); y <= d_out.dim(1).max(); y++) {
        double mean = 0, var = 0;
        for (int x = X0; x < X0 + W; x++) mean += in(x, y);
        mean /= W;
        for (int x = X0; x < X0 + W; x++) var += (in(x, y) - mean) * (in(x, y) - mean);
        const double inv_std = 1 / std::sqrt(var / W + epsilon);
        std::vector<double> xhat(W), g(W);
        double sum_g = 0, sum_gx = 0;
        for (int x = X0; x < X0 + W; x++) {
            double d = x >= d_out.dim(0).min() && x <= d_out.dim(0).max() ? d_out(x, y) : 0.0;
            xhat[x - X0] = (in(x, y) - mean) * inv_std;
            g[x - X0] = d * gamma(x);
            sum_g += g[x - X0], sum_gx += g[x - X0] * xhat[x - X0];
            want_gamma(x) += d * xhat[x - X0];
            want_beta(x) += d;
        }
        for (int x = X0; x < X0 + W; x++)
            want_in(x, y) = inv_std / W * (W * g[x - X0] - sum_g - xhat[x - X0] * sum_gx);
    }
    // d_input of order 1: 1e-5 of max(|want|, 1) (float32 row sums of W
    // terms; 5.4e-7 measured); d_gamma and d_beta, float32 sums of H - 4
    // terms of order 1: 1e-5 of max(|want|, H / 10).
    check(b, {want_in, want_gamma, want_beta}, 1e-5, {1.0, 0.1 * H, 0.1 * H});

    // saved.sched: the forward kernel writes the row statistics, from its
    // rows' loops, summing in 16 lanes: the gradients within rounding of
    // unfused's, at the tolerances above.
    auto forward = [=](const auto &a) {
        return layernorm_grad_saved_forward(a[0], a[1], a[2], epsilon, a[3], a[4], a[5], a[6]);
    };
    auto backward = [=](const auto &a) {
        return layernorm_grad_saved(a[0], a[1], a[2], epsilon, a[3], a[4], a[5], a[6], a[7], a[8], a[9]);
    };
    std::vector<Buffer<void>> rows;
    for (int i = 0; i < 3; i++) {  // inv_std, mean, sum_sq
        Buffer<float> r(H);
        r.set_min(Y0);
        rows.push_back(Buffer<void>(r));
    }
    check_saved_close(b, "saved", forward, backward, rows, 1e-5, {1.0, 0.1 * H, 0.1 * H});

    // saved_f16.sched and saved_bf16.sched: the same statistics rounded to
    // 16 bits (2 bytes a row), each equal to the float32 one rounded; the
    // gradients move by about the rounding's relative error (2^-12 for
    // float16, 2^-9 for bfloat16; 2.6e-4 and 2.1e-3 measured): within 2e-3
    // and 1.6e-2 of max(|unfused's|, the scales above).
    std::vector<Buffer<void>> halves, bhalves;
    for (int i = 0; i < 3; i++) {
        Buffer<float16_t> h(H);
        Buffer<bfloat16_t> bh(H);
        h.set_min(Y0), bh.set_min(Y0);
        halves.push_back(Buffer<void>(h)), bhalves.push_back(Buffer<void>(bh));
    }
    auto f16_forward = [=](const auto &a) {
        return layernorm_grad_saved_f16_forward(a[0], a[1], a[2], epsilon, a[3], a[4], a[5], a[6]);
    };
    auto f16_backward = [=](const auto &a) {
        return layernorm_grad_saved_f16(a[0], a[1], a[2], epsilon, a[3], a[4], a[5], a[6], a[7], a[8], a[9]);
    };
    check_saved_close(b, "saved_f16", f16_forward, f16_backward, halves, 2e-3, {1.0, 0.1 * H, 0.1 * H});
    auto bf16_forward = [=](const auto &a) {
        return layernorm_grad_saved_bf16_forward(a[0], a[1], a[2], epsilon, a[3], a[4], a[5], a[6]);
    };
    auto bf16_backward = [=](const auto &a) {
        return layernorm_grad_saved_bf16(a[0], a[1], a[2], epsilon, a[3], a[4], a[5], a[6], a[7], a[8], a[9]);
    };
    check_saved_close(b, "saved_bf16", bf16_forward, bf16_backward, bhalves, 1.6e-2, {1.0, 0.1 * H, 0.1 * H});
    for (int i = 0; i < 3; i++)
        for (int y = Y0; y < Y0 + H; y++) {
            float whole = Buffer<float>(rows[i])(y);
            INFO("residual " << i << " at row " << y << ": " << whole);
            CHECK(Buffer<float16_t>(halves[i])(y).to_bits() == float16_t(whole).to_bits());
            CHECK(Buffer<bfloat16_t>(bhalves[i])(y).to_bits() == bfloat16_t(whole).to_bits());
        }
}

// host_tiled of bias_gelu_grad and layernorm_grad sums the column
// gradients per chunk of rows (rfactor; 128 and 512 rows), the chunks in
// parallel, then over the chunks: on 1100 rows (eight or two whole chunks
// and a part, d_output over fewer rows still) every chunk must count once,
// the last one cut short (GuardWithIf). Against unfused, which sums each
// column in row order.
TEST_CASE("generator: host_tiled column sums over several chunks of rows", "[generator][grad]") {
    const int w = 37, h = 1100, x0 = 2, y0 = -5;
    auto buffer = [&](int width, int height, int xmin, int ymin, double lo, double hi, unsigned seed) {
        Buffer<float> b(width, height);
        b.set_min(xmin, ymin);
        fill_random(b, lo, hi, seed);
        return b;
    };
    auto row = [&](double lo, double hi, unsigned seed) {
        Buffer<float> b(w);
        b.set_min(x0);
        fill_random(b, lo, hi, seed);
        return b;
    };
    Buffer<float> in = buffer(w, h, x0, y0, -2, 2, 41), d_out = buffer(w - 3, h - 7, x0 + 1, y0 + 2, -1, 1, 42);
    auto compare = [&](const char *name, const char *what, const Buffer<float> &ref, const Buffer<float> &got,
                       double scale) {
        INFO(name << " host_tiled against unfused, " << what << " (1e-5 of max(|unfused|, " << scale << "))");
        std::string first;
        int n = count_mismatches(ref, got, first, 1e-5, scale);
        INFO("first mismatch at " << first);
        CHECK(n == 0);
    };
    SECTION("bias_gelu_grad") {
        Buffer<float> bias = row(-1, 1, 43);
        Buffer<float> d_in[2] = {in.copy(), in.copy()}, d_bias[2] = {bias.copy(), bias.copy()};
        REQUIRE(bias_gelu_grad_unfused(in, bias, d_out, d_in[0], d_bias[0]) == 0);
        REQUIRE(bias_gelu_grad_host_tiled(in, bias, d_out, d_in[1], d_bias[1]) == 0);
        compare("bias_gelu_grad", "d_input", d_in[0], d_in[1], 1);
        compare("bias_gelu_grad", "d_bias", d_bias[0], d_bias[1], h);
    }
    SECTION("layernorm_grad") {
        Buffer<float> gamma = row(0.5, 1.5, 44), beta = row(-1, 1, 45);
        Buffer<float> d_in[2] = {in.copy(), in.copy()}, d_gamma[2] = {gamma.copy(), gamma.copy()},
                      d_beta[2] = {beta.copy(), beta.copy()};
        const float epsilon = 1e-5f;
        REQUIRE(layernorm_grad_unfused(in, gamma, beta, epsilon, d_out, d_in[0], d_gamma[0], d_beta[0]) == 0);
        REQUIRE(layernorm_grad_host_tiled(in, gamma, beta, epsilon, d_out, d_in[1], d_gamma[1], d_beta[1]) == 0);
        compare("layernorm_grad", "d_input", d_in[0], d_in[1], 1);
        compare("layernorm_grad", "d_gamma", d_gamma[0], d_gamma[1], h / 10.0);
        compare("layernorm_grad", "d_beta", d_beta[0], d_beta[1], h / 10.0);
    }
}

TEST_CASE("generator: gemm_grad (ReLU) equals the products with the transposes", "[generator][grad]") {
    const int K = 37, M = 29, N = 45;  // A is M rows of K, B is K rows of N
    auto k = [](auto f) { return Multi([=](const auto &b) { return f(b[0], b[1], b[2], b[3], b[4], b[5], b[6]); }); };
    Buffer<float> A(K, M), B(N, K), bias(N), d_out(N, M), d_A(K, M), d_B(N, K), d_bias(N);
    fill_random(A, -1, 1, 23), fill_random(B, -1, 1, 24), fill_random(bias, -1, 1, 25), fill_random(d_out, -1, 1, 26);
    Backward b{"gemm_relu_grad", k(gemm_relu_grad_unfused), k(gemm_relu_grad_fused), k(gemm_relu_grad_host_tiled),
               {A, B, bias, d_out}, {d_A, d_B, d_bias}};
    // g = d_output where bias_add >= 0 (max(v, 0) sends ties to v), with
    // bias_add computed in float32 in the kernel's order, so the ReLU picks
    // the same side; then d_A = g B^T, d_B = A^T g, d_bias = the column sums of g.
    Buffer<double> g(N, M), want_A = zeros_like(d_A), want_B = zeros_like(d_B), want_bias = zeros_like(d_bias);
    for (int y = 0; y < M; y++)
        for (int x = 0; x < N; x++) {
            float acc = 0.0f;
            for (int r = 0; r < K; r++) acc += A(r, y) * B(x, r);
            g(x, y) = acc + bias(x) >= 0.0f ? d_out(x, y) : 0.0;
            want_bias(x) += g(x, y);
            for (int r = 0; r < K; r++) want_A(r, y) += g(x, y) * B(x, r), want_B(x, r) += A(r, y) * g(x, y);
        }
    // float32 sums of up to 45 products of values in [-1, 1]: 1e-5 of max(|want|, 10).
    check(b, {want_A, want_B, want_bias}, 1e-5, {10.0, 10.0, 10.0});

    // saved.sched keeps bias_add, saved_mask.sched the ReLU's bit of it:
    // the forward kernel also writes the output, max(bias_add, 0).
    auto f5 = [](auto f) { return Multi([=](const auto &a) { return f(a[0], a[1], a[2], a[3], a[4]); }); };
    auto k8 = [](auto f) { return Multi([=](const auto &a) { return f(a[0], a[1], a[2], a[3], a[4], a[5], a[6], a[7]); }); };
    Buffer<float> out(N, M), whole(N, M);
    Buffer<uint8_t> bits((N + 7) / 8, M);
    check_saved(b, "saved", f5(gemm_relu_grad_saved_forward), k8(gemm_relu_grad_saved), out, {Buffer<void>(whole)});
    for (int y = 0; y < M; y++)
        for (int x = 0; x < N; x++) {
            INFO("output and bias_add at (" << x << ", " << y << ")");
            CHECK(out(x, y) == std::max(whole(x, y), 0.0f));
            CHECK((whole(x, y) >= 0.0f) == (g(x, y) != 0.0 || d_out(x, y) == 0.0f));
        }
    check_saved(b, "saved_mask", f5(gemm_relu_grad_saved_mask_forward), k8(gemm_relu_grad_saved_mask), out.copy(),
                {Buffer<void>(bits)});
    int set = 0;
    for (int y = 0; y < M; y++)
        for (int x = 0; x < N; x++) {
            bool bit = (bits(x / 8, y) >> (x % 8)) & 1;
            CHECK(bit == (whole(x, y) >= 0.0f));
            set += bit;
        }
    CHECK(set > 0);
    CHECK(set < N * M);  // both sides of the ReLU

    // -s auto: the autoscheduler saves the ReLU's bit too (choose_saves) and
    // schedules the forward kernel on its own.
    Buffer<uint8_t> auto_bits((N + 7) / 8, M);
    check_saved(b, "auto", f5(gemm_relu_grad_auto_forward), k8(gemm_relu_grad_auto), out.copy(),
                {Buffer<void>(auto_bits)});

    // A residual that does not cover what the backward kernel reads is an
    // error code and a message naming it, not a read past its end.
    Buffer<uint8_t> short_bits((N + 7) / 8, M - 1);
    std::vector<Buffer<float>> grads = {d_A.copy(), d_B.copy(), d_bias.copy()};
    static std::string message;
    kiln_error_handler_t before = kiln_set_error_handler([](const char *m) { message = m; });
    CHECK(gemm_relu_grad_saved_mask(A, B, bias, d_out, short_bits, grads[0], grads[1], grads[2]) ==
          kiln_error_input_too_small);
    kiln_set_error_handler(before);
    CHECK_THAT(message, Catch::Contains("input 'bias_add_bits' is read over [0, 28] in dimension 1") &&
                            Catch::Contains("it holds bias_add, saved by the forward pass (save())"));
}

TEST_CASE("generator: conv_bn_relu_grad equals the convolution's gradients", "[generator][grad]") {
    // input (Cin, W + 2, H + 2), weights (Cout, Cin, 3, 3), the per-channel
    // bias, mean, variance, gamma, beta (Cout); d_output (Cout, W, H). The
    // second shape is large enough for the forward convolution's register
    // tiles in host_tiled and saved (2 vectors of channels by
    // natural_vector_size*3/4 columns), the first is not; the third also
    // reaches the backward products' blocks (d_weights: 2 vectors of output
    // by natural_vector_size*3/4 input channels; d_input: 2 vectors of
    // input channels by natural_vector_size*3/4 columns).
    struct Shape {
        int cin, cout, w, h;
    };
    for (Shape sh : {Shape{6, 20, 9, 7}, Shape{3, 40, 17, 3}, Shape{33, 34, 13, 3}}) {
        const int Cin = sh.cin, Cout = sh.cout, W = sh.w, H = sh.h;
        INFO("Cin " << Cin << ", Cout " << Cout << ", " << W << " x " << H);
        const float epsilon = 1e-5f;
        auto k = [=](auto f) {
            return Multi([=](const auto &b) {
                return f(b[0], b[1], b[2], b[3], b[4], b[5], b[6], epsilon, b[7], b[8], b[9], b[10], b[11], b[12]);
            });
        };
        Buffer<float> in(Cin, W + 2, H + 2), w(Cout, Cin, 3, 3), bias(Cout), mean(Cout), var(Cout), gamma(Cout),
            beta(Cout), d_out(Cout, W, H);
        fill_random(in, -1, 1, 31), fill_random(w, -0.5, 0.5, 32), fill_random(bias, -0.5, 0.5, 33);
        fill_random(mean, -0.2, 0.2, 34), fill_random(var, 0.5, 1.5, 35), fill_random(gamma, 0.5, 1.5, 36);
        fill_random(beta, -0.5, 0.5, 37), fill_random(d_out, -1, 1, 38);
        Buffer<float> d_in(Cin, W + 2, H + 2), d_w(Cout, Cin, 3, 3), d_bias(Cout), d_gamma(Cout), d_beta(Cout);
        Backward b{"conv_bn_relu_grad", k(conv_bn_relu_grad_unfused), k(conv_bn_relu_grad_fused),
                   k(conv_bn_relu_grad_host_tiled), {in, w, bias, mean, var, gamma, beta, d_out},
                   {d_in, d_w, d_bias, d_gamma, d_beta}};
        Buffer<double> want_in = zeros_like(d_in), want_w = zeros_like(d_w), want_bias = zeros_like(d_bias),
                       want_gamma = zeros_like(d_gamma), want_beta = zeros_like(d_beta);
        for (int y = 0; y < H; y++)
            for (int x = 0; x < W; x++)
                for (int c = 0; c < Cout; c++) {
                    // The convolution in float32 in the kernel's order (the RDom's
                    // channel innermost), so the ReLU picks the same side.
                    float acc = bias(c);
                    for (int ry = 0; ry < 3; ry++)
                        for (int rx = 0; rx < 3; rx++)
                            for (int ci = 0; ci < Cin; ci++) acc += w(c, ci, rx, ry) * in(ci, x + rx, y + ry);
                    const float inv = 1.0f / std::sqrt(var(c) + epsilon), scale = gamma(c) * inv;
                    const float bn = (acc - mean(c)) * scale + beta(c);
                    const double g = bn >= 0.0f ? d_out(c, x, y) : 0.0;  // max(v, 0) sends ties to v
                    want_beta(c) += g;
                    want_gamma(c) += g * (acc - mean(c)) * inv;
                    const double d_conv = g * scale;
                    want_bias(c) += d_conv;
                    for (int ry = 0; ry < 3; ry++)
                        for (int rx = 0; rx < 3; rx++)
                            for (int ci = 0; ci < Cin; ci++) {
                                want_w(c, ci, rx, ry) += d_conv * in(ci, x + rx, y + ry);
                                want_in(ci, x + rx, y + ry) += d_conv * w(c, ci, rx, ry);
                            }
                }
        // float32 sums of up to 63 (W H) or 360 (Cout 9) terms of order 1:
        // 1e-5 of max(|want|, 10).
        check(b, {want_in, want_w, want_bias, want_gamma, want_beta}, 1e-5, {10.0, 10.0, 10.0, 10.0, 10.0});

        // saved.sched keeps conv_out, the convolution: the forward kernel also
        // writes the output, ReLU(BN(conv_out)).
        auto forward = [=](const auto &a) {
            return conv_bn_relu_grad_saved_forward(a[0], a[1], a[2], a[3], a[4], a[5], a[6], epsilon, a[7], a[8]);
        };
        auto backward = [=](const auto &a) {
            return conv_bn_relu_grad_saved(a[0], a[1], a[2], a[3], a[4], a[5], a[6], epsilon, a[7], a[8], a[9], a[10],
                                           a[11], a[12], a[13]);
        };
        Buffer<float> out(Cout, W, H), conv(Cout, W, H);
        check_saved(b, "saved", forward, backward, out, {Buffer<void>(conv)});
        for (int y = 0; y < H; y++)
            for (int x = 0; x < W; x++)
                for (int c = 0; c < Cout; c++) {
                    INFO("output and conv_out at (" << c << ", " << x << ", " << y << ")");
                    // (within rounding: the kernel may contract the BN into an FMA)
                    const float scale = gamma(c) / std::sqrt(var(c) + epsilon);
                    const float want = std::max((conv(c, x, y) - mean(c)) * scale + beta(c), 0.0f);
                    CHECK(std::fabs(out(c, x, y) - want) <= 1e-6f * std::max(1.0f, std::fabs(want)));
                }
    }
}

TEST_CASE("generator: attention_grad equals the analytic attention backward", "[generator][grad]") {
    // Q (d, queries), K and V (d, keys), d_output (d, queries); sizes not
    // multiples of the vector width or of the 8-row blocks, one with fewer
    // keys than queries, and one (40 x 20 x 70) large enough for d_key's
    // register blocks (2 vectors of keys by natural_vector_size*3/4
    // features), which read dS through its copy per panel of keys, for
    // d_value's copy of P per panel of 3 vectors of keys (the last panel
    // shifted inwards over the one before it), and for saved.sched's
    // forward blocks of 2 vectors of keys and of features.
    auto k = [](auto f) { return Multi([=](const auto &b) { return f(b[0], b[1], b[2], b[3], b[4], b[5], b[6]); }); };
    struct Shape {
        int d, queries, keys;
    };
    for (Shape sh : {Shape{13, 37, 29}, Shape{16, 48, 16}, Shape{8, 19, 45}, Shape{40, 20, 70}}) {
        const int d = sh.d, nq = sh.queries, nk = sh.keys;
        INFO("d " << d << ", " << nq << " queries, " << nk << " keys");
        Buffer<float> q(d, nq), kk(d, nk), v(d, nk), d_out(d, nq);
        fill_random(q, -1, 1, 51 + d), fill_random(kk, -1, 1, 52 + d), fill_random(v, -1, 1, 53 + d);
        fill_random(d_out, -1, 1, 54 + d);
        Backward b{"attention_grad", k(attention_grad_unfused), k(attention_grad_fused), k(attention_grad_host_tiled),
                   {q, kk, v, d_out}, {Buffer<float>(d, nq), Buffer<float>(d, nk), Buffer<float>(d, nk)}, true};
        // P = softmax of the rows of Q Kᵀ / √d, O = P V; dV = Pᵀ dO, dP = dO Vᵀ,
        // dS = P (dP - rowsum(P dP)) / √d, dQ = dS K, dK = dSᵀ Q.
        Buffer<double> want_q = zeros_like(b.outputs[0]), want_k = zeros_like(b.outputs[1]),
                       want_v = zeros_like(b.outputs[2]);
        const double scale = 1 / std::sqrt((double)d);
        for (int i = 0; i < nq; i++) {
            std::vector<double> p(nk), dp(nk);
            double m = -1e300, total = 0, dot = 0;
            for (int j = 0; j < nk; j++) {
                p[j] = 0;
                for (int r = 0; r < d; r++) p[j] += (double)q(r, i) * kk(r, j);
                m = std::max(m, p[j]);
            }
            for (int j = 0; j < nk; j++) total += p[j] = std::exp((p[j] - m) * scale);
            for (int j = 0; j < nk; j++) {
                p[j] /= total;
                dp[j] = 0;
                for (int c = 0; c < d; c++) dp[j] += (double)d_out(c, i) * v(c, j), want_v(c, j) += p[j] * d_out(c, i);
                dot += p[j] * dp[j];
            }
            for (int j = 0; j < nk; j++) {
                const double ds = p[j] * (dp[j] - dot) * scale;
                for (int r = 0; r < d; r++) want_q(r, i) += ds * kk(r, j), want_k(r, j) += ds * q(r, i);
            }
        }
        // Gradients of order 0.1 to 0.6, float32 sums of up to 70 terms through
        // a softmax (the row maximum passes no gradient: stop_gradient): 1e-5
        // of max(|want|, 0.1).
        check(b, {want_q, want_k, want_v}, 1e-5, {0.1, 0.1, 0.1});
        // saved.sched: the forward kernel writes the output, probs and the
        // row sums; the backward kernel reads all three and computes neither S
        // nor P V. Its row sums add in lanes: the reference's tolerance.
        Buffer<float> out(d, nq), probs(nk, nq), row_sum(nq);
        REQUIRE(attention_grad_saved_forward(q, kk, v, out, probs, row_sum) == 0);
        for (int i = 0; i < nq; i++) {
            // probs holds exp((S - max) / √d), unnormalized: its row sums.
            double total = 0;
            for (int j = 0; j < nk; j++) total += probs(j, i);
            INFO("row " << i << " of the saved probs sums to " << total << ", the saved sum " << row_sum(i));
            CHECK(std::fabs(total - row_sum(i)) <= 1e-5 * total);
        }
        std::vector<Buffer<float>> got;
        for (const auto &o : b.outputs) got.push_back(o.copy()), got.back().fill(17.0f);
        REQUIRE(attention_grad_saved(q, kk, v, d_out, out, probs, row_sum, got[0], got[1], got[2]) == 0);
        check_close(b, "saved (forward, then backward)", {want_q, want_k, want_v}, 1e-5, {0.1, 0.1, 0.1}, got);
    }
}

// Issue 19's check in float64: each backward generator's gradients (unfused.sched)
// against central differences of L = sum of d_output * forward(inputs), the
// forward pass written out in float64 below, at twelve elements of each input.
namespace {

Buffer<double> to_double(const Buffer<float> &b) {
    Buffer<double> d = zeros_like(b);
    b.for_each_element([&](const int *p) { d(p) = b(p); });
    return d;
}

// A float64 forward loss of the forward inputs (float64 copies, in the kernel's order).
using Loss = std::function<double(const std::vector<Buffer<double>> &)>;

// At twelve elements of input i (spread over it) for each (i, gradient) in
// `grads`: (L(v + h) - L(v - h)) / 2h against the kernel's gradient there,
// within rel * max(|difference|, scale). h = 1e-5 leaves a truncation error
// of order h^2 and a rounding error of order 1e-16 |L| / h, both far below rel.
void check_finite_differences(const char *name, const std::vector<Buffer<float>> &inputs, const Loss &loss,
                              const std::vector<std::pair<size_t, Buffer<float>>> &grads, double rel, double scale) {
    std::vector<Buffer<double>> in;
    for (const auto &b : inputs) in.push_back(to_double(b));
    const double h = 1e-5;
    for (const auto &[i, g] : grads) {
        Buffer<double> &v = in[i];
        const int64_t n = (int64_t)v.number_of_elements();
        for (int k = 0; k < 12; k++) {
            int64_t e = (k * n / 12 + 7 * k + 3) % n;
            std::vector<int> pos(v.dimensions());
            std::string where;
            for (int d = 0; d < v.dimensions(); d++) {
                pos[d] = v.dim(d).min() + (int)(e % v.dim(d).extent());
                e /= v.dim(d).extent();
                where += (d ? ", " : "") + std::to_string(pos[d]);
            }
            const double was = v(pos.data());
            v(pos.data()) = was + h;
            const double plus = loss(in);
            v(pos.data()) = was - h;
            const double minus = loss(in);
            v(pos.data()) = was;
            const double fd = (plus - minus) / (2 * h), got = g(pos.data());
            INFO(name << ": d/d input " << i << " at (" << where << "): kernel " << got << ", central difference " << fd);
            CHECK(std::fabs(got - fd) <= rel * std::max(std::fabs(fd), scale));
        }
    }
}

// Sum over d_output's region of d_output(x, y) * f(x, y).
double weighted(const Buffer<float> &d_out, const std::function<double(int, int)> &f) {
    double sum = 0;
    d_out.for_each_element([&](int x, int y) { sum += d_out(x, y) * f(x, y); });
    return sum;
}

}  // namespace

TEST_CASE("generator: backward generators equal central differences in float64", "[generator][grad][fd]") {
    auto clampi = [](int v, int lo, int n) { return std::min(std::max(v, lo), lo + n - 1); };
    SECTION("blur3x3_grad") {
        Buffer<float> in = image(0, 1, 1), d_out = inner_adjoint(2), d_in = image(0, 0, 3);
        REQUIRE(blur3x3_grad_unfused(in, d_out, d_in) == 0);
        check_finite_differences("blur3x3_grad", {in}, [&](const auto &v) {
            return weighted(d_out, [&](int x, int y) {
                double s = 0;
                for (int dy = -1; dy <= 1; dy++)
                    for (int dx = -1; dx <= 1; dx++) s += v[0](clampi(x + dx, X0, W), clampi(y + dy, Y0, H));
                return s / 9;
            });
        }, {{0, d_in}}, 1e-4, 1e-2);
    }
    SECTION("elementwise_chain_grad") {
        const float a = 0.75f, c = -0.25f;
        Buffer<float> in = image(-3, 3, 8), d_out = inner_adjoint(9), d_in = image(0, 0, 10);
        REQUIRE(softplus_grad_unfused(in, 1.0f, 0.0f, d_out, d_in) == 0);
        check_finite_differences("softplus_grad", {in}, [&](const auto &v) {
            return weighted(d_out, [&](int x, int y) { return std::log(std::exp(v[0](x, y)) + 1); });
        }, {{0, d_in.copy()}}, 1e-4, 1e-2);
        REQUIRE(tanh_affine_grad_unfused(in, a, c, d_out, d_in) == 0);
        check_finite_differences("tanh_affine_grad", {in}, [&](const auto &v) {
            return weighted(d_out, [&](int x, int y) { return std::tanh((double)a * v[0](x, y) + c); });
        }, {{0, d_in}}, 1e-4, 1e-2);
    }
    SECTION("bias_gelu_grad") {
        Buffer<float> in = image(-3, 3, 12), bias(W), d_bias(W), d_out = inner_adjoint(13), d_in = image(0, 0, 14);
        bias.set_min(X0), d_bias.set_min(X0);
        fill_random(bias, -1, 1, 11);
        REQUIRE(bias_gelu_grad_unfused(in, bias, d_out, d_in, d_bias) == 0);
        check_finite_differences("bias_gelu_grad", {in, bias}, [&](const auto &v) {
            return weighted(d_out, [&](int x, int y) {
                double u = v[0](x, y) + v[1](x);
                return 0.5 * u * (1 + std::tanh(0.7978845608 * (u + 0.044715 * u * u * u)));
            });
        }, {{0, d_in}, {1, d_bias}}, 1e-4, 1e-1);
    }
    SECTION("softmax_grad") {
        Buffer<float> in = image(-2, 2, 15), d_out = inner_adjoint(16), d_in = image(0, 0, 17);
        REQUIRE(softmax_grad_unfused(in, d_out, d_in) == 0);
        check_finite_differences("softmax_grad", {in}, [&](const auto &v) {
            double sum = 0;
            for (int y = d_out.dim(1).min(); y <= d_out.dim(1).max(); y++) {
                double m = -1e300, total = 0;
                for (int x = X0; x < X0 + W; x++) m = std::max(m, v[0](x, y));
                for (int x = X0; x < X0 + W; x++) total += std::exp(v[0](x, y) - m);
                for (int x = d_out.dim(0).min(); x <= d_out.dim(0).max(); x++)
                    sum += d_out(x, y) * std::exp(v[0](x, y) - m) / total;
            }
            return sum;
        }, {{0, d_in}}, 1e-3, 1e-4);
    }
    SECTION("layernorm_grad") {
        const float epsilon = 1e-5f;
        Buffer<float> in = image(-2, 2, 20), gamma(W), beta(W), d_gamma(W), d_beta(W), d_out = inner_adjoint(21),
                      d_in = image(0, 0, 22);
        for (Buffer<float> *b : {&gamma, &beta, &d_gamma, &d_beta}) b->set_min(X0);
        fill_random(gamma, 0.5, 1.5, 18);
        fill_random(beta, -1, 1, 19);
        REQUIRE(layernorm_grad_unfused(in, gamma, beta, epsilon, d_out, d_in, d_gamma, d_beta) == 0);
        check_finite_differences("layernorm_grad", {in, gamma, beta}, [&](const auto &v) {
            double sum = 0;
            for (int y = d_out.dim(1).min(); y <= d_out.dim(1).max(); y++) {
                double mean = 0, sq = 0;
                for (int x = X0; x < X0 + W; x++) mean += v[0](x, y);
                mean /= W;
                for (int x = X0; x < X0 + W; x++) sq += (v[0](x, y) - mean) * (v[0](x, y) - mean);
                const double inv_std = 1 / std::sqrt(sq / W + epsilon);
                for (int x = d_out.dim(0).min(); x <= d_out.dim(0).max(); x++)
                    sum += d_out(x, y) * ((v[0](x, y) - mean) * inv_std * v[1](x) + v[2](x));
            }
            return sum;
        }, {{0, d_in}, {1, d_gamma}, {2, d_beta}}, 1e-4, 1e-1);
    }
    SECTION("gemm_grad (ReLU)") {
        const int K = 37, M = 29, N = 45;
        Buffer<float> A(K, M), B(N, K), bias(N), d_out(N, M), d_A(K, M), d_B(N, K), d_bias(N);
        fill_random(A, -1, 1, 23), fill_random(B, -1, 1, 24), fill_random(bias, -1, 1, 25), fill_random(d_out, -1, 1, 26);
        REQUIRE(gemm_relu_grad_unfused(A, B, bias, d_out, d_A, d_B, d_bias) == 0);
        // L is smooth at the points taken when no element of A B + bias is within
        // ten times h (a step's largest effect on it: |B| <= 1) of the ReLU's kink.
        double nearest = 1e300;
        for (int y = 0; y < M; y++)
            for (int x = 0; x < N; x++) {
                double acc = bias(x);
                for (int r = 0; r < K; r++) acc += (double)A(r, y) * B(x, r);
                nearest = std::min(nearest, std::fabs(acc));
            }
        REQUIRE(nearest > 1e-4);
        check_finite_differences("gemm_relu_grad", {A, B, bias}, [&](const auto &v) {
            return weighted(d_out, [&](int x, int y) {
                double acc = v[2](x);
                for (int r = 0; r < K; r++) acc += v[0](r, y) * v[1](x, r);
                return std::max(acc, 0.0);
            });
        }, {{0, d_A}, {1, d_B}, {2, d_bias}}, 1e-4, 1.0);
    }
    SECTION("conv_bn_relu_grad") {
        const int Cin = 6, Cout = 20, Wc = 9, Hc = 7;
        const float epsilon = 1e-5f;
        Buffer<float> in(Cin, Wc + 2, Hc + 2), w(Cout, Cin, 3, 3), bias(Cout), mean(Cout), var(Cout), gamma(Cout),
            beta(Cout), d_out(Cout, Wc, Hc), d_in(Cin, Wc + 2, Hc + 2), d_w(Cout, Cin, 3, 3), d_bias(Cout),
            d_gamma(Cout), d_beta(Cout);
        fill_random(in, -1, 1, 31), fill_random(w, -0.5, 0.5, 32), fill_random(bias, -0.5, 0.5, 33);
        fill_random(mean, -0.2, 0.2, 34), fill_random(var, 0.5, 1.5, 35), fill_random(gamma, 0.5, 1.5, 36);
        fill_random(beta, -0.5, 0.5, 37), fill_random(d_out, -1, 1, 38);
        REQUIRE(conv_bn_relu_grad_unfused(in, w, bias, mean, var, gamma, beta, epsilon, d_out, d_in, d_w, d_bias,
                                          d_gamma, d_beta) == 0);
        // The batch-normalized value before the ReLU, from float64 inputs v.
        auto bn = [&](const std::vector<Buffer<double>> &v, int c, int x, int y) {
            double acc = v[2](c);
            for (int ry = 0; ry < 3; ry++)
                for (int rx = 0; rx < 3; rx++)
                    for (int ci = 0; ci < Cin; ci++) acc += v[1](c, ci, rx, ry) * v[0](ci, x + rx, y + ry);
            return (acc - v[3](c)) * v[5](c) / std::sqrt(v[4](c) + epsilon) + v[6](c);
        };
        std::vector<Buffer<double>> at;
        for (const Buffer<float> *b : {&in, &w, &bias, &mean, &var, &gamma, &beta}) at.push_back(to_double(*b));
        double nearest = 1e300;  // as for the GEMM: a step of h moves bn by at most about 1.5 h
        d_out.for_each_element([&](int c, int x, int y) { nearest = std::min(nearest, std::fabs(bn(at, c, x, y))); });
        REQUIRE(nearest > 1e-4);
        check_finite_differences("conv_bn_relu_grad", {in, w, bias, mean, var, gamma, beta}, [&](const auto &v) {
            double sum = 0;
            d_out.for_each_element([&](int c, int x, int y) { sum += d_out(c, x, y) * std::max(bn(v, c, x, y), 0.0); });
            return sum;
        }, {{0, d_in}, {1, d_w}, {2, d_bias}, {5, d_gamma}, {6, d_beta}}, 1e-4, 1.0);
    }
    SECTION("attention_grad") {
        const int d = 13, nq = 37, nk = 29;
        Buffer<float> q(d, nq), kk(d, nk), v(d, nk), d_out(d, nq), d_q(d, nq), d_k(d, nk), d_v(d, nk);
        fill_random(q, -1, 1, 51 + d), fill_random(kk, -1, 1, 52 + d), fill_random(v, -1, 1, 53 + d);
        fill_random(d_out, -1, 1, 54 + d);
        REQUIRE(attention_grad_unfused(q, kk, v, d_out, d_q, d_k, d_v) == 0);
        check_finite_differences("attention_grad", {q, kk, v}, [&](const auto &in) {
            double sum = 0;
            std::vector<double> p(nk);
            for (int i = 0; i < nq; i++) {
                double m = -1e300, total = 0;
                for (int j = 0; j < nk; j++) {
                    p[j] = 0;
                    for (int c = 0; c < d; c++) p[j] += in[0](c, i) * in[1](c, j);
                    p[j] /= std::sqrt((double)d);
                    m = std::max(m, p[j]);
                }
                for (int j = 0; j < nk; j++) total += p[j] = std::exp(p[j] - m);
                for (int c = 0; c < d; c++) {
                    double o = 0;
                    for (int j = 0; j < nk; j++) o += p[j] / total * in[2](c, j);
                    sum += d_out(c, i) * o;
                }
            }
            return sum;
        }, {{0, d_q}, {1, d_k}, {2, d_v}}, 1e-4, 1e-1);
    }
}
