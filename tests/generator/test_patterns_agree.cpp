// The fusion patterns compiled ahead of time: under their fused and tuned
// schedules every pattern computes what its unfused schedule computes, bit
// for bit (the schedules change where values are computed, never the order
// of a row's sum), on buffers whose sizes are not multiples of any split or
// vector factor and whose mins are not 0. The exception: the host_tiled
// schedules of layernorm and softmax vectorize their row sums by rfactor
// (8 lane sums, then their total), which reassociates the float sums; they
// are held to a relative error of 1e-5 (against the scale 1 of the data for
// layernorm, whose outputs near 0 come from nearly equal numbers).
#include "aot.h"

using namespace aot;

namespace {

const int W = 517, H = 101;

// A kernel with its scalars bound: the buffers, inputs then outputs.
using Multi = std::function<int(const std::vector<halide_buffer_t *> &)>;

struct Pattern {
    const char *name;
    Multi unfused, fused, host_tiled;
    std::vector<int> input_dims;  // 1 (a row) or 2 per buffer input
    int outputs;
    double tiled_rel = 0, tiled_scale = 0;  // host_tiled's tolerance (0: exact)
};

void check_agree(const Pattern &p, float lo, float hi) {
    std::vector<Buffer<float>> in;
    in.reserve(p.input_dims.size());
    for (size_t i = 0; i < p.input_dims.size(); i++) {
        in.emplace_back(p.input_dims[i] == 1 ? Buffer<float>(W) : Buffer<float>(W, H));
        if (p.input_dims[i] == 1) in.back().set_min(-3);
        else in.back().set_min(-3, 4);
        fill_random(in.back(), lo, hi, 1 + (unsigned)i);
    }
    auto run = [&](const Multi &k, std::vector<Buffer<float>> &outs) {
        std::vector<halide_buffer_t *> args;
        for (auto &b : in) args.push_back(b.raw_buffer());
        outs.reserve(p.outputs);  // raw_buffer() points into the Buffer object
        for (int i = 0; i < p.outputs; i++) {
            outs.emplace_back(W, H);
            outs.back().set_min(-3, 4);
            outs.back().fill(17.0f);
            args.push_back(outs.back().raw_buffer());
        }
        return k(args);
    };
    std::vector<Buffer<float>> ref;
    REQUIRE(run(p.unfused, ref) == 0);
    for (const auto &[name, kernel] : {std::pair<const char *, const Multi &>{"fused", p.fused}, {"host_tiled", p.host_tiled}}) {
        INFO(p.name << " " << name << " against unfused");
        std::vector<Buffer<float>> got;
        REQUIRE(run(kernel, got) == 0);
        for (int i = 0; i < p.outputs; i++) {
            std::string first;
            bool tiled = std::string(name) == "host_tiled";
            int n = count_mismatches(ref[i], got[i], first, tiled ? p.tiled_rel : 0, tiled ? p.tiled_scale : 0);
            INFO("output " << i << ": first mismatch at " << first);
            CHECK(n == 0);
        }
    }
}

}  // namespace

TEST_CASE("generator: the pointwise fusion patterns' schedules agree", "[generator][patterns]") {
    auto ad = [](auto f) { return Multi([=](const auto &b) { return f(b[0], b[1], b[2], b[3], b[4], b[5]); }); };
    check_agree({"forward_ad", ad(forward_ad_unfused), ad(forward_ad_fused), ad(forward_ad_host_tiled), {2, 2, 2, 2}, 2},
                -2, 2);
    auto users = [](auto f) { return Multi([=](const auto &b) { return f(b[0], b[1], 0.5f, -2.0f, b[2], b[3]); }); };
    check_agree({"many_users", users(many_users_unfused), users(many_users_fused), users(many_users_host_tiled),
                 {2, 2}, 2},
                -2, 2);
    auto gelu = [](auto f) { return Multi([=](const auto &b) { return f(b[0], b[1], b[2]); }); };
    check_agree({"bias_gelu", gelu(bias_gelu_unfused), gelu(bias_gelu_fused), gelu(bias_gelu_host_tiled), {2, 1}, 1},
                -4, 4);
}

TEST_CASE("generator: the row fusion patterns' schedules agree", "[generator][patterns]") {
    auto ln = [](auto f) { return Multi([=](const auto &b) { return f(b[0], b[1], b[2], 1e-5f, b[3]); }); };
    check_agree({"layernorm", ln(layernorm_unfused), ln(layernorm_fused), ln(layernorm_host_tiled), {2, 1, 1}, 1, 1e-5, 1},
                -3, 5);
    auto one = [](auto f) { return Multi([=](const auto &b) { return f(b[0], b[1]); }); };
    check_agree({"softmax", one(softmax_unfused), one(softmax_fused), one(softmax_host_tiled), {2}, 1, 1e-5}, -10, 10);
    check_agree({"subtract_mean", one(subtract_mean_unfused), one(subtract_mean_fused), one(subtract_mean_host_tiled),
                 {2}, 1},
                -3, 5);
}

TEST_CASE("generator: the fusion patterns compute what they say", "[generator][patterns]") {
    // One row of four values through each row pattern, against the formulas.
    Buffer<float> in(4, 1), gamma(4), beta(4), out(4, 1);
    const float v[4] = {1, 2, 3, 6};  // mean 3, variance 3.5
    for (int x = 0; x < 4; x++) {
        in(x, 0) = v[x];
        gamma(x) = 2.0f;
        beta(x) = (float)x;
    }
    REQUIRE(layernorm_unfused(in.raw_buffer(), gamma.raw_buffer(), beta.raw_buffer(), 0.0f, out.raw_buffer()) == 0);
    for (int x = 0; x < 4; x++) CHECK(out(x, 0) == Approx((v[x] - 3) / std::sqrt(3.5) * 2 + x));
    REQUIRE(softmax_unfused(in.raw_buffer(), out.raw_buffer()) == 0);
    double total = std::exp(1.0) + std::exp(2.0) + std::exp(3.0) + std::exp(6.0);
    for (int x = 0; x < 4; x++) CHECK(out(x, 0) == Approx(std::exp((double)v[x]) / total));
    REQUIRE(subtract_mean_unfused(in.raw_buffer(), out.raw_buffer()) == 0);
    for (int x = 0; x < 4; x++) CHECK(out(x, 0) == v[x] - 3);
    Buffer<float> bias(4);
    bias.fill(1.0f);
    REQUIRE(bias_gelu_unfused(in.raw_buffer(), bias.raw_buffer(), out.raw_buffer()) == 0);
    for (int x = 0; x < 4; x++) {
        double b = v[x] + 1;
        CHECK(out(x, 0) == Approx(0.5 * b * (1 + std::tanh(std::sqrt(2 / M_PI) * (b + 0.044715 * b * b * b)))));
    }
}
