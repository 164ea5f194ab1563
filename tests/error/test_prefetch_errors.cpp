// Misuse of prefetch(): each a CompileError naming the stage, the call,
// what is wrong and the fix.
#include "expect_error.h"

using namespace kiln;

namespace {

struct Two {
    ImageParam in{Int(32), 2, "in"};
    Var x{"x"}, y{"y"}, xo{"xo"}, xi{"xi"};
    Func f{"f"}, g{"g"};
    Two() {
        f(x, y) = in(x, y) + 1;
        g(x, y) = f(x, y) * 2 + f(x + 1, y);
    }
};

}  // namespace

TEST_CASE("error: prefetch at a loop the stage does not have", "[error][prefetch]") {
    Two p;
    p.f.compute_root();
    Var z("z");
    REQUIRE_COMPILE_ERROR(p.g.prefetch(p.f, z, z), Contains("In schedule of g: prefetch(z, ...): z is not a loop of "
                                                            "this stage"));
    // A loop split after the prefetch names it: found when lowering.
    p.g.prefetch(p.f, p.x, p.x).split(p.x, p.xo, p.xi, 4);
    REQUIRE_COMPILE_ERROR(p.g.lowered_stmt(), Contains("Func g: prefetch(f, x, x, 1, GuardWithIf): g has no loop x") &&
                                                  Contains("its loops, innermost first: xi, xo, y"));
}

TEST_CASE("error: prefetch from a loop inside the one it is placed in", "[error][prefetch]") {
    Two p;
    p.f.compute_root();
    REQUIRE_COMPILE_ERROR(p.g.prefetch(p.f, p.y, p.x, 1),
                          Contains("In schedule of g: prefetch(f, y, x, ...): loop x is inside loop y") &&
                              Contains("e.g. prefetch(f, x, y, ...)"));
}

TEST_CASE("error: prefetch at a vectorized loop", "[error][prefetch]") {
    Two p;
    p.f.compute_root();
    Var x_vec("x_vec");
    p.g.vectorize(p.x, 8);
    REQUIRE_COMPILE_ERROR(p.g.prefetch(p.f, x_vec, x_vec, 1),
                          Contains("loop x_vec is vectorized") && Contains("prefetch at a loop around it"));
    Two q;
    q.f.compute_root();
    q.g.prefetch(q.f, q.x, q.x, 1).vectorize(q.x);  // vectorized afterwards: found when lowering
    REQUIRE_COMPILE_ERROR(q.g.lowered_stmt(), Contains("Func g: prefetch(f, x, x, 1, GuardWithIf): loop x is "
                                                       "vectorized"));
}

TEST_CASE("error: prefetch of an inlined Func or one stored inside the loop", "[error][prefetch]") {
    Two p;
    p.g.prefetch(p.f, p.y, p.y, 1);
    REQUIRE_COMPILE_ERROR(p.g.lowered_stmt(), Contains("f is inlined (it has no buffer)") &&
                                                  Contains("f.compute_root()"));
    Two q;
    q.f.compute_at(q.g, q.x);
    q.g.prefetch(q.f, q.y, q.y, 1);
    REQUIRE_COMPILE_ERROR(q.g.lowered_stmt(), Contains("f is stored inside loop y, so there is nothing to prefetch"));
}

TEST_CASE("error: prefetch of what the loop does not use, or in an inlined stage", "[error][prefetch]") {
    Two p;
    Func h("h");
    h(p.x, p.y) = p.x + p.y;
    h.compute_root();
    p.f.compute_root();
    p.g(p.x, p.y) += h(p.x, p.y);  // g reads h in its update only
    p.g.prefetch(h, p.y, p.y, 1);
    REQUIRE_COMPILE_ERROR(p.g.lowered_stmt(), Contains("Func g: prefetch(h, y, y, 1, GuardWithIf): g does not read or "
                                                       "write h inside loop y"));
    Two q;
    q.f.prefetch(q.in, q.y, q.y, 1);  // f stays inlined
    REQUIRE_COMPILE_ERROR(q.g.lowered_stmt(), Contains("f has no loop y in the loop nest (it is inlined"));
}

TEST_CASE("error: prefetch with a Var offset, in a specialization, of a Tuple", "[error][prefetch]") {
    Two p;
    REQUIRE_COMPILE_ERROR(p.g.prefetch(p.f, p.y, p.y, p.x), Contains("the offset uses x; it may use constants and "
                                                                      "Params only"));
    Param<int> n("n");
    REQUIRE_COMPILE_ERROR(p.g.specialize(n > 2).prefetch(p.f, p.y, p.y, 1),
                          Contains("in a specialization is not supported"));
    Func t("t"), u("u");
    t(p.x) = Tuple(p.x, p.x + 1);
    u(p.x) = t(p.x)[0] + t(p.x)[1];
    t.compute_root();
    u.prefetch(t, p.x, p.x, 1);
    REQUIRE_COMPILE_ERROR(u.lowered_stmt(), Contains("t has several values (a Tuple)"));
}

TEST_CASE("error: prefetch on the NPU target", "[error][prefetch]") {
    ImageParam in(Float(32), 2, "in");
    Var x("x"), y("y");
    Func f("f");
    f(x, y) = in(x, y) * 2.0f;
    f.prefetch(in, y, y, 1);
    REQUIRE_COMPILE_ERROR(Pipeline(f).compile_to_cpp_source("k", Target("npu")),
                          Contains("NPU target: Func f is scheduled with prefetch, which the NPU target does not "
                                   "honour"));
}
