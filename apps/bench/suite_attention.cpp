// The attention cases of apps/bench: O = softmax(Q Kᵀ / √d) V for one head,
// d = 64, seq 1024 and 2048 (generators/attention.cpp, Q, K, V and O as
// (d, seq)). Kiln runs schedules/attention/host_tiled.sched; Halide 14 runs
// the same algorithm under the same schedule, with natural_vector_size taken
// from Halide's host target as Kiln takes it from its own. There is no
// library anchor: oneDNN 2.6 has no fused attention primitive. Both systems
// know d and seq at compile time: the twin's RDoms are built from the
// buffers' extents as constants, Kiln's generator gets them as `dim` and
// `seq`.
#include <cmath>
#include <limits>

#include "case_util.h"
#include "halide_apps.h"
#include "suite.h"

namespace kiln_bench {

namespace {

using namespace Halide;

// schedules/attention/host_tiled.sched; with `one_vector`, its blocks of
// one vector by 8 rows (its fallback, the whole file before session 51):
// a second Halide row, in case LLVM does better with those.
Pipeline halide_attention(Buffer<float> Q, Buffer<float> K, Buffer<float> V, bool one_vector = false) {
    kiln_halide::HalideAttention a = kiln_halide::attention(Q, K, V);
    Func key_t = a.funcs["key_t"], scores = a.funcs["scores"], row_max = a.funcs["row_max"],
         probs = a.funcs["probs"], row_sum = a.funcs["row_sum"], weighted = a.funcs["weighted"], output = a.output;
    Var c("c"), i("i"), j("j"), ib("ib"), ii("ii");
    RVar rd = a.rvars["rd"], rk = a.rvars["rk"];

    const int n = get_host_target().natural_vector_size<float>();
    Var co("co"), ci("ci"), jo("jo"), ji("ji"), u("u");
    RVar rko("rko"), rki("rki");
    // The file's specialize() conditions (2 vectors of features and of
    // keys) hold at the bench's sizes: this is their specialized branch.
    const int blocks = one_vector ? 1 : 2, rows = one_vector ? 8 : n / 2;
    key_t.compute_root();
    output.split(i, ib, ii, rows)
        .split(c, co, ci, n * blocks)
        .reorder(ci, ii, co, ib)
        .vectorize(ci, n)
        .unroll(ci)
        .unroll(ii)
        .parallel(ib);
    Func scores_in = scores.in();
    scores_in.compute_at(output, ib)
        .split(j, jo, ji, n * blocks)
        .reorder(ji, i, jo)
        .vectorize(ji, n)
        .unroll(ji)
        .unroll(i);
    scores.compute_at(scores_in, jo).vectorize(j, n).unroll(j).unroll(i);
    scores.update(0).reorder(j, i, rd).vectorize(j, n).unroll(j).unroll(i);
    row_max.compute_at(output, ib);
    Func row_max_lanes = row_max.update(0).split(rk, rko, rki, n).rfactor(rki, u);
    row_max_lanes.compute_at(row_max, i).vectorize(u);
    row_max_lanes.update(0).reorder(u, rko).vectorize(u);
    probs.compute_at(output, ib).vectorize(j, n);
    row_sum.compute_at(output, ib);
    weighted.compute_at(output, co).vectorize(c, n).unroll(c).unroll(i);
    weighted.update(0).reorder(c, i, rk).vectorize(c, n).unroll(c).unroll(i);
    return Pipeline(output);
}

CaseResult attention_case(const SuiteOptions &o, int seq) {
    const int d = 64;
    FBuf Q = random_buffer({d, seq}, -1, 1, 51), K = random_buffer({d, seq}, -1, 1, 52),
         V = random_buffer({d, seq}, -1, 1, 53), out(d, seq);
    // The twin's RDoms have constant extents (d, seq); Kiln gets the same
    // constants through its GeneratorParams, as a user compiling for one
    // model shape would.
    KilnRunner k("attention", {"dim=" + std::to_string(d), "seq=" + std::to_string(seq)}, "host_tiled");
    k.bind("Q", Q), k.bind("K", K), k.bind("V", V);
    CaseResult c;
    c.name = "attention seq " + std::to_string(seq) + " d " + std::to_string(d);
    c.schedule = k.schedule_path();
    c.bytes = 4.0 * 4.0 * d * seq;                 // Q, K, V read once, O written once
    c.flops = 4.0 * (double)seq * seq * d;         // Q Kᵀ and P V, a multiply-add each
    c.tolerance = 1e-4;  // sums of seq terms in different orders, exp polynomials
    c.entries.push_back(run_kiln(k, {&out}, o.runs));
    FBuf h_out = zeros_like(out);
    c.entries.push_back(run_halide(halide_attention(halide_view(Q), halide_view(K), halide_view(V)), {&h_out}, o.runs));
    check_against(c.entries.back(), {&h_out}, {&out});
    FBuf h1_out = zeros_like(out);
    Entry e = run_halide(halide_attention(halide_view(Q), halide_view(K), halide_view(V), true), {&h1_out}, o.runs);
    e.system = "halide 1-vector blocks";
    e.note = "the file's fallback blocks (1 vector by 8 rows), its whole schedule before session 51";
    check_against(e, {&h1_out}, {&out});
    c.entries.push_back(e);
    return c;
}

}  // namespace

CaseResult bench_attention_1024(const SuiteOptions &o) { return attention_case(o, o.quick ? 128 : 1024); }
CaseResult bench_attention_2048(const SuiteOptions &o) { return attention_case(o, o.quick ? 256 : 2048); }

}  // namespace kiln_bench
