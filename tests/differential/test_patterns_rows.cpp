// The row-reduction fusion patterns against Halide 14, each under every one
// of its schedule files (see patterns.h): layernorm, softmax and
// subtract_mean (a reduction, then a broadcast).
//
// Tolerances: both sides sum a row in the same order, so sums, means and
// variances agree exactly; the differences come from the libraries' exp
// (Halide 14's own approximation, a few ulps off; Kiln's is the C
// library's), which softmax uses. Every pattern is held to a relative error
// of 1e-5 (about 80 ulps of float32). layernorm and subtract_mean subtract
// nearly equal numbers, so their outputs near 0 are compared absolutely
// against the scale of the data (1).
#include "patterns.h"

using HF = Halide::Func;
using HV = Halide::Var;
using kd::kSchedules;

TEST_CASE("patterns: layernorm, every schedule", "[patterns][rows]") {
    kd::PatternCase c{"layernorm", {}, {{"epsilon", 1e-5f}}};
    c.scale = 1;
    kd::check_pattern(c, kSchedules, [](const kiln::ScheduleFile &file) {
        kd::HalidePattern h;
        Halide::ImageParam input(Halide::Float(32), 2, "input"), gamma(Halide::Float(32), 1, "gamma"),
            beta(Halide::Float(32), 1, "beta");
        Halide::Param<float> epsilon("epsilon");
        HV x("x"), y("y");
        Halide::RDom r(input.dim(0).min(), input.dim(0).extent(), "r");
        Halide::Expr width = Halide::cast<float>(input.dim(0).extent());
        HF sum("sum"), mean("mean"), sum_sq("sum_sq"), inv_std("inv_std"), normalized("normalized"), output("output");
        sum(y) = 0.0f;
        sum(y) += input(r, y);
        mean(y) = sum(y) / width;
        Halide::Expr d = input(r, y) - mean(y);
        sum_sq(y) = 0.0f;
        sum_sq(y) += d * d;
        inv_std(y) = 1.0f / sqrt(sum_sq(y) / width + epsilon);
        normalized(x, y) = (input(x, y) - mean(y)) * inv_std(y);
        output(x, y) = normalized(x, y) * gamma(x) + beta(x);
        kd::halide_apply(file,
                         {{"sum", sum}, {"mean", mean}, {"sum_sq", sum_sq}, {"inv_std", inv_std},
                          {"normalized", normalized}, {"output", output}},
                         {{"r", r.x}});
        h.pipeline = Halide::Pipeline(output);
        h.images = {{"input", input}, {"gamma", gamma}, {"beta", beta}};
        h.scalars = {{"epsilon", epsilon}};
        return h;
    });
}

TEST_CASE("patterns: softmax, every schedule", "[patterns][rows]") {
    kd::PatternCase c{"softmax"};
    c.lo = -10;
    c.hi = 10;  // exp of the shifted values spans e^-20 to 1
    kd::check_pattern(c, {"unfused", "fused", "recompute", "host_tiled"}, [](const kiln::ScheduleFile &file) {
        kd::HalidePattern h;
        Halide::ImageParam input(Halide::Float(32), 2, "input");
        HV x("x"), y("y");
        Halide::RDom r(input.dim(0).min(), input.dim(0).extent(), "r");
        HF row_max("row_max"), exps("exps"), row_sum("row_sum"), output("output");
        row_max(y) = Halide::Float(32).min();
        row_max(y) = max(row_max(y), input(r, y));
        exps(x, y) = exp(input(x, y) - row_max(y));
        row_sum(y) = 0.0f;
        row_sum(y) += exps(r, y);
        output(x, y) = exps(x, y) / row_sum(y);
        kd::halide_apply(file, {{"row_max", row_max}, {"exps", exps}, {"row_sum", row_sum}, {"output", output}},
                         {{"r", r.x}});
        h.pipeline = Halide::Pipeline(output);
        h.images = {{"input", input}};
        return h;
    });
}

