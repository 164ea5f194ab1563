// fold_storage() through the passes: the Realize before and after
// storage_folding (the fold replaces the automatic one), the run-time check
// put at the top of the compute loop when the window's size is symbolic, a
// producer whose split tail writes past the window (neither slid nor folded
// short), and the folded indexing in the lowered statement.
#include <catch2/catch.hpp>

#include "before_licm.h"
#include "blur_fixture.h"
#include "ir/IRPrinter.h"
#include "kiln/kiln.h"
#include "lower/Lower.h"

using namespace kiln;
using namespace kiln::internal;
using Catch::Contains;

namespace {

const Target no_asserts = Target::host().with(Target::NoAsserts);

// lower() up to and including one pass.
Stmt until(const Func &out, const char *pass) {
    LowerOptions o;
    o.stop_after = pass;
    return lower({out.contents()}, out.name(), {}, no_asserts, o).body;
}

Stmt slid(const Func &out) { return until(out, "sliding window"); }
Stmt folded(const Func &out) { return until(out, "storage folding"); }

// blur_x's storage (blur_y reads it over rows [y - 1, y + 1]).
const char *realize_rows = "realize blur_x([blur_y.s0.x.min, ((blur_y.s0.x.max - blur_y.s0.x.min) + 1)], "
                           "[(blur_y.s0.y.min - 1), ((blur_y.s0.y.max - blur_y.s0.y.min) + 3)]";

}  // namespace

TEST_CASE("storage_folding: fold_storage(y, 3) replaces the automatic fold of 4", "[lower][folding][fold_storage]") {
    BlurFixture a;
    a.blur_x.store_root().compute_at(a.blur_y, a.y);
    std::string before = to_string(slid(a.blur_y));
    CHECK_THAT(before, Contains(std::string(realize_rows) + ") {\n"));
    CHECK_THAT(to_string(folded(a.blur_y)), Contains(std::string(realize_rows) + " folded by 4) {\n"));

    BlurFixture b;
    b.blur_x.store_root().compute_at(b.blur_y, b.y).fold_storage(b.y, 3);
    std::string after = to_string(folded(b.blur_y));
    CHECK_THAT(after, Contains(std::string(realize_rows) + " folded by 3) {\n"));
    CHECK_THAT(after, !Contains("assert("));  // the window of 3 is known: nothing to check at run time

    std::string s = stmt_before_licm(b.blur_y, no_asserts);
    CHECK_THAT(s, Contains("allocate blur_x[float32 * (blur_x.extent.0 * 3)]\n"));
    CHECK_THAT(s, Contains("blur_x[((((blur_x.s0.y % 3) * blur_x.extent.0) + blur_x.s0.x) - blur_y.min.0)] = "));
    CHECK_THAT(s, Contains("blur_x[(((((blur_y.s0.y + 2) % 3) * blur_x.extent.0) + blur_y.s0.x) - blur_y.min.0)]"));
}

TEST_CASE("storage_folding: a fold of a dimension that does not move", "[lower][folding][fold_storage]") {
    // Along blur_y.y, blur_x slides in y; its region in x is the whole row,
    // the same every iteration, and folds like any other (a stationary
    // window is monotonic) once the factor covers it.
    BlurFixture a;
    a.blur_x.store_root().compute_at(a.blur_y, a.y).bound(a.x, 0, 16).fold_storage(a.x, 16);
    std::string s = to_string(folded(a.blur_y));
    CHECK_THAT(s, Contains("realize blur_x([0, 16] folded by 16, [(blur_y.s0.y.min - 1), "
                           "((blur_y.s0.y.max - blur_y.s0.y.min) + 3)] folded by 4) {\n"));
}

TEST_CASE("storage_folding: a window of symbolic size is checked at the top of the compute loop",
          "[lower][folding][fold_storage]") {
    ImageParam input(Float(32), 2, "input");
    Param<int> k("k");
    Var x("x"), y("y");
    Func g("g"), out("out");
    g(x, y) = input(x, y) * 2;
    out(x, y) = g(x, y - 1) + g(x, y + k);
    g.store_root().compute_at(out, y).fold_storage(y, 4);
    std::string s = to_string(folded(out));
    CHECK_THAT(s, Contains("] folded by 4) {\n"));
    CHECK_THAT(s, Contains("  for (out.s0.y, out.s0.y.loop_min, out.s0.y.loop_extent) {\n"
                           "   let g.s0.x.min = out.s0.x.loop_min\n"
                           "   let g.s0.x.max = ((out.s0.x.loop_extent + out.s0.x.loop_min) - 1)\n"
                           "   let g.s0.y.min = select((out.s0.y > out.s0.y.loop_min), max(min((out.s0.y - 1), "
                           "(k + out.s0.y)), (max(((out.s0.y - 1) - 1), (k + (out.s0.y - 1))) + 1)), "
                           "min((out.s0.y - 1), (k + out.s0.y)))\n"
                           "   let g.s0.y.max = max((out.s0.y - 1), (k + out.s0.y))\n"
                           "   assert((((max((out.s0.y - 1), (k + out.s0.y)) - min((out.s0.y - 1), (k + out.s0.y))) "
                           "+ 1) <= 4), -1, \"Func g is scheduled fold_storage(y, 4), but its consumers need \", "
                           "((max((out.s0.y - 1), (k + out.s0.y)) - min((out.s0.y - 1), (k + out.s0.y))) + 1), "
                           "\" rows of y at once (in an iteration of out.y), more than the \", 4, \" it keeps; use "
                           "a factor of at least the largest window, or remove the fold_storage\")\n"
                           "   produce g {\n"));
}

TEST_CASE("sliding_window + storage_folding: a RoundUp tail of the producer slides in whole tiles",
          "[lower][folding][sliding][regression]") {
    // blur_x computes 4 rows at a time where blur_y needs 3. Slid to the row
    // after the last iteration's, it would write rows past its storage in
    // the last iteration, and folded by 4 its new rows would overwrite the
    // ones still to be read. Its new rows start a whole number of tiles from
    // the window's min instead: here none (the window moves by one row, less
    // than a tile), so each iteration writes the 4 rows the unslid window
    // writes, which a fold of 4 holds.
    BlurFixture a;
    Var yo("yo"), yi("yi");
    a.blur_x.store_root().compute_at(a.blur_y, a.y).split(a.y, yo, yi, 4, TailStrategy::RoundUp);
    std::string s = to_string(folded(a.blur_y));
    CHECK_THAT(s, Contains("   let blur_x.s0.y.min = select((blur_y.s0.y > blur_y.s0.y.loop_min), max((blur_y.s0.y - 1), "
                           "((blur_y.s0.y - 1) + ((((((blur_y.s0.y - 1) + 1) + 1) - (blur_y.s0.y - 1)) / 4) * 4))), "
                           "(blur_y.s0.y - 1))\n"));
    CHECK_THAT(s, Contains(" folded by 4) {\n"));

    // Asked for, the fold must hold the 4 rows written.
    BlurFixture b;
    b.blur_x.store_root().compute_at(b.blur_y, b.y).split(b.y, yo, yi, 4, TailStrategy::RoundUp).fold_storage(b.y, 4);
    CHECK_THAT(to_string(folded(b.blur_y)), Contains(" folded by 4) {\n"));
}
