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
// The variance is the two-pass one (the sum of squared deviations from the
// mean), which does not cancel catastrophically as E[x^2] - E[x]^2 does.
// With the row statistics computed per row (compute_at(output, y)) the row
// is read from memory once: the second and third reads hit the cache.
#include <kiln/Generator.h>
#include <kiln/kiln.h>

using namespace kiln;

class LayerNorm : public Generator<LayerNorm> {
public:
    Input<Buffer<float, 2>> input{"input"};
    Input<Buffer<float, 1>> gamma{"gamma"};
    Input<Buffer<float, 1>> beta{"beta"};
    Input<float> epsilon{"epsilon", 1e-5f};
    GeneratorParam<int> width{"width", 0, 0, 1 << 20};  // 0: the input's width, at run time
    Output<Buffer<float, 2>> output{"output"};

    void generate() {
        Var x("x"), y("y");
        // width > 0 fixes the row width at compile time (the NPU reduces a
        // whole row in one tile, whose shape is a constant); rows then start at 0.
        RDom r = width > 0 ? RDom(0, (int)width, "r") : RDom(input.dim(0).min(), input.dim(0).extent(), "r");
        Expr row_width = width > 0 ? Expr((float)width) : cast<float>(input.dim(0).extent());
        Func sum("sum"), mean("mean"), sum_sq("sum_sq"), inv_std("inv_std"), normalized("normalized");
        sum(y) = 0.0f;
        sum(y) += input(r, y);
        mean(y) = sum(y) / row_width;
        Expr d = input(r, y) - mean(y);
        sum_sq(y) = 0.0f;
        sum_sq(y) += d * d;
        inv_std(y) = 1.0f / sqrt(sum_sq(y) / row_width + epsilon);
        normalized(x, y) = (input(x, y) - mean(y)) * inv_std(y);
        output(x, y) = normalized(x, y) * gamma(x) + beta(x);
    }
};

KILN_REGISTER_GENERATOR(LayerNorm, layernorm)
