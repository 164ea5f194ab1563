// A Func computed per vector of its consumer (an unscheduled reduction such
// as maximum() under a vectorized consumer, or compute_at a vectorized loop)
// is computed just outside the vectorized loop and vectorized with the
// consumer's lanes. Values against plain references, with widths that are
// not multiples of the lanes and negative mins.
#include "check.h"

using namespace kiln;

TEST_CASE("vector producers: a max filter's maximum() under a vectorized consumer", "[vectorize][reductions]") {
    Buffer<float> im = kt::random_image<float>(90, 40, -6, -3, -100, 100);
    for (int lanes : {4, 8, 16}) {
        ImageParam in(Float(32), 2, "in");
        in.set(im);
        Var x("x"), y("y");
        RDom r(-2, 5, "r");
        Func f("f");
        f(x, y) = maximum(in(x + r, y)) + minimum(in(x, y + r));
        f.vectorize(x, lanes);
        INFO(lanes << " lanes");
        kt::realize_and_check<float>(f, {{61, 30, -3, 0}, {lanes, 1, 0, 0}, {lanes + 3, 2, 1, 1}}, [&](int px, int py) {
            float hi = -1e30f, lo = 1e30f;
            for (int k = -2; k <= 2; k++) {
                hi = std::max(hi, im(px + k, py));
                lo = std::min(lo, im(px, py + k));
            }
            return hi + lo;
        });
    }
}

TEST_CASE("vector producers: compute_at a vectorized loop, a Func with an update", "[vectorize]") {
    Buffer<int> im = kt::random_image<int>(80, 40, -2, -2, -1000, 1000);
    ImageParam in(Int(32), 2, "in");
    in.set(im);
    Var x("x"), y("y"), xo("xo"), xi("xi");
    RDom r(0, 3, "r");
    Func g("g"), out("out");
    g(x, y) = in(x, y) * 2;
    g(x, y) += in(x + r, y - 1);
    out(x, y) = g(x, y) - g(x + 1, y + 1);
    out.split(x, xo, xi, 8).vectorize(xi).parallel(y);
    g.compute_at(out, xi);
    auto gv = [&](int px, int py) { return im(px, py) * 2 + im(px, py - 1) + im(px + 1, py - 1) + im(px + 2, py - 1); };
    kt::realize_and_check<int>(out, {{67, 33, -2, 0}, {8, 4, 3, 1}},
                               [&](int px, int py) { return gv(px, py) - gv(px + 1, py + 1); });
}
