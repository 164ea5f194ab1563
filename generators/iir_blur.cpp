// iir_blur: a first-order recursive (IIR) low-pass filter of a float RGB
// image, run down and back up the columns, then down and up the rows (the
// algorithm of Halide 14's apps/iir_blur). Each pass filters the columns
// of its input and transposes the result, so the second pass, on the
// first's transpose, filters the rows and transposes them back:
//
//   blur(x, 0, c)  = in(x, 0, c)
//   blur(x, y, c)  = (1 - alpha) blur(x, y - 1, c) + alpha in(x, y, c)   y = 1 .. h - 1
//   blur(x, y, c)  = (1 - alpha) blur(x, y + 1, c) + alpha blur(x, y, c) y = h - 2 .. 0
//   transposed(x, y, c) = blur(y, x, c)
//
// blur's pure definition is undef(): its updates write every point. The
// first pass's Funcs are blur_cols and transposed_cols, the second's
// blur_rows and the output.
#include <kiln/Generator.h>
#include <kiln/kiln.h>

using namespace kiln;

class IirBlur : public Generator<IirBlur> {
public:
    Input<Buffer<float, 3>> input{"input"};
    Input<float> alpha{"alpha", 0.1f, 0.0f, 1.0f};
    Output<Buffer<float, 3>> output{"output"};

    void generate() {
        Func in("in"), transposed_cols("transposed_cols"), blur_cols("blur_cols"), blur_rows("blur_rows");
        in(x, y, c) = input(x, y, c);
        blur_columns_transposed(in, input.height(), blur_cols, transposed_cols);
        blur_columns_transposed(transposed_cols, input.width(), blur_rows, output);
    }

private:
    Var x{"x"}, y{"y"}, c{"c"};

    // The columns of `in` (`height` rows) filtered into `blur`, and `blur`
    // transposed into `transposed`.
    void blur_columns_transposed(Func in, Expr height, Func blur, Func transposed) {
        blur(x, y, c) = undef<float>();
        blur(x, 0, c) = in(x, 0, c);
        RDom ry(1, height - 1, "ry");
        blur(x, ry, c) = (1 - alpha) * blur(x, ry - 1, c) + alpha * in(x, ry, c);
        Expr up = height - ry - 1;
        blur(x, up, c) = (1 - alpha) * blur(x, up + 1, c) + alpha * blur(x, up, c);
        transposed(x, y, c) = blur(y, x, c);
    }
};

KILN_REGISTER_GENERATOR(IirBlur, iir_blur)
