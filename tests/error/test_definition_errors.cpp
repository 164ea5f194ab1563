// Misuse while writing the algorithm: calls with the wrong arity or a float
// coordinate, Funcs used before they are defined, Vars missing from the
// left-hand side, malformed pure and update definitions, RDoms with float
// bounds, two Funcs with one name, literals that do not fit, a select whose
// condition is not boolean, unknown targets.
#include "expect_error.h"

using namespace kiln;

TEST_CASE("error: a Func called with the wrong number of arguments", "[error][definition]") {
    Var x("x"), y("y");
    Func f("f"), g("g");
    f(x, y) = x + y;
    REQUIRE_COMPILE_ERROR(g(x) = f(x) * 2, Contains("Func f is defined with 2 argument(s) (x, y)") &&
                                               Contains("called with 1 in the definition of g"));
}

TEST_CASE("error: a Func used before it is defined", "[error][definition]") {
    Var x("x");
    Func g("g"), f("f");
    REQUIRE_COMPILE_ERROR(f(x) = g(x) + 1, Contains("Can't call Func g") && Contains("not been defined yet") &&
                                               Contains("define it before using it"));
}

TEST_CASE("error: a pure Var missing from the left-hand side", "[error][definition]") {
    Var x("x"), y("y");
    Func f("f");
    REQUIRE_COMPILE_ERROR(f(x) = x + y, Contains("Func f") && Contains("uses Var y") &&
                                            Contains("does not appear on the left-hand side (x)"));
}

TEST_CASE("error: a float coordinate", "[error][definition]") {
    Var x("x");
    Func f("f");
    f(x) = x;
    REQUIRE_COMPILE_ERROR(Expr(f(cast<float>(x) * 0.5f)),
                          Contains("Func f is called with argument 0 of type float32") &&
                              Contains("arguments must be integers") && Contains("cast<int>"));
    ImageParam in(Float(32), 1, "in");
    REQUIRE_COMPILE_ERROR(in(in(x)), Contains("ImageParam in: argument 0 is a float32") &&
                                         Contains("coordinates must be integers"));
}

TEST_CASE("error: an update of a different type", "[error][definition]") {
    Var x("x");
    Func f("f");
    f(x) = x * 2;
    REQUIRE_COMPILE_ERROR(f(x) = cast<float>(f(x)) * 0.5f,
                          Contains("Update definition f.update(0) has type float32 but f has type int32") &&
                              Contains("cast<int32>(...)"));
}

TEST_CASE("error: a first definition at computed coordinates, or with a Var twice", "[error][definition]") {
    Var x("x"), y("y");
    Func f("f"), g("g");
    REQUIRE_COMPILE_ERROR(f(x + 1) = 0, Contains("The first definition of Func f must have only Vars") &&
                                            Contains("f(x) = 0 and then an update"));
    REQUIRE_COMPILE_ERROR(g(x, x) = 0, Contains("Func g") && Contains("uses a Var twice"));
}

TEST_CASE("error: an RDom in a pure definition, two RDoms in one update", "[error][definition]") {
    Var x("x");
    RDom r(0, 4, "r"), s(0, 2, "s");
    Func f("f"), g("g");
    REQUIRE_COMPILE_ERROR(f(x) = x + r, Contains("Func f: the pure definition uses RDom r") &&
                                            Contains("reductions need an update definition"));
    g(x) = 0;
    REQUIRE_COMPILE_ERROR(g(x) = g(x) + r + s, Contains("Update definition g.update(0) uses two RDoms (r and s)") &&
                                                   Contains("combine them into one multi-dimensional RDom"));
}

TEST_CASE("error: an update with a Var that is not a bare argument", "[error][definition]") {
    Var x("x"), y("y");
    Func f("f");
    f(x, y) = 0;
    REQUIRE_COMPILE_ERROR(f(x, 0) = f(x, 0) + y, Contains("f.update(0) uses Var y on the right-hand side") &&
                                                     Contains("every pure Var must appear there"));
    REQUIRE_COMPILE_ERROR(f(x + 1, y) = 1, Contains("f.update(0): Var x appears inside an expression") &&
                                               Contains("use an RDom for computed coordinates"));
}

TEST_CASE("error: update(i) that does not exist", "[error][definition]") {
    Var x("x");
    Func f("f");
    f(x) = x;
    f(x) += 1;
    REQUIRE_COMPILE_ERROR(f.update(1), Contains("Func f has 1 update definition(s); update(1) does not exist"));
}