// The online algorithm: (m, l) as one Tuple update. Halide runs without
// StrictFloat here (its StrictFloat target gets Tuple updates wrong in
// Halide 14: off by 25% on this one), so it may contract l * a + b into an
// FMA; with its exp a few ulps off (see above), the 1e-5 bound holds.
TEST_CASE("patterns: softmax, online algorithm, every schedule", "[patterns][rows][online]") {
    kd::PatternCase c{"softmax", {"algorithm=online"}};
    c.strict_float = false;
    c.lo = -10;
    c.hi = 10;
    kd::check_pattern(c, {"online/unfused", "online/fused", "online/host_tiled"}, [](const kiln::ScheduleFile &file) {
        kd::HalidePattern h;
        Halide::ImageParam input(Halide::Float(32), 2, "input");
        HV x("x"), y("y");
        Halide::RDom r(input.dim(0).min(), input.dim(0).extent(), "r");
        HF stats("stats"), output("output");
        stats(y) = Halide::Tuple(Halide::Float(32).min(), 0.0f);
        Halide::Expr m = stats(y)[0], l = stats(y)[1], v = input(r, y), m2 = max(m, v);
        stats(y) = Halide::Tuple(m2, l * exp(m - m2) + exp(v - m2));
        output(x, y) = exp(input(x, y) - stats(y)[0]) / stats(y)[1];
        kd::halide_apply(file, {{"stats", stats}, {"output", output}}, {{"r", r.x}});
        h.pipeline = Halide::Pipeline(output);
        h.images = {{"input", input}};
        return h;
    });
}

// The online algorithm against the two-pass one, both in Kiln: the same
// probabilities up to rounding (the online sum is rescaled as the maximum
// grows; relative error at most 1e-5).
TEST_CASE("patterns: softmax, online equals two-pass", "[patterns][rows][online]") {
    kd::PatternCase online{"softmax", {"algorithm=online"}}, two_pass{"softmax"};
    kiln::ScheduleFile fused = kiln::ScheduleFile::load(kd::schedule_path("softmax", "online/fused"));
    kiln::ScheduleFile unfused = kiln::ScheduleFile::load(kd::schedule_path("softmax", "unfused"));
    kd::KilnGenerator a(online, fused), b(two_pass, unfused);
    for (auto [w, hgt] : std::vector<std::pair<int, int>>{{37, 19}, {1000, 17}}) {
        kiln::Buffer<float> in = kd::random_buffer({w, hgt}, -10, 10, 7);
        a.set("input", in);
        b.set("input", in);
        kd::Out<float> o("output", {w, hgt});
        a.realize({o.kiln.raw_buffer()});
        b.realize({o.halide.raw_buffer()});  // the two-pass result in the "reference" slot
        kd::compare_relative(o, 1e-5, 0);
    }
}

TEST_CASE("patterns: subtract_mean, a reduction then a broadcast, every schedule", "[patterns][rows]") {
    kd::PatternCase c{"subtract_mean"};
    c.scale = 1;
    c.tolerance = 0;  // the same sum and division on both sides
    kd::check_pattern(c, kSchedules, [](const kiln::ScheduleFile &file) {
        kd::HalidePattern h;
        Halide::ImageParam input(Halide::Float(32), 2, "input");
        HV x("x"), y("y");
        Halide::RDom r(input.dim(0).min(), input.dim(0).extent(), "r");
        HF row_sum("row_sum"), mean("mean"), output("output");
        row_sum(y) = 0.0f;
        row_sum(y) += input(r, y);
        mean(y) = row_sum(y) / Halide::cast<float>(input.dim(0).extent());
        output(x, y) = input(x, y) - mean(y);
        kd::halide_apply(file, {{"row_sum", row_sum}, {"mean", mean}, {"output", output}}, {{"r", r.x}});
        h.pipeline = Halide::Pipeline(output);
        h.images = {{"input", input}};
        return h;
    });
}
