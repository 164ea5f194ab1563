// Misuse of schedule directives: illegal compute_at/store_at sites (the
// message lists the legal ones), store levels without a compute level,
// extents and factors that are not constant, reduction variables made
// parallel, vectorized or reordered, splits of loops that no longer exist,
// unknown Vars, unbounded reads, outputs scheduled compute_at.
#include "expect_error.h"

using namespace kiln;

namespace {

// in -> g -> out, 2-D; g inlined unless a test schedules it.
struct TwoStage {
    ImageParam in{Int(32), 2, "in"};
    Var x{"x"}, y{"y"}, xo{"xo"}, xi{"xi"};
    Func g{"g"}, out{"out"};
    TwoStage() {
        g(x, y) = in(x, y) * 2;
        out(x, y) = g(x, y) + g(x, y + 1);
    }
};

}  // namespace

TEST_CASE("error: compute_at a Var that is not a loop of the consumer", "[error][schedule]") {
    TwoStage p;
    Var z("z");
    p.g.compute_at(p.out, z);
    REQUIRE_COMPILE_ERROR(p.out.lowered_stmt(),
                          Contains("Func g is scheduled compute_at(out, z), but there is no loop over z in out") &&
                              Contains("Legal sites: compute_root(), compute_at(out, y), compute_at(out, x)"));
}

TEST_CASE("error: compute_at a vectorized loop that holds only some uses", "[error][schedule]") {
    // Per vector of out is legal (the Func is vectorized with it); but g is
    // also read by a second stage outside that loop.
    TwoStage p;
    Func h("h"), both("both");
    h(p.x, p.y) = p.g(p.x, p.y) - 1;
    h.compute_root();
    both(p.x, p.y) = p.out(p.x, p.y) + h(p.x, p.y);
    p.out.compute_root().vectorize(p.x, 8);
    p.g.compute_at(p.out, Var("x_vec"));
    REQUIRE_COMPILE_ERROR(both.lowered_stmt(), Contains("compute_at(out, x_vec)") &&
                                                   Contains("a vectorized loop, or a loop of only some of its uses") &&
                                                   Contains("Legal sites: compute_root()"));
}

TEST_CASE("error: compute_at a Func that does not use it", "[error][schedule]") {
    TwoStage p;
    Func h("h"), out2("out2");
    h(p.x, p.y) = p.g(p.x, p.y) - 1;
    out2(p.x, p.y) = h(p.x, p.y) * 3;
    h.compute_root();
    p.g.compute_at(out2, p.y);
    REQUIRE_COMPILE_ERROR(out2.lowered_stmt(),
                          Contains("Func g is scheduled compute_at(out2, y), but out2 does not use g (it is used by h)") &&
                              Contains("compute_at(h, y)"));
    Func stranger("stranger");
    stranger(p.x) = p.x;
    p.g.compute_at(stranger, p.x);
    REQUIRE_COMPILE_ERROR(out2.lowered_stmt(), Contains("stranger is not part of this pipeline") &&
                                                   Contains("Legal sites: compute_root()"));
}

TEST_CASE("error: store_at inside the compute_at level", "[error][schedule]") {
    TwoStage p;
    p.g.store_at(p.out, p.x).compute_at(p.out, p.y);
    REQUIRE_COMPILE_ERROR(p.out.lowered_stmt(),
                          Contains("Func g is scheduled store_at(out, x) and compute_at(out, y)") &&
                              Contains("the storage must be at or outside the compute level") &&
                              Contains("Legal store levels: store_root(), store_at(out, y)"));
}

TEST_CASE("error: store_root on an inlined Func", "[error][schedule]") {
    TwoStage p;
    p.g.store_root();
    REQUIRE_COMPILE_ERROR(p.out.lowered_stmt(), Contains("Func g is scheduled store_at(root) but is inlined") &&
                                                    Contains("must also be given compute_root() or compute_at()"));
}

