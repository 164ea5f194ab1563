// Conv2D 3x3 + BatchNorm + ReLU (generators/conv_bn_relu.cpp), unfolded
// and folded, under their three shipped schedule files against the same
// algorithms in Halide 14 with the same files applied (halide_apply), with
// channel counts and widths that are and are not multiples of the 2-vector
// x 6-pixel tile; and the fusion report of each schedule.
//
// Tolerance. Each output is a sum over (ci, rx, ry) in the same order, from
// the bias, in every schedule of both libraries (the reduction loops are
// moved, never split), and Halide runs with strict_float: the convolution
// is bit-exact. BN divides by sqrt in both the same way, so the outputs are
// compared exactly.
#include "patterns.h"

namespace {

struct Tensors {
    kiln::Buffer<float> input, weights, bias, mean, variance, gamma, beta;
    Tensors(int cin, int cout, int w, int h)
        : input(kd::random_buffer({cin, w + 2, h + 2}, -1, 1, 1)), weights(kd::random_buffer({cout, cin, 3, 3}, -1, 1, 2)),
          bias(kd::random_buffer({cout}, -1, 1, 3)), mean(kd::random_buffer({cout}, -1, 1, 4)),
          variance(kd::random_buffer({cout}, 0.1f, 2.0f, 5)), gamma(kd::random_buffer({cout}, 0.5f, 1.5f, 6)),
          beta(kd::random_buffer({cout}, -1, 1, 7)) {}
};

// The algorithm of generators/conv_bn_relu.cpp (folded or not) in Halide,
// scheduled by `file`.
Halide::Func halide_conv(const Tensors &t, bool folded, const kiln::ScheduleFile &file) {
    using namespace Halide;
    auto wrap = [](const kiln::Buffer<float> &b) { return Buffer<float>(*b.raw_buffer()); };
    Buffer<float> input = wrap(t.input), weights = wrap(t.weights), bias = wrap(t.bias), mean = wrap(t.mean),
                  variance = wrap(t.variance), gamma = wrap(t.gamma), beta = wrap(t.beta);
    const float eps = 1e-5f;
    Var c("c"), x("x"), y("y"), ci("ci"), rx("rx"), ry("ry");
    RDom r(0, input.dim(0).extent(), 0, 3, 0, 3, "r");
    // What host_tiled's specialization compares (the inputs' extents).
    const std::map<std::string, Expr> sizes = {{"weights.width", weights.dim(0).extent()},
                                               {"input.height", input.dim(1).extent()}};
    Func conv("conv"), output("output"), bn("bn"), scale("scale"), folded_w("folded_w"), folded_b("folded_b");
    auto bn_scale = [&](Expr ch) { return gamma(ch) / sqrt(variance(ch) + eps); };
    if (folded) {
        scale(c) = bn_scale(c);
        folded_w(c, ci, rx, ry) = weights(c, ci, rx, ry) * scale(c);
        folded_b(c) = (bias(c) - mean(c)) * scale(c) + beta(c);
        conv(c, x, y) = folded_b(c);
        conv(c, x, y) += folded_w(c, r.x, r.y, r.z) * input(r.x, x + r.y, y + r.z);
        output(c, x, y) = max(conv(c, x, y), 0.0f);
        kd::halide_apply(file, {{"scale", scale}, {"folded_w", folded_w}, {"folded_b", folded_b}, {"conv", conv},
                                {"output", output}},
                         {{"r.x", r.x}, {"r.y", r.y}, {"r.z", r.z}}, sizes);
    } else {
        conv(c, x, y) = bias(c);
        conv(c, x, y) += weights(c, r.x, r.y, r.z) * input(r.x, x + r.y, y + r.z);
        bn(c, x, y) = (conv(c, x, y) - mean(c)) * bn_scale(c) + beta(c);
        output(c, x, y) = max(bn(c, x, y), 0.0f);
        kd::halide_apply(file, {{"conv", conv}, {"bn", bn}, {"output", output}},
                         {{"r.x", r.x}, {"r.y", r.y}, {"r.z", r.z}}, sizes);
    }
    return output;
}

void check_conv(bool folded, const std::string &schedule) {
    const std::string gen = folded ? "conv_bn_folded" : "conv_bn_relu";
    kiln::ScheduleFile file = kiln::ScheduleFile::load(kd::schedule_path(gen, schedule));
    kd::KilnGenerator g({gen}, file);
    // (Cin, Cout, W, H): Cout a multiple of the 2-vector tile and not, W a
    // multiple of host_tiled's natural_vector_size*3/4 pixels (12 with
    // AVX-512, 6 with AVX2) and not, above it and below it.
    std::vector<std::tuple<int, int, int, int>> sizes = {{5, 64, 12, 3}, {3, 80, 7, 2}, {3, 80, 17, 2}};
    // Below one tile: host_tiled's guarded fallback (the other schedules
    // vectorize by whole vectors, shifted inwards, and need Cout >= 1 vector).
    if (schedule == "host_tiled") sizes.push_back({3, 8, 4, 2});
    for (auto [cin, cout, w, h] : sizes) {
        INFO(gen << " under " << schedule << ".sched, Cin=" << cin << " Cout=" << cout << " W=" << w << " H=" << h);
        Tensors t(cin, cout, w, h);
        kd::Out<float> out("output", {cout, w, h});
        Halide::Buffer<float> hout(*out.halide.raw_buffer());
        halide_conv(t, folded, file).realize(hout, kd::H::strict_float());
        for (auto [name, buf] : {std::pair<const char *, const kiln::Buffer<float> *>{"input", &t.input},
                                 {"weights", &t.weights}, {"bias", &t.bias}, {"mean", &t.mean},
                                 {"variance", &t.variance}, {"gamma", &t.gamma}, {"beta", &t.beta}})
            g.set(name, *buf);
        g.realize({out.kiln.raw_buffer()});
        kd::compare(out);  // bit-exact
    }
}

}  // namespace

