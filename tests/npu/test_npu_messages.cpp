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

TEST_CASE("a tile over an output's run-time width: say which bound() on which Func, with a constant",
          "[npu][codegen][error][messages]") {
    // Was: "... the innermost two loops ... have extents 8 and ...; ... split or tile them by constants ..., or
    // bound() the Func", which did not say which Var, nor that the bound's extent must be a constant.
    ImageParam input(Float(32), 2, "input");
    Var x("x"), y("y"), yo("yo"), yi("yi");
    Func out("out");
    out(x, y) = input(x, y) * 2.0f;
    out.split(y, yo, yi, 8);
    REQUIRE_COMPILE_ERROR(npu_source(out),
                          Contains("NPU target: Func out: loop out.s0.x of its tile has extent") &&
                              Contains("which is known only at run time; a tile has a constant shape") &&
                              Contains("bound(x, 0, W) on out with W a constant, the width it always has (a number: "
                                       "out: bound(x, 0, 1024) in a .sched file; in a generator a GeneratorParam's "
                                       "value, set by kiln-gen NAME=VALUE; a Param or a buffer's size stays a run-time "
                                       "value), or split(x, xo, xi, 64) on out so that each tile spans a constant 64"));
    Func out2("out2");  // the same with npu_tile naming the loops
    out2(x, y) = input(x, y) * 2.0f;
    out2.split(y, yo, yi, 8).npu_tile(x, yi);
    REQUIRE_COMPILE_ERROR(npu_source(out2), Contains("NPU target: Func out2: npu_tile(x, yi): loop x has extent") &&
                                                Contains("bound(x, 0, W) on out2 with W a constant"));
}

TEST_CASE("a UB Func computed at a consumer of run-time width: point at the consumer's Var",
          "[npu][codegen][error][messages]") {
    // Was: "Func sq is stored in UB over a region of ... elements, which is not constant; ... tile its consumer's
    // loops by constants ... or bound() it" (a bound() on sq would not make the consumer's tiles constant).
    ImageParam input(Float(32), 2, "input");
    Var x("x"), y("y"), yo("yo"), yi("yi");
    Func sq("sq"), out("out");
    sq(x, y) = input(x, y) * input(x, y);
    out(x, y) = sq(x, y) + 1.0f;
    out.split(y, yo, yi, 8);
    sq.compute_at(out, yo);
    REQUIRE_COMPILE_ERROR(npu_source(out),
                          Contains("NPU target: Func sq is stored in UB over a region of") &&
                              Contains("sq is computed at compute_at(out, yo), and its region there spans all of "
                                       "dimension x of out, whose extent is known only at run time: bound(x, 0, W) "
                                       "on out with W a constant") &&
                              Contains("or split(x, xo, xi, 64) on out and compute sq at xo or inside it") &&
                              !Contains("RDom"));
}

TEST_CASE("a tile split by a run-time factor: say to split by a constant", "[npu][codegen][error][messages]") {
    ImageParam input(Float(32), 2, "input");
    Param<int> n("n");
    Var x("x"), y("y"), xo("xo"), xi("xi"), yo("yo"), yi("yi");
    Func out("out");
    out(x, y) = input(x, y) * 2.0f;
    out.split(x, xo, xi, n).split(y, yo, yi, 8).reorder(xi, yi, xo, yo);
    REQUIRE_COMPILE_ERROR(npu_source(out),
                          Contains("NPU target: Func out: loop out.s0.x.xi of its tile has extent") &&
                              Contains("split x by a constant factor: split(x, xo, xi, n) on out has a factor known "
                                       "only at run time (a GeneratorParam's value is a constant, a Param is not)"));
}

TEST_CASE("a UB Func that a reduction reads, over a consumer of run-time width: bound(), not narrower tiles",
          "[npu][codegen][error][messages]") {
    // softmax's schedule without bound(x, 0, 1024) on output: exps is read by row_sum over the whole row.
    Softmax s;
    s.output.split(s.y, s.yo, s.yi, 8);
    for (Func *f : {&s.row_max, &s.exps, &s.row_sum}) f->compute_at(s.output, s.yo);
    REQUIRE_COMPILE_ERROR(npu_source(s.output),
                          Contains("NPU target: Func exps is stored in UB over a region of") &&
                              Contains("exps is computed at compute_at(output, yo), and its region there spans all of "
                                       "dimension x of output, whose extent is known only at run time: bound(x, 0, W) "
                                       "on output with W a constant") &&
                              Contains("narrower tiles of output do not help: row_sum reduces over exps with an RDom, "
                                       "so exps is computed over all that the RDom reads") &&
                              !Contains("split(x, xo, xi, 64)"));
}
