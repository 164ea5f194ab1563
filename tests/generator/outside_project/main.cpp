// Calls the four libraries and checks their results, then writes and reads
// back a PNG with the installed PNG helper; exits non-zero on failure.
#include <HalideBuffer.h>

#include <cmath>
#include <cstdio>
#include <cstring>
#include <exception>

#include "blur_fused.h"
#include "blur_npu.h"
#include "blur_tiled.h"
#include "brighten_x3.h"
#include "png_io.h"

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

    // The NPU kernel on the simulator, and its report (declared in blur_npu.h).
    Halide::Runtime::Buffer<float> npu(300, 100);
    if (int err = blur_npu(in.raw_buffer(), npu.raw_buffer())) return std::printf("blur_npu failed: %d\n", err), 1;
    out.for_each_element([&](int x, int y) { same &= out(x, y) == npu(x, y); });
    if (!same) return std::printf("blur_npu and blur_tiled differ\n"), 1;
    if (!std::strstr(blur_npu_npu_report(), "\"cycles\"")) {
        return std::printf("blur_npu_npu_report: no cycles in \"%s\"\n", blur_npu_npu_report()), 1;
    }

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
    // The PNG helper: the blurred image as an 8-bit gray PNG, read back.
    try {
        Halide::Runtime::Buffer<float, 3> gray(300, 100, 1);
        gray.for_each_element([&](int x, int y, int) { gray(x, y, 0) = out(x, y) / 4.0f; });
        kiln_apps::save_png("outside_blur.png", kiln_apps::from_float(gray, 8));
        Halide::Runtime::Buffer<float, 3> back = kiln_apps::to_float(kiln_apps::load_png("outside_blur.png"));
        if (back.width() != 300 || back.height() != 100 || back.channels() != 1 ||
            std::fabs(back(150, 50, 0) - 0.75f) > 1.0f / 255) {
            return std::printf("PNG round trip: unexpected %dx%dx%d, %g\n", back.width(), back.height(),
                               back.channels(), back(150, 50, 0)), 1;
        }
    } catch (const std::exception &e) {
        return std::printf("PNG round trip failed: %s\n", e.what()), 1;
    }
    std::printf("outside project: ok\n");
    return 0;
}
