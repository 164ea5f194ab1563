// An output's bound() smaller than the output buffer: the kernel used to
// return 0 and leave the columns past the bound unwritten. It now refuses the
// buffer with kiln_error_bound_too_small and one line naming the Func, the
// bound and the region the buffer asks for, on the host and the NPU alike.
#include <kiln/Generator.h>
#include <kiln/ScheduleFile.h>

#include <fstream>
#include <iterator>
#include <string>

#include "bad_input.h"

using namespace rt;

namespace {

const float kCanary = -12345.0f;

// The softmax generator compiled with width=2048 under its NPU schedule,
// which has bound(x, 0, 1024) (schedules/softmax/npu.sched), in tiles of 4
// rows: the schedule's 8 rows of 2048 floats, double-buffered, exceed UB.
void check_softmax_wider_than_its_bound(const Target &t, const std::string &fn) {
    auto g = GeneratorRegistry::create("softmax");
    g->set_generator_params({"width=2048"});
    Pipeline p = g->build_pipeline();
    std::ifstream f(KILN_SOURCE_DIR "/schedules/softmax/npu.sched");
    std::string sched((std::istreambuf_iterator<char>(f)), {});
    const std::string eight = "split(y, yo, yi, 8)";
    REQUIRE(sched.find(eight) != std::string::npos);
    sched.replace(sched.find(eight), eight.size(), "split(y, yo, yi, 4)");
    ScheduleFile::parse(sched, "npu.sched").apply(p, t);
    Kernel k(p, fn, t);
    Halide::Runtime::Buffer<float> in(2048, 8), out(2048, 8);
    in.fill(0.5f);
    out.fill(kCanary);
    k.set("input", in.raw_buffer());
    k.set("output", out.raw_buffer());
    expect_rejected(k, kiln_error_bound_too_small,
                    {"output Func output is given bound(x, 0, 1024), which covers [0, 1023], but its buffer 'output' "
                     "asks for [0, 2047] in dimension 0",
                     "pass a buffer within the bound, or widen or remove the bound()"},
                    out, kCanary);
}

}  // namespace

TEST_CASE("runtime: an output buffer larger than the output's bound() is refused", "[runtime][regression]") {
    Var x("x"), y("y");
    Func f("f");
    f(x, y) = cast<float>(x + y);
    f.bound(x, 0, 64);
    Kernel k(Pipeline(f), "bounded_output");
    for (auto [min, extent] : {std::pair<int, int>{0, 128}, {32, 64}, {-1, 4}}) {
        Halide::Runtime::Buffer<float> out(extent, 3);
        out.set_min(min, 0);
        out.fill(kCanary);
        k.set("f", out.raw_buffer());
        INFO("buffer over [" << min << ", " << min + extent - 1 << "]");
        expect_rejected(k, kiln_error_bound_too_small,
                        {"output Func f is given bound(x, 0, 64), which covers [0, 63], but its buffer 'f' asks for [" +
                         std::to_string(min) + ", " + std::to_string(min + extent - 1) + "] in dimension 0"},
                        out, kCanary);
    }
    // Within the bound: written, and only there.
    Halide::Runtime::Buffer<float> out(64, 3);
    k.set("f", out.raw_buffer());
    std::string message;
    REQUIRE(k.run(message) == 0);
    CHECK(out(63, 2) == 65.0f);
}

TEST_CASE("runtime: softmax width=2048 under its NPU schedule's bound(x, 0, 1024), host target",
          "[runtime][regression]") {
    check_softmax_wider_than_its_bound(Target::host(), "softmax_host_bound");
}

TEST_CASE("runtime: softmax width=2048 under its NPU schedule's bound(x, 0, 1024), NPU target",
          "[runtime][regression][npu]") {
    check_softmax_wider_than_its_bound(Target("npu"), "softmax_npu_bound");
}

TEST_CASE("runtime: an output narrower than a ShiftInwards tile is blamed on the output, with the fix",
          "[runtime][regression]") {
    // conv_bn_relu under fused.sched (tiles of 2 vectors of channels, shifted
    // inwards) with 4 output channels: the tile writes channels before 0 and
    // reads beta there; the output's check comes first and says why.
    auto g = GeneratorRegistry::create("conv_bn_relu");
    Pipeline p = g->build_pipeline();
    ScheduleFile::load(KILN_SOURCE_DIR "/schedules/conv_bn_relu/fused.sched").apply(p);
    Kernel k(p, "conv_fused_narrow");
    const int cin = 3, cout = 4, w = 8, h = 2;
    Halide::Runtime::Buffer<float> in(cin, w + 2, h + 2), weights(cout, cin, 3, 3), out(cout, w, h);
    std::vector<Halide::Runtime::Buffer<float>> per_channel;
    for (int i = 0; i < 5; i++) per_channel.emplace_back(cout);
    for (auto *b : {&in, &weights}) b->fill(0.25f);
    for (auto &b : per_channel) b.fill(1.0f);
    out.fill(kCanary);
    float eps = 1e-5f;
    k.set("input", in.raw_buffer());
    k.set("weights", weights.raw_buffer());
    const char *names[] = {"bias", "mean", "variance", "gamma", "beta"};
    for (int i = 0; i < 5; i++) k.set(names[i], per_channel[i].raw_buffer());
    k.set("epsilon", &eps);
    k.set("output", out.raw_buffer());
    expect_rejected(k, kiln_error_output_too_small,
                    {"output 'output' is written over [", "] in dimension 0, but the buffer covers only [0, 3]",
                     "a ShiftInwards or RoundUp split whose tile is wider than the buffer",
                     "TailStrategy::GuardWithIf"},
                    out, kCanary);
}
