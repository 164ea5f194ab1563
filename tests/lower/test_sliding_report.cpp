// What the fusion report and lowering say about a Func stored outside the
// loop it is computed in: the window it slides with and its fold, or why it
// does not slide (then every iteration recomputes its whole region, and
// lowering warns on stderr unless KILN_NO_WARNINGS=1).
#include <catch2/catch.hpp>
#include <cstdlib>
#include <iostream>
#include <sstream>

#include "kiln/kiln.h"

using namespace kiln;
using Catch::Contains;

namespace {

const Target no_asserts = Target::host().with(Target::NoAsserts);

// g = in * 3; out reads g over rows [y - 1, y + 1].
struct Stencil {
    ImageParam in{Int(32), 2, "in"};
    Var x{"x"}, y{"y"}, yo{"yo"}, yi{"yi"};
    Func g{"g"}, out{"out"};
    explicit Stencil(bool update = false) {
        g(x, y) = in(x, y) * 3;
        if (update) g(x, y) += x;
        out(x, y) = g(x, y - 1) + g(x, y) + g(x, y + 1);
    }
    PipelineReport report() const { return Pipeline(out).report({{out.name(), {64, 48}}}); }
};

const FuncReport &find(const PipelineReport &r, const std::string &name) {
    for (const auto &f : r.funcs)
        if (f.name == name) return f;
    FAIL("no report for " << name);
    return r.funcs[0];
}

// What lowering `out` prints on stderr.
std::string warnings_of(Func out) {
    std::ostringstream captured;
    std::streambuf *old = std::cerr.rdbuf(captured.rdbuf());
    try {
        out.lowered_stmt(no_asserts);
    } catch (...) {
        std::cerr.rdbuf(old);
        throw;
    }
    std::cerr.rdbuf(old);
    return captured.str();
}

}  // namespace

TEST_CASE("sliding report: a slid Func, its window and its fold", "[lower][report][sliding]") {
    Stencil p;
    p.g.store_root().compute_at(p.out, p.y);
    PipelineReport r = p.report();
    CHECK(find(r, "g").sliding == "slides over out.y in y, window of 3, folded to 4");
    CHECK(find(r, "out").sliding.empty());
    CHECK_THAT(r.to_text(), Contains("\nsliding window of g: slides over out.y in y, window of 3, folded to 4\n"));
    CHECK_THAT(r.to_json(), Contains("\"sliding\": \"slides over out.y in y, window of 3, folded to 4\""));
    CHECK(warnings_of(p.out).empty());

    Stencil q;
    q.g.store_root().compute_at(q.out, q.y).fold_storage(q.y, 3);
    CHECK(find(q.report(), "g").sliding == "slides over out.y in y, window of 3, folded to 3 (fold_storage)");

    // In parallel strips, over the loop inside the strip.
    Stencil s;
    s.out.split(s.y, s.yo, s.yi, 8).parallel(s.yo);
    s.g.store_at(s.out, s.yo).compute_at(s.out, s.yi);
    CHECK(find(s.report(), "g").sliding == "slides over out.yi in y, window of 3, folded to 4");
}

TEST_CASE("sliding report: a Func stored where it is computed has no sliding line", "[lower][report][sliding]") {
    Stencil p;
    p.g.compute_at(p.out, p.y);
    PipelineReport r = p.report();
    CHECK(find(r, "g").sliding.empty());
    CHECK_THAT(r.to_text(), !Contains("sliding window of"));
    CHECK_THAT(r.to_json(), Contains("\"sliding\": \"\""));
}

