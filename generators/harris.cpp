// harris: the Harris corner response of an RGB image (float, channels last).
//
//   gray          luma of the input
//   Ix, Iy        Sobel gradients of gray (scaled by 1/12)
//   Ixx, Iyy, Ixy products of the gradients
//   Sxx, Syy, Sxy their 3x3 box sums (the structure tensor)
//   output        det - k * trace^2 of the structure tensor
#include <kiln/Generator.h>
#include <kiln/kiln.h>

using namespace kiln;

class Harris : public Generator<Harris> {
public:
    Input<Buffer<float, 3>> input{"input"};
    Input<float> k{"k", 0.04f, 0.0f, 0.25f};
    Output<Buffer<float, 2>> output{"output"};

    void generate() {
        Var x("x"), y("y");
        // Edges repeat in x and y; the channels are not clamped, so the
        // input must have all three.
        Func clamped = BoundaryConditions::repeat_edge(
            input, {{input.dim(0).min(), input.width()}, {input.dim(1).min(), input.height()}, {Expr(), Expr()}});
        Func gray("gray");
        gray(x, y) = 0.299f * clamped(x, y, 0) + 0.587f * clamped(x, y, 1) + 0.114f * clamped(x, y, 2);

        Func Ix("Ix"), Iy("Iy");
        Ix(x, y) = (-1.0f / 12) * gray(x - 1, y - 1) + (1.0f / 12) * gray(x + 1, y - 1) +
                   (-2.0f / 12) * gray(x - 1, y) + (2.0f / 12) * gray(x + 1, y) +
                   (-1.0f / 12) * gray(x - 1, y + 1) + (1.0f / 12) * gray(x + 1, y + 1);
        Iy(x, y) = (-1.0f / 12) * gray(x - 1, y - 1) + (1.0f / 12) * gray(x - 1, y + 1) +
                   (-2.0f / 12) * gray(x, y - 1) + (2.0f / 12) * gray(x, y + 1) +
                   (-1.0f / 12) * gray(x + 1, y - 1) + (1.0f / 12) * gray(x + 1, y + 1);

        Func Ixx("Ixx"), Iyy("Iyy"), Ixy("Ixy");
        Ixx(x, y) = Ix(x, y) * Ix(x, y);
        Iyy(x, y) = Iy(x, y) * Iy(x, y);
        Ixy(x, y) = Ix(x, y) * Iy(x, y);

        Func Sxx("Sxx"), Syy("Syy"), Sxy("Sxy");
        Sxx(x, y) = box3x3(Ixx, x, y);
        Syy(x, y) = box3x3(Iyy, x, y);
        Sxy(x, y) = box3x3(Ixy, x, y);

        Expr det = Sxx(x, y) * Syy(x, y) - Sxy(x, y) * Sxy(x, y);
        Expr trace = Sxx(x, y) + Syy(x, y);
        output(x, y) = det - k * trace * trace;
        // The sizes -s auto assumes without --estimate: the bench's RGB image.
        input.set_estimates({{0, 4096}, {0, 4096}, {0, 3}});
        output.set_estimates({{0, 4096}, {0, 4096}});
    }

private:
    // The sum of f over the 3x3 neighbourhood of (x, y), rows in order.
    static Expr box3x3(const Func &f, const Var &x, const Var &y) {
        Expr sum;
        for (int dy = -1; dy <= 1; dy++)
            for (int dx = -1; dx <= 1; dx++) {
                Expr v = f(x + dx, y + dy);
                sum = sum.defined() ? sum + v : v;
            }
        return sum;
    }
};

KILN_REGISTER_GENERATOR(Harris, harris)
