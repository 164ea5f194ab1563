// unsharp: unsharp masking. A 5-tap binomial blur (1 4 6 4 1)/16 in x then
// in y approximates a Gaussian; the image is sharpened by adding back
// `amount` times what the blur removed:
//
//   output = input + amount * (input - blur(input))
//
// The element type is a GeneratorParam: floats are left as computed,
// integers are rounded and clamped to their range.
#include <kiln/Generator.h>
#include <kiln/kiln.h>

using namespace kiln;

class Unsharp : public Generator<Unsharp> {
public:
    GeneratorParam<Type> type{"type", Float(32)};
    Input<Buffer<void, 2>> input{"input", type};
    Input<float> amount{"amount", 1.0f, 0.0f, 8.0f};
    Output<Buffer<void, 2>> output{"output", type};

    void generate() {
        Var x("x"), y("y");
        Func clamped = BoundaryConditions::repeat_edge(input);
        Func as_float("as_float");
        as_float(x, y) = cast<float>(clamped(x, y));
        Func blur_x("blur_x"), blur_y("blur_y");
        blur_x(x, y) = (as_float(x - 2, y) + 4 * as_float(x - 1, y) + 6 * as_float(x, y) + 4 * as_float(x + 1, y) +
                        as_float(x + 2, y)) / 16;
        blur_y(x, y) = (blur_x(x, y - 2) + 4 * blur_x(x, y - 1) + 6 * blur_x(x, y) + 4 * blur_x(x, y + 1) +
                        blur_x(x, y + 2)) / 16;
        Func sharpen("sharpen");
        sharpen(x, y) = as_float(x, y) + amount * (as_float(x, y) - blur_y(x, y));
        Type t = type;
        if (t.is_float()) {
            output(x, y) = cast(t, sharpen(x, y));
        } else {
            Expr lo = cast<float>(type_min(t)), hi = cast<float>(type_max(t));
            output(x, y) = cast(t, clamp(round(sharpen(x, y)), lo, hi));
        }
    }
};

KILN_REGISTER_GENERATOR(Unsharp, unsharp)
