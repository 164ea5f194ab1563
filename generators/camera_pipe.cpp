// camera_pipe: a camera's RAW processing, from a Bayer mosaic (uint16, GRBG:
// green and red on even rows, blue and green on odd ones) to an 8-bit RGB
// image (the algorithm of Halide 14's apps/camera_pipe, after FCam):
//
//   shifted(x, y)        the input moved by (16, 12), so that every stage
//                        reads inside it for an output of the input's size
//                        less (32, 24)
//   denoised             hot pixels suppressed: each value clamped to the
//                        largest of its four same-colour neighbours
//   deinterleaved(x, y, c)  the four Bayer channels at half resolution
//                        (c: 0 green of the red rows, 1 red, 2 blue, 3
//                        green of the blue rows)
//   g_r, g_b             green at the red and blue sites, interpolated in
//                        the direction (x or y) of the smaller difference
//   demosaiced(x, y, c)  the three channels at full resolution (int16):
//                        the missing ones interpolated, corrected by the
//                        green's second derivative; diagonals as for green
//   matrix(x, y)         the 3x4 colour matrix for color_temp, interpolated
//                        in 1/kelvin between the two inputs, Q8.8 (int16)
//   corrected(x, y, c)   the colour matrix applied
//   curve(i)             a 1024-entry table: black and white levels, gamma,
//                        a quadratic contrast curve, to uint8
//   curved(x, y, c)      the table at the clamped corrected value
//   unsharp_y, unsharp   a 1 2 1 blur of curved in y, then in x
//   mask                 curved minus the blur (int16)
//   processed(x, y, c)   curved + mask * sharpen_strength (in 1/32 steps,
//                        sharpen_strength_x32), saturated to uint8
//
// Averages round up (avg(a, b) = (a + b + 1) / 2 in twice the bits); the
// arithmetic wraps as its types do (uint16 corrections may underflow, which
// the int16 cast of demosaiced reinterprets).
#include <kiln/Generator.h>
#include <kiln/kiln.h>

using namespace kiln;