TEST_CASE("sliding report: why a Func does not slide", "[lower][report][sliding]") {
    Stencil updated(true);
    updated.g.store_root().compute_at(updated.out, updated.y);
    PipelineReport r = updated.report();
    CHECK(find(r, "g").sliding == "not slid over out.y: it has update definitions; y folded to 4");
    CHECK_THAT(r.to_text(), Contains("sliding window of g: not slid over out.y: it has update definitions"));
    // Its 3 rows are computed for each of the 48 rows of out.
    CHECK(find(r, "g").points_computed == 64 * 3 * 48 * 2);

    Stencil unrolled;
    unrolled.out.split(unrolled.y, unrolled.yo, unrolled.yi, 4).unroll(unrolled.yi);
    unrolled.g.store_at(unrolled.out, unrolled.yo).compute_at(unrolled.out, unrolled.yi);
    CHECK(find(unrolled.report(), "g").sliding ==
          "not slid over out.yi: the loop is unrolled, and sliding needs a serial one");

    Stencil backward(false);
    backward.out = Func("out2");
    backward.out(backward.x, backward.y) = backward.g(backward.x, 20 - backward.y) + backward.g(backward.x, 21 - backward.y);
    backward.g.store_root().compute_at(backward.out, backward.y);
    CHECK(find(backward.report(), "g").sliding ==
          "not slid over out2.y: its region in y moves toward smaller y (step -1)");

    ImageParam in(Int(32), 2, "in");
    Var x("x"), y("y");
    Func g("g"), diagonal("diagonal"), fixed("fixed");
    g(x, y) = in(x, y) + 1;
    diagonal(x, y) = g(x + y, y) + g(x + y, y + 1);
    g.store_root().compute_at(diagonal, y);
    CHECK(find(Pipeline(diagonal).report({{"diagonal", {64, 48}}}), "g").sliding ==
          "not slid over diagonal.y: its region moves in 2 dimensions (x and y)");
    Func h("h");
    h(x, y) = in(x, y) * 5;
    fixed(x, y) = h(x, 0) + h(x, 1) + y;
    h.store_root().compute_at(fixed, y);
    CHECK(find(Pipeline(fixed).report({{"fixed", {64, 48}}}), "h").sliding ==
          "not slid over fixed.y: its region is the same in every iteration");

    // One RoundUp split of y slides in whole tiles; a second split of y leaves
    // where the new rows may be written unknown.
    Stencil rounded;
    rounded.g.store_root().compute_at(rounded.out, rounded.y).split(rounded.y, rounded.yo, rounded.yi, 4,
                                                                    TailStrategy::RoundUp);
    CHECK(find(rounded.report(), "g").sliding == "slides over out.y in y, window of 3, folded to 4");
    Stencil twice;
    Var yii("yii"), yiii("yiii");
    twice.g.store_root()
        .compute_at(twice.out, twice.y)
        .split(twice.y, twice.yo, twice.yi, 4, TailStrategy::RoundUp)
        .split(twice.yi, yii, yiii, 2);
    CHECK(find(twice.report(), "g").sliding ==
          "not slid over out.y: its producer's splits of y may write past the rows new to an iteration (a RoundUp "
          "or ShiftInwards tail, in a split that is not y's only one)");
}

TEST_CASE("sliding report: every stage of a chain slides", "[lower][report][sliding]") {
    ImageParam in(Int(32), 2, "in");
    Var x("x"), y("y");
    Func gray("gray"), blur_x("blur_x"), blur_y("blur_y"), out("out");
    gray(x, y) = in(x, y) * 2;
    blur_x(x, y) = gray(x - 2, y) + gray(x, y) + gray(x + 2, y);
    blur_y(x, y) = blur_x(x, y - 2) + blur_x(x, y) + blur_x(x, y + 2);
    out(x, y) = blur_y(x, y) + 1;
    for (Func *f : {&gray, &blur_x, &blur_y}) f->store_root().compute_at(out, y);
    PipelineReport r = Pipeline(out).report({{"out", {64, 48}}});
    CHECK(find(r, "blur_y").sliding == "slides over out.y in y, window of 1, folded to 1");
    CHECK(find(r, "blur_x").sliding == "slides over out.y in y, window of 5, folded to 8");
    CHECK(find(r, "gray").sliding == "slides over out.y in y, window of 5, folded to 8");
}

TEST_CASE("sliding report: lowering warns of a store_at that does not slide", "[lower][sliding][warning]") {
    Stencil p(true);
    p.g.store_root().compute_at(p.out, p.y);
    unsetenv("KILN_NO_WARNINGS");
    CHECK(warnings_of(p.out) ==
          "kiln: warning: Func g is stored at root but not slid over out.y, the loop it is computed in: it has update "
          "definitions; each iteration computes its whole region again\n");

    Stencil q;
    q.out.split(q.y, q.yo, q.yi, 4).unroll(q.yi);
    q.g.store_at(q.out, q.yo).compute_at(q.out, q.yi);
    CHECK(warnings_of(q.out) ==
          "kiln: warning: Func g is stored at out.yo but not slid over out.yi, the loop it is computed in: the loop "
          "is unrolled, and sliding needs a serial one; each iteration computes its whole region again\n");

    setenv("KILN_NO_WARNINGS", "1", 1);
    Stencil quiet(true);
    quiet.g.store_root().compute_at(quiet.out, quiet.y);
    CHECK(warnings_of(quiet.out).empty());
    unsetenv("KILN_NO_WARNINGS");
}
