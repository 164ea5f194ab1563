// subtract_mean: a reduction followed by a broadcast, each row y centred on
// its mean:
//
//   row_sum(y)    = sum over r of input(r, y)
//   mean(y)       = row_sum(y) / W                W = the input's width
//   output(x, y)  = input(x, y) - mean(y)
//
// The reduction is a fusion boundary: no element of a row's output can be
// computed before the whole row has been summed. The finest level at which
// the mean can be fused is therefore the row (compute_at(output, y)); any
// finer and each output element would recompute the whole sum.
#include <kiln/Generator.h>
#include <kiln/kiln.h>

using namespace kiln;

class SubtractMean : public Generator<SubtractMean> {
public:
    Input<Buffer<float, 2>> input{"input"};
    Output<Buffer<float, 2>> output{"output"};

    void generate() {
        Var x("x"), y("y");
        RDom r(input.dim(0).min(), input.dim(0).extent(), "r");
        Func row_sum("row_sum"), mean("mean");
        row_sum(y) = 0.0f;
        row_sum(y) += input(r, y);
        mean(y) = row_sum(y) / cast<float>(input.dim(0).extent());
        output(x, y) = input(x, y) - mean(y);
    }
};

KILN_REGISTER_GENERATOR(SubtractMean, subtract_mean)
