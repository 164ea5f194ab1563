// conv_bn_relu and conv_bn_folded: a 3x3 convolution, batch normalization
// (inference: per-channel mean μ, variance σ², scale γ, shift β) and ReLU,
// float32, written two ways.
//
// Layout: NHWC, i.e. (c, x, y) with the channel innermost (dimension 0),
// batch 1. The host schedules vectorize over output channels: the weights
// of consecutive output channels (w(c, ci, rx, ry), c innermost), the bias
// and the four BN parameters are then contiguous vector loads, every tap of
// the convolution is one broadcast input value times one weight vector, and
// the channel count (a multiple of 16 in real networks) fills the vectors
// whatever the image width. In NCHW one would vectorize over x instead, and
// the per-channel BN parameters become broadcasts.
//
// conv_bn_relu_grad: conv_bn_relu's backward pipeline (docs/autodiff.md).
// Given d_output, the adjoints of the input, the weights, the bias, gamma and
// beta (mean and variance are running statistics, not trained), by Kiln's
// reverse-mode autodiff of the same algorithm.
//
// The convolution is "valid": input is (Cin, W + 2, H + 2), the output
// (Cout, W, H), with the filter taps at x + 0..2, y + 0..2.
//
// conv_bn_relu, the unfolded pipeline, as a framework runs it layer by layer:
//   conv(c, x, y)   = bias(c) + Σ_{ci, rx, ry} w(c, ci, rx, ry) · input(ci, x + rx, y + ry)
//   conv_out(c, x, y) = conv(c, x, y)
//   bn(c, x, y)     = (conv_out(c, x, y) - μ(c)) · γ(c) / √(σ²(c) + ε) + β(c)
//   output(c, x, y) = max(bn(c, x, y), 0)
//
// conv_bn_folded, the folded algorithm (BN folded into the convolution's
// weights and bias by a small pipeline over the parameters):
//   scale(c)             = γ(c) / √(σ²(c) + ε)
//   folded_w(c, ci, ...) = w(c, ci, ...) · scale(c)
//   folded_b(c)          = (bias(c) - μ(c)) · scale(c) + β(c)
//   conv(c, x, y)        = folded_b(c) + Σ folded_w(c, ci, rx, ry) · input(ci, x + rx, y + ry)
//   output(c, x, y)      = max(conv(c, x, y), 0)
//
// The two agree up to rounding (the BN multiply moves inside the sum); each
// is exact across its own schedules.
#include <kiln/Generator.h>
#include <kiln/kiln.h>

using namespace kiln;

namespace {

// The Inputs and Output both variants share, and their convolution.
template<typename T>
class ConvBnBase : public Generator<T> {
public:
    Input<Buffer<float, 3>> input{"input"};      // (Cin, W + 2, H + 2)
    Input<Buffer<float, 4>> weights{"weights"};  // (Cout, Cin, 3, 3)
    Input<Buffer<float, 1>> bias{"bias"};        // (Cout)
    Input<Buffer<float, 1>> mean{"mean"};
    Input<Buffer<float, 1>> variance{"variance"};
    Input<Buffer<float, 1>> gamma{"gamma"};
    Input<Buffer<float, 1>> beta{"beta"};
    Input<float> epsilon{"epsilon", 1e-5f, 0.0f, 1.0f};

protected:
    Var c{"c"}, x{"x"}, y{"y"};

    // The sizes -s auto assumes without --estimate: a ResNet layer, 56x56,
    // 64 -> 64 channels (the bench's).
    static constexpr int channels = 64, width = 56;
    void set_input_estimates() {
        input.set_estimates({{0, channels}, {0, width + 2}, {0, width + 2}});
        weights.set_estimates({{0, channels}, {0, channels}, {0, 3}, {0, 3}});
        for (auto *per_channel : {&bias, &mean, &variance, &gamma, &beta}) per_channel->set_estimates({{0, channels}});
    }