TEST_CASE("error: vectorize or unroll a loop whose extent is not constant", "[error][schedule]") {
    TwoStage p;
    p.out.vectorize(p.x);
    REQUIRE_COMPILE_ERROR(p.out.lowered_stmt(),
                          Contains("Loop out.s0.x is scheduled vectorize()") && Contains("is not a constant") &&
                              Contains("split off a constant-size loop with vectorize(x, 8) on out (C++: "
                                       "out.vectorize(x, 8); .sched: out: vectorize(x, 8))") &&
                              Contains("or give out a constant size in x with bound(x, 0, N) on out"));
    TwoStage q;
    q.g.compute_root().unroll(q.y);
    REQUIRE_COMPILE_ERROR(q.out.lowered_stmt(), Contains("Loop g.s0.y is scheduled unroll()") &&
                                                    Contains("with unroll(y, 4) on g (C++: g.unroll(y, 4)") &&
                                                    Contains("bound(y, 0, N) on g"));
    // A loop made by a split of a run-time factor: bound() would not help.
    TwoStage r;
    Param<int> n("n");
    r.out.split(r.x, r.xo, r.xi, n).vectorize(r.xi);
    REQUIRE_COMPILE_ERROR(r.out.lowered_stmt(), Contains("Loop out.s0.x.xi is scheduled vectorize()") &&
                                                    Contains("vectorize(xi, 8) on out") &&
                                                    Contains("or split by a constant factor instead of n") &&
                                                    !Contains("bound("));
    // The outer loop of a split follows the Func's size: bound() the Var it came from.
    TwoStage t;
    t.out.split(t.y, t.xo, t.xi, 4).vectorize(t.xo);
    REQUIRE_COMPILE_ERROR(t.out.lowered_stmt(), Contains("Loop out.s0.y.xo is scheduled vectorize()") &&
                                                    Contains("vectorize(xo, 8) on out") &&
                                                    Contains("bound(y, 0, N) on out"));
}

TEST_CASE("error: vectorize or unroll with a factor that is not constant", "[error][schedule]") {
    TwoStage p;
    Param<int> n("n");
    REQUIRE_COMPILE_ERROR(p.out.vectorize(p.x, n),
                          Contains("In schedule of out: vectorize(x, factor): the factor must be a constant integer (got n)"));
    REQUIRE_COMPILE_ERROR(p.out.unroll(p.y, p.x), Contains("unroll(y, factor): the factor must be a constant integer"));
}

TEST_CASE("error: parallel or vectorize a reduction variable", "[error][schedule][reduction]") {
    Var x("x");
    RDom r(0, 10, "r");
    Func f("f");
    f(x) = 0;
    f(x) += r * x;
    REQUIRE_COMPILE_ERROR(f.update(0).parallel(r), Contains("In schedule of f.update(0): parallel(r.x)") &&
                                                       Contains("is a reduction variable") &&
                                                       Contains("Parallelize or vectorize a pure Var instead"));
    REQUIRE_COMPILE_ERROR(f.update(0).vectorize(r, 4), Contains("f.update(0): vectorize") &&
                                                           Contains("is a reduction variable"));
}

TEST_CASE("error: parallel over a pure Var the update reads at other values", "[error][schedule][reduction]") {
    Var x("x"), y("y");
    Func f("f");
    f(x, y) = x + y;
    f(x, y) = f(x, y - 1) + 1;  // row y depends on row y - 1
    REQUIRE_COMPILE_ERROR(f.update(0).parallel(y), Contains("In schedule of f.update(0): parallel(y)") &&
                                                       Contains("the update reads f at other values of y") &&
                                                       Contains("must run in order"));
}

TEST_CASE("error: reorder two RVars", "[error][schedule][reduction]") {
    Var x("x");
    RDom r(0, 3, 0, 3, "r");
    Func f("f");
    f(x) = 0;
    f(x) += r.x * 3 + r.y;
    REQUIRE_COMPILE_ERROR(f.update(0).reorder(r.y, r.x), Contains("In schedule of f.update(0): reorder would move") &&
                                                             Contains("changes the order in which the reduction visits") &&
                                                             Contains("keep RVars"));
}

