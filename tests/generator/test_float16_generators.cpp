// A generator with a type param built for 16-bit floats: unsharp with
// type=float16 and type=bfloat16 (unfused and host_tiled), whose float32
// computation ends in one rounding, so each output is the float32 unsharp's
// output on the same (widened) input, rounded; and the element type check
// on entry of those kernels.
#include <kiln/Float16.h>

#include "aot.h"
#include "unsharp_bf16_host_tiled.h"
#include "unsharp_bf16_unfused.h"
#include "unsharp_f16_host_tiled.h"
#include "unsharp_f16_unfused.h"
#include "kiln_runtime.h"

using namespace aot;
using kiln::bfloat16_t;
using kiln::float16_t;

namespace {

const int W = 203, H = 61;
using Fn = int (*)(halide_buffer_t *, float, halide_buffer_t *);

// out = the 16-bit kernel on input16; want = float32 unsharp on the same values, rounded to T.
template<typename T>
void check_rounded(Fn kernel, const char *name) {
    Buffer<float> in32(W, H), out32(W, H);
    fill_random(in32, -4.0, 4.0, 7);
    Buffer<T> in16(W, H), out16(W, H);
    in16.for_each_element([&](int x, int y) {
        in16(x, y) = T(in32(x, y));
        in32(x, y) = (float)in16(x, y);  // the float32 run sees the 16-bit values
    });
    REQUIRE(unsharp_unfused(in32, 2.0f, out32) == 0);
    REQUIRE(kernel(in16, 2.0f, out16) == 0);
    int bad = 0;
    std::string first;
    out16.for_each_element([&](int x, int y) {
        if (out16(x, y).to_bits() == T(out32(x, y)).to_bits()) return;
        if (bad++ == 0) first = std::to_string(x) + ", " + std::to_string(y);
    });
    INFO(name << ": " << bad << " mismatches, first at (" << first << ")");
    CHECK(bad == 0);
}

}  // namespace

TEST_CASE("generator: unsharp type=float16 and type=bfloat16 round the float32 result", "[generator][float16]") {
    check_rounded<float16_t>(unsharp_f16_unfused, "float16 unfused");
    check_rounded<float16_t>(unsharp_f16_host_tiled, "float16 host_tiled");
    check_rounded<bfloat16_t>(unsharp_bf16_unfused, "bfloat16 unfused");
    check_rounded<bfloat16_t>(unsharp_bf16_host_tiled, "bfloat16 host_tiled");
}

TEST_CASE("generator: a 16-bit float kernel checks the buffers' element types", "[generator][float16]") {
    ErrorCapture errors;
    Buffer<float> f32(W, H);
    Buffer<float16_t> h(W, H), h_out(W, H);
    Buffer<bfloat16_t> b_out(W, H);
    f32.fill(0.0f);
    CHECK(unsharp_f16_unfused(f32, 1.0f, h_out) == kiln_error_bad_type);
    CHECK_THAT(errors.last(), Catch::Contains("buffer argument 'input' has the wrong element type: expected "
                                              "float16, got float32"));
    // float16 and bfloat16 have the same width: the type code tells them apart.
    h.fill(float16_t(0.0f));
    CHECK(unsharp_bf16_unfused(h, 1.0f, b_out) == kiln_error_bad_type);
    CHECK_THAT(errors.last(), Catch::Contains("buffer argument 'input' has the wrong element type: expected "
                                              "bfloat16, got float16"));
    CHECK(unsharp_f16_unfused(h, 1.0f, b_out) == kiln_error_bad_type);
    CHECK_THAT(errors.last(), Catch::Contains("buffer argument 'output' has the wrong element type: expected "
                                              "float16, got bfloat16"));
}