namespace {

Var x("x"), y("y"), c("c");

// The mean of two values of the same unsigned type, rounded up.
Expr avg(Expr a, Expr b) {
    Type t = a.type();
    Type wider = t.with_bits(t.bits() * 2);
    return cast(t, (cast(wider, a) + b + 1) / 2);
}

// A 1 2 1 blur of three values, as two rounded averages.
Expr blur121(Expr a, Expr b, Expr m) { return avg(avg(a, m), b); }

// a at even x, b at odd x, each read at x / 2.
Func interleave_x(const Func &a, const Func &b) {
    Func f;
    f(x, y) = select(x % 2 == 0, a(x / 2, y), b(x / 2, y));
    return f;
}

Func interleave_y(const Func &a, const Func &b) {
    Func f;
    f(x, y) = select(y % 2 == 0, a(x, y / 2), b(x, y / 2));
    return f;
}

// The demosaic of the four half-resolution channels into demosaiced
// (x, y, c), int16. Site names: r_r is red at a red site, g_gr green at a
// green site of a red row, b_gb blue at a green site of a blue row, ...
void demosaic(const Func &deinterleaved, Func demosaiced) {
    Func g_gr("g_gr"), r_r("r_r"), b_b("b_b"), g_gb("g_gb");
    g_gr(x, y) = deinterleaved(x, y, 0);
    r_r(x, y) = deinterleaved(x, y, 1);
    b_b(x, y) = deinterleaved(x, y, 2);
    g_gb(x, y) = deinterleaved(x, y, 3);

    // Green at red and blue sites: the smoother of the two directions.
    Func g_r("g_r"), g_b("g_b");
    Expr vert_r = avg(g_gb(x, y - 1), g_gb(x, y)), vert_dr = absd(g_gb(x, y - 1), g_gb(x, y));
    Expr horz_r = avg(g_gr(x + 1, y), g_gr(x, y)), horz_dr = absd(g_gr(x + 1, y), g_gr(x, y));
    g_r(x, y) = select(horz_dr < vert_dr, horz_r, vert_r);
    Expr vert_b = avg(g_gr(x, y + 1), g_gr(x, y)), vert_db = absd(g_gr(x, y + 1), g_gr(x, y));
    Expr horz_b = avg(g_gb(x - 1, y), g_gb(x, y)), horz_db = absd(g_gb(x - 1, y), g_gb(x, y));
    g_b(x, y) = select(horz_db < vert_db, horz_b, vert_b);

    // Red and blue at green sites: the neighbours' mean, plus what green
    // would have lost by the same interpolation.
    Func r_gr("r_gr"), b_gr("b_gr"), r_gb("r_gb"), b_gb("b_gb");
    r_gr(x, y) = g_gr(x, y) - avg(g_r(x, y), g_r(x - 1, y)) + avg(r_r(x - 1, y), r_r(x, y));
    b_gr(x, y) = g_gr(x, y) - avg(g_b(x, y), g_b(x, y - 1)) + avg(b_b(x, y), b_b(x, y - 1));
    r_gb(x, y) = g_gb(x, y) - avg(g_r(x, y), g_r(x, y + 1)) + avg(r_r(x, y), r_r(x, y + 1));
    b_gb(x, y) = g_gb(x, y) - avg(g_b(x, y), g_b(x + 1, y)) + avg(b_b(x, y), b_b(x + 1, y));

    // Red at blue sites and blue at red ones: the smoother diagonal,
    // corrected the same way.
    Func r_b("r_b"), b_r("b_r");
    Expr pos_r = g_b(x, y) - avg(g_r(x, y), g_r(x - 1, y + 1)) + avg(r_r(x, y), r_r(x - 1, y + 1));
    Expr pos_dr = absd(r_r(x, y), r_r(x - 1, y + 1));
    Expr neg_r = g_b(x, y) - avg(g_r(x - 1, y), g_r(x, y + 1)) + avg(r_r(x - 1, y), r_r(x, y + 1));
    Expr neg_dr = absd(r_r(x - 1, y), r_r(x, y + 1));
    r_b(x, y) = select(pos_dr < neg_dr, pos_r, neg_r);
    Expr pos_b = g_r(x, y) - avg(g_b(x, y), g_b(x + 1, y - 1)) + avg(b_b(x, y), b_b(x + 1, y - 1));
    Expr pos_db = absd(b_b(x, y), b_b(x + 1, y - 1));
    Expr neg_b = g_r(x, y) - avg(g_b(x + 1, y), g_b(x, y - 1)) + avg(b_b(x + 1, y), b_b(x, y - 1));
    Expr neg_db = absd(b_b(x + 1, y), b_b(x, y - 1));
    b_r(x, y) = select(pos_db < neg_db, pos_b, neg_b);

    Func r = interleave_y(interleave_x(r_gr, r_r), interleave_x(r_b, r_gb));
    Func g = interleave_y(interleave_x(g_gr, g_r), interleave_x(g_b, g_gb));
    Func b = interleave_y(interleave_x(b_gr, b_r), interleave_x(b_b, b_gb));
    demosaiced(x, y, c) = cast<int16_t>(mux(c, {r(x, y), g(x, y), b(x, y)}));
}

}  // namespace

class CameraPipe : public Generator<CameraPipe> {
public:
    Input<Buffer<uint16_t, 2>> input{"input"};
    Input<Buffer<float, 2>> matrix_3200{"matrix_3200"};
    Input<Buffer<float, 2>> matrix_7000{"matrix_7000"};
    Input<float> color_temp{"color_temp", 3700.0f};
    Input<float> gamma{"gamma", 2.0f};
    Input<float> contrast{"contrast", 50.0f};
    Input<float> sharpen_strength{"sharpen_strength", 1.0f};
    Input<int> black_level{"black_level", 25};
    Input<int> white_level{"white_level", 1023};
    Output<Buffer<uint8_t, 3>> processed{"processed"};

