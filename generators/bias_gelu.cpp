// bias_gelu: a bias per column added to a [rows, columns] activation, then
// GELU in its tanh approximation:
//
//   biased(x, y)  = input(x, y) + bias(x)
//   gelu(v)       = 0.5 v (1 + tanh(sqrt(2/pi) (v + 0.044715 v^3)))
//   output(x, y)  = gelu(biased(x, y))
//
// Unfused, the bias add is a kernel of its own whose result goes to memory.
//
// bias_gelu_grad: its backward pipeline. Given the adjoint of the output
// (d_output), it computes the adjoints of both inputs by Kiln's reverse-mode
// autodiff (docs/autodiff.md): output_adjoint (d_output), biased_adjoint
// (d_output times GELU's derivative at biased), input_adjoint (the same
// values) and bias_adjoint (the sum of biased_adjoint over the rows, an
// update over the RDom bias_adjoint_r), copied into d_input and d_bias.
#include <kiln/Generator.h>
#include <kiln/kiln.h>

using namespace kiln;

namespace {

// Define output, and biased, as GELU of input + bias.
void define_bias_gelu(const ImageParam &input, const ImageParam &bias, Func output) {
    Var x("x"), y("y");
    Func biased("biased");
    biased(x, y) = input(x, y) + bias(x);
    Expr v = biased(x, y);
    const float sqrt_2_over_pi = 0.7978845608f;
    output(x, y) = 0.5f * v * (1.0f + tanh(sqrt_2_over_pi * (v + 0.044715f * (v * v * v))));
}

}  // namespace

class BiasGelu : public Generator<BiasGelu> {
public:
    Input<Buffer<float, 2>> input{"input"};
    Input<Buffer<float, 1>> bias{"bias"};
    Output<Buffer<float, 2>> output{"output"};

    void generate() { define_bias_gelu(input, bias, output); }
};

class BiasGeluGrad : public Generator<BiasGeluGrad> {
public:
    Input<Buffer<float, 2>> input{"input"};
    Input<Buffer<float, 1>> bias{"bias"};
    Input<Buffer<float, 2>> d_output{"d_output"};
    Output<Buffer<float, 2>> d_input{"d_input"};
    Output<Buffer<float, 1>> d_bias{"d_bias"};

    void generate() {
        Func output("output");
        define_bias_gelu(input, bias, output);
        Derivative d = propagate_adjoints(output, d_output);
        d_input.set(d(input));
        d_bias.set(d(bias));
    }
};

KILN_REGISTER_GENERATOR(BiasGelu, bias_gelu)
KILN_REGISTER_GENERATOR(BiasGeluGrad, bias_gelu_grad)
