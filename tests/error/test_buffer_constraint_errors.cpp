// Misuse of buffer constraints (Dimension::set_min / set_extent /
// set_stride / set_bounds) and of output buffers (Func::output_buffer()):
// each a CompileError naming the buffer, the call, what is wrong and the fix.
#include "expect_error.h"

using namespace kiln;

TEST_CASE("error: set_stride on dimension 0 other than 1", "[error][buffer_constraints]") {
    ImageParam in(Float(32), 2, "in");
    REQUIRE_COMPILE_ERROR(in.dim(0).set_stride(3), Contains("ImageParam in.dim(0).set_stride(3)") &&
                                                       Contains("need dimension 0 of every buffer dense") &&
                                                       Contains("dimension 0 takes only set_stride(1)"));
    REQUIRE_COMPILE_ERROR(in.dim(0).set_stride(Expr()), Contains("dimension 0 takes only set_stride(1)"));
    in.dim(0).set_stride(1);  // Kiln's own requirement, accepted
}

TEST_CASE("error: a buffer constraint that uses a Var", "[error][buffer_constraints]") {
    ImageParam in(Int(32), 2, "in");
    Var x("x");
    REQUIRE_COMPILE_ERROR(in.dim(1).set_min(x + 1), Contains("ImageParam in.dim(1).set_min((x + 1)) uses Var x") &&
                                                        Contains("no value when the kernel starts") &&
                                                        Contains("constants, Params and other buffers' fields"));
}

TEST_CASE("error: a float or negative buffer constraint", "[error][buffer_constraints]") {
    ImageParam in(Int(32), 2, "in");
    REQUIRE_COMPILE_ERROR(in.dim(1).set_extent(2.5f),
                          Contains("ImageParam in.dim(1).set_extent(2.500000f): the value is a float32") &&
                              Contains("use cast<int>"));
    REQUIRE_COMPILE_ERROR(in.dim(1).set_stride(-4), Contains("in.dim(1).set_stride(-4): a stride cannot be negative"));
    REQUIRE_COMPILE_ERROR(in.dim(0).set_bounds(0, -1), Contains("an extent cannot be negative"));
}

TEST_CASE("error: a dimension a buffer does not have", "[error][buffer_constraints]") {
    ImageParam in(Int(32), 2, "in");
    REQUIRE_COMPILE_ERROR(in.dim(0).dim(2), Contains("ImageParam in has 2 dimensions; dim(2) does not exist"));
    Var x("x");
    Func f("f");
    f(x) = x;
    REQUIRE_COMPILE_ERROR(f.output_buffer().dim(1),
                          Contains("The output buffer f has 1 dimensions; dim(1) does not exist"));
}

TEST_CASE("error: output_buffer() of an undefined or Tuple-valued Func", "[error][buffer_constraints]") {
    Func f("f");
    REQUIRE_COMPILE_ERROR(f.output_buffer(), Contains("Func f: output_buffers() before the Func is defined") &&
                                                 Contains("define it first"));
    Var x("x");
    Func t("t");
    t(x) = Tuple(x, x + 1);
    REQUIRE_COMPILE_ERROR(t.output_buffer(), Contains("Func t has 2 values (a Tuple)") &&
                                                 Contains("use output_buffers()[i]"));
}

TEST_CASE("error: the output buffer of a Func that is not an output", "[error][buffer_constraints]") {
    Var x("x");
    Func g("g"), h("h");
    g(x) = x * 2;
    OutputImageParam gb = g.output_buffer();
    h(x) = g(x) + gb.width();
    REQUIRE_COMPILE_ERROR(h.lowered_stmt(), Contains("The output buffer g (g.output_buffer()) is used by this pipeline, "
                                                     "whose outputs are h, but Func g is not one of them") &&
                                                Contains("make the Func an output of the pipeline"));
}

TEST_CASE("error: buffer constraints on the NPU target", "[error][buffer_constraints]") {
    ImageParam in(Float(32), 2, "in");
    Var x("x"), y("y");
    Func f("f");
    f(x, y) = in(x, y) * 2.0f;
    in.dim(1).set_stride(64);
    REQUIRE_COMPILE_ERROR(Pipeline(f).compile_to_cpp_source("k", Target("npu")),
                          Contains("NPU target: ImageParam in has a constraint on dimension 1") &&
                              Contains("remove it from the NPU build"));
}

TEST_CASE("error: an output computed at another output's loop on the NPU target", "[error][outputs_at]") {
    ImageParam in(Float(32), 2, "in");
    Var x("x"), y("y");
    Func t("t"), out("out");
    t(x, y) = in(x, y) * 2.0f;
    out(x, y) = t(x, y) + 1.0f;
    t.compute_at(out, y);
    REQUIRE_COMPILE_ERROR(Pipeline({out, t}).compile_to_cpp_source("k", Target("npu")),
                          Contains("NPU target: Func t is an output of the pipeline computed at a loop of out "
                                   "(compute_at(out, y))") &&
                              Contains("compute t at the root in the NPU build"));
}
