// bilateral_grid: an edge-preserving blur of a gray float image through a
// bilateral grid (Chen, Paris and Durand, SIGGRAPH 2007; the algorithm of
// Halide's apps/bilateral_grid). The image is splatted into a coarse 3-D
// grid — s_sigma x s_sigma pixels a cell in x and y, r_sigma of intensity a
// cell in z — the grid is blurred, and each pixel reads it back:
//
//   histogram(x, y, z, c)  c = 0: the sum of the clamped values of the
//                          s_sigma x s_sigma block of pixels around cell
//                          (x, y) whose value rounds to cell z
//                          (z = int(v / r_sigma + 0.5)); c = 1: their count
//   blurz, blurx, blury    a 5-tap (1 4 6 4 1) blur of the grid in z, x, y
//   output(x, y)           the grid sliced trilinearly at (x / s_sigma,
//                          y / s_sigma, v / r_sigma), value over weight
//
// The edges of the image repeat; values are clamped to [0, 1] before they
// index the grid. s_sigma is fixed when the kernel is generated; r_sigma is
// an argument. The slice (`interpolated`) is a Func of (x, y, c) that the
// schedules leave inlined, as Halide's CPU schedule does.
#include <kiln/Generator.h>
#include <kiln/kiln.h>

using namespace kiln;

class BilateralGrid : public Generator<BilateralGrid> {
public:
    GeneratorParam<int> s_sigma{"s_sigma", 8, 1, 64};
    Input<Buffer<float, 2>> input{"input"};
    Input<float> r_sigma{"r_sigma", 0.1f, 0.01f, 1.0f};
    Output<Buffer<float, 2>> output{"output"};

    void generate() {
        Var x("x"), y("y"), z("z"), c("c");
        const int s = s_sigma;
        Func clamped = BoundaryConditions::repeat_edge(input);

        // The splat: every pixel of a cell's block adds (value, 1) to the
        // z cell its value rounds to.
        RDom r(0, s, 0, s, "r");
        Expr v = clamp(clamped(x * s + r.x - s / 2, y * s + r.y - s / 2), 0.0f, 1.0f);
        Expr cell = cast<int>(v * (1.0f / r_sigma) + 0.5f);
        Func histogram("histogram");
        histogram(x, y, z, c) = 0.0f;
        histogram(x, y, cell, c) += mux(c, {v, 1.0f});

        Func blurz("blurz"), blurx("blurx"), blury("blury");
        blurz(x, y, z, c) = taps(histogram(x, y, z - 2, c), histogram(x, y, z - 1, c), histogram(x, y, z, c),
                                 histogram(x, y, z + 1, c), histogram(x, y, z + 2, c));
        blurx(x, y, z, c) = taps(blurz(x - 2, y, z, c), blurz(x - 1, y, z, c), blurz(x, y, z, c),
                                 blurz(x + 1, y, z, c), blurz(x + 2, y, z, c));
        blury(x, y, z, c) = taps(blurx(x, y - 2, z, c), blurx(x, y - 1, z, c), blurx(x, y, z, c),
                                 blurx(x, y + 1, z, c), blurx(x, y + 2, z, c));

        // The slice: the eight grid points around (x / s, y / s, v / r_sigma).
        Expr vz = clamp(input(x, y), 0.0f, 1.0f) * (1.0f / r_sigma);
        Expr zi = cast<int>(vz), zf = vz - zi;
        Expr xi = x / s, yi = y / s;
        Expr xf = cast<float>(x % s) / s, yf = cast<float>(y % s) / s;
        auto plane = [&](Expr k) {
            return lerp(lerp(blury(xi, yi, k, c), blury(xi + 1, yi, k, c), xf),
                        lerp(blury(xi, yi + 1, k, c), blury(xi + 1, yi + 1, k, c), xf), yf);
        };
        Func interpolated("interpolated");
        interpolated(x, y, c) = lerp(plane(zi), plane(zi + 1), zf);
        output(x, y) = interpolated(x, y, 0) / interpolated(x, y, 1);
    }

private:
    // a + 4 b + 6 c + 4 d + e, summed left to right (no normalisation: the
    // slice divides value by weight).
    static Expr taps(Expr a, Expr b, Expr c, Expr d, Expr e) { return a + b * 4 + c * 6 + d * 4 + e; }
};

KILN_REGISTER_GENERATOR(BilateralGrid, bilateral_grid)
