// Bounds inference is exact enough: each input is exactly the region the
// algorithm reads (computed here by brute force), cut out of a larger image
// whose other pixels hold a sentinel, so a kernel that asks for more fails
// with RuntimeError and a kernel that reads outside its input sees the
// sentinel. Index expressions: Euclidean division and modulo of negative
// coordinates, reversal, strides, min/max/abs, an upsample computed
// per tile, and a Func read at clamped coordinates.
#include "check.h"

using namespace kiln;

namespace {

const int kSentinel = 1 << 20;

// A 1-D input holding 7 * i - 3 at i, over exactly the [lo, hi] that index(x)
// reaches for x in [out_min, out_min + out_extent), surrounded by sentinels.
struct ExactInput {
    Buffer<int> whole;
    Buffer<int> crop;
    template<typename Index>
    ExactInput(Index index, int out_min, int out_extent) {
        int lo = index(out_min), hi = lo;
        for (int x = out_min; x < out_min + out_extent; x++) {
            lo = std::min(lo, index(x));
            hi = std::max(hi, index(x));
        }
        whole = kt::image1<int>(hi - lo + 21, lo - 10, [&](int i) { return i >= lo && i <= hi ? 7 * i - 3 : kSentinel; });
        crop = whole.cropped(0, lo, hi - lo + 1);
    }
};

// out(x) = in(index(x)) * 2 over [-37, 30), compared with the same index in C++.
template<typename Index>
void check_index(Expr (*expr)(Expr), Index index, int vector_lanes = 1) {
    const int out_min = -37, out_extent = 67;
    ImageParam in(Int(32), 1, "in");
    Var x("x");
    Func out("out");
    out(x) = in(expr(x)) * 2;
    if (vector_lanes > 1) out.vectorize(x, vector_lanes, TailStrategy::GuardWithIf);
    ExactInput e(index, out_min, out_extent);
    in.set(e.crop);
    Buffer<int> o(out_extent);
    o.set_min(out_min);
    REQUIRE_NOTHROW(out.realize(o));
    kt::check(o, [&](int px) { return (7 * index(px) - 3) * 2; });
}

}  // namespace

TEST_CASE("bounds: Euclidean x / 3 and x / -4 of negative coordinates", "[bounds]") {
    check_index([](Expr x) { return x / 3; }, [](int x) { return (int)kt::div_euclid(x, 3); });
    check_index([](Expr x) { return x / -4 + 100; }, [](int x) { return (int)kt::div_euclid(x, -4) + 100; }, 8);
}

TEST_CASE("bounds: x % 5 and x % -3 read a small window", "[bounds]") {
    check_index([](Expr x) { return x % 5; }, [](int x) { return (int)kt::mod_euclid(x, 5); });
    check_index([](Expr x) { return x % -3 - 9; }, [](int x) { return (int)kt::mod_euclid(x, -3) - 9; }, 4);
}

TEST_CASE("bounds: reversed and strided reads", "[bounds]") {
    check_index([](Expr x) { return 5 - x; }, [](int x) { return 5 - x; }, 8);
    check_index([](Expr x) { return x * 3 + 1; }, [](int x) { return x * 3 + 1; });
    check_index([](Expr x) { return x * -2; }, [](int x) { return x * -2; }, 4);
}

// (A select's bounds are the union of both values' bounds, as in Halide, so
// select is not tested for exactness here.)
TEST_CASE("bounds: min and max in the index", "[bounds]") {
    check_index([](Expr x) { return min(x, 4) + max(x, -2) / 2; },
                [](int x) { return std::min(x, 4) + (int)kt::div_euclid(std::max(x, -2), 2); });
}

// BUG (a needless rejection): abs(x + 3) is bounded by [0, 34] here, but
// abs is lowered to select(x + 3 < 0, 0 - (x + 3), x + 3) whose bounds are
// the union [-34, 34]; the cast to uint32 of an interval with negatives is
// unbounded, so lowering throws CompileError "Input image in is read at an
// unbounded coordinate". Expected: in[0, 34] required (Halide bounds abs).
TEST_CASE("bounds: abs in the index", "[regression][bounds]") {
    check_index([](Expr x) { return cast<int>(abs(x + 3)); }, [](int x) { return std::abs(x + 3); }, 8);
}

TEST_CASE("bounds: a 2x upsample computed per tile reads an exact-size input", "[bounds]") {
    ImageParam in(Int(32), 2, "in");
    Var x("x"), y("y"), xi("xi"), yi("yi");
    Func g("g"), out("out");
    g(x, y) = in(x, y) + 1;
    out(x, y) = g(x / 2, y / 2) * 4 + g((x + 1) / 2, y / 2);
    out.tile(x, y, xi, yi, 8, 8, TailStrategy::GuardWithIf).vectorize(xi, 4);
    g.compute_at(out, x);
    // out over [-7, 25] x [-5, 14]: g, and so in, over [-4, 13] x [-3, 7].
    Buffer<int> whole = kt::image<int>(40, 30, -10, -10, [](int px, int py) {
        return px >= -4 && px <= 13 && py >= -3 && py <= 7 ? px * 100 + py : kSentinel;
    });
    Buffer<int> crop = whole.cropped(0, -4, 18).cropped(1, -3, 11);  // set() keeps a pointer: not a temporary
    in.set(crop);
    Buffer<int> o = kt::output<int>(33, 20, -7, -5);
    REQUIRE_NOTHROW(out.realize(o));
    auto gr = [](int qx, int qy) { return qx * 100 + qy + 1; };
    kt::check(o, [&](int px, int py) {
        int qy = (int)kt::div_euclid(py, 2);
        return gr((int)kt::div_euclid(px, 2), qy) * 4 + gr((int)kt::div_euclid(px + 1, 2), qy);
    });
}

