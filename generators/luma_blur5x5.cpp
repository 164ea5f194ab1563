// luma_blur5x5: the luma of an RGB image (float, channels last), blurred by
// a 5-tap binomial (1 4 6 4 1)/16 in x then in y. Three stages in a chain,
// each reading a window of rows of the one before only in y at blur_y: the
// pipeline for sliding a window through a chain of stages
// (schedules/luma_blur5x5/fused.sched).
//
//   gray(x, y)   = 0.299 R + 0.587 G + 0.114 B
//   blur_x(x, y) = sum of w(i) gray(x + i, y),   w = (1 4 6 4 1)/16, i in -2..2
//   blur_y(x, y) = sum of w(i) blur_x(x, y + i)
//   output       = blur_y
#include <kiln/Generator.h>
#include <kiln/kiln.h>

using namespace kiln;

class LumaBlur5x5 : public Generator<LumaBlur5x5> {
public:
    Input<Buffer<float, 3>> input{"input"};
    Output<Buffer<float, 2>> output{"output"};

    void generate() {
        Var x("x"), y("y");
        // Edges repeat in x and y; the channels are not clamped, so the
        // input must have all three.
        Func clamped = BoundaryConditions::repeat_edge(
            input, {{input.dim(0).min(), input.width()}, {input.dim(1).min(), input.height()}, {Expr(), Expr()}});
        Func gray("gray"), blur_x("blur_x"), blur_y("blur_y");
        gray(x, y) = 0.299f * clamped(x, y, 0) + 0.587f * clamped(x, y, 1) + 0.114f * clamped(x, y, 2);
        blur_x(x, y) = (gray(x - 2, y) + 4 * gray(x - 1, y) + 6 * gray(x, y) + 4 * gray(x + 1, y) + gray(x + 2, y)) / 16;
        blur_y(x, y) = (blur_x(x, y - 2) + 4 * blur_x(x, y - 1) + 6 * blur_x(x, y) + 4 * blur_x(x, y + 1) +
                        blur_x(x, y + 2)) / 16;
        output(x, y) = blur_y(x, y);
        // The sizes -s auto assumes without --estimate: the bench's RGB image.
        input.set_estimates({{0, 4096}, {0, 4096}, {0, 3}});
        output.set_estimates({{0, 4096}, {0, 4096}});
    }
};

KILN_REGISTER_GENERATOR(LumaBlur5x5, luma_blur5x5)
