// Misused bitwise operators, shifts and mux: a CompileError naming the
// operand and its type, or what mux needs.
#include "expect_error.h"

using namespace kiln;

TEST_CASE("errors: bitwise operators and shifts take integers", "[error][bitwise]") {
    Var x("x");
    Expr f = cast<float>(x);
    REQUIRE_COMPILE_ERROR(f & 3, Contains("of '&' has type float32; bitwise operators and shifts take integers"));
    REQUIRE_COMPILE_ERROR(Expr(x) >> f, Contains("of '>>' has type float32"));
    REQUIRE_COMPILE_ERROR(~f, Contains("of '~' has type float32"));
}

TEST_CASE("errors: mux needs values and an integer index", "[error][bitwise]") {
    Var x("x");
    REQUIRE_COMPILE_ERROR(mux(x, {}), Contains("mux(x, {}): give at least one value to choose from"));
    REQUIRE_COMPILE_ERROR(mux(cast<float>(x), {Expr(1)}), Contains("mux: the index float32(x) has type float32"));
}

TEST_CASE("errors: lerp weights and bit counts", "[error][bitwise]") {
    Var x("x");
    REQUIRE_COMPILE_ERROR(lerp(Expr(x), Expr(x) + 1, Expr(x)),
                          Contains("lerp: the weight x has type int32; it must be a float or an unsigned integer"));
    REQUIRE_COMPILE_ERROR(lerp(cast<int64_t>(x), cast<int64_t>(x), 0.5f),
                          Contains("lerp of int64 values: 64-bit integers are not supported"));
    REQUIRE_COMPILE_ERROR(popcount(cast<float>(x)), Contains("of 'popcount' has type float32"));
}

TEST_CASE("errors: undef is a whole value", "[error][undef]") {
    Var x("x");
    Func f("f");
    REQUIRE_COMPILE_ERROR(f(x) = undef<int>() + 1,
                          Contains("Func f: undef() appears inside (undef() + 1); it can only be a whole value"));
}
