// The oneDNN anchors (anchors.h): primitives are created in the
// constructors; run() binds the caller's pointers and executes.
#include <oneapi/dnnl/dnnl.hpp>

#include <unordered_map>

#include "anchors.h"

namespace kiln_bench {

using dnnl::memory;
using dt = dnnl::memory::data_type;
using tag = dnnl::memory::format_tag;

namespace {

struct Context {
    dnnl::engine engine{dnnl::engine::kind::cpu, 0};
    dnnl::stream stream{engine};
};

Context &context() {
    static Context c;
    return c;
}

// A memory object over the caller's pointer (rebound before every run).
memory user_memory(const memory::desc &md) { return memory(md, context().engine, DNNL_MEMORY_NONE); }

void bind(memory &m, const float *p) { m.set_data_handle(const_cast<float *>(p)); }

void execute(dnnl::primitive &p, const std::unordered_map<int, memory> &args) {
    p.execute(context().stream, args);
    context().stream.wait();
}

dnnl::algorithm eltwise(Activation act) {
    return act == Activation::GeluTanh ? dnnl::algorithm::eltwise_gelu_tanh : dnnl::algorithm::eltwise_relu;
}

}  // namespace

// ---- matmul + bias + activation ----

struct DnnlMatmul::Impl {
    memory a, b, bias, c;
    dnnl::matmul prim;
};

DnnlMatmul::DnnlMatmul(int M, int N, int K, Activation act) : impl_(new Impl) {
    memory::desc a_md({M, K}, dt::f32, tag::ab), b_md({K, N}, dt::f32, tag::ab), bias_md({1, N}, dt::f32, tag::ab),
        c_md({M, N}, dt::f32, tag::ab);
    dnnl::primitive_attr attr;
    if (act != Activation::None) {
        dnnl::post_ops ops;
        ops.append_eltwise(1.0f, eltwise(act), 0.0f, 0.0f);
        attr.set_post_ops(ops);
    }
    dnnl::matmul::primitive_desc pd(dnnl::matmul::desc(a_md, b_md, bias_md, c_md), attr, context().engine);
    impl_->prim = dnnl::matmul(pd);
    impl_->a = user_memory(a_md);
    impl_->b = user_memory(b_md);
    impl_->bias = user_memory(bias_md);
    impl_->c = user_memory(c_md);
}

DnnlMatmul::~DnnlMatmul() = default;

void DnnlMatmul::run(const float *A, const float *B, const float *bias, float *C) {
    Impl &m = *impl_;
    bind(m.a, A), bind(m.b, B), bind(m.bias, bias), bind(m.c, C);
    execute(m.prim, {{DNNL_ARG_SRC, m.a}, {DNNL_ARG_WEIGHTS, m.b}, {DNNL_ARG_BIAS, m.bias}, {DNNL_ARG_DST, m.c}});
}

// ---- layer normalization ----

struct DnnlLayerNorm::Impl {
    memory x, gamma, beta, out, mean, variance;
    dnnl::layer_normalization_forward prim;
};

DnnlLayerNorm::DnnlLayerNorm(int rows, int cols, float eps) : impl_(new Impl) {
    memory::desc data_md({rows, cols}, dt::f32, tag::ab), param_md({cols}, dt::f32, tag::a);
    using flags = dnnl::normalization_flags;
    dnnl::layer_normalization_forward::desc d(dnnl::prop_kind::forward_inference, data_md, eps,
                                              flags::use_scale | flags::use_shift);
    dnnl::layer_normalization_forward::primitive_desc pd(d, context().engine);
    impl_->prim = dnnl::layer_normalization_forward(pd);
    impl_->x = user_memory(data_md);
    impl_->out = user_memory(data_md);
    impl_->gamma = user_memory(param_md);
    impl_->beta = user_memory(param_md);
    impl_->mean = memory(pd.mean_desc(), context().engine);
    impl_->variance = memory(pd.variance_desc(), context().engine);
}

DnnlLayerNorm::~DnnlLayerNorm() = default;

void DnnlLayerNorm::run(const float *x, const float *gamma, const float *beta, float *out) {
    Impl &m = *impl_;
    bind(m.x, x), bind(m.gamma, gamma), bind(m.beta, beta), bind(m.out, out);
    execute(m.prim, {{DNNL_ARG_SRC, m.x},
                     {DNNL_ARG_SCALE, m.gamma},
                     {DNNL_ARG_SHIFT, m.beta},
                     {DNNL_ARG_DST, m.out},
                     {DNNL_ARG_MEAN, m.mean},
                     {DNNL_ARG_VARIANCE, m.variance}});
}

// ---- softmax ----

struct DnnlSoftmax::Impl {
    memory x, out;
    dnnl::softmax_forward prim;
};

DnnlSoftmax::DnnlSoftmax(int rows, int cols) : impl_(new Impl) {
    memory::desc data_md({rows, cols}, dt::f32, tag::ab);
    dnnl::softmax_forward::primitive_desc pd(
        dnnl::softmax_forward::desc(dnnl::prop_kind::forward_inference, data_md, 1), context().engine);
    impl_->prim = dnnl::softmax_forward(pd);
    impl_->x = user_memory(data_md);
    impl_->out = user_memory(data_md);
}

DnnlSoftmax::~DnnlSoftmax() = default;

void DnnlSoftmax::run(const float *x, float *out) {
    Impl &m = *impl_;
    bind(m.x, x), bind(m.out, out);
    execute(m.prim, {{DNNL_ARG_SRC, m.x}, {DNNL_ARG_DST, m.out}});
}

// ---- convolution + bias + ReLU ----

struct DnnlConvRelu::Impl {
    memory src, user_w, w, b, dst;
    memory::desc w_md;
    dnnl::convolution_forward prim;
    dnnl::reorder reorder_w;
    const float *last_w = nullptr;  // the weights reordered into w
};

DnnlConvRelu::DnnlConvRelu(int H, int W, int Cin, int Cout, int KH, int KW, bool nhwc) : impl_(new Impl) {
    const int OH = H - KH + 1, OW = W - KW + 1;
    memory::desc src_md({1, Cin, H, W}, dt::f32, nhwc ? tag::nhwc : tag::nchw),
        dst_md({1, Cout, OH, OW}, dt::f32, nhwc ? tag::nhwc : tag::nchw),
        user_w_md({Cout, Cin, KH, KW}, dt::f32, nhwc ? tag::hwio : tag::oihw), b_md({Cout}, dt::f32, tag::a),
        any_w_md({Cout, Cin, KH, KW}, dt::f32, tag::any);
    dnnl::convolution_forward::desc d(dnnl::prop_kind::forward_inference, dnnl::algorithm::convolution_direct, src_md,
                                      any_w_md, b_md, dst_md, {1, 1}, {0, 0}, {0, 0});
    dnnl::primitive_attr attr;
    dnnl::post_ops ops;
    ops.append_eltwise(1.0f, dnnl::algorithm::eltwise_relu, 0.0f, 0.0f);
    attr.set_post_ops(ops);
    dnnl::convolution_forward::primitive_desc pd(d, attr, context().engine);
    impl_->prim = dnnl::convolution_forward(pd);
    impl_->src = user_memory(src_md);
    impl_->dst = user_memory(dst_md);
    impl_->b = user_memory(b_md);
    impl_->user_w = user_memory(user_w_md);
    impl_->w = memory(pd.weights_desc(), context().engine);
    impl_->reorder_w = dnnl::reorder(impl_->user_w, impl_->w);
}

DnnlConvRelu::~DnnlConvRelu() = default;

void DnnlConvRelu::run(const float *in, const float *w, const float *b, float *out) {
    Impl &m = *impl_;
    if (w != m.last_w) {  // weights are reordered once per weight buffer, as a framework caches them
        bind(m.user_w, w);
        m.reorder_w.execute(context().stream, m.user_w, m.w);
        context().stream.wait();
        m.last_w = w;
    }
    bind(m.src, in), bind(m.b, b), bind(m.dst, out);
    execute(m.prim, {{DNNL_ARG_SRC, m.src}, {DNNL_ARG_WEIGHTS, m.w}, {DNNL_ARG_BIAS, m.b}, {DNNL_ARG_DST, m.dst}});
}

}  // namespace kiln_bench
