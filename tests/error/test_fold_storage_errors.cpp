// Misuse of fold_storage(), each message checked: a factor below the
// window (found when lowering, or by the kernel when the window's size is
// only known then), a region that moves the other way or both ways, a Func
// with no storage kept across iterations, and bad arguments.
#include "expect_error.h"

using namespace kiln;

namespace {

// out reads g over rows [y - 1, y + 1] (a window of 3), or over [r(y) - 1, r(y) + 1].
struct Stencil {
    ImageParam in{Int(32), 2, "in"};
    Var x{"x"}, y{"y"}, yo{"yo"}, yi{"yi"};
    Func g{"g"}, out{"out"};
    explicit Stencil(Expr row = Expr()) {
        if (!row.defined()) row = y;
        g(x, y) = in(x, y) * 3;
        out(x, y) = g(x, row - 1) + g(x, row) + g(x, row + 1);
    }
};

}  // namespace

TEST_CASE("error: fold_storage smaller than the window", "[error][fold_storage]") {
    Stencil p;
    p.g.store_root().compute_at(p.out, p.y).fold_storage(p.y, 2);
    REQUIRE_COMPILE_ERROR(p.out.lowered_stmt(),
                          Catch::Equals("Func g is scheduled fold_storage(y, 2), but its consumers need 3 rows of y at "
                                        "once (in each iteration of out.y), more than the 2 it keeps; use "
                                        "fold_storage(y, 3) or more, or remove the fold_storage"));
}

TEST_CASE("error: fold_storage smaller than the rows a RoundUp tail writes", "[error][fold_storage]") {
    Stencil p;
    p.g.store_root().compute_at(p.out, p.y).split(p.y, p.yo, p.yi, 4, TailStrategy::RoundUp).fold_storage(p.y, 3);
    REQUIRE_COMPILE_ERROR(p.out.lowered_stmt(),
                          Catch::Equals("Func g is scheduled fold_storage(y, 3), but its consumers and its producer (a "
                                        "split's tail writes past what they read) need 4 rows of y at once (in each "
                                        "iteration of out.y), more than the 3 it keeps; use fold_storage(y, 4) or "
                                        "more, or remove the fold_storage"));
}

TEST_CASE("error: fold_storage smaller than a window known only at run time", "[error][fold_storage]") {
    ImageParam in(Int(32), 2, "in");
    Param<int> k("k");
    Var x("x"), y("y");
    Func g("g"), out("out");
    g(x, y) = in(x, y) + 1;
    out(x, y) = g(x, y - 1) + g(x, y + k);
    g.store_root().compute_at(out, y).fold_storage(y, 4);
    Buffer<int> a = filled<int>(1, 32, 40);
    a.set_min(-4, -4);
    in.set(a);
    k.set(3);  // rows [y - 1, y + 3]: 5 of them
    Buffer<int> o(8, 8);
    REQUIRE_RUNTIME_ERROR(out.realize(o), -1,
                          Contains("Func g is scheduled fold_storage(y, 4), but its consumers need 5 rows of y at once "
                                   "(in an iteration of out.y), more than the 4 it keeps; use a factor of at least the "
                                   "largest window, or remove the fold_storage"));
    k.set(2);
    REQUIRE_NOTHROW(out.realize(o));
}

TEST_CASE("error: fold_storage against the direction the region moves", "[error][fold_storage]") {
    Stencil up(20 - Var("y"));
    up.g.store_root().compute_at(up.out, up.y).fold_storage(up.y, 3);
    REQUIRE_COMPILE_ERROR(up.out.lowered_stmt(),
                          Catch::Equals("Func g is scheduled fold_storage(y, 3), but its region in y moves toward "
                                        "smaller y as out.y advances; fold it in that direction with "
                                        "fold_storage(y, 3, false), or remove the fold_storage"));
    Stencil down;
    down.g.store_root().compute_at(down.out, down.y).fold_storage(down.y, 3, false);
    REQUIRE_COMPILE_ERROR(down.out.lowered_stmt(),
                          Catch::Equals("Func g is scheduled fold_storage(y, 3, false), but its region in y moves "
                                        "toward larger y as out.y advances; fold it in that direction with "
                                        "fold_storage(y, 3), or remove the fold_storage"));
}

