// softmax: each row y of the input turned into probabilities, numerically
// stable (the row's maximum is subtracted before exp, so exp never
// overflows). Two algorithms, chosen by the GeneratorParam `algorithm`:
//
// algorithm=two_pass (default): the maximum first, then the exponentials
// and their sum, then the division — three passes over each row:
//
//   row_max(y)    = max over r of input(r, y)
//   exps(x, y)    = exp(input(x, y) - row_max(y))
//   row_sum(y)    = sum over r of exps(r, y)
//   output(x, y)  = exps(x, y) / row_sum(y)
//
// exps has two consumers; inlining it computes every exp twice.
//
// The element type of the input and the output is a GeneratorParam (type=
// float32, the default; float16 or bfloat16): values are widened to float32
// where they are read, and the output is rounded to its type at the end.
//
// algorithm=online: the maximum m and the sum l in one pass (a Tuple
// update); when a larger value arrives, the sum so far is rescaled to the
// new maximum, so l stays the sum of exp(input - m) for the current m:
//
//   stats(y)      = (m, l) = (-inf, 0), then for each r:
//                   m' = max(m, v),  l' = l * exp(m - m') + exp(v - m')   (v = input(r, y))
//   output(x, y)  = exp(input(x, y) - m) / l
//
// Two passes over each row, no exps buffer to store or recompute, one
// more exp per element (the rescaling) and rounding that differs from the
// two-pass sum in the last bits.
//
// softmax_grad: the backward pipeline of two_pass. Given the adjoint of the
// output (d_output), it computes d_input by Kiln's reverse-mode autodiff
// (docs/autodiff.md): output_adjoint (d_output), exps_adjoint (from the
// division, plus the row sum's share), row_sum_adjoint (a sum over the row),
// input_adjoint and its copy d_input. The row maximum is subtracted under
// stop_gradient(): softmax does not change when a constant is subtracted
// from a row, so the maximum's share of the gradient is zero up to
// rounding, and differentiating it would cost a pass over the row and an
// argmax per row (as PyTorch's softmax backward, which reads the output
// only).
#include <kiln/Generator.h>
#include <kiln/kiln.h>

using namespace kiln;

namespace {

// Define output, and row_max, exps and row_sum, as the two-pass softmax of
// the rows of input, r spanning a row.
void define_two_pass(const ImageParam &input, RDom r, Func output, Type type = Float(32)) {
    Var x("x"), y("y");
    Func row_max("row_max"), exps("exps"), row_sum("row_sum");
    row_max(y) = type_min(Float(32));
    row_max(y) = max(row_max(y), cast<float>(input(r, y)));
    exps(x, y) = exp(cast<float>(input(x, y)) - stop_gradient(row_max(y)));
    row_sum(y) = 0.0f;
    row_sum(y) += exps(r, y);
    output(x, y) = cast(type, exps(x, y) / row_sum(y));
}

}  // namespace

class Softmax : public Generator<Softmax> {
public:
    enum class Algorithm { TwoPass, Online };
    GeneratorParam<Algorithm> algorithm{"algorithm", Algorithm::TwoPass,
                                        {{"two_pass", Algorithm::TwoPass}, {"online", Algorithm::Online}}};
    GeneratorParam<Type> type{"type", Float(32)};  // of the input and the output
    Input<Buffer<void, 2>> input{"input", type};
    GeneratorParam<int> width{"width", 0, 0, 1 << 20};  // 0: the input's width, at run time
    Output<Buffer<void, 2>> output{"output", type};

    void generate() {
        Var x("x"), y("y");
        // width > 0 fixes the row width at compile time (the NPU reduces a
        // whole row in one tile, whose shape is a constant); rows then start at 0.
        RDom r = width > 0 ? RDom(0, (int)width, "r") : RDom(input.dim(0).min(), input.dim(0).extent(), "r");
        if (algorithm.value() == Algorithm::Online) {
            Func stats("stats");
            stats(y) = Tuple(type_min(Float(32)), 0.0f);
            Expr m = stats(y)[0], l = stats(y)[1], v = cast<float>(input(r, y));
            Expr m2 = max(m, v);
            stats(y) = Tuple(m2, l * exp(m - m2) + exp(v - m2));
            output(x, y) = cast(type, exp(cast<float>(input(x, y)) - stats(y)[0]) / stats(y)[1]);
            return;
        }
        define_two_pass(input, r, output, type);
    }
};

class SoftmaxGrad : public Generator<SoftmaxGrad> {
public:
    Input<Buffer<float, 2>> input{"input"};
    Input<Buffer<float, 2>> d_output{"d_output"};
    Output<Buffer<float, 2>> d_input{"d_input"};

    void generate() {
        Func output("output");
        define_two_pass(input, RDom(input.dim(0).min(), input.dim(0).extent(), "r"), output);
        d_input.set(propagate_adjoints(output, d_output)(input));
    }
};

KILN_REGISTER_GENERATOR(Softmax, softmax)
KILN_REGISTER_GENERATOR(SoftmaxGrad, softmax_grad)
