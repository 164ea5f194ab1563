// The cases of apps/bench. Each builds its inputs, runs Kiln (the shipped
// generator under its tuned schedule file), Halide 14 with the same
// algorithm and schedule, and the library anchors that do the same work,
// cross-checks every output against Kiln's, and returns the timings.
#pragma once
#include <string>
#include <vector>

#include "harness.h"

namespace kiln_bench {

struct SuiteOptions {
    bool quick = false;  // small sizes, few runs: a smoke check
    int runs = 10;
    int threads = 2;
    std::vector<std::string> only;  // case-name prefixes; empty = all
};

struct SuiteCase {
    std::string name;
    CaseResult (*run)(const SuiteOptions &);
};

const std::vector<SuiteCase> &suite();

// Image pipelines (suite_image.cpp).
CaseResult bench_blur3x3(const SuiteOptions &o);
CaseResult bench_unsharp(const SuiteOptions &o);
CaseResult bench_harris(const SuiteOptions &o);
CaseResult bench_luma_blur5x5_unfused(const SuiteOptions &o);
CaseResult bench_luma_blur5x5_fused(const SuiteOptions &o);
CaseResult bench_bilateral_grid(const SuiteOptions &o);
CaseResult bench_bilateral_grid_unfused(const SuiteOptions &o);
CaseResult bench_softplus(const SuiteOptions &o);
CaseResult bench_tanh_affine(const SuiteOptions &o);

// Halide's apps against their Halide twins (suite_apps.cpp).
CaseResult bench_camera_pipe(const SuiteOptions &o);
CaseResult bench_camera_pipe_unfused(const SuiteOptions &o);
CaseResult bench_local_laplacian(const SuiteOptions &o);
CaseResult bench_local_laplacian_unfused(const SuiteOptions &o);
CaseResult bench_max_filter(const SuiteOptions &o);
CaseResult bench_hist_equalize(const SuiteOptions &o);
CaseResult bench_iir_blur(const SuiteOptions &o);

// Backward pipelines: forward + backward against forward alone (suite_grad.cpp).
CaseResult bench_blur3x3_grad(const SuiteOptions &o);
CaseResult bench_softplus_grad(const SuiteOptions &o);
CaseResult bench_bias_gelu_grad(const SuiteOptions &o);
CaseResult bench_softmax_grad(const SuiteOptions &o);
CaseResult bench_layernorm_grad(const SuiteOptions &o);
CaseResult bench_gemm_relu_grad(const SuiteOptions &o);
CaseResult bench_conv_bn_relu_grad(const SuiteOptions &o);
CaseResult bench_attention_grad(const SuiteOptions &o);

// Row-wise and multi-output pipelines (suite_rows.cpp).
CaseResult bench_layernorm(const SuiteOptions &o);
CaseResult bench_softmax(const SuiteOptions &o);
CaseResult bench_bias_gelu(const SuiteOptions &o);
CaseResult bench_subtract_mean(const SuiteOptions &o);
CaseResult bench_many_users(const SuiteOptions &o);
CaseResult bench_forward_ad(const SuiteOptions &o);

// Compute-bound pipelines (suite_compute.cpp).
CaseResult bench_gemm_512(const SuiteOptions &o);
CaseResult bench_gemm_1024(const SuiteOptions &o);
CaseResult bench_gemm_2048(const SuiteOptions &o);
CaseResult bench_gemm_gelu(const SuiteOptions &o);
CaseResult bench_conv_bn_relu(const SuiteOptions &o);

// Attention (suite_attention.cpp).
CaseResult bench_attention_1024(const SuiteOptions &o);
CaseResult bench_attention_2048(const SuiteOptions &o);

}  // namespace kiln_bench
