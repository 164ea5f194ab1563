// Calls the three libraries and checks their results; exits non-zero on failure.
#include <HalideBuffer.h>

#include <cmath>
#include <cstdio>

#include "blur_fused.h"
#include "blur_tiled.h"
#include "brighten_x3.h"

int main() {
    Halide::Runtime::Buffer<float> in(300, 100), out(300, 100);
    in.fill(2.0f);
    in(150, 50) = 11.0f;
    if (int err = blur_tiled(in.raw_buffer(), out.raw_buffer())) return std::printf("blur_tiled failed: %d\n", err), 1;
    if (std::fabs(out(0, 0) - 2.0f) > 1e-5f || std::fabs(out(150, 50) - 3.0f) > 1e-5f) {
        return std::printf("blur_tiled: unexpected values %g %g\n", out(0, 0), out(150, 50)), 1;
    }

    Halide::Runtime::Buffer<float> fused(300, 100);
    if (int err = blur_fused(in.raw_buffer(), fused.raw_buffer())) return std::printf("blur_fused failed: %d\n", err), 1;
    bool same = true;
    out.for_each_element([&](int x, int y) { same &= out(x, y) == fused(x, y); });
    if (!same) return std::printf("blur_tiled and blur_fused differ\n"), 1;

    Halide::Runtime::Buffer<uint8_t> bytes(64, 8);
    bytes.fill(10);
    Halide::Runtime::Buffer<float> bright(64, 8);
    if (int err = brighten_x3(bytes.raw_buffer(), 0.5f, bright.raw_buffer())) {
        return std::printf("brighten_x3 failed: %d\n", err), 1;
    }
    if (bright(63, 7) != 30.5f) return std::printf("brighten_x3: unexpected value %g\n", bright(63, 7)), 1;
    if (brighten_x3(bytes.raw_buffer(), 2.0f, bright.raw_buffer()) != kiln_error_param_out_of_range) {
        return std::printf("brighten_x3 accepted an offset outside [-1, 1]\n"), 1;
    }
    std::printf("outside project: ok\n");
    return 0;
}
