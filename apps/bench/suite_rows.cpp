// The row-wise and multi-output cases of apps/bench: layernorm, softmax,
// bias + GELU, x - mean(x), a producer with two users and the forward-mode
// AD chain. The Halide programs are the generators' algorithms under the
// schedules of schedules/<generator>/host_tiled.sched.
#include "anchors.h"
#include "grad_halide.h"
#include "case_util.h"
#include "suite.h"

namespace kiln_bench {

namespace {

using namespace Halide;

struct Shape {
    int cols, rows;
    std::string text() const { return std::to_string(rows) + "x" + std::to_string(cols); }
};

Shape row_shape(const SuiteOptions &o) { return o.quick ? Shape{256, 512} : Shape{1024, 4096}; }

// Each Halide program below is unscheduled if `scheduled` is false (for
// Halide's autoschedulers: halide_auto.h).

// The schedule every row-wise generator's host_tiled.sched gives its output.
void schedule_rows(Func output, int rows_per_task) {
    Var x = output.args()[0], y = output.args()[1], yo("yo"), yi("yi");
    output.split(y, yo, yi, rows_per_task).parallel(yo).vectorize(x, 8);
}

// The row reductions of layernorm and softmax host_tiled.sched, n =
// natural_vector_size:
//   f.update(0): split(r, ro, ri, n*4) rfactor(ri, u, f_lanes)
//   f_lanes: compute_at(output, yi) vectorize(u, n)
//   f_lanes.update(0): reorder(u, ro) vectorize(u, n) unroll(u)
void rfactor_rows(Func f, RDom r, Func output, Var yi) {
    const int n = get_host_target().natural_vector_size<float>();
    RVar ro("ro"), ri("ri");
    Var u("u");
    Func lanes = f.update(0).split(r.x, ro, ri, n * 4).rfactor(ri, u);
    lanes.compute_at(output, yi).vectorize(u, n);
    lanes.update(0).reorder(u, ro).vectorize(u, n).unroll(u);
}

Pipeline halide_layernorm(Buffer<float> in, Buffer<float> gamma, Buffer<float> beta, float eps, bool scheduled) {
    Var x("x"), y("y"), yo("yo"), yi("yi");
    auto [r, sum, mean, sum_sq, inv_std, normalized, output] = halide_layernorm_algorithm(in, gamma, beta, eps);
    if (!scheduled) return Pipeline(output);
    output.split(y, yo, yi, 8).parallel(yo).vectorize(x, get_host_target().natural_vector_size<float>());
    for (Func f : {sum, mean, sum_sq, inv_std}) f.compute_at(output, yi);
    rfactor_rows(sum, r, output, yi);
    rfactor_rows(sum_sq, r, output, yi);
    return Pipeline(output);
}

Pipeline halide_softmax(Buffer<float> in, bool scheduled) {
    Var x("x"), y("y"), yo("yo"), yi("yi");
    auto [r, row_max, exps, row_sum, output] = halide_softmax_algorithm(in);
    if (!scheduled) return Pipeline(output);
    const int n = get_host_target().natural_vector_size<float>();
    output.split(y, yo, yi, 8).parallel(yo).vectorize(x, n);
    row_max.compute_at(output, yi);
    exps.compute_at(output, yi).vectorize(x, n);
    row_sum.compute_at(output, yi);
    rfactor_rows(row_max, r, output, yi);
    rfactor_rows(row_sum, r, output, yi);
    return Pipeline(output);
}

Pipeline halide_bias_gelu(Buffer<float> in, Buffer<float> bias, bool scheduled) {
    Var x("x"), y("y");
    Func biased("biased"), output("output");
    biased(x, y) = in(x, y) + bias(x);
    Expr v = biased(x, y);
    output(x, y) = 0.5f * v * (1.0f + tanh(0.7978845608f * (v + 0.044715f * (v * v * v))));
    if (scheduled) schedule_rows(output, 16);
    return Pipeline(output);
}

Pipeline halide_subtract_mean(Buffer<float> in, bool scheduled) {
    Var x("x"), y("y"), yo("yo"), yi("yi");
    RDom r(0, in.width(), "r");
    Func row_sum("row_sum"), mean("mean"), output("output");
    row_sum(y) = 0.0f;
    row_sum(y) += in(r, y);
    mean(y) = row_sum(y) / cast<float>(in.width());
    output(x, y) = in(x, y) - mean(y);
    if (!scheduled) return Pipeline(output);
    output.split(y, yo, yi, 8).parallel(yo).vectorize(x, 8);
    row_sum.compute_at(output, yi);
    mean.compute_at(output, yi);
    return Pipeline(output);
}

Pipeline halide_many_users(Buffer<float> u, Buffer<float> v, float b, float c, bool scheduled) {
    Var x("x"), y("y");
    Func t("t"), z1("z1"), z2("z2");
    t(x, y) = u(x, y) * v(x, y);
    z1(x, y) = t(x, y) + b;
    z2(x, y) = t(x, y) - c;
    if (scheduled) schedule_rows(z1, 16), schedule_rows(z2, 16);
    return Pipeline({z1, z2});
}

Pipeline halide_forward_ad(Buffer<float> u, Buffer<float> du, Buffer<float> v, Buffer<float> dv, bool scheduled) {
    Var x("x"), y("y");
    Func z("z"), du_v("du_v"), u_dv("u_dv"), dz("dz");
    z(x, y) = u(x, y) * v(x, y);
    du_v(x, y) = du(x, y) * v(x, y);
    u_dv(x, y) = u(x, y) * dv(x, y);
    dz(x, y) = du_v(x, y) + u_dv(x, y);
    if (scheduled) schedule_rows(z, 16), schedule_rows(dz, 16);
    return Pipeline({z, dz});
}

// Kiln then Halide on the same inputs; every output checked against Kiln's.
CaseResult kiln_and_halide(const SuiteOptions &o, const std::string &name, KilnRunner &k,
                           const std::vector<FBuf *> &outs, const HalideTwin &halide, double bytes, double tolerance) {
    CaseResult c;
    c.name = name;
    c.schedule = k.schedule_path();
    c.bytes = bytes;
    c.tolerance = tolerance;
    c.entries.push_back(run_kiln(k, outs, o.runs));
    std::vector<FBuf> h_outs;
    for (FBuf *b : outs) h_outs.push_back(zeros_like(*b));
    std::vector<FBuf *> h_ptrs;
    for (FBuf &b : h_outs) h_ptrs.push_back(&b);
    c.entries.push_back(run_halide(halide, h_ptrs, outs, o));
    check_against(c.entries.back(), h_ptrs, outs);
    return c;
}

}  // namespace

HalideLayernorm halide_layernorm_algorithm(const Buffer<float> &in, const Buffer<float> &gamma,
                                           const Buffer<float> &beta, float eps) {
    Var x("x"), y("y");
    HalideLayernorm s{RDom(0, in.width(), "r"), Func("sum"),       Func("mean"),       Func("sum_sq"),
                      Func("inv_std"),          Func("normalized"), Func("output")};
    Expr width = cast<float>(in.width());
    s.sum(y) = 0.0f;
    s.sum(y) += in(s.r, y);
    s.mean(y) = s.sum(y) / width;
    Expr d = in(s.r, y) - s.mean(y);
    s.sum_sq(y) = 0.0f;
    s.sum_sq(y) += d * d;
    s.inv_std(y) = 1.0f / sqrt(s.sum_sq(y) / width + eps);
    s.normalized(x, y) = (in(x, y) - s.mean(y)) * s.inv_std(y);
    s.output(x, y) = s.normalized(x, y) * gamma(x) + beta(x);
    return s;
}

HalideSoftmax halide_softmax_algorithm(const Buffer<float> &in) {
    Var x("x"), y("y");
    HalideSoftmax s{RDom(0, in.width(), "r"), Func("row_max"), Func("exps"), Func("row_sum"), Func("output")};
    s.row_max(y) = Float(32).min();
    s.row_max(y) = max(s.row_max(y), in(s.r, y));
    s.exps(x, y) = exp(in(x, y) - s.row_max(y));
    s.row_sum(y) = 0.0f;
    s.row_sum(y) += s.exps(s.r, y);
    s.output(x, y) = s.exps(x, y) / s.row_sum(y);
    return s;
}

CaseResult bench_layernorm(const SuiteOptions &o) {
    const Shape s = row_shape(o);
    FBuf in = random_buffer({s.cols, s.rows}, -2, 2, 11), gamma = random_buffer({s.cols}, 0.5, 1.5, 12),
         beta = random_buffer({s.cols}, -0.5, 0.5, 13), out(s.cols, s.rows);
    KilnRunner k("layernorm", {}, "host_tiled");
    k.bind("input", in), k.bind("gamma", gamma), k.bind("beta", beta);
    k.set("epsilon", "1e-5");
    // Three libraries, three summation orders: 1e-4 relative.
    CaseResult c = kiln_and_halide(
        o, "layernorm " + s.text(), k, {&out},
        [&](bool sc) { return halide_layernorm(halide_view(in), halide_view(gamma), halide_view(beta), 1e-5f, sc); },
        8.0 * s.cols * s.rows,
        1e-4);
    DnnlLayerNorm dnnl(s.rows, s.cols, 1e-5f);
    FBuf d_out = zeros_like(out);
    c.entries.push_back(run_anchor(
        "onednn layer_norm", [&] { dnnl.run(in.data(), gamma.data(), beta.data(), d_out.data()); }, o.runs));
    check_against(c.entries.back(), {&d_out}, {&out});
    return c;
}

CaseResult bench_softmax(const SuiteOptions &o) {
    const Shape s = row_shape(o);
    FBuf in = random_buffer({s.cols, s.rows}, -8, 8, 14), out(s.cols, s.rows);
    KilnRunner k("softmax", {}, "host_tiled");
    k.bind("input", in);
    CaseResult c = kiln_and_halide(o, "softmax " + s.text(), k, {&out}, [&](bool sc) { return halide_softmax(halide_view(in), sc); },
                                   8.0 * s.cols * s.rows, 1e-4);
    DnnlSoftmax dnnl(s.rows, s.cols);
    FBuf d_out = zeros_like(out);
    c.entries.push_back(run_anchor("onednn softmax", [&] { dnnl.run(in.data(), d_out.data()); }, o.runs));
    check_against(c.entries.back(), {&d_out}, {&out});
    return c;
}

CaseResult bench_bias_gelu(const SuiteOptions &o) {
    const Shape s = row_shape(o);
    FBuf in = random_buffer({s.cols, s.rows}, -4, 4, 15), bias = random_buffer({s.cols}, -1, 1, 16),
         out(s.cols, s.rows);
    KilnRunner k("bias_gelu", {}, "host_tiled");
    k.bind("input", in), k.bind("bias", bias);
    CaseResult c = kiln_and_halide(o, "bias+gelu " + s.text(), k, {&out},
                                   [&](bool sc) { return halide_bias_gelu(halide_view(in), halide_view(bias), sc); }, 8.0 * s.cols * s.rows, 1e-5);
    // The epilogue pass a BLAS user writes after sgemm, in place on a copy.
    FBuf e_out = zeros_like(out);
    c.entries.push_back(run_anchor(
        "c++ epilogue pass",
        [&] {
            e_out.copy_from(in);
            bias_activation_pass(s.rows, s.cols, bias.data(), Activation::GeluTanh, e_out.data());
        },
        o.runs, "copy + in-place bias+GELU loop (OpenMP, libm tanh)"));
    check_against(c.entries.back(), {&e_out}, {&out});
    return c;
}

CaseResult bench_subtract_mean(const SuiteOptions &o) {
    const Shape s = row_shape(o);
    FBuf in = random_buffer({s.cols, s.rows}, -2, 2, 17), out(s.cols, s.rows);
    KilnRunner k("subtract_mean", {}, "host_tiled");
    k.bind("input", in);
    return kiln_and_halide(o, "x-mean(x) " + s.text(), k, {&out}, [&](bool sc) { return halide_subtract_mean(halide_view(in), sc); },
                           8.0 * s.cols * s.rows, 1e-5);
}

CaseResult bench_many_users(const SuiteOptions &o) {
    const Shape s = row_shape(o);
    FBuf u = random_buffer({s.cols, s.rows}, -2, 2, 18), v = random_buffer({s.cols, s.rows}, -2, 2, 19),
         z1(s.cols, s.rows), z2(s.cols, s.rows);
    KilnRunner k("many_users", {}, "host_tiled");
    k.bind("u", u), k.bind("v", v);
    k.set("b", "0.5"), k.set("c", "0.25");
    return kiln_and_halide(o, "t=u*v; t+b, t-c " + s.text(), k, {&z1, &z2},
                           [&](bool sc) { return halide_many_users(halide_view(u), halide_view(v), 0.5f, 0.25f, sc); }, 16.0 * s.cols * s.rows,
                           1e-5);
}

CaseResult bench_forward_ad(const SuiteOptions &o) {
    const Shape s = row_shape(o);
    FBuf u = random_buffer({s.cols, s.rows}, -2, 2, 20), du = random_buffer({s.cols, s.rows}, -2, 2, 21),
         v = random_buffer({s.cols, s.rows}, -2, 2, 22), dv = random_buffer({s.cols, s.rows}, -2, 2, 23),
         z(s.cols, s.rows), dz(s.cols, s.rows);
    KilnRunner k("forward_ad", {}, "host_tiled");
    k.bind("u", u), k.bind("du", du), k.bind("v", v), k.bind("dv", dv);
    return kiln_and_halide(o, "forward AD " + s.text(), k, {&z, &dz},
                           [&](bool sc) { return halide_forward_ad(halide_view(u), halide_view(du), halide_view(v), halide_view(dv), sc); },
                           24.0 * s.cols * s.rows, 1e-5);
}

}  // namespace kiln_bench
