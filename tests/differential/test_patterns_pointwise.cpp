// The pointwise fusion patterns against Halide 14, each under every one of
// its schedule files (see patterns.h): elementwise_chain (softplus,
// tanh(a x + b)), forward_ad (a product and its tangent), many_users (one
// producer, two consumers) and bias_gelu.
//
// Tolerances: the multiply/add patterns compute the same IEEE operations in
// the same order on both sides (Halide with strict_float: no FMA
// contraction), so they must agree exactly. The transcendental ones differ
// only by the libraries' exp/log/tanh: Halide 14 uses its own polynomial
// approximations for exp and log and the C library's tanh; Kiln its own for
// all three (runtime/kiln_vector_math.h: within 1, 2 and 2.5 ulp). Halide's log is accurate in
// absolute rather than relative terms near 1, so softplus of a negative
// input (log(1 + e^-4) = 0.018) is off by up to 6e-6 relative. They are
// held to a relative error of 1e-5 — about 80 ulps of float32: above what
// the libraries' approximations explain, far below a wrong formula.
#include "patterns.h"

using HF = Halide::Func;
using HV = Halide::Var;
using kd::kSchedules;

TEST_CASE("patterns: elementwise_chain softplus and tanh_affine, every schedule", "[patterns][pointwise]") {
    for (const char *variant : {"softplus", "tanh_affine"}) {
        bool softplus = std::string(variant) == "softplus";
        kd::PatternCase c{"elementwise_chain", {std::string("variant=") + variant}, {{"a", 0.75f}, {"b", -0.5f}}};
        c.tolerance = 1e-5;
        kd::check_pattern(c, kSchedules, [&](const kiln::ScheduleFile &file) {
            kd::HalidePattern h;
            Halide::ImageParam input(Halide::Float(32), 2, "input");
            Halide::Param<float> a("a"), b("b");
            HV x("x"), y("y");
            HF stage1("stage1"), stage2("stage2"), output("output");
            if (softplus) {
                stage1(x, y) = exp(input(x, y));
                stage2(x, y) = stage1(x, y) + 1.0f;
                output(x, y) = log(stage2(x, y));
            } else {
                stage1(x, y) = a * input(x, y);
                stage2(x, y) = stage1(x, y) + b;
                output(x, y) = tanh(stage2(x, y));
            }
            kd::halide_apply(file, {{"stage1", stage1}, {"stage2", stage2}, {"output", output}});
            h.pipeline = Halide::Pipeline(output);
            h.images = {{"input", input}};
            h.scalars = {{"a", a}, {"b", b}};
            return h;
        });
    }
}

TEST_CASE("patterns: forward_ad, the product rule, every schedule", "[patterns][pointwise]") {
    kd::PatternCase c{"forward_ad"};
    c.tolerance = 0;  // products and a sum, in the same order on both sides
    kd::check_pattern(c, {"unfused", "fused", "horizontal", "host_tiled"}, [](const kiln::ScheduleFile &file) {
        kd::HalidePattern h;
        Halide::ImageParam u(Halide::Float(32), 2, "u"), du(Halide::Float(32), 2, "du"),
            v(Halide::Float(32), 2, "v"), dv(Halide::Float(32), 2, "dv");
        HV x("x"), y("y");
        HF z("z"), dz("dz"), du_v("du_v"), u_dv("u_dv");
        z(x, y) = u(x, y) * v(x, y);
        du_v(x, y) = du(x, y) * v(x, y);
        u_dv(x, y) = u(x, y) * dv(x, y);
        dz(x, y) = du_v(x, y) + u_dv(x, y);
        kd::halide_apply(file, {{"z", z}, {"dz", dz}, {"du_v", du_v}, {"u_dv", u_dv}});
        h.pipeline = Halide::Pipeline({z, dz});
        h.images = {{"u", u}, {"du", du}, {"v", v}, {"dv", dv}};
        return h;
    });
}

namespace {

// many_users in Halide under `file` (horizontal.sched's compute_with too).
kd::HalidePattern many_users_halide(const kiln::ScheduleFile &file) {
    kd::HalidePattern h;
    Halide::ImageParam u(Halide::Float(32), 2, "u"), v(Halide::Float(32), 2, "v");
    Halide::Param<float> b("b"), c("c");
    HV x("x"), y("y");
    HF t("t"), z1("z1"), z2("z2");
    t(x, y) = u(x, y) * v(x, y);
    z1(x, y) = t(x, y) + b;
    z2(x, y) = t(x, y) - c;
    kd::halide_apply(file, {{"t", t}, {"z1", z1}, {"z2", z2}});
    h.pipeline = Halide::Pipeline({z1, z2});
    h.images = {{"u", u}, {"v", v}};
    h.scalars = {{"b", b}, {"c", c}};
    return h;
}

}  // namespace

TEST_CASE("patterns: many_users, recompute or materialize the shared producer", "[patterns][pointwise]") {
    kd::PatternCase c{"many_users", {}, {{"b", 0.25f}, {"c", -1.5f}}};
    c.tolerance = 0;
    kd::check_pattern(c, {"unfused", "fused", "recompute", "horizontal", "host_tiled"},
                      [](const kiln::ScheduleFile &file) { return many_users_halide(file); });
}

TEST_CASE("patterns: bias_gelu, every schedule", "[patterns][pointwise]") {
    kd::PatternCase c{"bias_gelu"};
    c.tolerance = 1e-5;  // tanh: see the top of the file
    c.scale = 1e-3;      // GELU is near 0 for large negative inputs: compare absolutely there
    kd::check_pattern(c, kSchedules, [](const kiln::ScheduleFile &file) {
        kd::HalidePattern h;
        Halide::ImageParam input(Halide::Float(32), 2, "input"), bias(Halide::Float(32), 1, "bias");
        HV x("x"), y("y");
        HF biased("biased"), output("output");
        biased(x, y) = input(x, y) + bias(x);
        Halide::Expr v = biased(x, y);
        output(x, y) = 0.5f * v * (1.0f + tanh(0.7978845608f * (v + 0.044715f * (v * v * v))));
        kd::halide_apply(file, {{"biased", biased}, {"output", output}});
        h.pipeline = Halide::Pipeline(output);
        h.images = {{"input", input}, {"bias", bias}};
        return h;
    });
}

