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
