// Misuse of Tuples: asking a Tuple-valued Func for its one type, calling it
// as one Expr, an element that does not exist, indexing a Func with one
// value, an update with the wrong number of values or an element of the
// wrong type, select() between Tuples of different sizes, and a Realization
// of several buffers converted to one Buffer.
#include <kiln_runtime.h>

#include "expect_error.h"

using namespace kiln;

namespace {
struct TupleFunc {
    Var x{"x"};
    Func f{"f"};
    TupleFunc() { f(x) = Tuple(x, cast<float>(x)); }
};
}  // namespace

TEST_CASE("error: type() of a Tuple-valued Func", "[error][tuple]") {
    TupleFunc t;
    REQUIRE_COMPILE_ERROR(t.f.type(), Contains("Func f returns a Tuple of 2 values (int32, float32)") &&
                                          Contains("no single type") && Contains("use types()"));
}

TEST_CASE("error: a call to a Tuple-valued Func used as one Expr", "[error][tuple]") {
    TupleFunc t;
    Func g("g");
    REQUIRE_COMPILE_ERROR(g(t.x) = t.f(t.x) + 1, Contains("Func f returns a Tuple of 2 values") &&
                                                     Contains("not one Expr") && Contains("f(...)[i]") &&
                                                     Contains("Tuple(f(...))"));
}

TEST_CASE("error: a Tuple element that does not exist, and [i] on a Func with one value", "[error][tuple]") {
    TupleFunc t;
    REQUIRE_COMPILE_ERROR(t.f(t.x)[2], Contains("Func f returns a Tuple of 2 values; element 2 does not exist") &&
                                           Contains("use 0 to 1"));
    Func g("g");
    g(t.x) = t.x;
    REQUIRE_COMPILE_ERROR(g(t.x)[0], Contains("Func g returns a single value, not a Tuple") &&
                                         Contains("use g(...) itself"));
}

TEST_CASE("error: an update with the wrong number of values", "[error][tuple]") {
    TupleFunc t;
    REQUIRE_COMPILE_ERROR(t.f(t.x) = t.x + 1, Contains("Update definition f.update(0) gives 1 value(s) but f has 2 "
                                                       "(int32, float32)") &&
                                                  Contains("a Tuple of 2 values"));
    Func g("g");
    g(t.x) = t.x;
    REQUIRE_COMPILE_ERROR(g(t.x) = Tuple(t.x, t.x), Contains("Update definition g.update(0) gives 2 value(s) but g "
                                                             "has 1") &&
                                                        Contains("one value"));
}

TEST_CASE("error: a Tuple update element of the wrong type", "[error][tuple]") {
    TupleFunc t;
    REQUIRE_COMPILE_ERROR(t.f(t.x) = Tuple(t.x, t.x),
                          Contains("Update definition f.update(0) (element 1 of its Tuple) has type int32") &&
                              Contains("has type float32") && Contains("cast<float32>"));
}

TEST_CASE("error: select() between Tuples of different sizes", "[error][tuple]") {
    Var x("x");
    REQUIRE_COMPILE_ERROR(select(x > 0, Tuple(x, x), Tuple(x, x, x)),
                          Contains("select() between Tuples of 2 and 3 values"));
}

TEST_CASE("error: a Realization of a Tuple converted to one Buffer", "[error][tuple]") {
    TupleFunc t;
    Realization r({Buffer<>(filled<int>(0, 4)), Buffer<>(filled<float>(0, 4))});
    REQUIRE_COMPILE_ERROR(Buffer<int>(r), Contains("A Realization of 2 buffers (a Tuple) cannot be converted to one "
                                                   "Buffer") &&
                                              Contains("[i]"));
    Buffer<int> one(4);
    Realization wrong({Buffer<>(one)});
    REQUIRE_COMPILE_ERROR(t.f.realize(wrong), Contains("the pipeline has 1 output(s), written to 2 buffer(s) (one "
                                                           "per Tuple element), but 1 buffer(s) were given"));
}

TEST_CASE("error: a Tuple's element buffers are each checked on entry", "[error][tuple][runtime]") {
    TupleFunc t;
    Buffer<int> b0(10);
    Buffer<float> small(6), wrong_type(10);
    Realization r({Buffer<>(b0), Buffer<>(small)});
    REQUIRE_RUNTIME_ERROR(t.f.realize(r), kiln_error_output_too_small,
                          Contains("output 'f.1' is written over [0, 9] in dimension 0") &&
                              Contains("covers only [0, 5]"));
    Realization swapped({Buffer<>(wrong_type), Buffer<>(b0)});
    REQUIRE_COMPILE_ERROR(t.f.realize(swapped), Contains("Func f: realize() was given a float32 buffer for element 0 "
                                                         "of f (buffer f.0), whose values are int32"));
}
