// Arguments a generated kernel rejects when realized through the JIT: inputs
// too small for the region the schedule reads, outputs too small for a
// ShiftInwards split or for a bound(), buffers of the wrong element type or
// dimensionality, Params outside their range; and an ImageParam with no
// buffer bound (caught before the kernel runs, as a CompileError).
#include <kiln_runtime.h>

#include "expect_error.h"

using namespace kiln;

namespace {

// out(x, y) = in(x + 2, y) * 3: 2-D float, reads two columns past the output.
struct Shifted {
    ImageParam in{Float(32), 2, "in"};
    Var x{"x"}, y{"y"};
    Func out{"out"};
    Shifted() { out(x, y) = in(x + 2, y) * 3.0f; }
};

}  // namespace

TEST_CASE("error: an input smaller than the region the kernel reads", "[error][runtime]") {
    Shifted p;
    Buffer<float> small = filled(1.0f, 10, 4);
    p.in.set(small);
    Buffer<float> out(10, 4);
    REQUIRE_RUNTIME_ERROR(p.out.realize(out), kiln_error_input_too_small,
                          Contains("input 'in' is read over [2, 11] in dimension 0") &&
                              Contains("but the buffer covers only [0, 9]"));
    Buffer<float> shifted = filled(1.0f, 12, 4);
    shifted.set_min(2, 1);  // columns fit now; rows [1, 4] miss row 0
    p.in.set(shifted);
    REQUIRE_RUNTIME_ERROR(p.out.realize(out), kiln_error_input_too_small,
                          Contains("input 'in' is read over [0, 3] in dimension 1") && Contains("covers only [1, 4]"));
}

TEST_CASE("error: buffers of the wrong element type or dimensionality", "[error][runtime]") {
    Shifted p;
    Buffer<int> ints = filled(0, 12, 4);
    p.in.set(ints);
    Buffer<float> out(10, 4);
    REQUIRE_RUNTIME_ERROR(p.out.realize(out), kiln_error_bad_type,
                          Contains("buffer argument 'in' has the wrong element type: expected float32, got int32"));
    Buffer<float> good = filled(0.0f, 12, 4);
    p.in.set(good);
    Buffer<double> wrong_out(10, 4);  // an output's type is checked by realize() itself (test_first_hour_errors.cpp)
    REQUIRE_COMPILE_ERROR(p.out.realize(wrong_out),
                          Contains("Func out: realize() was given a float64 buffer for out, whose values are float32"));
    Buffer<float> flat = filled(0.0f, 12);
    p.in.set(flat);
    REQUIRE_RUNTIME_ERROR(p.out.realize(out), kiln_error_bad_dimensions,
                          Contains("buffer argument 'in' has 1 dimensions, expected 2"));
}

TEST_CASE("error: an input whose innermost dimension is not dense", "[error][runtime]") {
    Shifted p;
    Buffer<float> rows = filled(0.0f, 4, 12);
    Buffer<float> transposed = rows.transposed(0, 1);  // 12 x 4, stride 4 in dimension 0
    p.in.set(transposed);
    Buffer<float> out(10, 4);
    REQUIRE_RUNTIME_ERROR(p.out.realize(out), kiln_error_bad_stride,
                          Contains("buffer argument 'in' has stride 4 in dimension 0, expected 1"));
}

TEST_CASE("error: an ImageParam with no buffer bound", "[error][runtime]") {
    Shifted p;
    Buffer<float> out(10, 4);
    REQUIRE_COMPILE_ERROR(p.out.realize(out), Contains("ImageParam in has no buffer bound") &&
                                                  Contains("call in.set(buffer) first"));
}

TEST_CASE("error: an output smaller than a ShiftInwards split", "[error][runtime]") {
    Var x("x"), xo("xo"), xi("xi");
    Func f("f");
    f(x) = x * 2;
    f.split(x, xo, xi, 8, TailStrategy::ShiftInwards);
    Buffer<int> ok(13);
    f.realize(ok);  // 13 >= 8: the last iteration shifts inwards
    CHECK(ok(12) == 24);
    Buffer<int> narrow(5);  // one iteration of 8, shifted back to end at 4
    REQUIRE_RUNTIME_ERROR(f.realize(narrow), kiln_error_output_too_small,
                          Contains("output 'f' is written over [-3, 4] in dimension 0") &&
                              Contains("but the buffer covers only [0, 4]"));
}

TEST_CASE("error: an output that does not match its bound()", "[error][runtime]") {
    Var x("x");
    Func f("f");
    f(x) = x;
    f.bound(x, 0, 16).vectorize(x);
    Buffer<int> o(12);
    REQUIRE_RUNTIME_ERROR(f.realize(o), kiln_error_output_too_small,
                          Contains("output 'f' is written over [0, 15]") && Contains("covers only [0, 11]"));
}

TEST_CASE("error: a Param outside its declared range", "[error][runtime]") {
    Param<int> p("p");
    p.set_range(0, 10);
    Var x("x");
    Func f("f");
    f(x) = x * p;
    p.set(11);
    Buffer<int> o(4);
    REQUIRE_RUNTIME_ERROR(f.realize(o), kiln_error_param_out_of_range,
                          Contains("parameter 'p' is 11, above its maximum 10"));
    p.set(-1);
    REQUIRE_RUNTIME_ERROR(f.realize(o), kiln_error_param_out_of_range,
                          Contains("parameter 'p' is -1, below its minimum 0"));
    p.set(3);
    f.realize(o);
    CHECK(o(3) == 9);
}

