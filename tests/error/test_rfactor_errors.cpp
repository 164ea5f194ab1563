// Misuse of rfactor: an update that is not associative (the current value
// scaled, read at other coordinates, or an online-softmax pair), the pure
// definition, an RVar that is not a loop of the stage, a Var that is already
// a dimension, and an argmax (not commutative) factored over its inner RVar.
#include "expect_error.h"

using namespace kiln;

namespace {
struct Reduction {
    ImageParam in{Int(32), 1, "in"};
    Var x{"x"}, u{"u"};
    RDom r{0, 100, "r"};
    Func f{"f"};
};
}  // namespace

TEST_CASE("error: rfactor of an update that is not associative", "[error][rfactor]") {
    Reduction t;
    t.f(t.x) = 0;
    t.f(t.x) = t.f(t.x) * 2 + t.in(t.r);
    REQUIRE_COMPILE_ERROR(t.f.update(0).rfactor(t.r, t.u),
                          Contains("In schedule of f.update(0): rfactor(r.x, u): the update of f is not an "
                                   "associative reduction") &&
                              Contains("f's current value is not an operand of the outer +") &&
                              Contains("by +, -, *, min, max, && or ||") && Contains("or leave it serial"));
}

TEST_CASE("error: rfactor of an update that reads other coordinates", "[error][rfactor]") {
    Reduction t;
    t.f(t.x) = 0;
    t.f(t.x) = t.f(t.x - 1) + t.in(t.r);
    REQUIRE_COMPILE_ERROR(t.f.update(0).rfactor(t.r, t.u),
                          Contains("not an associative reduction: it reads f((x - 1)), at other coordinates than it "
                                   "writes"));
}

TEST_CASE("error: rfactor of the online-softmax pair (associative, but not a recognized form)", "[error][rfactor]") {
    ImageParam in(Float(32), 1, "in");
    Var u("u");
    RDom r(0, 100, "r");
    Func ms("ms");
    ms() = Tuple(Expr(-1e30f), 0.0f);
    Expr m = ms()[0], s = ms()[1], v = in(r), m2 = max(m, v);
    ms() = Tuple(m2, s * exp(m - m2) + exp(v - m2));
    REQUIRE_COMPILE_ERROR(ms.update(0).rfactor(r, u),
                          Contains("the update of ms is not an associative reduction: element 1 of its Tuple") &&
                              Contains("each Tuple element on its own"));
}

TEST_CASE("error: rfactor of a pure definition, of an unknown RVar, onto an existing Var", "[error][rfactor]") {
    Reduction t;
    t.f(t.x) = 0;
    t.f(t.x) += t.in(t.r + t.x);
    REQUIRE_COMPILE_ERROR(Stage(t.f.contents(), 0).rfactor(t.r, t.u),
                          Contains("rfactor splits a reduction, an update definition over an RDom; f is the pure "
                                   "definition"));
    RVar ro("ro"), ri("ri");
    t.f.update(0).split(t.r, ro, ri, 8);
    REQUIRE_COMPILE_ERROR(t.f.update(0).rfactor(t.r, t.u),
                          Contains("r.x is not an RVar loop of the stage; its RVar loops (outermost first) are: ro, ri"));
    REQUIRE_COMPILE_ERROR(t.f.update(0).rfactor(ri, t.x),
                          Contains("the Var x is already a dimension of f or named twice"));
}

TEST_CASE("error: rfactor of an argmax over an inner RVar", "[error][rfactor][tuple]") {
    Reduction t;
    t.f(t.x) = Tuple(t.in(t.x), 0);
    t.f(t.x) = select(t.in(t.r) > t.f(t.x)[0], Tuple(t.in(t.r), t.r), Tuple(t.f(t.x)));
    RVar ro("ro"), ri("ri");
    t.f.update(0).split(t.r, ro, ri, 8);
    REQUIRE_COMPILE_ERROR(t.f.update(0).rfactor(ri, t.u),
                          Contains("the update of f is an argmax, associative but not commutative") &&
                              Contains("ri is inside ro. Factor ro"));
}
