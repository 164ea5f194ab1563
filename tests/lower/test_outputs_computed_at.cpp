// An output computed at a loop of another output (ScheduleFunctions.h,
// computed_within_output): placed in that loop like any compute_at Func,
// with no storage of its own, its region the one the loop reads, and an
// entry check that its buffer is no larger than what the loops write.
#include <catch2/catch.hpp>

#include "ir/IRPrinter.h"
#include "kiln/kiln.h"
#include "lower/Lower.h"

using namespace kiln;
using namespace kiln::internal;
using Catch::Contains;

namespace {

// lower() up to and including one pass, printed.
std::string until(const std::vector<Func> &outs, const char *pass, const Target &t) {
    LowerOptions o;
    o.stop_after = pass;  // "": all of it
    std::vector<std::shared_ptr<FunctionContents>> c;
    for (const Func &f : outs) c.push_back(f.contents());
    return to_string(lower(c, outs[0].name(), {}, t, o).body);
}

}  // namespace

TEST_CASE("outputs computed at: in the loop, in the output's buffer, checked on entry", "[lower][outputs_at]") {
    ImageParam in(Float(32), 2, "in");
    Var x("x"), y("y");
    Func mean("mean"), out("out");
    RDom r(0, 16, "r");
    mean(y) = 0.0f;
    mean(y) += in(r, y) / 16.0f;
    out(x, y) = in(x, y) - mean(y);
    // Before: an output is produced at the root, before the output reading it.
    std::string root = until({out, mean}, "schedule functions", Target::host());
    INFO(root);
    CHECK(root.find("produce mean") < root.find("for (out.s0.y"));
    // After compute_at(out, y): produced inside out's row loop, with no
    // realization (its storage is its buffer).
    mean.compute_at(out, y);
    std::string placed = until({out, mean}, "schedule functions", Target::host());
    INFO(placed);
    size_t loop = placed.find("for (out.s0.y"), produce = placed.find("produce mean");
    REQUIRE(loop != std::string::npos);
    CHECK(produce > loop);
    CHECK(placed.find("realize mean") == std::string::npos);
    // Its region is the row the loop reads, defined in the loop.
    std::string bounded = until({out, mean}, "bounds inference", Target::host());
    INFO(bounded);
    CHECK_THAT(bounded, Contains("let mean.s1.y.min = out.s0.y") || Contains("let mean.s0.y.min = out.s0.y"));
    CHECK(bounded.find("let mean.s0.y.min") > bounded.find("for (out.s0.y"));
    // On entry: what the loops write covers the buffer, and no more.
    std::string checked = until({out, mean}, "", Target::host());  // all of lowering: the checks are in
    INFO(checked);
    CHECK_THAT(checked, Contains("mean.computed.max.0") && Contains("is computed at the loop of compute_at(out, y)") &&
                            Contains("-17, "));
    CHECK_THAT(checked, Contains("mean.written.max.0") && Contains("-7, "));
    // Flattened and simplified: stores into mean's buffer at out's row, no allocation.
    std::string flat = until({out, mean}, "", Target::host());
    INFO(flat);
    CHECK(flat.find("allocate mean") == std::string::npos);
    CHECK_THAT(flat, Contains("mean[(out.s0.y - mean.min.0)] = 0.000000f"));
}