    void generate() {
        Func shifted("shifted");
        shifted(x, y) = input(x + 16, y + 12);

        Func denoised("denoised");
        Expr brightest = max(shifted(x - 2, y), shifted(x + 2, y), shifted(x, y - 2), shifted(x, y + 2));
        denoised(x, y) = clamp(shifted(x, y), 0, brightest);

        Func deinterleaved("deinterleaved");
        deinterleaved(x, y, c) = mux(c, {denoised(2 * x, 2 * y), denoised(2 * x + 1, 2 * y),
                                         denoised(2 * x, 2 * y + 1), denoised(2 * x + 1, 2 * y + 1)});

        Func demosaiced("demosaiced");
        demosaic(deinterleaved, demosaiced);

        // The colour matrix for color_temp, in Q8.8.
        Func matrix("matrix");
        Expr t = (1.0f / color_temp - 1.0f / 3200) / (1.0f / 7000 - 1.0f / 3200);
        matrix(x, y) = cast<int16_t>((matrix_3200(x, y) * t + matrix_7000(x, y) * (1 - t)) * 256.0f);
        Func corrected("corrected");
        Expr ir = cast<int32_t>(demosaiced(x, y, 0));
        Expr ig = cast<int32_t>(demosaiced(x, y, 1));
        Expr ib = cast<int32_t>(demosaiced(x, y, 2));
        auto row = [&](int i) {
            Expr v = matrix(3, i) + matrix(0, i) * ir + matrix(1, i) * ig + matrix(2, i) * ib;
            return cast<int16_t>(v / 256);
        };
        corrected(x, y, c) = mux(c, {row(0), row(1), row(2)});

        // The tone curve as a table of the 10-bit range.
        Func curve("curve");
        Expr lo = 0 + black_level, hi = white_level;
        Expr inv_range = 1.0f / (hi - lo);
        Expr cb = 2.0f - pow(2.0f, contrast / 100.0f);
        Expr ca = 2.0f - 2.0f * cb;
        Expr linear = clamp(cast<float>(x - lo) * inv_range, 0.0f, 1.0f);
        Expr g = pow(linear, 1.0f / gamma);
        Expr z = select(g > 0.5f, 1.0f - (ca * (1.0f - g) * (1.0f - g) + cb * (1.0f - g)), ca * g * g + cb * g);
        Expr val = cast<uint8_t>(clamp(z * 255.0f + 0.5f, 0.0f, 255.0f));
        curve(x) = select(x <= lo, 0, select(x > hi, 255, val));
        Func curved("curved");
        curved(x, y, c) = curve(clamp(corrected(x, y, c), 0, 1023));

        // Unsharp masking, the strength in 1/32 steps.
        Func sharpen_strength_x32("sharpen_strength_x32");
        sharpen_strength_x32() = saturating_cast<uint8_t>(sharpen_strength * 32);
        Func unsharp_y("unsharp_y"), unsharp("unsharp"), mask("mask");
        unsharp_y(x, y, c) = blur121(curved(x, y - 1, c), curved(x, y, c), curved(x, y + 1, c));
        unsharp(x, y, c) = blur121(unsharp_y(x - 1, y, c), unsharp_y(x, y, c), unsharp_y(x + 1, y, c));
        mask(x, y, c) = cast<int16_t>(curved(x, y, c)) - cast<int16_t>(unsharp(x, y, c));
        processed(x, y, c) = saturating_cast<uint8_t>(curved(x, y, c) + (mask(x, y, c) * sharpen_strength_x32()) / 32);

        // The sizes -s auto assumes without --estimate: Halide's app's.
        input.set_estimates({{0, 2592}, {0, 1968}});
        matrix_3200.set_estimates({{0, 4}, {0, 3}});
        matrix_7000.set_estimates({{0, 4}, {0, 3}});
        processed.set_estimates({{0, 2560}, {0, 1920}, {0, 3}});
    }
};

KILN_REGISTER_GENERATOR(CameraPipe, camera_pipe)
