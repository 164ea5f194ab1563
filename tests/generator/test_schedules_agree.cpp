// Every generator under its fused and tiled schedules computes what its
// unfused schedule computes, bit for bit, on images whose sizes are not
// multiples of the tiles or vectors and on outputs that do not start at 0;
// the unfused blur3x3 is also checked against a plain C++ reference.
// softmax's online form on the NPU is the exception: it rescales its sum
// per chunk, so it is held to a stated tolerance of the host's instead.
#include <algorithm>
#include <cmath>
#include <tuple>

#include "aot.h"

using namespace aot;

namespace {

const int W = 517, H = 101;  // not multiples of any tile or vector width

// Runs every schedule on `in` into buffers shaped like `like`, and compares
// each with the unfused result.
template<typename T>
void check_schedules_agree(const Schedules &s, Buffer<T> &in, const Buffer<T> &like) {
    Buffer<T> ref = like.copy(), got = like.copy();
    REQUIRE(s.unfused(in.raw_buffer(), ref.raw_buffer()) == 0);
    for (const auto &[name, kernel] : {std::pair<const char *, Kernel>{"fused", s.fused}, {"host_tiled", s.host_tiled},
                                       {"auto", s.automatic}}) {
        if (!kernel) continue;
        INFO(s.name << " " << name << " against unfused");
        got.fill(T(0));
        REQUIRE(kernel(in.raw_buffer(), got.raw_buffer()) == 0);
        std::string first;
        int n = count_mismatches(ref, got, first);
        INFO("first mismatch at " << first);
        CHECK(n == 0);
    }
}

// The output region [5, 5 + W) x [7, 7 + H), away from the input's origin.
template<typename T>
Buffer<T> shifted_output(int w, int h) {
    Buffer<T> out(w, h);
    out.set_min(5, 7);
    return out;
}

}  // namespace

TEST_CASE("generator: blur3x3 unfused matches a plain C++ blur", "[generator]") {
    Buffer<float> in(W, H), out(W, H);
    fill_random(in, 0.0, 1.0);
    REQUIRE(blur3x3_unfused(in.raw_buffer(), out.raw_buffer()) == 0);
    auto at = [&](int x, int y) { return in(std::min(std::max(x, 0), W - 1), std::min(std::max(y, 0), H - 1)); };
    auto blur_x = [&](int x, int y) { return (at(x - 1, y) + at(x, y) + at(x + 1, y)) * (1.0f / 3); };
    int bad = 0;
    for (int y = 0; y < H; y++)
        for (int x = 0; x < W; x++) {
            float want = (blur_x(x, y - 1) + blur_x(x, y) + blur_x(x, y + 1)) * (1.0f / 3);
            bad += std::abs(out(x, y) - want) > 1e-6f;
        }
    CHECK(bad == 0);
}

TEST_CASE("generator: blur3x3 schedules agree", "[generator]") {
    Schedules s{"blur3x3", blur3x3_unfused, blur3x3_fused, blur3x3_host_tiled, blur3x3_auto};
    Buffer<float> in(W, H);
    fill_random(in, 0.0, 1.0);
    check_schedules_agree(s, in, Buffer<float>(W, H));
    check_schedules_agree(s, in, shifted_output<float>(W - 20, H - 10));
}

TEST_CASE("generator: unsharp schedules agree (float32 and uint8)", "[generator]") {
    auto bind = [](int (*f)(halide_buffer_t *, float, halide_buffer_t *), float amount) {
        return [=](halide_buffer_t *in, halide_buffer_t *out) { return f(in, amount, out); };
    };
    Schedules f32{"unsharp", bind(unsharp_unfused, 1.5f), bind(unsharp_fused, 1.5f), bind(unsharp_host_tiled, 1.5f),
                  bind(unsharp_auto, 1.5f)};
    Buffer<float> in(W, H);
    fill_random(in, 0.0, 1.0);
    check_schedules_agree(f32, in, Buffer<float>(W, H));
    check_schedules_agree(f32, in, shifted_output<float>(W - 30, H - 40));

    Schedules u8{"unsharp type=uint8", bind(unsharp_u8_unfused, 2.0f), bind(unsharp_u8_fused, 2.0f),
                 bind(unsharp_u8_host_tiled, 2.0f), bind(unsharp_u8_auto, 2.0f)};
    Buffer<uint8_t> in8(W, H), out8(W, H);
    fill_random(in8, 0.0, 256.0);
    check_schedules_agree(u8, in8, out8);
    // Integers are rounded and clamped: a bright pixel on black saturates.
    Buffer<uint8_t> dot(16, 16);
    dot.fill(0);
    dot(8, 8) = 200;
    Buffer<uint8_t> sharp(16, 16);
    REQUIRE(unsharp_u8_unfused(dot.raw_buffer(), 2.0f, sharp.raw_buffer()) == 0);
    CHECK(sharp(8, 8) == 255);
    CHECK(sharp(0, 0) == 0);
}

