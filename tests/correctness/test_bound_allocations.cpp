// Funcs computed per tile whose size is known only at run time but has a
// constant bound (lower/BoundAllocations.h) live on the stack, sized by
// the bound: every output size and origin, the tails included, gives the
// reference result. The lowered statements are checked to have the
// constant sizes, so that the cases exercise stack storage.
#include "check.h"
#include "ir/IRPrinter.h"

using namespace kiln;
using Catch::Contains;

namespace {

const std::vector<std::array<int, 4>> sizes = {
    {1, 1, 0, 0}, {7, 5, -3, 2}, {16, 2, 0, 0}, {33, 20, -7, -5}, {64, 17, 5, -9}, {129, 3, 1, 1}};

}  // namespace

TEST_CASE("bound allocations: a stencil computed per GuardWithIf tile", "[bound_allocations]") {
    ImageParam in(Int(32), 2, "in");
    Var x("x"), y("y"), xi("xi"), yi("yi");
    Func g("g"), out("out");
    g(x, y) = in(x, y) * 3 + 1;
    out(x, y) = g(x - 1, y) + g(x, y - 1) * 2 + g(x + 1, y + 1) * 5;
    out.tile(x, y, xi, yi, 16, 2, TailStrategy::GuardWithIf).vectorize(xi, 8, TailStrategy::GuardWithIf);
    g.compute_at(out, x).vectorize(x, 8);
    const std::string s = out.lowered_stmt(Target::host().with(Target::NoAsserts));
    CHECK_THAT(s, Contains("allocate g[int32 * 72]"));  // (16 + 2 + 6 rounded up by the vector) x (2 + 1)
    Buffer<int> input = kt::random_image<int>(200, 40, -20, -20, -1000, 1000);
    in.set(input);
    kt::realize_and_check<int>(out, sizes, [&](int px, int py) {
        auto gr = [&](int qx, int qy) { return input(qx, qy) * 3 + 1; };
        return gr(px - 1, py) + gr(px, py - 1) * 2 + gr(px + 1, py + 1) * 5;
    });
}

TEST_CASE("bound allocations: two stages per tile of a tile, as in a demosaic", "[bound_allocations]") {
    // corrected and demosaiced of camera_pipe in small: a Func per RoundUp
    // tile of a Func per row pair of the output, each vectorized.
    ImageParam in(Int(16), 2, "in");
    Var x("x"), y("y"), xi("xi"), yi("yi");
    Func a("a"), b("b"), c("c"), out("out");
    a(x, y) = in(x, y) + in(x + 1, y);
    b(x, y) = a(x, y) * 2 - a(x, y + 1);
    c(x, y) = b(x, y) + 1;
    out(x, y) = c(x, y) + c(x + 1, y);
    out.split(y, y, yi, 2, TailStrategy::GuardWithIf);
    c.compute_at(out, y).tile(x, y, x, y, xi, yi, 16, 2, TailStrategy::RoundUp).vectorize(xi);
    b.compute_at(c, x).vectorize(x, 8);
    a.compute_at(c, x).vectorize(x, 8);
    const std::string s = out.lowered_stmt(Target::host().with(Target::NoAsserts));
    CHECK_THAT(s, Contains("allocate b[int16 * 32]"));
    CHECK_THAT(s, Contains("allocate a[int16 * 48]"));
    Buffer<int16_t> input = kt::random_image<int16_t>(200, 40, -20, -20, -1000, 1000);
    in.set(input);
    kt::realize_and_check<int16_t>(out, sizes, [&](int px, int py) {
        auto ar = [&](int qx, int qy) { return (int16_t)(input(qx, qy) + input(qx + 1, qy)); };
        auto cr = [&](int qx, int qy) { return (int16_t)((int16_t)(ar(qx, qy) * 2 - ar(qx, qy + 1)) + 1); };
        return (int16_t)(cr(px, py) + cr(px + 1, py));
    });
}