TEST_CASE("error: an RDom with float bounds", "[error][definition]") {
    REQUIRE_COMPILE_ERROR(RDom(0.5f, 3, "r"), Contains("RDom r: the min of dimension 0 is a float (float32)") &&
                                                  Contains("use an integer expression"));
    REQUIRE_COMPILE_ERROR(RDom(0, 4, 0, 2.0f, "box"), Contains("RDom box: the extent of dimension 1 is a float"));
}

TEST_CASE("error: an ImageParam called with the wrong number of arguments", "[error][definition]") {
    ImageParam in(UInt(8), 2, "in");
    Var x("x");
    REQUIRE_COMPILE_ERROR(in(x), Contains("ImageParam in has 2 dimensions but was called with 1 arguments"));
    REQUIRE_COMPILE_ERROR(in.dim(2), Contains("ImageParam in has 2 dimensions; dim(2) does not exist"));
}

TEST_CASE("error: an output named like an input", "[error][definition]") {
    ImageParam in(Int(32), 1, "in");
    Var x("x");
    Func out("in");
    out(x) = in(x) + 1;
    REQUIRE_COMPILE_ERROR(Pipeline(out).infer_arguments(),
                          Contains("The output Func in has the same name as an input") && Contains("rename one"));
}

TEST_CASE("error: integer literals that do not fit the other operand's type", "[error][definition]") {
    ImageParam in(UInt(8), 1, "in");
    Var x("x");
    REQUIRE_COMPILE_ERROR(in(x) + 300, Contains("Integer literal 300 does not fit in type uint8") &&
                                           Contains("cast one side explicitly"));
    REQUIRE_COMPILE_ERROR(in(x) * -1, Contains("Integer literal -1 used with an expression of unsigned type uint8"));
}

TEST_CASE("error: RDom::where with a condition that is not boolean", "[error][definition]") {
    // The same rule as select(): an integer is not read as "!= 0".
    RDom r(0, 10, "r");
    REQUIRE_COMPILE_ERROR(r.where(r.x % 2), Contains("RDom r.where(): the condition (r.x % 2) has type int32") &&
                                                Contains("where() needs a boolean condition") &&
                                                Contains("compare it, e.g. r.where((r.x % 2) != 0)"));
    RDom s(0, 4, "s");
    REQUIRE_COMPILE_ERROR(s.where(cast<float>(s.x)), Contains("has type float32"));
    // A boolean condition is still taken, and conditions still accumulate.
    RDom t(0, 10, "t");
    t.where(t.x % 2 == 0);
    t.where(t.x < 7);
    REQUIRE(t.get()->predicate.defined());
}

TEST_CASE("error: select with a condition that is not boolean", "[error][definition]") {
    ImageParam in(UInt(8), 1, "in");
    Var x("x");
    // As in Halide: no implicit != 0, which would hide a value used as a condition by mistake.
    REQUIRE_COMPILE_ERROR(select(x % 2, x, 0), Contains("select: the condition (x % 2) has type int32") &&
                                                   Contains("select() needs a boolean condition") &&
                                                   Contains("compare it, e.g. select((x % 2) != 0, ...)"));
    REQUIRE_COMPILE_ERROR(select(in(x), 1.0f, 0.0f), Contains("has type uint8"));
    REQUIRE_COMPILE_ERROR(select(cast<float>(x), 1, 0), Contains("has type float32"));
    REQUIRE_COMPILE_ERROR(select(x, Tuple(x, x), Tuple(0, 0)), Contains("select: the condition x has type int32"));
    REQUIRE_COMPILE_ERROR(select(x > 0, 1, x, 2, 3), Contains("select: the condition x has type int32"));
    CHECK_NOTHROW(select(x % 2 != 0, x, 0));
}

TEST_CASE("error: an unknown target", "[error][definition]") {
    REQUIRE_COMPILE_ERROR(Target("host-avx9000"), Contains("Unknown feature \"avx9000\"") && Contains("A target is"));
    REQUIRE_COMPILE_ERROR(Target("sparc-solaris"), Contains("Unknown target \"sparc-solaris\"") &&
                                                       Contains("host-fast_math"));
}

TEST_CASE("error: scheduling an undefined Func, or a free-standing RVar in an expression", "[error][definition]") {
    Var x("x"), xo("xo"), xi("xi");
    Func f("f");
    REQUIRE_COMPILE_ERROR(f.split(x, xo, xi, 4), Contains("Func f must be defined before it is scheduled"));
    RVar r("r");
    REQUIRE_COMPILE_ERROR(Expr(r) + 1, Contains("RVar r has no reduction domain and cannot be used in an expression"));
}