TEST_CASE("generator: harris schedules agree", "[generator]") {
    auto bind = [](int (*f)(halide_buffer_t *, float, halide_buffer_t *)) {
        return [=](halide_buffer_t *in, halide_buffer_t *out) { return f(in, 0.04f, out); };
    };
    Schedules s{"harris", bind(harris_unfused), bind(harris_fused), bind(harris_host_tiled), bind(harris_auto)};
    Buffer<float> in(W, H, 3);
    fill_random(in, 0.0, 1.0);
    check_schedules_agree(s, in, Buffer<float>(W, H));
    check_schedules_agree(s, in, shifted_output<float>(W - 40, H - 20));
}

TEST_CASE("generator: harris (RGB input) on the npu target equals the host target, edges included",
          "[generator][npu]") {
    // Tails shifted inwards, an output away from the input's origin, and one tile (all edge).
    for (auto [w, h, x0, y0] : {std::tuple{200, 77, 0, 0}, std::tuple{150, 70, 5, 7}, std::tuple{64, 32, 0, 0}}) {
        Buffer<float> in(w + x0, h + y0, 3), host(w, h), npu(w, h);
        host.set_min(x0, y0);
        npu.set_min(x0, y0);
        fill_random(in, 0.0, 1.0);
        REQUIRE(harris_fused(in.raw_buffer(), 0.04f, host.raw_buffer()) == 0);
        REQUIRE(harris_npu(in.raw_buffer(), 0.04f, npu.raw_buffer()) == 0);
        int differ = 0;
        host.for_each_element([&](int x, int y) { differ += host(x, y) != npu(x, y); });
        CHECK(differ == 0);
    }
}

TEST_CASE("generator: elementwise_chain schedules agree (softplus and tanh_affine)", "[generator]") {
    using Fn = int (*)(halide_buffer_t *, float, float, halide_buffer_t *);
    auto bind = [](Fn f, float a, float b) {
        return [=](halide_buffer_t *in, halide_buffer_t *out) { return f(in, a, b, out); };
    };
    Buffer<float> in(W, H);
    in.set_min(-3, -4);  // covers both output regions below
    fill_random(in, -4.0, 4.0);
    for (float a : {0.5f, 2.0f}) {
        Schedules softplus{"softplus", bind(softplus_unfused, a, 1.0f), bind(softplus_fused, a, 1.0f),
                           bind(softplus_host_tiled, a, 1.0f), bind(softplus_auto, a, 1.0f)};
        Schedules tanh_affine{"tanh_affine", bind(tanh_affine_unfused, a, -0.25f),
                              bind(tanh_affine_fused, a, -0.25f), bind(tanh_affine_host_tiled, a, -0.25f),
                              bind(tanh_affine_auto, a, -0.25f)};
        for (const Schedules *s : {&softplus, &tanh_affine}) {
            Buffer<float> full(W, H);
            full.set_min(-3, -4);
            check_schedules_agree(*s, in, full);
            check_schedules_agree(*s, in, shifted_output<float>(W - 40, H - 20));
        }
    }
    // The variants compute what they say.
    Buffer<float> one(8, 1), out(8, 1);
    one.fill(0.5f);
    REQUIRE(softplus_unfused(one.raw_buffer(), 3.0f, 4.0f, out.raw_buffer()) == 0);
    CHECK(out(0, 0) == Approx(std::log(std::exp(0.5f) + 1.0f)));
    REQUIRE(tanh_affine_unfused(one.raw_buffer(), 3.0f, 4.0f, out.raw_buffer()) == 0);
    CHECK(out(7, 0) == Approx(std::tanh(3.0f * 0.5f + 4.0f)));
}

TEST_CASE("generator: elementwise_chain on the npu target equals the host target on the same buffers",
          "[generator][npu]") {
    Buffer<float> in(W, H);
    in.set_min(-3, -4);
    fill_random(in, -4.0, 4.0);
    for (float a : {0.5f, 2.0f}) {
        Buffer<float> host(W, H), npu(W, H);
        host.set_min(-3, -4);
        npu.set_min(-3, -4);
        REQUIRE(softplus_fused(in.raw_buffer(), a, 1.0f, host.raw_buffer()) == 0);
        REQUIRE(softplus_npu(in.raw_buffer(), a, 1.0f, npu.raw_buffer()) == 0);
        int differ = 0;
        host.for_each_element([&](int x, int y) { differ += host(x, y) != npu(x, y); });
        CHECK(differ == 0);
        REQUIRE(tanh_affine_fused(in.raw_buffer(), a, -0.25f, host.raw_buffer()) == 0);
        REQUIRE(tanh_affine_npu(in.raw_buffer(), a, -0.25f, npu.raw_buffer()) == 0);
        differ = 0;
        host.for_each_element([&](int x, int y) { differ += host(x, y) != npu(x, y); });
        CHECK(differ == 0);
    }
}

