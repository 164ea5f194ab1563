// hist_equalize: histogram equalization of an 8-bit RGB image's luma (the
// algorithm of Halide 14's apps/hist), keeping its chroma:
//
//   Y, Cr, Cb          luma and the two chroma differences (float)
//   hist_rows(v, y)    per row, how many pixels have luma v (a scatter over
//                      the row: hist_rows(clamp(int(Y)), y) += 1)
//   hist(v)            the rows' histograms summed
//   cdf(v)             the cumulative histogram: a scan over the 256 bins
//   equalize(x, y)     the luma through the cdf, scaled to [0, 255]
//   output(x, y, c)    R, G and B again from the new luma and the chroma,
//                      saturated to uint8
#include <kiln/Generator.h>
#include <kiln/kiln.h>

using namespace kiln;

class HistEqualize : public Generator<HistEqualize> {
public:
    Input<Buffer<uint8_t, 3>> input{"input"};
    Output<Buffer<uint8_t, 3>> output{"output"};

    void generate() {
        Var x("x"), y("y"), c("c");
        Expr R = cast<float>(input(x, y, 0)), G = cast<float>(input(x, y, 1)), B = cast<float>(input(x, y, 2));
        Func Y("Y"), Cr("Cr"), Cb("Cb");
        Y(x, y) = 0.299f * R + 0.587f * G + 0.114f * B;
        Cr(x, y) = (R - Y(x, y)) * 0.713f + 128.0f;
        Cb(x, y) = (B - Y(x, y)) * 0.564f + 128.0f;

        Func hist_rows("hist_rows"), hist("hist"), cdf("cdf");
        hist_rows(x, y) = 0;
        RDom rx(0, input.width(), "rx");
        hist_rows(cast<int>(clamp(Y(rx, y), 0.0f, 255.0f)), y) += 1;
        hist(x) = 0;
        RDom ry(0, input.height(), "ry");
        hist(x) += hist_rows(x, ry);
        cdf(x) = hist(0);
        RDom b(1, 255, "b");
        cdf(b) = cdf(b - 1) + hist(b);

        Func eq("equalize");
        Expr bin = cast<uint8_t>(clamp(Y(x, y), 0.0f, 255.0f));
        Expr scale = 255.0f / cast<float>(input.width() * input.height());
        eq(x, y) = clamp(cast<float>(cdf(bin)) * scale, 0.0f, 255.0f);

        auto u8 = [](Expr v) { return cast<uint8_t>(clamp(v, 0.0f, 255.0f)); };
        Expr cr = Cr(x, y) - 128.0f, cb = Cb(x, y) - 128.0f;
        Expr red = u8(eq(x, y) + cr * 1.4f);
        Expr green = u8(eq(x, y) - 0.343f * cb - 0.711f * cr);
        Expr blue = u8(eq(x, y) + 1.765f * cb);
        output(x, y, c) = select(c == 0, red, c == 1, green, blue);
    }
};

KILN_REGISTER_GENERATOR(HistEqualize, hist_equalize)