TEST_CASE("error: ShiftInwards on an update", "[error][schedule][reduction]") {
    Var x("u"), xo("uo"), xi("ui");
    Func f("f");
    f(x) = x;
    f(x) += 1;
    REQUIRE_COMPILE_ERROR(f.update(0).split(x, xo, xi, 4, TailStrategy::ShiftInwards),
                          Contains("In schedule of f.update(0): split(u, ..., TailStrategy::ShiftInwards)") &&
                              Contains("use GuardWithIf or RoundUp"));
}

TEST_CASE("error: split a Var that has already been split", "[error][schedule]") {
    TwoStage p;
    p.out.split(p.x, p.xo, p.xi, 4);
    Var a("a"), b("b");
    REQUIRE_COMPILE_ERROR(p.out.split(p.x, a, b, 2), Contains("In schedule of out: split(x, ...)") &&
                                                         Contains("x has already been split or fused") &&
                                                         Contains("use one of the current loops instead: y, xo, xi"));
}

TEST_CASE("error: an unknown Var in a schedule directive", "[error][schedule]") {
    TwoStage p;
    Var z("z");
    REQUIRE_COMPILE_ERROR(p.out.parallel(z), Contains("In schedule of out: parallel(z, ...)") &&
                                                 Contains("z is not a loop of this stage") &&
                                                 Contains("its loops (outermost first) are: y, x"));
    REQUIRE_COMPILE_ERROR(p.out.bound(z, 0, 8), Contains("Func out: bound(z, ...): z is not a dimension of out") &&
                                                    Contains("(dimensions: x, y)"));
}

TEST_CASE("error: a split that reuses a loop name, or a non-positive factor", "[error][schedule]") {
    TwoStage p;
    REQUIRE_COMPILE_ERROR(p.out.split(p.x, p.y, p.xi, 4),
                          Contains("split creates a loop named y, but the stage already has a loop with that name"));
    REQUIRE_COMPILE_ERROR(p.out.split(p.x, p.xo, p.xi, 0), Contains("split(x, xo, xi, 0): the factor must be positive"));
}

TEST_CASE("error: fuse loops that are not adjacent", "[error][schedule]") {
    Var x("x"), y("y"), c("c"), t("t");
    Func f("f");
    f(x, y, c) = x + y + c;
    REQUIRE_COMPILE_ERROR(f.fuse(x, c, t), Contains("In schedule of f: fuse(x, c, t): c must be the loop directly outside x") &&
                                               Contains("reorder first"));
}

TEST_CASE("error: an input read at an unbounded coordinate", "[error][schedule]") {
    ImageParam in(Float(32), 2, "in"), index(Int(32), 2, "index");
    Var x("x"), y("y");
    Func out("out");
    out(x, y) = in(index(x, y), y);  // a gather without a boundary condition
    REQUIRE_COMPILE_ERROR(out.lowered_stmt(), Contains("Input image in is read at an unbounded coordinate in dimension 0") &&
                                                  Contains("BoundaryConditions::repeat_edge(in)") &&
                                                  Contains("clamp the coordinate"));
}

TEST_CASE("error: a Func read at an unbounded coordinate", "[error][schedule]") {
    ImageParam index(Int(32), 1, "index");
    Var x("x");
    Func g("g"), out("out");
    g(x) = x * x;
    out(x) = g(index(x));
    g.compute_root();
    REQUIRE_COMPILE_ERROR(out.lowered_stmt(), Contains("Func g is read at an unbounded coordinate in dimension 0") &&
                                                  Contains("give g a bound(x, min, extent)"));
}

TEST_CASE("error: compute_at on an output", "[error][schedule]") {
    TwoStage p;
    p.out.compute_at(p.g, p.x);
    REQUIRE_COMPILE_ERROR(p.out.lowered_stmt(),
                          Contains("Func out is an output of the pipeline and is scheduled compute_at(g, x), but g is "
                                   "not another output of this pipeline") &&
                              Contains("compute it at the root, or at a loop of an output"));
    REQUIRE_COMPILE_ERROR(p.g.compute_at(p.g, p.x), Contains("Func g: compute_at(g, x) asks g to be computed inside its own loops"));
}