TEST_CASE("generator: blur3x3 on the npu target equals the host target, edges included", "[generator][npu]") {
    for (auto [w, h] : {std::pair{200, 77}, std::pair{64, 32}}) {  // tails shifted inwards; one tile, all edge
        Buffer<float> in(w, h), host(w, h), npu(w, h);
        fill_random(in, -4.0, 4.0);
        REQUIRE(blur3x3_fused(in.raw_buffer(), host.raw_buffer()) == 0);
        REQUIRE(blur3x3_npu(in.raw_buffer(), npu.raw_buffer()) == 0);
        int differ = 0;
        host.for_each_element([&](int x, int y) { differ += host(x, y) != npu(x, y); });
        CHECK(differ == 0);
    }
}

namespace {

using RowKernel = int (*)(halide_buffer_t *, halide_buffer_t *);
using NormKernel = int (*)(halide_buffer_t *, halide_buffer_t *, halide_buffer_t *, float, halide_buffer_t *);

// softmax and layernorm on `rows` rows of `width` (starting at column
// `min`) through the NPU kernels, bit for bit against the host's fused ones.
void check_rows_on_npu(int width, int rows, int min, RowKernel softmax, NormKernel layernorm) {
    Buffer<float> in(width, rows), gamma(width), beta(width), host(width, rows), npu(width, rows);
    in.set_min(0, min);
    host.set_min(0, min);
    npu.set_min(0, min);
    fill_random(in, -4.0, 4.0);
    fill_random(gamma, 0.5, 1.5);
    fill_random(beta, -1.0, 1.0);
    auto differ = [&] {
        int n = 0;
        host.for_each_element([&](int x, int y) { n += host(x, y) != npu(x, y); });
        return n;
    };
    REQUIRE(softmax_fused(in.raw_buffer(), host.raw_buffer()) == 0);
    REQUIRE(softmax(in.raw_buffer(), npu.raw_buffer()) == 0);
    CHECK(differ() == 0);
    REQUIRE(layernorm_fused(in.raw_buffer(), gamma.raw_buffer(), beta.raw_buffer(), 1e-5f, host.raw_buffer()) == 0);
    REQUIRE(layernorm(in.raw_buffer(), gamma.raw_buffer(), beta.raw_buffer(), 1e-5f, npu.raw_buffer()) == 0);
    CHECK(differ() == 0);
}

}  // namespace

TEST_CASE("generator: layernorm and softmax on the npu target (width=1024) equal the host target", "[generator][npu]") {
    check_rows_on_npu(1024, 37, -4, softmax_npu, layernorm_npu);  // 37: not a multiple of the NPU's 8-row tiles
}

TEST_CASE("generator: layernorm and softmax over rows longer than UB (width=16384) on the npu target equal the host "
          "target",
          "[generator][npu][chunks]") {
    // schedules/<name>/npu_long.sched: 64 KiB rows, reduced in chunks of
    // 1024 (TROWSUM_ACC continues each row's sum from the chunks before it,
    // in the host's order), so the outputs are the host's bit for bit.
    check_rows_on_npu(16384, 37, 0, softmax_long_npu, layernorm_long_npu);  // 37: not a multiple of 16-row tiles
}

TEST_CASE("generator: softmax's online form over rows longer than UB on the npu target is within 1e-5 of the host",
          "[generator][npu][chunks][online]") {
    // schedules/softmax/online/npu_long.sched: the running maximum and sum
    // (a Tuple state) chunk by chunk, the sum rescaled once per chunk where
    // the host rescales it per element, so the outputs differ in the last
    // bits: each within a relative 1e-5 of the host's fused two-pass
    // kernel (measured: 3.5e-6 at 16384 columns of values in [-4, 4]).
    const int width = 16384, rows = 37;  // 37: not a multiple of 16-row tiles
    Buffer<float> in(width, rows), host(width, rows), npu(width, rows);
    fill_random(in, -4.0, 4.0);
    REQUIRE(softmax_fused(in.raw_buffer(), host.raw_buffer()) == 0);
    REQUIRE(softmax_online_long_npu(in.raw_buffer(), npu.raw_buffer()) == 0);
    double worst = 0;
    host.for_each_element([&](int x, int y) {
        worst = std::max(worst, std::abs((double)npu(x, y) - host(x, y)) / std::abs((double)host(x, y)));
    });
    INFO("largest relative difference " << worst);
    CHECK(worst < 1e-5);
    CHECK(worst > 0);  // rescaled per chunk: not the host's bit for bit
}