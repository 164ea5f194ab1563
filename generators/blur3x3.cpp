// blur3x3: a separable 3x3 box blur with the edges repeated.
//
//   blur_x(x, y) = mean of input(x-1..x+1, y)
//   output(x, y) = mean of blur_x(x, y-1..y+1)
#include <kiln/Generator.h>
#include <kiln/kiln.h>

using namespace kiln;

class Blur3x3 : public Generator<Blur3x3> {
public:
    Input<Buffer<float, 2>> input{"input"};
    Output<Buffer<float, 2>> output{"output"};

    void generate() {
        Var x("x"), y("y");
        Func clamped = BoundaryConditions::repeat_edge(input);
        Func blur_x("blur_x");
        blur_x(x, y) = (clamped(x - 1, y) + clamped(x, y) + clamped(x + 1, y)) / 3;
        output(x, y) = (blur_x(x, y - 1) + blur_x(x, y) + blur_x(x, y + 1)) / 3;
    }
};

KILN_REGISTER_GENERATOR(Blur3x3, blur3x3)
