// Halide 14's propagate_adjoints on the backward cases of suite_grad.cpp:
// each case's forward algorithm written in Halide, differentiated by
// Halide::propagate_adjoints(output, d_output), and realized into the
// gradients Kiln's backward generator outputs, twice:
//
//   "halide backward"         the adjoint Funcs scheduled as
//                             schedules/<gen>_grad/host_tiled.sched
//                             schedules Kiln's (where Halide can say it);
//   "halide backward li2018"  scheduled by Halide 14's Li2018 gradient
//                             autoscheduler for the bench's shapes.
//
// Each row is checked against Kiln's gradients and appended to the case.
// A case Halide cannot differentiate gets no row and a printed reason.
#pragma once
#include "case_util.h"
#include "suite.h"

namespace kiln_bench {

// Softmax of each row of `in`, the softmax generator's two-pass algorithm
// in Halide (suite_rows.cpp): its stages, unscheduled, for the forward
// case's schedule and for propagate_adjoints.
struct HalideSoftmax {
    Halide::RDom r;
    Halide::Func row_max, exps, row_sum, output;
};
HalideSoftmax halide_softmax_algorithm(const Halide::Buffer<float> &in);

// Layer normalization of each row of `in`, the layernorm generator's
// algorithm in Halide (suite_rows.cpp), normalized a Func of its own as in
// the generator (inlined unless scheduled).
struct HalideLayernorm {
    Halide::RDom r;
    Halide::Func sum, mean, sum_sq, inv_std, normalized, output;
};
HalideLayernorm halide_layernorm_algorithm(const Halide::Buffer<float> &in, const Halide::Buffer<float> &gamma,
                                           const Halide::Buffer<float> &beta, float eps);

void halide_blur3x3_grad(const SuiteOptions &o, CaseResult &c, FBuf &in, FBuf &d_out, FBuf &d_in);
void halide_softplus_grad(const SuiteOptions &o, CaseResult &c, FBuf &in, FBuf &d_out, FBuf &d_in);
void halide_bias_gelu_grad(const SuiteOptions &o, CaseResult &c, FBuf &in, FBuf &bias, FBuf &d_out, FBuf &d_in,
                           FBuf &d_bias);
void halide_softmax_grad(const SuiteOptions &o, CaseResult &c, FBuf &in, FBuf &d_out, FBuf &d_in);
void halide_layernorm_grad(const SuiteOptions &o, CaseResult &c, FBuf &in, FBuf &gamma, FBuf &beta, FBuf &d_out,
                           FBuf &d_in, FBuf &d_gamma, FBuf &d_beta);
void halide_gemm_relu_grad(const SuiteOptions &o, CaseResult &c, FBuf &a, FBuf &b, FBuf &bias, FBuf &d_out,
                           FBuf &d_a, FBuf &d_b, FBuf &d_bias);
// inputs: input, weights, bias, mean, variance, gamma, beta (Kiln's order);
// grads: Kiln's d_input, d_weights, d_bias, d_gamma, d_beta.
void halide_conv_bn_relu_grad(const SuiteOptions &o, CaseResult &c, const std::vector<FBuf *> &inputs, FBuf &d_out,
                              const std::vector<FBuf *> &grads);
// inputs: Q, K, V; grads: Kiln's d_query, d_key, d_value.
void halide_attention_grad(const SuiteOptions &o, CaseResult &c, const std::vector<FBuf *> &inputs, FBuf &d_out,
                           const std::vector<FBuf *> &grads);

}  // namespace kiln_bench
