// Conv2D 3x3 + BatchNorm + ReLU (generators/conv_bn_relu.cpp), unfolded
// and folded, under their three shipped schedules against the same
// algorithms and schedules in Halide 14, with channel counts and widths
// that are and are not multiples of the 2-vector x 6-pixel tile; and the
// fusion report of each schedule.
//
// Tolerance. Each output is a sum over (ci, rx, ry) in the same order, from
// the bias, in every schedule of both libraries (the reduction loops are
// moved, never split), and Halide runs with strict_float: the convolution
// is bit-exact. BN divides by sqrt in both the same way, so the outputs are
// compared exactly.
#include "pattern_diff.h"

namespace {

enum class Sched { Unfused, Fused, HostTiled };
const char *sched_name(Sched s) { return s == Sched::Unfused ? "unfused" : s == Sched::Fused ? "fused" : "host_tiled"; }

struct Tensors {
    kiln::Buffer<float> input, weights, bias, mean, variance, gamma, beta;
    Tensors(int cin, int cout, int w, int h)
        : input(kd::random_tensor({cin, w + 2, h + 2}, 1)), weights(kd::random_tensor({cout, cin, 3, 3}, 2)),
          bias(kd::random_tensor({cout}, 3)), mean(kd::random_tensor({cout}, 4)),
          variance(kd::random_tensor({cout}, 5, 0.1f, 2.0f)), gamma(kd::random_tensor({cout}, 6, 0.5f, 1.5f)),
          beta(kd::random_tensor({cout}, 7)) {}
};

// The Halide program: the algorithm of generators/conv_bn_relu.cpp (folded
// or not) and the schedule of schedules/<generator>/<s>.sched.
Halide::Func halide_conv(const Tensors &t, bool folded, Sched s, int vec) {
    using namespace Halide;
    auto wrap = [](const kiln::Buffer<float> &b) { return Buffer<float>(*b.raw_buffer()); };
    Buffer<float> input = wrap(t.input), weights = wrap(t.weights), bias = wrap(t.bias), mean = wrap(t.mean),
                  variance = wrap(t.variance), gamma = wrap(t.gamma), beta = wrap(t.beta);
    const float eps = 1e-5f;
    Var c("c"), x("x"), y("y"), ci("ci"), rx("rx"), ry("ry"), cv("cv"), xv("xv");
    RDom r(0, input.dim(0).extent(), 0, 3, 0, 3, "r");
    Func conv("conv"), output("output"), bn("bn"), scale("scale"), folded_w("folded_w"), folded_b("folded_b");
    auto bn_scale = [&](Expr ch) { return gamma(ch) / sqrt(variance(ch) + eps); };
    if (folded) {
        scale(c) = bn_scale(c);
        folded_w(c, ci, rx, ry) = weights(c, ci, rx, ry) * scale(c);
        folded_b(c) = (bias(c) - mean(c)) * scale(c) + beta(c);
        conv(c, x, y) = folded_b(c);
        conv(c, x, y) += folded_w(c, r.x, r.y, r.z) * input(r.x, x + r.y, y + r.z);
        output(c, x, y) = max(conv(c, x, y), 0.0f);
        scale.compute_root();
        folded_w.compute_root().vectorize(c, vec);
        folded_b.compute_root().vectorize(c, vec);
    } else {
        conv(c, x, y) = bias(c);
        conv(c, x, y) += weights(c, r.x, r.y, r.z) * input(r.x, x + r.y, y + r.z);
        bn(c, x, y) = (conv(c, x, y) - mean(c)) * bn_scale(c) + beta(c);
        output(c, x, y) = max(bn(c, x, y), 0.0f);
        if (s == Sched::Unfused) bn.compute_root().vectorize(c, vec);
    }
    if (s == Sched::Unfused) {
        output.vectorize(c, vec);
        conv.compute_root().vectorize(c, vec);
        conv.update(0).reorder(c, r.x, r.y, r.z, x, y).vectorize(c, vec, TailStrategy::GuardWithIf);
    } else {
        output.tile(c, x, cv, xv, vec * 2, 6).vectorize(cv, vec).unroll(cv).unroll(xv);
        if (s == Sched::HostTiled) output.parallel(y);
        conv.compute_at(output, c).vectorize(c, vec).unroll(c).unroll(x);
        conv.update(0).reorder(c, x, r.x, r.y, r.z).vectorize(c, vec).unroll(c).unroll(x);
    }
    return output;
}

void check_conv(bool folded, Sched s, int cin, int cout, int w, int h) {
    const std::string gen = folded ? "conv_bn_folded" : "conv_bn_relu";
    INFO(gen << " " << sched_name(s) << ", Cin=" << cin << " Cout=" << cout << " W=" << w << " H=" << h);
    Tensors t(cin, cout, w, h);
    kd::Out<float> out("output", {cout, w, h});
    const int vec = kiln::Target::host().natural_vector_size(kiln::Float(32));

    Halide::Buffer<float> hout(*out.halide.raw_buffer());
    halide_conv(t, folded, s, vec).realize(hout, kd::H::strict_float());

    kd::GeneratorRun g(gen, {}, gen + "/" + sched_name(s) + ".sched");
    g.bind("input", t.input);
    g.bind("weights", t.weights);
    g.bind("bias", t.bias);
    g.bind("mean", t.mean);
    g.bind("variance", t.variance);
    g.bind("gamma", t.gamma);
    g.bind("beta", t.beta);
    g.realize({out.kiln.raw_buffer()});
    kd::compare(out);  // bit-exact
}

// (Cin, Cout, W, H): Cout a multiple of the 2-vector tile and not, W a
// multiple of the 6 pixels and not.
const int kSizes[][4] = {{5, 64, 12, 3}, {3, 80, 7, 2}};

}  // namespace

TEST_CASE("conv_bn_relu: unfolded, every schedule, against Halide", "[pattern][conv]") {
    for (Sched s : {Sched::Unfused, Sched::Fused, Sched::HostTiled})
        for (const auto &sz : kSizes) check_conv(false, s, sz[0], sz[1], sz[2], sz[3]);
}

TEST_CASE("conv_bn_relu: folded, every schedule, against Halide", "[pattern][conv]") {
    for (Sched s : {Sched::Unfused, Sched::Fused, Sched::HostTiled})
        for (const auto &sz : kSizes) check_conv(true, s, sz[0], sz[1], sz[2], sz[3]);
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
        auto report = [&](Sched s) {
            kd::GeneratorRun g(gen, {}, gen + "/" + sched_name(s) + ".sched");
            return g.pipeline.report(sizes, kiln::Target::host(), cache);
        };
        kiln::PipelineReport unfused = report(Sched::Unfused), fused = report(Sched::Fused),
                             tiled = report(Sched::HostTiled);
        const int64_t eliminated = folded ? 1 : 2;
        CHECK(unfused.memory_bytes - fused.memory_bytes == 2 * eliminated * intermediate);
        CHECK(unfused.memory_bytes - tiled.memory_bytes == 2 * eliminated * intermediate);
        CHECK(fused.bytes_saved() == 2 * intermediate);  // conv, against fused's own all-root baseline
        CHECK(fused.exact);
    }
}