TEST_CASE("error: fold_storage of a region read in both directions", "[error][fold_storage]") {
    ImageParam in(Int(32), 2, "in");
    Var x("x"), y("y");
    Func g("g"), out("out");
    g(x, y) = in(x, y) * 2;
    out(x, y) = g(x, y) + g(x, 30 - y);  // rows y and 30 - y: apart, then together, then apart
    g.store_root().compute_at(out, y).fold_storage(y, 64);
    REQUIRE_COMPILE_ERROR(out.lowered_stmt(),
                          Catch::Equals("Func g is scheduled fold_storage(y, 64), but its region in y, "
                                        "[min(((0 - out.s0.y) + 30), out.s0.y), max(((0 - out.s0.y) + 30), out.s0.y)], "
                                        "does not move monotonically as out.y advances (it can move both ways), so a "
                                        "circular buffer would overwrite values still to be read; remove the "
                                        "fold_storage, or read y in one direction"));
}

TEST_CASE("error: fold_storage of a Func stored where it is computed", "[error][fold_storage]") {
    Stencil at;
    at.g.compute_at(at.out, at.y).fold_storage(at.y, 4);
    REQUIRE_COMPILE_ERROR(at.out.lowered_stmt(),
                          Catch::Equals("Func g is scheduled fold_storage(y, 4), but it is stored where it is computed "
                                        "(compute_at(out, y)), so nothing is kept from one iteration to the next to "
                                        "fold; store it outside the loop it is computed in (e.g. store_root()), or "
                                        "remove the fold_storage"));
    Stencil root;
    root.g.compute_root().fold_storage(root.y, 4);
    REQUIRE_COMPILE_ERROR(root.out.lowered_stmt(), Contains("is stored where it is computed (compute_root())"));
}

TEST_CASE("error: fold_storage of a Func without storage of its own", "[error][fold_storage]") {
    Stencil inlined;
    inlined.g.fold_storage(inlined.y, 4);
    REQUIRE_COMPILE_ERROR(inlined.out.lowered_stmt(),
                          Catch::Equals("Func g is scheduled fold_storage(y, 4), but it is inlined, so it has no "
                                        "storage to fold; schedule it store_root().compute_at(...) (or store_at(...) "
                                        "outside its compute_at), or remove the fold_storage"));
    Stencil output;
    output.out.fold_storage(output.y, 4);
    REQUIRE_COMPILE_ERROR(output.out.lowered_stmt(),
                          Catch::Equals("Func out is scheduled fold_storage(y, 4), but it is an output of the "
                                        "pipeline: its storage is the caller's buffer, which cannot be folded; remove "
                                        "the fold_storage"));
}

TEST_CASE("error: fold_storage across a parallel loop", "[error][fold_storage][parallel]") {
    // The threads of out.yo would share one circular buffer; stored inside
    // the parallel loop (store_at(out, yo)), each strip has its own.
    Stencil p;
    p.out.split(p.y, p.yo, p.yi, 8).parallel(p.yo);
    p.g.store_root().compute_at(p.out, p.yi).fold_storage(p.y, 4);
    REQUIRE_COMPILE_ERROR(p.out.lowered_stmt(),
                          Contains("Func g is stored at root but computed inside the parallel loop over yo of out") &&
                              Contains("store_at(out, yo)"));
}

TEST_CASE("error: fold_storage arguments", "[error][fold_storage]") {
    Stencil p;
    REQUIRE_COMPILE_ERROR(p.g.fold_storage(Var("z"), 4),
                          Catch::Equals("Func g: fold_storage(z, 4): z is not a dimension of g (dimensions: x, y)"));
    REQUIRE_COMPILE_ERROR(p.g.fold_storage(p.y, 0),
                          Catch::Equals("Func g: fold_storage(y, 0): the factor is the number of rows kept, at least 1"));
    Param<int> n("n");
    REQUIRE_COMPILE_ERROR(p.g.fold_storage(p.y, n),
                          Catch::Equals("Func g: fold_storage(y, n): the factor must be a constant integer (the number "
                                        "of rows kept), e.g. fold_storage(y, 4)"));
}
