// layernorm: each row y of the input normalized to mean 0 and variance 1,
// then scaled by gamma(x) and shifted by beta(x) (LayerNorm over the last
// axis of a [rows, columns] tensor; x is the column):
//
//   mean(y)       = sum over r of input(r, y) / W         W = the input's width
//   sum_sq(y)     = sum over r of (input(r, y) - mean(y))^2
//   inv_std(y)    = 1 / sqrt(sum_sq(y) / W + epsilon)
//   normalized(x, y) = (input(x, y) - mean(y)) * inv_std(y)
//   output(x, y)  = normalized(x, y) * gamma(x) + beta(x)
//
// The element type of input, gamma, beta and the output is a
// GeneratorParam (type=float32, the default; float16 or bfloat16): every
// value is widened to float32 where it is read, the statistics and the
// normalization are float32, and the output is rounded to its type at the
// end, as 16-bit LayerNorm kernels compute.
//
// The variance is the two-pass one (the sum of squared deviations from the
// mean), which does not cancel catastrophically as E[x^2] - E[x]^2 does.
// With the row statistics computed per row (compute_at(output, y)) the row
// is read from memory once: the second and third reads hit the cache.
//
// layernorm_grad: its backward pipeline. Given the adjoint of the output
// (d_output), it computes the adjoints of the input, of gamma and of beta
// by Kiln's reverse-mode autodiff (docs/autodiff.md): output_adjoint
// (d_output), normalized_adjoint, the row statistics' adjoints
// (inv_std_adjoint, sum_sq_adjoint, mean_adjoint, sum_adjoint: sums over the
// row), input_adjoint (from normalized, from the squared deviations and from
// the sum; the squared deviations subtract the mean under stop_gradient, as
// their derivative by it is zero), and gamma_adjoint and beta_adjoint (sums over the rows, updates
// over an RDom); copied into d_input, d_gamma and d_beta.
#include <kiln/Generator.h>
#include <kiln/kiln.h>

using namespace kiln;

namespace {

// Define output, and the row statistics and normalized, as the layer norm
// of the rows of input, r spanning a row of row_width elements.
void define_layernorm(const ImageParam &input, const ImageParam &gamma, const ImageParam &beta, Expr epsilon,
                      RDom r, Expr row_width, Func output, Type type = Float(32)) {
    Var x("x"), y("y");
    Func sum("sum"), mean("mean"), sum_sq("sum_sq"), inv_std("inv_std"), normalized("normalized");
    sum(y) = 0.0f;
    sum(y) += cast<float>(input(r, y));
    mean(y) = sum(y) / row_width;
    // The deviations sum to zero, so the squared sum's derivative by the
    // mean, -2 sum(d), is zero up to rounding: no gradient flows to the mean
    // this way (a pass over each row fewer in the backward pipeline).
    Expr d = cast<float>(input(r, y)) - stop_gradient(mean(y));
    sum_sq(y) = 0.0f;
    sum_sq(y) += d * d;
    inv_std(y) = 1.0f / sqrt(sum_sq(y) / row_width + epsilon);
    normalized(x, y) = (cast<float>(input(x, y)) - mean(y)) * inv_std(y);
    output(x, y) = cast(type, normalized(x, y) * cast<float>(gamma(x)) + cast<float>(beta(x)));
}

}  // namespace

class LayerNorm : public Generator<LayerNorm> {
public:
    GeneratorParam<Type> type{"type", Float(32)};  // of input, gamma, beta and the output
    Input<Buffer<void, 2>> input{"input", type};
    Input<Buffer<void, 1>> gamma{"gamma", type};
    Input<Buffer<void, 1>> beta{"beta", type};
    Input<float> epsilon{"epsilon", 1e-5f};
    GeneratorParam<int> width{"width", 0, 0, 1 << 20};  // 0: the input's width, at run time
    Output<Buffer<void, 2>> output{"output", type};

    void generate() {
        // width > 0 fixes the row width at compile time (the NPU reduces a
        // whole row in one tile, whose shape is a constant); rows then start at 0.
        RDom r = width > 0 ? RDom(0, (int)width, "r") : RDom(input.dim(0).min(), input.dim(0).extent(), "r");
        Expr row_width = width > 0 ? Expr((float)width) : cast<float>(input.dim(0).extent());
        define_layernorm(input, gamma, beta, epsilon, r, row_width, output, type);
    }
};

class LayerNormGrad : public Generator<LayerNormGrad> {
public:
    Input<Buffer<float, 2>> input{"input"};
    Input<Buffer<float, 1>> gamma{"gamma"};
    Input<Buffer<float, 1>> beta{"beta"};
    Input<float> epsilon{"epsilon", 1e-5f};
    Input<Buffer<float, 2>> d_output{"d_output"};
    Output<Buffer<float, 2>> d_input{"d_input"};
    Output<Buffer<float, 1>> d_gamma{"d_gamma"};
    Output<Buffer<float, 1>> d_beta{"d_beta"};

    void generate() {
        Func output("output");
        define_layernorm(input, gamma, beta, epsilon, RDom(input.dim(0).min(), input.dim(0).extent(), "r"),
                         cast<float>(input.dim(0).extent()), output);
        Derivative d = propagate_adjoints(output, d_output);
        d_input.set(d(input));
        d_gamma.set(d(gamma));
        d_beta.set(d(beta));
    }
};

KILN_REGISTER_GENERATOR(LayerNorm, layernorm)
KILN_REGISTER_GENERATOR(LayerNormGrad, layernorm_grad)