TEST_CASE("error: vectorize inside a vectorized loop, or too many lanes", "[error][schedule]") {
    TwoStage p;
    p.out.vectorize(p.x, 4).vectorize(p.y, 4);  // loops: y, y_vec, x, x_vec
    REQUIRE_COMPILE_ERROR(p.out.lowered_stmt(), Contains("Loop out.s0.x.x_vec is vectorized inside loop out.s0.y.y_vec") &&
                                                    Contains("vectorize only one loop of a loop nest"));
    TwoStage q;
    q.out.vectorize(q.x, 128);
    REQUIRE_COMPILE_ERROR(q.out.lowered_stmt(), Contains("is vectorized with 128 lanes; at most 64 lanes") &&
                                                    Contains("use a smaller factor"));
}

TEST_CASE("error: storage shared by the threads of a parallel loop", "[error][schedule]") {
    TwoStage p;
    p.out.parallel(p.y);
    p.g.store_root().compute_at(p.out, p.y);
    REQUIRE_COMPILE_ERROR(p.out.lowered_stmt(),
                          Contains("Func g is stored at root but computed inside the parallel loop over y of out") &&
                              Contains("overwrite each other's values") && Contains("store_at(out, y)"));
}

TEST_CASE("error: compile_to_cpp with a name that is not a C identifier", "[error][schedule]") {
    TwoStage p;
    REQUIRE_COMPILE_ERROR(Pipeline(p.out).compile_to_cpp_source("2fast"),
                          Contains("\"2fast\" is not a valid C function name"));
}

TEST_CASE("error: reorder that names a loop twice", "[error][schedule]") {
    TwoStage p;
    REQUIRE_COMPILE_ERROR(p.out.reorder(p.x, p.x), Contains("In schedule of out: reorder names x twice"));
}

TEST_CASE("error: reorder of a loop the stage does not have", "[error][schedule]") {
    TwoStage p;
    REQUIRE_COMPILE_ERROR(p.out.reorder(p.x, p.xo), Contains("In schedule of out: reorder(xo, ...)") &&
                                                        Contains("xo is not a loop of this stage") &&
                                                        Contains("its loops (outermost first) are: y, x"));
}

TEST_CASE("error: fuse a loop with itself", "[error][schedule]") {
    TwoStage p;
    REQUIRE_COMPILE_ERROR(p.out.fuse(p.x, p.x, p.xo), Contains("In schedule of out: fuse(x, x, xo)") &&
                                                          Contains("reorder first"));
}

TEST_CASE("error: vectorize, unroll or parallel with a non-positive factor", "[error][schedule]") {
    TwoStage p;
    REQUIRE_COMPILE_ERROR(p.out.vectorize(p.x, 0), Contains("In schedule of out: vectorize(x, 0): the factor must be positive") &&
                                                       Contains("lanes"));
    REQUIRE_COMPILE_ERROR(p.out.unroll(p.x, -2), Contains("In schedule of out: unroll(x, -2): the factor must be positive"));
    REQUIRE_COMPILE_ERROR(p.out.parallel(p.y, 0), Contains("In schedule of out: parallel(y, 0): the task size must be positive"));
}

TEST_CASE("error: unroll by a huge factor", "[error][schedule]") {
    TwoStage p;
    p.out.unroll(p.x, 100000);
    REQUIRE_COMPILE_ERROR(p.out.lowered_stmt(), Contains("Loop out.s0.x.x_unr is scheduled unroll() with extent 100000") &&
                                                    Contains("unroll by a smaller factor"));
}

TEST_CASE("error: bound() with a negative extent", "[error][schedule]") {
    TwoStage p;
    REQUIRE_COMPILE_ERROR(p.out.bound(p.x, 0, -4), Contains("Func out: bound(x, 0, -4): the extent must not be negative"));
}