TEST_CASE("conv_bn_relu: unfolded, every schedule, against Halide", "[pattern][conv]") {
    for (const std::string &s : kd::kSchedules) check_conv(false, s);
}

TEST_CASE("conv_bn_relu: folded, every schedule, against Halide", "[pattern][conv]") {
    for (const std::string &s : kd::kSchedules) check_conv(true, s);
}

// Unfolded: conv and bn (Cout x W x H each) are eliminated by fusion;
// folded: conv is, while folded_w and folded_b stay at the root in every
// schedule (they are small, and made once).
TEST_CASE("conv_bn_relu: fusion report, bytes saved = 2 x size of each eliminated intermediate",
          "[pattern][conv][report]") {
    const int cin = 16, cout = 64, w = 30, h = 20;
    const int64_t cache = 16 * 1024, intermediate = (int64_t)cout * w * h * 4;
    std::map<std::string, std::vector<int>> sizes = {
        {"output", {cout, w, h}}, {"input", {cin, w + 2, h + 2}}, {"weights", {cout, cin, 3, 3}},
        {"bias", {cout}}, {"mean", {cout}}, {"variance", {cout}}, {"gamma", {cout}}, {"beta", {cout}}};
    for (bool folded : {false, true}) {
        const std::string gen = folded ? "conv_bn_folded" : "conv_bn_relu";
        INFO(gen);
        auto report = [&](const std::string &s) {
            kd::KilnGenerator g({gen}, kiln::ScheduleFile::load(kd::schedule_path(gen, s)));
            return g.pipeline().report(sizes, kiln::Target::host(), cache);
        };
        kiln::PipelineReport unfused = report("unfused"), fused = report("fused"), tiled = report("host_tiled");
        const int64_t eliminated = folded ? 1 : 2;
        CHECK(unfused.memory_bytes - fused.memory_bytes == 2 * eliminated * intermediate);
        CHECK(unfused.memory_bytes - tiled.memory_bytes == 2 * eliminated * intermediate);
        CHECK(fused.bytes_saved() == 2 * intermediate);  // conv, against fused's own all-root baseline
        CHECK(fused.exact);
    }
}
