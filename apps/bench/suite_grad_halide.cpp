// Halide 14's propagate_adjoints on the backward cases (grad_halide.h).
//
// Halide names the adjoints after the forward Funcs: d(f) is
// f_0_d_def__ (the adjoint of f's pure definition), d(f, 0) is
// f_1_d_def__ (of its first update), d(buffer) is buffer_d__. Kiln's
// f_adjoint is the first for a pure f and the second for a reduction; the
// schedules below say which host_tiled.sched line each one translates.
#include "grad_halide.h"

#include <cstdio>
#include <functional>
#include <stdexcept>

#include "halide_auto.h"

namespace kiln_bench {

namespace {

using namespace Halide;

int lanes() { return kiln_halide::jit_target().natural_vector_size<float>(); }

// The gradients a Halide gradient pipeline realizes, in Kiln's output
// order, and what of host_tiled.sched their schedule leaves out.
struct Grads {
    std::vector<Func> funcs;
    std::string untranslated;
};
// Defines the forward algorithm and differentiates it; schedules the
// adjoints as host_tiled.sched if `scheduled`, else leaves them all
// unscheduled (for the autoscheduler).
using BuildGrads = std::function<Grads(bool scheduled)>;

// The Func whose copy f's pure definition is: Halide's d(buffer) copies the
// adjoint of the lambda a boundary condition wraps the buffer in.
Func copied(const Func &f) {
    const Internal::Call *call = f.value().as<Internal::Call>();
    if (!call || !call->func.defined()) throw std::logic_error(f.name() + " is not a copy of a Func");
    return Func(Internal::Function(call->func));
}

// A copy of `adjoint` (a sum over one RDom) computed per register block, as
// the host_tiled.sched of gemm_grad (d_A, d_B) and conv_bn_relu_grad
// (d_weights, d_input) computes them, n = natural_vector_size:
//   copy: split(x, xo, xi, n*2) split(y, yo, yi, n*3/4) reorder(xi, yi, <outer>)
//         vectorize(xi, n) unroll(xi) unroll(yi) parallel(<parallel_var>)
//   adjoint: compute_at(copy, <at>) vectorize(x, n) unroll(x) unroll(y)
//   adjoint.update(0): reorder(x, y, <its RVars>) vectorize(x, n) unroll(x) unroll(y)
// The copy's Vars are x, y, z, w; `outer` lists its loops outside a block,
// innermost first. The schedules' specialize() conditions hold at the
// bench's sizes, so this is their specialized branch (no fallback).
Func blocked_copy(Func adjoint, const char *name, const std::vector<const char *> &outer, const char *parallel_var,
                  const char *at) {
    const int n = lanes();
    std::vector<Var> args = {Var("x"), Var("y"), Var("z"), Var("w")};
    args.resize(adjoint.dimensions());
    Func copy(name);
    copy(args) = adjoint(std::vector<Expr>(args.begin(), args.end()));
    Var xi("xi"), yi("yi");
    copy.split(args[0], Var("xo"), xi, n * 2).split(args[1], Var("yo"), yi, n * 3 / 4);
    std::vector<VarOrRVar> order = {xi, yi};
    for (const char *v : outer) order.push_back(Var(v));
    copy.reorder(order).vectorize(xi, n).unroll(xi).unroll(yi).parallel(Var(parallel_var));
    std::vector<Var> a = adjoint.args();
    adjoint.compute_at(copy, Var(at)).vectorize(a[0], n).unroll(a[0]).unroll(a[1]);
    std::vector<VarOrRVar> inner = {a[0], a[1]};
    for (const RVar &r : adjoint.rvars(0)) inner.push_back(r);
    adjoint.update(0).reorder(inner).vectorize(a[0], n).unroll(a[0]).unroll(a[1]);
    return copy;
}

// Appends "halide backward" and "halide backward li2018" to c, each checked
// against Kiln's gradients within `tolerance` (Halide sums the adjoints'
// terms in other orders than Kiln: see the callers).
void add_rows(const SuiteOptions &o, CaseResult &c, const BuildGrads &build, const std::vector<FBuf *> &kiln_grads,
              double tolerance) {
    for (bool li2018 : {false, true}) {
        const std::string system = li2018 ? "halide backward li2018" : "halide backward";
        try {
            Grads g = build(!li2018);
            std::string note;
            if (li2018) {
                for (size_t i = 0; i < g.funcs.size(); i++) {
                    Region estimates;
                    for (int d = 0; d < kiln_grads[i]->dimensions(); d++)
                        estimates.emplace_back(0, kiln_grads[i]->dim(d).extent());
                    g.funcs[i].set_estimates(estimates);
                }
                char text[96];
                std::snprintf(text, sizeof text, "Li2018 autoschedule %.1f ms (not in compile ms)",
                              halide_autoschedule(Pipeline(g.funcs), "Li2018", o.threads));
                note = text;
            } else {
                note = g.untranslated.empty() ? "host_tiled.sched translated whole"
                                              : "host_tiled.sched but " + g.untranslated;
            }
            std::vector<FBuf> outs;
            for (FBuf *k : kiln_grads) outs.push_back(zeros_like(*k));
            std::vector<FBuf *> out_ptrs;
            for (FBuf &b : outs) out_ptrs.push_back(&b);
            Entry e = run_halide(Pipeline(g.funcs), out_ptrs, o.runs);
            e.system = system;
            e.note = note;
            e.same_work = false;
            e.tolerance = tolerance;
            check_against(e, out_ptrs, kiln_grads);
            c.entries.push_back(e);
        } catch (const Halide::Error &err) {
            std::printf("%s: no \"%s\" row: Halide 14: %s\n", c.name.c_str(), system.c_str(), err.what());
        }
    }
}

}  // namespace

void halide_blur3x3_grad(const SuiteOptions &o, CaseResult &c, FBuf &in, FBuf &d_out, FBuf &d_in) {
    Buffer<float> input = halide_view(in), seed = halide_view(d_out);
    auto build = [&](bool scheduled) {
        Var x("x"), y("y");
        Func clamped = BoundaryConditions::repeat_edge(input), blur_x("blur_x"), output("output");
        blur_x(x, y) = (clamped(x - 1, y) + clamped(x, y) + clamped(x + 1, y)) / 3;
        output(x, y) = (blur_x(x, y - 1) + blur_x(x, y) + blur_x(x, y + 1)) / 3;
        Derivative d = propagate_adjoints(output, seed);
        Func d_input = d(input);
        if (!scheduled) return Grads{{d_input}, ""};
        const int n = lanes();
        // input_im_repeat_edge_adjoint: compute_root() tile(_0, _1, xi, yi, 256, 32)
        //     vectorize(xi, natural_vector_size) parallel(_1)
        Func edge = d(clamped);
        Var ex = edge.args()[0], ey = edge.args()[1], xi("xi"), yi("yi");
        edge.compute_root().tile(ex, ey, xi, yi, 256, 32).vectorize(xi, n).parallel(ey);
        // blur_x_adjoint: compute_at(input_im_repeat_edge_adjoint, _0) vectorize(x, natural_vector_size)
        Func blur_x_adjoint = d(blur_x);
        blur_x_adjoint.compute_at(edge, ex).vectorize(blur_x_adjoint.args()[0], n);
        // input_adjoint: compute_root() vectorize(x, natural_vector_size) parallel(y)
        Func input_adjoint = copied(d_input);
        input_adjoint.compute_root().vectorize(input_adjoint.args()[0], n).parallel(input_adjoint.args()[1]);
        input_adjoint.update(0).unscheduled();
        // Its update scatters through the clamp: serial. (update(0).atomic()
        // split(r.y, ryo, ryi, 32) parallel(ryo) vectorize(r.x, n) is legal
        // but ran 1.5x slower at 4096^2: a compare-and-swap per element.)
        // d_input: vectorize(x, natural_vector_size) parallel(y)
        d_input.vectorize(d_input.args()[0], n).parallel(d_input.args()[1]);
        return Grads{{d_input},
                     "input_adjoint's update: Halide scatters the boundary condition's adjoint through the "
                     "clamp, serially (Kiln gathers the interior in parallel)"};
    };
    // At most 9 terms below 1 in each sum, added in other orders.
    add_rows(o, c, build, {&d_in}, 1e-5);
}

void halide_softplus_grad(const SuiteOptions &o, CaseResult &c, FBuf &in, FBuf &d_out, FBuf &d_in) {
    Buffer<float> input = halide_view(in), seed = halide_view(d_out);
    auto build = [&](bool scheduled) {
        Var x("x"), y("y"), yo("yo"), yi("yi");
        Func stage1("stage1"), stage2("stage2"), output("output");
        stage1(x, y) = exp(input(x, y));
        stage2(x, y) = stage1(x, y) + 1.0f;
        output(x, y) = log(stage2(x, y));
        Func d_input = propagate_adjoints(output, seed)(input);
        // d_input: split(y, yo, yi, 16) parallel(yo) vectorize(x, 8); the rest inlined.
        if (scheduled) d_input.split(d_input.args()[1], yo, yi, 16).parallel(yo).vectorize(d_input.args()[0], 8);
        return Grads{{d_input}, ""};
    };
    // No sums: the same few roundings, in other orders and contractions.
    add_rows(o, c, build, {&d_in}, 1e-5);
}

void halide_bias_gelu_grad(const SuiteOptions &o, CaseResult &c, FBuf &in, FBuf &bias, FBuf &d_out, FBuf &d_in,
                           FBuf &d_bias) {
    Buffer<float> input = halide_view(in), b = halide_view(bias), seed = halide_view(d_out);
    auto build = [&](bool scheduled) {
        Var x("x"), y("y"), yo("yo"), yi("yi");
        Func biased("biased"), output("output");
        biased(x, y) = input(x, y) + b(x);
        Expr v = biased(x, y);
        output(x, y) = 0.5f * v * (1.0f + tanh(0.7978845608f * (v + 0.044715f * (v * v * v))));
        Derivative d = propagate_adjoints(output, seed);
        Func d_input = d(input), d_b = d(b);
        if (!scheduled) return Grads{{d_input, d_b}, ""};
        const int n = lanes();
        Var xa = d_input.args()[0], ya = d_input.args()[1], yc("yc"), xo("xo"), xi("xi");
        // d_input: split(y, yo, yi, 16) split(yo, yc, yo, 8, GuardWithIf) parallel(yc)
        //     vectorize(x, natural_vector_size)
        d_input.split(ya, yo, yi, 16).split(yo, yc, yo, 8, TailStrategy::GuardWithIf).parallel(yc).vectorize(xa, n);
        // biased_adjoint: compute_at(d_input, yi) vectorize(x, natural_vector_size)
        // Not translatable: see bias_chunk below. It is computed at the root
        // in the same bands and chunks as d_input, a pass over memory that
        // host_tiled does not make.
        Func biased_adjoint = d(biased);
        Var bx = biased_adjoint.args()[0], by = biased_adjoint.args()[1];
        biased_adjoint.compute_root()
            .split(by, yo, yi, 16)
            .split(yo, yc, yo, 8, TailStrategy::GuardWithIf)
            .parallel(yc)
            .vectorize(bx, n);
        // d_bias: split(x, xo, xi, 16) parallel(xo) vectorize(xi)
        // bias_adjoint: compute_at(d_bias, xo)
        // bias_adjoint.update(0): split(bias_adjoint_r.x, rc, rr, 128) rfactor(rc, yc, bias_chunk)
        //     reorder(x, rc) vectorize(x)
        // Halide's d(b) is both: its pure stage and update run in d_bias's
        // loops, 16 columns per parallel iteration, where Kiln fills a
        // buffer of 16 (bias_adjoint) per iteration and copies it out.
        Var xb = d_b.args()[0];
        RVar rc("rc"), rr("rr");
        d_b.split(xb, xo, xi, 16).parallel(xo).vectorize(xi);
        Func bias_chunk = d_b.update(0).split(d_b.rvars(0)[0], rc, rr, 128).rfactor(rc, yc);
        d_b.update(0).split(xb, xo, xi, 16).reorder(xi, rc, xo).parallel(xo).vectorize(xi);
        // bias_chunk: compute_root() parallel(yc)
        // bias_chunk.update(0): split(rr, yo, yi, 16) reorder(x, yi, yo, yc)
        //     vectorize(x, natural_vector_size) parallel(yc) compute_with(d_input, x)
        // All but the compute_with: Halide 14 fuses loops of the same full
        // names only, and bias_chunk's row loops are named after d_b's RVar
        // (r$x.rr.yi) where d_input's are named after its Var (v1.yi), so
        // no renaming makes them match ("Invalid compute_with: names of dim
        // 1 ... do not match"). bias_chunk runs as a pass of its own over
        // biased_adjoint.
        Var xc = bias_chunk.args()[0];
        RVar ryo("yo"), ryi("yi");
        bias_chunk.compute_root().parallel(yc);
        bias_chunk.update(0)
            .split(rr, ryo, ryi, 16)
            .reorder(xc, ryi, ryo, yc)
            .vectorize(xc, n)
            .parallel(yc);
        return Grads{{d_input, d_b},
                     "bias_chunk's compute_with(d_input, x) (Halide fuses loops of the same names only), so "
                     "biased_adjoint is computed at the root, not per row of d_input"};
    };
    // d_bias sums a column of rows terms (4096) in another order.
    add_rows(o, c, build, {&d_in, &d_bias}, 1e-4);
}

void halide_softmax_grad(const SuiteOptions &o, CaseResult &c, FBuf &in, FBuf &d_out, FBuf &d_in) {
    Buffer<float> input = halide_view(in), seed = halide_view(d_out);
    auto build = [&](bool scheduled) {
        // Halide 14 rejects the max reduction's gradient ("Can't take the
        // gradients of row_max, which depend on intermediate values"), so
        // propagate_adjoints throws and no schedule is reached.
        Func d_input = propagate_adjoints(halide_softmax_algorithm(input).output, seed)(input);
        return Grads{{d_input}, scheduled ? "all of it (not written: Halide 14 rejected the algorithm)" : ""};
    };
    add_rows(o, c, build, {&d_in}, 1e-4);
}

void halide_layernorm_grad(const SuiteOptions &o, CaseResult &c, FBuf &in, FBuf &gamma, FBuf &beta, FBuf &d_out,
                           FBuf &d_in, FBuf &d_gamma, FBuf &d_beta) {
    Buffer<float> input = halide_view(in), g = halide_view(gamma), b = halide_view(beta), seed = halide_view(d_out);
    auto build = [&](bool scheduled) {
        Var y("y"), yo("yo"), yi("yi");
        auto [r, sum, mean, sum_sq, inv_std, normalized, output] = halide_layernorm_algorithm(input, g, b, 1e-5f);
        Derivative d = propagate_adjoints(output, seed);
        Func d_input = d(input), d_g = d(g), d_b = d(b);
        if (!scheduled) return Grads{{d_input, d_g, d_b}, ""};
        const int n = lanes();
        // sum, sum_sq: compute_root() parallel(y); mean, inv_std: compute_root()
        sum.compute_root().parallel(y).update(0).unscheduled();
        mean.compute_root();
        sum_sq.compute_root().parallel(y).update(0).unscheduled();
        inv_std.compute_root();
        // d_input: split(y, yo, yi, 8) parallel(yo) vectorize(x, natural_vector_size)
        d_input.split(d_input.args()[1], yo, yi, 8).parallel(yo).vectorize(d_input.args()[0], n);
        // normalized_adjoint: compute_at(d_input, yi) vectorize(x, natural_vector_size)
        Func normalized_adjoint = d(normalized);
        normalized_adjoint.compute_at(d_input, yi).vectorize(normalized_adjoint.args()[0], n);
        // inv_std_adjoint, sum_sq_adjoint, mean_adjoint, sum_adjoint: compute_at(d_input, yi)
        for (Func f : {d(inv_std), d(sum_sq, 0), d(mean), d(sum, 0)}) f.compute_at(d_input, yi);
        // gamma_adjoint, beta_adjoint: compute_root(); update(0): reorder(x, r.x)
        //     vectorize(x, natural_vector_size)
        for (Func f : {d_g, d_b}) f.compute_root().update(0).reorder(f.args()[0], f.rvars(0)[0]).vectorize(f.args()[0], n);
        return Grads{{d_input, d_g, d_b}, ""};
    };
    // Row sums of 1024 terms and column sums of 4096, in other orders.
    add_rows(o, c, build, {&d_in, &d_gamma, &d_beta}, 1e-4);
}

void halide_gemm_relu_grad(const SuiteOptions &o, CaseResult &c, FBuf &a, FBuf &b, FBuf &bias, FBuf &d_out,
                           FBuf &d_a, FBuf &d_b, FBuf &d_bias) {
    Buffer<float> A = halide_view(a), B = halide_view(b), bias_in = halide_view(bias), seed = halide_view(d_out);
    auto build = [&](bool scheduled) {
        Var x("x"), y("y");
        RDom k(0, A.width(), "k");
        Func matmul("matmul"), bias_add("bias_add"), output("output");
        matmul(x, y) = 0.0f;
        matmul(x, y) += A(k, y) * B(x, k);
        bias_add(x, y) = matmul(x, y) + bias_in(x);
        output(x, y) = max(bias_add(x, y), 0.0f);
        Derivative d = propagate_adjoints(output, seed);
        Func A_adjoint = d(A), B_adjoint = d(B), d_bias_f = d(bias_in);
        if (!scheduled) return Grads{{A_adjoint, B_adjoint, d_bias_f}, ""};
        const int n = lanes();
        // matmul: compute_root() vectorize(x, n) parallel(y)
        // matmul.update(0): reorder(x, k, y) vectorize(x, n, GuardWithIf) parallel(y)
        matmul.compute_root().vectorize(x, n).parallel(y);
        matmul.update(0).reorder(x, k, y).vectorize(x, n, TailStrategy::GuardWithIf).parallel(y);
        // matmul_adjoint: compute_root() vectorize(x, n) parallel(y)
        Func matmul_adjoint = d(matmul, 0);
        matmul_adjoint.compute_root().vectorize(matmul_adjoint.args()[0], n).parallel(matmul_adjoint.args()[1]);
        // d_A, d_B: register blocks (blocked_copy), the column panels (xo) in parallel.
        Func d_A = blocked_copy(A_adjoint, "d_A", {"yo", "xo"}, "xo", "yo"),
             d_B = blocked_copy(B_adjoint, "d_B", {"yo", "xo"}, "xo", "yo");
        // matmul_adjoint.in(B_adjoint): compute_at(d_B, xo)
        matmul_adjoint.in(B_adjoint).compute_at(d_B, Var("xo"));
        // bias_adjoint: compute_root(); update(0): reorder(x, r.x) vectorize(x, n, GuardWithIf)
        d_bias_f.compute_root()
            .update(0)
            .reorder(d_bias_f.args()[0], d_bias_f.rvars(0)[0])
            .vectorize(d_bias_f.args()[0], n, TailStrategy::GuardWithIf);
        return Grads{{d_A, d_B, d_bias_f},
                     "B.in(A_adjoint) and A.in(B_adjoint), the transposed copies (the adjoints read the Buffers A "
                     "and B themselves, which in() cannot wrap), and the specializations' fallbacks"};
    };
    // Sums of 512 products (and of 512 column terms for d_bias) in other orders.
    add_rows(o, c, build, {&d_a, &d_b, &d_bias}, 1e-4);
}

void halide_conv_bn_relu_grad(const SuiteOptions &o, CaseResult &c, const std::vector<FBuf *> &inputs, FBuf &d_out,
                              const std::vector<FBuf *> &grads) {
    std::vector<Buffer<float>> v;
    for (FBuf *b : inputs) v.push_back(halide_view(*b));
    Buffer<float> input = v[0], weights = v[1], bias = v[2], mean = v[3], variance = v[4], gamma = v[5], beta = v[6],
                  seed = halide_view(d_out);
    auto build = [&](bool scheduled) {
        Var ch("c"), x("x"), y("y");
        RDom r(0, input.dim(0).extent(), 0, 3, 0, 3, "r");
        Func conv("conv"), bn("bn"), output("output");
        conv(ch, x, y) = bias(ch);
        conv(ch, x, y) += weights(ch, r.x, r.y, r.z) * input(r.x, x + r.y, y + r.z);
        bn(ch, x, y) = (conv(ch, x, y) - mean(ch)) * (gamma(ch) / sqrt(variance(ch) + 1e-5f)) + beta(ch);
        output(ch, x, y) = max(bn(ch, x, y), 0.0f);
        Derivative d = propagate_adjoints(output, seed);
        std::vector<Func> g = {d(input), d(weights), d(bias), d(gamma), d(beta)};
        if (!scheduled) return Grads{g, ""};
        const int n = lanes();
        // conv.in(): compute_root(), per register block of output channels
        // by columns, the rows in parallel; conv computed per block:
        //   conv_in: tile(c, x, cv, xv, n*2, n*3/4) vectorize(cv, n) unroll(cv) unroll(xv) parallel(y)
        //   conv: compute_at(conv_in, c) vectorize(c, n, GuardWithIf) unroll(c) unroll(x)
        //   conv.update(0): reorder(c, x, r.x, r.y, r.z) vectorize(c, n, GuardWithIf) unroll(c) unroll(x)
        Func conv_in = conv.in();
        std::vector<Var> ca = conv_in.args();
        Var cv("cv"), xv("xv");
        conv_in.compute_root().tile(ca[0], ca[1], cv, xv, n * 2, n * 3 / 4).vectorize(cv, n).unroll(cv).unroll(xv);
        conv_in.parallel(ca[2]);
        conv.compute_at(conv_in, ca[0]).vectorize(ch, n, TailStrategy::GuardWithIf).unroll(ch).unroll(x);
        conv.update(0)
            .reorder(ch, x, r.x, r.y, r.z)
            .vectorize(ch, n, TailStrategy::GuardWithIf)
            .unroll(ch)
            .unroll(x);
        // conv_adjoint: compute_root() vectorize(c, n) parallel(y)
        Func conv_adjoint = d(conv, 0);
        conv_adjoint.compute_root().vectorize(conv_adjoint.args()[0], n).parallel(conv_adjoint.args()[2]);
        // d_weights: register blocks of (output, input) channels, reorder(xi, yi, z, w, xo, yo)
        // parallel(yo); weights_adjoint computed per tap (z) of a block.
        g[1] = blocked_copy(g[1], "d_weights", {"z", "w", "xo", "yo"}, "yo", "z");
        // bias_adjoint, gamma_adjoint, beta_adjoint: compute_root();
        //     update(0): reorder(x, r.x, r.y) vectorize(x, n, GuardWithIf)
        for (Func f : {g[2], g[3], g[4]}) {
            std::vector<RVar> fr = f.rvars(0);
            f.compute_root().update(0).reorder(f.args()[0], fr[0], fr[1]).vectorize(f.args()[0], n,
                                                                                   TailStrategy::GuardWithIf);
        }
        // d_input: register blocks of input channels by columns,
        // reorder(xi, yi, xo, yo, z) parallel(z); input_adjoint (Halide's
        // gather over output channels and taps, as Kiln's) per block (xo).
        g[0] = blocked_copy(g[0], "d_input", {"xo", "yo", "z"}, "z", "xo");
        return Grads{g, "weights.in(input_adjoint) reorder_storage and input.in(weights_adjoint) (the adjoints "
                        "read the Buffers weights and input themselves, which in() cannot wrap), and the "
                        "specializations' fallbacks"};
    };
    // Sums of 64*9 products, and of 56*56 terms for the per-channel gradients.
    add_rows(o, c, build, grads, 1e-4);
}

void halide_attention_grad(const SuiteOptions &o, CaseResult &c, const std::vector<FBuf *> &inputs, FBuf &d_out,
                           const std::vector<FBuf *> &grads) {
    Buffer<float> q = halide_view(*inputs[0]), k = halide_view(*inputs[1]), v = halide_view(*inputs[2]),
                  seed = halide_view(d_out);
    auto build = [&](bool scheduled) {
        // generators/attention.cpp's two_pass algorithm. Its row maximum is
        // softmax's max reduction, whose gradient Halide 14 rejects (see
        // halide_softmax_grad), so no schedule is reached.
        Var ch("c"), i("i"), j("j"), r("r");
        const int d = q.width();
        RDom rd(0, d, "rd"), rk(0, k.height(), "rk");
        Func key_t("key_t"), scores("scores"), row_max("row_max"), probs("probs"), row_sum("row_sum"),
            weighted("weighted"), output("output");
        key_t(j, r) = k(r, j);
        scores(j, i) = 0.0f;
        scores(j, i) += q(rd, i) * key_t(j, rd);
        row_max(i) = Float(32).min();
        row_max(i) = max(row_max(i), scores(rk, i));
        probs(j, i) = exp((scores(j, i) - row_max(i)) * (1.0f / std::sqrt((float)d)));
        row_sum(i) = 0.0f;
        row_sum(i) += probs(rk, i);
        weighted(ch, i) = 0.0f;
        weighted(ch, i) += probs(rk, i) * v(ch, rk);
        output(ch, i) = weighted(ch, i) / row_sum(i);
        Derivative dv = propagate_adjoints(output, seed);
        return Grads{{dv(q), dv(k), dv(v)}, scheduled ? "all of it (not written: Halide 14 rejected the algorithm)" : ""};
    };
    add_rows(o, c, build, grads, 1e-4);
}

}  // namespace kiln_bench