TEST_CASE("error: bound() whose extent reads a Func", "[error][schedule][regression]") {
    // Was an internal error ("cycle in the pipeline") at lowering.
    TwoStage p;
    REQUIRE_COMPILE_ERROR(p.g.bound(p.x, 0, p.out(0, 0)), Contains("Func g: bound(x, 0, out(0, 0))") &&
                                                               Contains("must be made of constants and Params"));
}

TEST_CASE("error: compute_inline a Func that has updates", "[error][schedule][regression]") {
    // Was silently computed at root instead.
    Var x("x");
    Func f("f"), g("g");
    f(x) = x;
    f(x) += 1;
    g(x) = f(x);
    REQUIRE_COMPILE_ERROR(f.compute_inline(), Contains("Func f is scheduled compute_inline(), but it has 1 update definition(s)") &&
                                                  Contains("use compute_root() or compute_at() instead"));
}

TEST_CASE("error: compute_at a consumer that is itself inlined", "[error][schedule]") {
    Var x("x");
    Func f("f"), g("g"), h("h");
    f(x) = x;
    g(x) = f(x) + 1;  // inlined into h: it has no loops
    h(x) = g(x) * 2;
    f.compute_at(g, x);
    REQUIRE_COMPILE_ERROR(h.lowered_stmt(), Contains("Func f is scheduled compute_at(g, x), but g does not use f (it is used by h)") &&
                                                Contains("Legal sites: compute_root(), compute_at(h, x), or compute_inline()"));
}

TEST_CASE("error: compute_at a loop that encloses only some of the uses", "[error][schedule]") {
    Var x("x");
    Func f("f"), g("g"), h("h"), out("out");
    f(x) = x;
    g(x) = f(x);
    h(x) = f(x) + 1;
    out(x) = g(x) + h(x);
    g.compute_root();
    h.compute_root();
    f.compute_at(g, x);  // h reads f too, outside g's loops
    REQUIRE_COMPILE_ERROR(out.lowered_stmt(),
                          Contains("Func f is scheduled compute_at(g, x), but there is no loop over x in g that encloses every use of f") &&
                              Contains("Legal sites: compute_root(), or compute_inline()"));
}

TEST_CASE("error: compute_at the wrong loop of an update", "[error][schedule]") {
    Var x("x"), y("y");
    RDom r(0, 10, "r");
    Func g("g"), f("f");
    g(x) = x;
    f(x) = 0;
    f(x) += g(r);
    f.compute_root();
    g.compute_at(f, y);
    REQUIRE_COMPILE_ERROR(f.lowered_stmt(), Contains("Func g is scheduled compute_at(f, y), but there is no loop over y in f") &&
                                                Contains("compute_at(f, x), compute_at(f, r.x)"));
}

TEST_CASE("error: store_at without a compute level", "[error][schedule]") {
    TwoStage p;
    p.g.store_at(p.out, p.y);
    REQUIRE_COMPILE_ERROR(p.out.lowered_stmt(), Contains("Func g is scheduled store_at(out.y) but is inlined") &&
                                                    Contains("must also be given compute_root() or compute_at()"));
}

TEST_CASE("error: unroll a reduction loop of non-constant extent", "[error][schedule][reduction]") {
    Param<int> n("n");
    Var x("x");
    RDom r(0, n, "r");
    Func f("f");
    f(x) = 0;
    f(x) += r;
    f.update(0).unroll(r);
    REQUIRE_COMPILE_ERROR(f.lowered_stmt(), Contains("Loop f.s1.r.x is scheduled unroll(), but its extent n is not a constant") &&
                                                Contains("with unroll(r.x, 4) on f.update(0) (C++: "
                                                         "f.update(0).unroll(r.x, 4); .sched: f.update(0): "
                                                         "unroll(r.x, 4))") &&
                                                Contains("or give the RDom of r.x a constant extent"));
}