TEST_CASE("error: a Func given an undefined Expr", "[error][definition]") {
    Var x("x");
    Func f("f");
    REQUIRE_COMPILE_ERROR(f(x) = Expr(), Contains("Func f is given an undefined value"));
}

TEST_CASE("error: a Func that calls itself in its pure definition", "[error][definition]") {
    Var x("x");
    Func f("f");
    REQUIRE_COMPILE_ERROR(f(x) = f(x - 1) + 1, Contains("Can't call Func f because it has not been defined yet") &&
                                                   Contains("define it before using it"));
}

TEST_CASE("error: an update with fewer arguments than the Func", "[error][definition]") {
    Var x("x"), y("y");
    RDom r(0, 4, "r");
    Func f("f");
    f(x, y) = 0;
    REQUIRE_COMPILE_ERROR(f(r) += 1, Contains("Func f is defined with 2 argument(s) (x, y) but is called with 1"));
}

TEST_CASE("error: RDom bounds that use a pure Var of the update", "[error][definition][regression]") {
    // Was an internal error: the emitted C++ referred to an undeclared x.
    Var x("x");
    RDom r(0, x, "r");
    Func f("f");
    f(x) = 0;
    REQUIRE_COMPILE_ERROR(f(x) += r, Contains("Update definition f.update(0): the bounds of RDom r (dimension 0) use Var x") &&
                                         Contains("not pure Vars") && Contains("where() condition"));
}

TEST_CASE("error: an RDom with no dimensions", "[error][definition]") {
    REQUIRE_COMPILE_ERROR(RDom(std::vector<std::pair<Expr, Expr>>{}, "r"), Contains("RDom needs at least one dimension"));
}

TEST_CASE("error: a Param with an empty range", "[error][definition]") {
    Param<int> p("p");
    REQUIRE_COMPILE_ERROR(p.set_range(5, 1), Contains("Param p: set_range(5, 1) is empty") && Contains("swap the two ends"));
    Param<float> g("gain");
    REQUIRE_COMPILE_ERROR(g.set_range(1.0f, 0.5f), Contains("Param gain: set_range(") && Contains("is empty"));
}

TEST_CASE("error: a Param named like a Func of the pipeline", "[error][definition][regression]") {
    // Was an internal error: the kernel's scalar argument and g's buffer clashed in the emitted C++.
    Param<int> p("g");
    Var x("x");
    Func g("g"), f("f");
    g(x) = x + p;
    f(x) = g(x);
    g.compute_root();
    REQUIRE_COMPILE_ERROR(Pipeline(f).infer_arguments(),
                          Contains("The Param g has the same name as a Func of the pipeline") &&
                              Contains("rename one of them"));
}

TEST_CASE("error: a Pipeline with no outputs", "[error][definition]") {
    Pipeline p(std::vector<Func>{});
    REQUIRE_COMPILE_ERROR(p.lowered_stmt(), Contains("A Pipeline needs at least one output Func"));
}

TEST_CASE("error: realizing a Func that has no definition", "[error][definition]") {
    Func f("f");
    Buffer<int> b(4);
    REQUIRE_COMPILE_ERROR(f.realize(b), Contains("Func f is an output of the pipeline but has no definition"));
}

TEST_CASE("error: misused _ (implicit arguments)", "[error][definition]") {
    ImageParam in(Int(32), 2, "in");
    Var x("x"), y("y"), z("z");
    Func g("g"), f("f"), h("h"), k("k");
    g(x, y) = in(x, y);
    REQUIRE_COMPILE_ERROR(g(x, _, _), Contains("Func g is called with _ twice") && Contains("it can appear once"));
    REQUIRE_COMPILE_ERROR(g(x, y, z, _), Contains("Func g has 2 dimension(s) but is called with 3 argument(s) besides "
                                                  "_; drop some, or drop the _"));
    REQUIRE_COMPILE_ERROR(in(x, y, z, _), Contains("ImageParam in has 2 dimension(s) but is called with 3"));
    REQUIRE_COMPILE_ERROR(f(x) = Expr(_) + x, Contains("Func f: _ is used as a value in its definition") &&
                                                  Contains("can only be an argument of a Func or image call"));
    REQUIRE_COMPILE_ERROR(h(_, x, _) = g(_) + x, Contains("Func h is defined with _ twice on the left-hand side"));
}
