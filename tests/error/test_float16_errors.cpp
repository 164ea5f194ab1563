// Misuses of the 16-bit float types: a 16-bit scalar Param on the NPU
// target (which passes scalars as float32 or int32), a buffer of the wrong 16-bit type to
// a kernel, realize() into a buffer of another type, and save() with a type
// that is no 16-bit float or of a Func that is no float.
#include "expect_error.h"
#include "kiln_runtime.h"

using namespace kiln;

TEST_CASE("error: 16-bit floats on the NPU target", "[error][float16]") {
    // 16-bit buffers and Funcs compute on the NPU (tests/npu/test_codegen_npu_16bit.cpp); a 16-bit scalar
    // Param would reach the kernel as a float, so it is refused.
    ImageParam in(Float(32), 2, "in");
    Param<float16_t> s("s");
    Var x("x"), y("y");
    Func scaled("scaled");
    scaled(x, y) = in(x, y) * cast<float>(s);
    scaled.bound(x, 0, 64).bound(y, 0, 8);
    REQUIRE_COMPILE_ERROR(Pipeline(scaled).compile_to_cpp_source("k", Target("npu")),
                          Contains("NPU target: Param s has type float16, and the NPU kernel takes scalar Params as "
                                   "float32 or int32; declare it Param<float>"));
}

TEST_CASE("error: a buffer of the wrong 16-bit float type", "[error][float16]") {
    ImageParam in(Float(16), 1, "in");
    Var x("x");
    Func out("out");
    out(x) = in(x) * 2;
    Buffer<float> f32(16);
    f32.fill(1.0f);
    in.set(f32);
    Buffer<float16_t> result(16);
    REQUIRE_RUNTIME_ERROR(out.realize(result), kiln_error_bad_type,
                          Contains("buffer argument 'in' has the wrong element type: expected float16, got float32"));
    Buffer<bfloat16_t> bf(16);
    in.set(bf);
    REQUIRE_RUNTIME_ERROR(out.realize(result), kiln_error_bad_type,
                          Contains("buffer argument 'in' has the wrong element type: expected float16, got bfloat16"));
    Buffer<float16_t> h(16);
    in.set(h);
    Buffer<bfloat16_t> wrong_out(16);
    REQUIRE_COMPILE_ERROR(out.realize(wrong_out),
                          Contains("Func out: realize() was given a bfloat16 buffer for out, whose values are float16") &&
                              Contains("realize into a Buffer<kiln::float16_t>"));
}

TEST_CASE("error: save() of a 16-bit copy", "[error][float16][residuals]") {
    Var x("x");
    Func f("f"), n("n");
    f(x) = cast<float>(x) * 0.5f;
    n(x) = x * 2;
    REQUIRE_COMPILE_ERROR(f.save(Float(32)), Contains("Func f: save(float32): a saved copy of lower precision is "
                                                      "Float(16) or BFloat(16) (save(float16), save(bfloat16))"));
    REQUIRE_COMPILE_ERROR(n.save(Float(16)), Contains("Func n: save(float16) keeps a 16-bit copy of float values, "
                                                      "and n has type int32; save() it whole"));
    CHECK_NOTHROW(f.save(BFloat(16)));
    CHECK(f.saved_buffer().name() == "f_bfloat16");
    CHECK(f.saved_buffer().type() == BFloat(16));
}
