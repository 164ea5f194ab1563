// softmax: each row y of the input turned into probabilities, numerically
// stable (the row's maximum is subtracted before exp, so exp never
// overflows):
//
//   row_max(y)    = max over r of input(r, y)
//   exps(x, y)    = exp(input(x, y) - row_max(y))
//   row_sum(y)    = sum over r of exps(r, y)
//   output(x, y)  = exps(x, y) / row_sum(y)
//
// Three passes over each row: the maximum, the exponentials and their sum,
// the division. exps has two consumers; inlining it computes every exp twice.
#include <kiln/Generator.h>
#include <kiln/kiln.h>

using namespace kiln;

class Softmax : public Generator<Softmax> {
public:
    Input<Buffer<float, 2>> input{"input"};
    GeneratorParam<int> width{"width", 0, 0, 1 << 20};  // 0: the input's width, at run time
    Output<Buffer<float, 2>> output{"output"};

    void generate() {
        Var x("x"), y("y");
        // width > 0 fixes the row width at compile time (the NPU reduces a
        // whole row in one tile, whose shape is a constant); rows then start at 0.
        RDom r = width > 0 ? RDom(0, (int)width, "r") : RDom(input.dim(0).min(), input.dim(0).extent(), "r");
        Func row_max("row_max"), exps("exps"), row_sum("row_sum");
        row_max(y) = type_min(Float(32));
        row_max(y) = max(row_max(y), input(r, y));
        exps(x, y) = exp(input(x, y) - row_max(y));
        row_sum(y) = 0.0f;
        row_sum(y) += exps(r, y);
        output(x, y) = exps(x, y) / row_sum(y);
    }
};

KILN_REGISTER_GENERATOR(Softmax, softmax)
