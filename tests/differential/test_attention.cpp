// Attention O = softmax(Q Kᵀ / √d) V (generators/attention.cpp) under its
// three shipped schedules (S and P materialized; fused per block of query
// rows; the same in parallel) against the same algorithm and schedules in
// Halide 14, with d and seq that are and are not multiples of the vector
// width and of the 8-row block; and the fusion report of each schedule.
//
// Tolerance: 1e-5 relative error (to max(|O|, 1e-3)). Every sum runs in the
// same order in both libraries (reduction loops are moved, never split) and
// Halide runs with strict_float, so S, the row maxima and the products are
// bit-exact; exp differs (Kiln calls the C library, Halide its own
// polynomial) by a few ulps, which the row sum and P V average.
#include "pattern_diff.h"

#include <limits>

namespace {

enum class Sched { Unfused, Fused, HostTiled };
const char *sched_name(Sched s) { return s == Sched::Unfused ? "unfused" : s == Sched::Fused ? "fused" : "host_tiled"; }

// The Halide program: the algorithm of generators/attention.cpp and the
// schedule of schedules/attention/<s>.sched.
Halide::Func halide_attention(const kiln::Buffer<float> &q, const kiln::Buffer<float> &k, const kiln::Buffer<float> &v,
                              Sched s, int vec) {
    using namespace Halide;
    Buffer<float> Q(*q.raw_buffer()), K(*k.raw_buffer()), V(*v.raw_buffer());
    Var c("c"), i("i"), j("j"), r("r"), ib("ib"), ii("ii");
    Expr d = Q.dim(0).extent(), keys = K.dim(1).extent();
    RDom rd(0, d, "rd"), rk(0, keys, "rk");
    Func key_t("key_t"), scores("scores"), row_max("row_max"), probs("probs"), row_sum("row_sum"),
        weighted("weighted"), output("output");
    key_t(j, r) = K(r, j);
    scores(j, i) = 0.0f;
    scores(j, i) += Q(rd, i) * key_t(j, rd);
    row_max(i) = std::numeric_limits<float>::lowest();
    row_max(i) = max(row_max(i), scores(rk, i));
    Expr inv_sqrt_d = 1.0f / sqrt(cast<float>(d));
    probs(j, i) = exp((scores(j, i) - row_max(i)) * inv_sqrt_d);
    row_sum(i) = 0.0f;
    row_sum(i) += probs(rk, i);
    weighted(c, i) = 0.0f;
    weighted(c, i) += probs(rk, i) * V(c, rk);
    output(c, i) = weighted(c, i) / row_sum(i);

    key_t.compute_root();
    if (s == Sched::Unfused) {
        output.vectorize(c, vec);
        for (Func f : {scores, row_max, probs, row_sum, weighted}) f.compute_root();
    } else {
        output.split(i, ib, ii, 8).vectorize(c, vec);
        if (s == Sched::HostTiled) output.parallel(ib);
        for (Func f : {scores, row_max, probs, row_sum, weighted}) f.compute_at(output, ib);
    }
    scores.vectorize(j, vec);
    scores.update(0).reorder(j, rd, i).vectorize(j, vec, TailStrategy::GuardWithIf);
    probs.vectorize(j, vec);
    weighted.vectorize(c, vec);
    weighted.update(0).reorder(c, rk, i).vectorize(c, vec, TailStrategy::GuardWithIf);
    return output;
}

void check_attention(Sched s, int d, int seq) {
    INFO("attention " << sched_name(s) << ", d=" << d << " seq=" << seq);
    kiln::Buffer<float> q = kd::random_tensor({d, seq}, 1), k = kd::random_tensor({d, seq}, 2),
                        v = kd::random_tensor({d, seq}, 3);
    kd::Out<float> out("output", {d, seq});
    const int vec = kiln::Target::host().natural_vector_size(kiln::Float(32));

    Halide::Buffer<float> hout(*out.halide.raw_buffer());
    halide_attention(q, k, v, s, vec).realize(hout, kd::H::strict_float());

    kd::GeneratorRun g("attention", {}, std::string("attention/") + sched_name(s) + ".sched");
    g.bind("Q", q);
    g.bind("K", k);
    g.bind("V", v);
    g.realize({out.kiln.raw_buffer()});
    kd::check_relative(out, 1e-5, 1e-3);
}

// (d, seq): d at least one vector; seq a multiple of the 8-row block and not.
const int kSizes[][2] = {{16, 40}, {24, 29}};

}  // namespace

TEST_CASE("attention: every schedule against Halide", "[pattern][attention]") {
    for (Sched s : {Sched::Unfused, Sched::Fused, Sched::HostTiled})
        for (const auto &sz : kSizes) check_attention(s, sz[0], sz[1]);
}

// Unfused, S and P (seq x seq) and P V (d x seq) are in memory; fused per
// block of rows, none is (the blocks stay in cache). key_t is at the root in
// every schedule; the row maxima and sums are smaller than the cache.
TEST_CASE("attention: fusion report, bytes saved = 2 x size of each eliminated intermediate",
          "[pattern][attention][report]") {
    const int d = 32, seq = 256;
    const int64_t cache = 16 * 1024, s_bytes = (int64_t)seq * seq * 4, pv_bytes = (int64_t)d * seq * 4;
    std::map<std::string, std::vector<int>> sizes = {
        {"output", {d, seq}}, {"Q", {d, seq}}, {"K", {d, seq}}, {"V", {d, seq}}};
    auto report = [&](Sched s) {
        kd::GeneratorRun g("attention", {}, std::string("attention/") + sched_name(s) + ".sched");
        return g.pipeline.report(sizes, kiln::Target::host(), cache);
    };
    kiln::PipelineReport unfused = report(Sched::Unfused), fused = report(Sched::Fused),
                         tiled = report(Sched::HostTiled);
    const int64_t eliminated = 2 * (s_bytes + s_bytes + pv_bytes);
    CHECK(unfused.memory_bytes - fused.memory_bytes == eliminated);
    CHECK(unfused.memory_bytes - tiled.memory_bytes == eliminated);
    CHECK(fused.bytes_saved() == eliminated);
    CHECK(fused.exact);
}
