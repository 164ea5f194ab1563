// bias_gelu: a bias per column added to a [rows, columns] activation, then
// GELU in its tanh approximation:
//
//   biased(x, y)  = input(x, y) + bias(x)
//   gelu(v)       = 0.5 v (1 + tanh(sqrt(2/pi) (v + 0.044715 v^3)))
//   output(x, y)  = gelu(biased(x, y))
//
// Unfused, the bias add is a kernel of its own whose result goes to memory.
#include <kiln/Generator.h>
#include <kiln/kiln.h>

using namespace kiln;

class BiasGelu : public Generator<BiasGelu> {
public:
    Input<Buffer<float, 2>> input{"input"};
    Input<Buffer<float, 1>> bias{"bias"};
    Output<Buffer<float, 2>> output{"output"};

    void generate() {
        Var x("x"), y("y");
        Func biased("biased");
        biased(x, y) = input(x, y) + bias(x);
        Expr v = biased(x, y);
        const float sqrt_2_over_pi = 0.7978845608f;
        output(x, y) = 0.5f * v * (1.0f + tanh(sqrt_2_over_pi * (v + 0.044715f * (v * v * v))));
    }
};

KILN_REGISTER_GENERATOR(BiasGelu, bias_gelu)