    // conv(c, x, y) = b(c) + Σ w(c, ci, rx, ry) · input(ci, x + rx, y + ry)
    Func convolution(Func w, Func b) {
        RDom r(0, input.dim(0).extent(), 0, 3, 0, 3, "r");
        Func conv("conv");
        conv(c, x, y) = b(c);
        conv(c, x, y) += w(c, r.x, r.y, r.z) * input(r.x, x + r.y, y + r.z);
        return conv;
    }
    Expr bn_scale(Expr ch) { return gamma(ch) / sqrt(variance(ch) + epsilon); }
    // output = ReLU(BN(conv)), with the intermediate bn named. conv_out is
    // the convolution's value as a pure Func (inlined unless scheduled): a
    // backward schedule can save() it for the backward pass while the
    // forward pass still computes conv, the reduction, in register blocks
    // of conv_out's tiles (a saved Func is an output of the forward pass).
    void conv_bn_relu(Func output) {
        Func conv = convolution(weights, bias);
        Func conv_out("conv_out"), bn("bn");
        conv_out(c, x, y) = conv(c, x, y);
        bn(c, x, y) = (conv_out(c, x, y) - mean(c)) * bn_scale(c) + beta(c);
        output(c, x, y) = max(bn(c, x, y), 0.0f);
    }
};

class ConvBnRelu : public ConvBnBase<ConvBnRelu> {
public:
    Output<Buffer<float, 3>> output{"output"};  // (Cout, W, H)
    void generate() {
        conv_bn_relu(output);
        this->set_input_estimates();
        output.set_estimates({{0, channels}, {0, width}, {0, width}});
    }
};

class ConvBnReluGrad : public ConvBnBase<ConvBnReluGrad> {
public:
    Input<Buffer<float, 3>> d_output{"d_output"};    // (Cout, W, H)
    Output<Buffer<float, 3>> d_input{"d_input"};     // (Cin, W + 2, H + 2)
    Output<Buffer<float, 4>> d_weights{"d_weights"};  // (Cout, Cin, 3, 3)
    Output<Buffer<float, 1>> d_bias{"d_bias"};
    Output<Buffer<float, 1>> d_gamma{"d_gamma"};
    Output<Buffer<float, 1>> d_beta{"d_beta"};
    void generate() {
        Func output("output");
        conv_bn_relu(output);
        Derivative d = propagate_adjoints(output, d_output);
        d_input.set(d(input));
        d_weights.set(d(weights));
        d_bias.set(d(bias));
        d_gamma.set(d(gamma));
        d_beta.set(d(beta));
        this->set_input_estimates();
        d_output.set_estimates({{0, channels}, {0, width}, {0, width}});
        d_input.set_estimates({{0, channels}, {0, width + 2}, {0, width + 2}});
        d_weights.set_estimates({{0, channels}, {0, channels}, {0, 3}, {0, 3}});
        for (auto *per_channel : {&d_bias, &d_gamma, &d_beta}) per_channel->set_estimates({{0, channels}});
    }
};

class ConvBnFolded : public ConvBnBase<ConvBnFolded> {
public:
    Output<Buffer<float, 3>> output{"output"};  // (Cout, W, H)
    void generate() {
        Var ci("ci"), rx("rx"), ry("ry");
        Func scale("scale"), folded_w("folded_w"), folded_b("folded_b");
        scale(c) = bn_scale(c);
        folded_w(c, ci, rx, ry) = weights(c, ci, rx, ry) * scale(c);
        folded_b(c) = (bias(c) - mean(c)) * scale(c) + beta(c);
        Func conv = convolution(folded_w, folded_b);
        output(c, x, y) = max(conv(c, x, y), 0.0f);
        this->set_input_estimates();
        output.set_estimates({{0, channels}, {0, width}, {0, width}});
    }
};

}  // namespace

KILN_REGISTER_GENERATOR(ConvBnRelu, conv_bn_relu)
KILN_REGISTER_GENERATOR(ConvBnFolded, conv_bn_folded)
KILN_REGISTER_GENERATOR(ConvBnReluGrad, conv_bn_relu_grad)
