// blur3x3: a separable 3x3 box blur with the edges repeated.
//
//   blur_x(x, y) = mean of input(x-1..x+1, y)
//   output(x, y) = mean of blur_x(x, y-1..y+1)
//
// blur3x3_grad: its backward pipeline. Given the adjoint of the output
// (d_output, the gradient of a loss with respect to output, over output's
// region), it computes the adjoint of the input, d_input = d loss / d input,
// through Kiln's reverse-mode autodiff (docs/autodiff.md). Its Funcs, named
// for the schedule files, are the adjoints output_adjoint (d_output, zero
// outside its region), blur_x_adjoint (a gather from three rows of
// output_adjoint), input_adjoint (a gather from three columns of
// blur_x_adjoint, plus one update per edge that sums what the repeated
// edges read, the columns' taking the corners) and d_input, its copy into
// the output buffer. The forward Funcs are not needed: the blur is linear.
#include <kiln/Generator.h>
#include <kiln/kiln.h>

using namespace kiln;

namespace {

// Define output, and blur_x, as the blur of input.
void define_blur3x3(const ImageParam &input, Func blur_x, Func output) {
    Var x("x"), y("y");
    Func clamped = BoundaryConditions::repeat_edge(input);
    blur_x(x, y) = (clamped(x - 1, y) + clamped(x, y) + clamped(x + 1, y)) / 3;
    output(x, y) = (blur_x(x, y - 1) + blur_x(x, y) + blur_x(x, y + 1)) / 3;
}

}  // namespace

class Blur3x3 : public Generator<Blur3x3> {
public:
    Input<Buffer<float, 2>> input{"input"};
    Output<Buffer<float, 2>> output{"output"};

    void generate() { define_blur3x3(input, Func("blur_x"), output); }
};

class Blur3x3Grad : public Generator<Blur3x3Grad> {
public:
    Input<Buffer<float, 2>> input{"input"};
    Input<Buffer<float, 2>> d_output{"d_output"};
    Output<Buffer<float, 2>> d_input{"d_input"};

    void generate() {
        Func output("output");
        define_blur3x3(input, Func("blur_x"), output);
        d_input.set(propagate_adjoints(output, d_output)(input));
    }
};

KILN_REGISTER_GENERATOR(Blur3x3, blur3x3)
KILN_REGISTER_GENERATOR(Blur3x3Grad, blur3x3_grad)
