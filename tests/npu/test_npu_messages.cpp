// NPU messages that used to mislead (issue 20): each names the Func and the
// directive and says what to do. The text is checked, as for every error.
#include <catch2/catch.hpp>

#include "error/expect_error.h"
#include "npu_pipelines.h"

using namespace npu_pipelines;

namespace {

std::string npu_source(Func f) { return Pipeline(f).compile_to_cpp_source("f", Target("npu")); }

}  // namespace

TEST_CASE("tiles of one row of a row reduction: say to give the tiles more rows", "[npu][codegen][error][messages]") {
    // Was: "Func row_max is computed outside a loop (a Func of no dimensions, or an update of one point ...)".
    Softmax s;
    s.fused(1, false);
    REQUIRE_COMPILE_ERROR(npu_source(s.output),
                          Contains("NPU target: Func row_max is computed one point per iteration of output.yo "
                                   "(compute_at(output, yo))") &&
                              Contains("its own loops there have extent 1, e.g. tiles of one row (split(y, yo, yi, 1))") &&
                              Contains("give the tiles of output two rows or more (split(y, yo, yi, 8) on output) and "
                                       "compute_at(output, yo) so that row_max's tile spans those rows") &&
                              !Contains("outside a loop"));
}

TEST_CASE("a split RVar of a row reduction: say not to split it, without printing an undefined coordinate",
          "[npu][codegen][error][messages]") {
    // Was: "Func row_sum reads row_sum(row_sum.s1.y(undefined)); a tile instruction reads a window ...".
    Softmax s;
    s.fused(2, false);
    RVar ro("ro"), ri("ri");
    s.row_sum.update().split(s.r.x, ro, ri, W / 2);
    REQUIRE_COMPILE_ERROR(npu_source(s.output),
                          Contains("NPU target: Func row_sum: the row reduction's reduction loop row_sum.s1.r.x.ri has "
                                   "extent 512 but its RDom variable r.x has extent 1024 (the reduction is split)") &&
                              Contains("do not split the row reduction's RVar") && !Contains("undefined"));
}

TEST_CASE("a row reduction over a run-time width: say to give the RDom constant bounds, not to bound() the Func",
          "[npu][codegen][error][messages]") {
    // Was: "... have extents 2 and input.extent.0; ... split or tile them by constants ..., or bound() the Func".
    ImageParam input(Float(32), 2, "input");
    Var x("x"), y("y"), yo("yo"), yi("yi");
    RDom r(0, input.dim(0).extent(), "r");
    Func row_max("row_max"), out("out");
    row_max(y) = type_min(Float(32));
    row_max(y) = max(row_max(y), input(r, y));
    out(x, y) = input(x, y) - row_max(y);
    out.bound(x, 0, W).split(y, yo, yi, 8);
    row_max.compute_at(out, yo);
    REQUIRE_COMPILE_ERROR(npu_source(out),
                          Contains("NPU target: Func row_max: the RDom variable r.x of row_max.update(0) spans "
                                   "input.extent.0 elements, which is known only at run time") &&
                              Contains("give the RDom constant bounds: RDom(0, 1024) in the algorithm, or a "
                                       "generator's constant width (softmax and layernorm: width=1024)") &&
                              Contains("bound() on a Func does not change an RDom's extent"));
}

TEST_CASE("a UB Func over a run-time width read by a reduction: point at the RDom as well as at bound()",
          "[npu][codegen][error][messages]") {
    // softmax's algorithm with the row width taken from the input at run time (the generator's width=0).
    ImageParam input(Float(32), 2, "input");
    Var x("x"), y("y"), yo("yo"), yi("yi");
    RDom r(0, input.dim(0).extent(), "r");
    Func exps("exps"), row_sum("row_sum"), out("out");
    exps(x, y) = exp(input(x, y));
    row_sum(y) = 0.0f;
    row_sum(y) += exps(r, y);
    out(x, y) = exps(x, y) / row_sum(y);
    out.bound(x, 0, W).split(y, yo, yi, 8);
    exps.compute_at(out, yo);
    row_sum.compute_at(out, yo);
    REQUIRE_COMPILE_ERROR(npu_source(out),
                          Contains("NPU target: Func exps is stored in UB over a region of") &&
                              Contains("its region follows input.extent.0, a size known only at run time") &&
                              Contains("give that RDom constant bounds instead (RDom(0, 1024)") &&
                              Contains("bound() on a Func does not change an RDom's extent"));
}