TEST_CASE("error: a Pipeline realized with fewer buffers than outputs", "[error][runtime]") {
    Var x("x");
    Func f("f"), g("g");
    f(x) = x;
    g(x) = x * 2;
    Pipeline p({f, g});
    Buffer<int> one(4);
    REQUIRE_COMPILE_ERROR(p.realize_raw({one.raw_buffer()}),
                          Contains("the pipeline has 2 output(s) but 1 buffer(s) were given"));
}

TEST_CASE("error: a bound() on an intermediate smaller than what its consumer reads", "[error][runtime][regression]") {
    // Was silent: g read f's uncomputed (uninitialized) values past the bound.
    Var x("x");
    Func f("f"), g("g");
    f(x) = x;
    g(x) = f(x) + f(x + 8);
    f.compute_root().bound(x, 0, 4);
    Buffer<int> out(8);
    out.fill(-7);
    REQUIRE_RUNTIME_ERROR(g.realize(out), kiln_error_bound_too_small,
                          Contains("Func f is given bound(x, 0, 4), which covers [0, 3]") &&
                              Contains("its consumers read it over [0, 15] in dimension 0") && Contains("widen the bound()"));
    CHECK(out(0) == -7);  // nothing written
    REQUIRE_COMPILE_ERROR(f.bound(x, 0, 16), Contains("bound(x, ...) is given twice"));
}

TEST_CASE("error: an output buffer that breaks its align_bounds()", "[error][runtime]") {
    Var x("x"), y("y");
    Func f("f");
    f(x, y) = select(x % 2 == 0, x, -x) + y;
    f.align_bounds(x, 2).align_bounds(y, 2, 1).vectorize(x, 8);
    Buffer<int> ok(16, 4);
    ok.set_min(0, 1);  // x from 0 (even), y from 1 (odd); 16 and 4 are even
    f.realize(ok);
    CHECK(ok(3, 2) == -3 + 2);
    CHECK(ok(4, 1) == 4 + 1);
    Buffer<int> odd(16, 4);
    odd.set_min(1, 1);  // x from 1: computed from 0, outside the buffer; never a wrong result
    odd.fill(-7);
    REQUIRE_RUNTIME_ERROR(f.realize(odd), kiln_error_constraint_violated,
                          Contains("output Func f is given align_bounds(x, 2, 0), so its buffer 'f' must start at 0 "
                                   "modulo 2 and span a multiple of 2 in dimension 0, but it starts at 1 and spans 16") &&
                              Contains("remove the align_bounds()"));
    CHECK(odd(1, 1) == -7);  // nothing written
    Buffer<int> short_rows(16, 3);
    short_rows.set_min(0, 1);
    REQUIRE_RUNTIME_ERROR(f.realize(short_rows), kiln_error_constraint_violated,
                          Contains("align_bounds(y, 2, 1)") && Contains("in dimension 1, but it starts at 1 and spans 3"));
}

TEST_CASE("error: align_bounds() misused", "[error][schedule]") {
    Var x("x"), y("y"), z("z");
    Func f("f");
    f(x, y) = x + y;
    REQUIRE_COMPILE_ERROR(f.align_bounds(z, 2), Contains("Func f: align_bounds(z, 2, 0): z is not a dimension of f "
                                                         "(dimensions: x, y)"));
    REQUIRE_COMPILE_ERROR(f.align_bounds(x, 0), Contains("the modulus must be a positive integer constant"));
    Param<int> p("p");
    REQUIRE_COMPILE_ERROR(f.align_bounds(x, p), Contains("the modulus must be a positive integer constant"));
    REQUIRE_COMPILE_ERROR(f.align_bounds(x, 4, 4), Contains("the remainder must be an integer constant in [0, 4)"));
    f.align_bounds(x, 4, 1);
    REQUIRE_COMPILE_ERROR(f.align_bounds(x, 2), Contains("x is aligned twice (align_bounds(x, 4, 1) before); keep one"));
    REQUIRE_COMPILE_ERROR(f.bound(x, 0, 16), Contains("bound(x, ...) after align_bounds(x, ...)"));
    f.bound(y, 0, 8);
    REQUIRE_COMPILE_ERROR(f.align_bounds(y, 2), Contains("align_bounds(y, 2, 0) after bound(y, ...)") &&
                                                    Contains("remove the align_bounds()"));
}

TEST_CASE("error: an output another output reads past its buffer", "[error][runtime][outputs]") {
    // c reads a at x + 1: a's buffer must cover one more point than c's.
    ImageParam in(Float(32), 1, "in");
    Var x("x");
    Func a("a"), c("c");
    a(x) = in(x) + 1;
    c(x) = a(x) + a(x + 1);
    Buffer<float> input(40), oa(32), oc(32);
    input.fill(1.0f);
    oc.fill(-7.0f);
    in.set(input);
    REQUIRE_RUNTIME_ERROR(Pipeline({a, c}).realize_raw({oa.raw_buffer(), oc.raw_buffer()}),
                          kiln_error_output_too_small,
                          Contains("output 'a' is read over [0, 32] in dimension 0, but the buffer covers only [0, 31]; "
                                   "Func c of this pipeline reads it there, and an output is computed over its "
                                   "buffer only: pass a larger buffer"));
    CHECK(oc(0) == -7.0f);  // nothing written
    Buffer<float> larger(33);
    Pipeline({a, c}).realize_raw({larger.raw_buffer(), oc.raw_buffer()});
    CHECK(oc(31) == 4.0f);
}
