// Bounds inference around splits that compute past a stage's region
// (lower/BoundsInference.cpp, rounded_stage_vars): a RoundUp tile past the
// region's end, a ShiftInwards tile below a region smaller than the factor.
// What the stage computes there is never used, so its producers are not
// computed for it, but their storage still holds what it reads. Lowered to
// the loop nest as the autoscheduler lowers a candidate, then counted at
// concrete sizes: the points each producer computes, its largest storage.
#include <catch2/catch.hpp>

#include "analysis/ConcreteSizes.h"
#include "analysis/LoopCounts.h"
#include "kiln/kiln.h"
#include "lower/Lower.h"

using namespace kiln;
using namespace kiln::internal;

namespace {

LoopCounts counts_at(const Func &out, int w, int h) {
    std::vector<std::shared_ptr<FunctionContents>> outs = {out.contents()};
    ConcreteSizes cs = concrete_sizes(outs, {{out.name(), {w, h}}}, "test");
    LowerOptions o;
    o.stop = LowerStop::LoopNest;
    Stmt body = lower(outs, "", {}, Target("x86-64-linux-avx2-fma"), o).body;
    return count_loop_nest(body, cs.values, cs.float_values);
}

}  // namespace

TEST_CASE("bounds inference: a RoundUp consumer's producer computes its region, stores its reads",
          "[lower][bounds]") {
    ImageParam in(Int(32), 2, "in");
    Var x("x"), y("y"), xo("xo"), xi("xi");
    Func h("h"), g("g"), out("out");
    h(x, y) = in(x, y) * 2;
    g(x, y) = h(x, y) + h(x + 1, y);
    out(x, y) = g(x, y);
    g.compute_root().split(x, xo, xi, 64, TailStrategy::RoundUp);
    h.compute_root();
    // out is 20 wide: g computes its one tile, [0, 63], reading h over
    // [0, 64]; h is computed where g's region [0, 19] reads it, [0, 20],
    // and stored over all that the tile reads.
    LoopCounts c = counts_at(out, 20, 3);
    REQUIRE(c.funcs.count("h"));
    CHECK(c.funcs.at("h").pure_stores == 21 * 3);
    CHECK(c.funcs.at("h").largest == std::vector<int64_t>{65, 3});
    CHECK(c.funcs.at("g").pure_stores == 64 * 3);
}

TEST_CASE("bounds inference: a ShiftInwards tile below a region smaller than the factor reads nothing there",
          "[lower][bounds]") {
    ImageParam in(Int(32), 2, "in");
    Var x("x"), y("y"), yo("yo"), yi("yi");
    Func g("g"), f("f"), out("out");
    g(x, y) = in(x, y) * 2 + 1;
    f(x, y) = g(x, y - 1) + g(x + 1, y);
    out(x, y) = f(x, y + 1);
    f.compute_at(out, y).split(y, yo, yi, 4, TailStrategy::ShiftInwards);
    g.compute_root();
    // Per row r of out, f's region is row r + 1, its one tile rows [r - 2,
    // r + 1]; g is computed for rows [r, r + 1] only: over out's 9 rows, g's
    // rows [0, 9] (not [-3, 9]), stored over all the tiles read, [-3, 9].
    LoopCounts c = counts_at(out, 20, 9);
    REQUIRE(c.funcs.count("g"));
    CHECK(c.funcs.at("g").pure_stores == 21 * 10);
    CHECK(c.funcs.at("g").largest == std::vector<int64_t>{21, 13});
    CHECK(c.funcs.at("f").pure_stores == 20 * 4 * 9);
}