TEST_CASE("bounds: a Func read at clamped, data-dependent coordinates", "[bounds]") {
    ImageParam in(Int(32), 1, "in"), index(Int(32), 1, "index");
    Var x("x");
    Func g("g"), out("out");
    g(x) = in(x) * 3;
    out(x) = g(clamp(index(x), 2, 9));  // g needed over [2, 9] whatever the index
    g.compute_root().vectorize(x, 4);
    out.vectorize(x, 8);  // a gather from g
    Buffer<int> whole = kt::image1<int>(30, -10, [](int i) { return i >= 2 && i <= 9 ? i * i : kSentinel; });
    Buffer<int> crop = whole.cropped(0, 2, 8);
    in.set(crop);
    Buffer<int> idx = kt::image1<int>(25, 0, [](int i) { return kt::noise(i, 0, -100, 100); });
    index.set(idx);
    Buffer<int> o(25);
    REQUIRE_NOTHROW(out.realize(o));
    kt::check(o, [&](int i) {
        int c = kt::clampi(idx(i), 2, 9);
        return c * c * 3;
    });
}

// Regression: bounds through casts between float and int were unbounded, so
// a LUT read at clamp(cast<int>(v / step), 0, cast<int>(1 / step)) (a Param
// step) or at cast<int>(clamp(v, 0, 255)) was refused ("read at an
// unbounded coordinate"), and bound() on a Func read at an unbounded
// coordinate was an internal error. The LUT is computed over exactly the
// values the index can take.
TEST_CASE("bounds: LUT indices through float-to-int casts, and bound() on an unbounded read", "[bounds][regression]") {
    ImageParam in(Float(32), 1, "in");
    Param<float> step("step");
    Var x("x"), z("z");
    Buffer<float> img = kt::image1<float>(40, 0, [](int i) { return (float)kt::noise(i, 0, -50, 350) * 0.01f * 255; });
    in.set(img);
    auto lut_value = [](int i) { return i * 3 + 1; };
    for (int which = 0; which < 3; which++) {
        INFO("case " << which);
        Func lut("lut"), out("out");
        lut(z) = z * 3 + 1;
        lut.compute_root();
        std::function<int(int)> ref;
        if (which == 0) {
            out(x) = lut(clamp(cast<int>(in(x) * (1.0f / step)), 0, cast<int>(1.0f / step)));
            step.set(0.25f);
            ref = [&](int i) { return lut_value(std::min(std::max((int)(img(i) * 4.0f), 0), 4)); };
        } else if (which == 1) {
            out(x) = lut(cast<int>(clamp(in(x), 0, 255)));
            ref = [&](int i) { return lut_value((int)std::min(std::max(img(i), 0.0f), 255.0f)); };
        } else {
            // The coordinate itself is unbounded; bound() says what to compute.
            out(x) = lut(cast<int>(in(x) * 0.0f) + x % 16);
            lut.bound(z, 0, 16);
            ref = [&](int i) { return lut_value(((int)(img(i) * 0.0f)) + i % 16); };
        }
        Buffer<int> o(40);
        REQUIRE_NOTHROW(out.realize(o));
        kt::check(o, [&](int i) { return ref(i); });
    }
}

TEST_CASE("bounds: align_bounds() widens a region and keeps the values", "[bounds][align_bounds]") {
    // A demosaic-like select on the parity of x and y, vectorized per tile
    // of its consumer, whose regions are aligned: the output from an odd
    // column (remainder 1) and an even row, the intermediate to 4 columns
    // plus 3 (it is computed over a wider region than read).
    ImageParam in(Int(32), 2, "in");
    Var x("x"), y("y"), xi("xi"), yi("yi");
    Func dm("dm"), out("out");
    dm(x, y) = select(x % 2 == 0, select(y % 2 == 0, in(x / 2, y) * 3, in(x / 2 + 1, y)),
                      select(y % 2 == 0, in(x / 2, y) - 5, in(x / 2 - 1, y) * 7));
    out(x, y) = dm(x - 1, y) + dm(x + 1, y - 1) * 2;
    out.align_bounds(x, 2, 1).align_bounds(y, 2).tile(x, y, xi, yi, 16, 2).vectorize(xi, 8);
    dm.compute_at(out, x).align_bounds(x, 4, 3).vectorize(x, 8).unroll(y, 2);
    Buffer<int> whole = kt::image<int>(80, 40, -20, -10, [](int px, int py) { return px * 100 + py; });
    in.set(whole);
    Buffer<int> o = kt::output<int>(34, 20, -7, -6);  // x from -7 (odd), 34 columns; y from -6, 20 rows
    REQUIRE_NOTHROW(out.realize(o));
    auto ref_dm = [](int px, int py) {
        auto v = [](int qx, int qy) { return qx * 100 + qy; };
        int hx = (int)kt::div_euclid(px, 2);
        bool ex = kt::mod_euclid(px, 2) == 0, ey = kt::mod_euclid(py, 2) == 0;
        return ex ? (ey ? v(hx, py) * 3 : v(hx + 1, py)) : (ey ? v(hx, py) - 5 : v(hx - 1, py) * 7);
    };
    kt::check(o, [&](int px, int py) { return ref_dm(px - 1, py) + ref_dm(px + 1, py - 1) * 2; });
}
