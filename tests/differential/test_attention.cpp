// Attention O = softmax(Q Kᵀ / √d) V (generators/attention.cpp) under its
// three shipped schedules (S and P materialized; fused per block of query
// rows; the same in parallel) against the same algorithm in Halide 14 with
// the same files applied (halide_apply), with d and seq that are and are not multiples of the vector
// width and of the 8-row block; and the fusion report of each schedule.
//
// Tolerance: 1e-5 relative error to max(|O|, 1e-2). Every sum runs in the
// same order in both libraries (reduction loops are moved, never split; only
// host_tiled's row maximum is split by rfactor, which is exact) and
// Halide runs with strict_float, so S, the row maxima and the products are
// bit-exact; exp differs (Kiln calls the C library, Halide its own
// polynomial) by a few ulps. O is a weighted average of values of V in
// [-1, 1], so those errors are absolute at the scale of V: an output that
// averages out near 0 keeps an error of ~1e-8 (hence the floor).
#include "patterns.h"

#include "halide_apps.h"

#include <limits>

namespace {

// The algorithm of generators/attention.cpp in Halide (halide_apps.h),
// scheduled by `file`.
Halide::Func halide_attention(const kiln::Buffer<float> &q, const kiln::Buffer<float> &k, const kiln::Buffer<float> &v,
                              const kiln::ScheduleFile &file) {
    Halide::Buffer<float> Q(*q.raw_buffer()), K(*k.raw_buffer()), V(*v.raw_buffer());
    kiln_halide::HalideAttention a = kiln_halide::attention(Q, K, V);
    kd::halide_apply(file, a.funcs, a.rvars, {{"Q.width", Q.dim(0).extent()}, {"K.height", K.dim(1).extent()}});
    return a.output;
}

void check_attention(const std::string &schedule) {
    kiln::ScheduleFile file = kiln::ScheduleFile::load(kd::schedule_path("attention", schedule));
    kd::KilnGenerator g({"attention"}, file);
    // (d, seq): d at least one vector; seq a multiple of the 8-row block and
    // not; and 40 x 45, where host_tiled's blocks of 2 vectors run (its
    // specialization: 2 vectors of features and of keys) with AVX-512.
    for (auto [d, seq] : {std::pair{16, 40}, {24, 29}, {40, 45}}) {
        INFO("attention under " << schedule << ".sched, d=" << d << " seq=" << seq);
        kiln::Buffer<float> q = kd::random_buffer({d, seq}, -1, 1, 1), k = kd::random_buffer({d, seq}, -1, 1, 2),
                            v = kd::random_buffer({d, seq}, -1, 1, 3);
        kd::Out<float> out("output", {d, seq});
        Halide::Buffer<float> hout(*out.halide.raw_buffer());
        halide_attention(q, k, v, file).realize(hout, kd::H::strict_float());
        g.set("Q", q);
        g.set("K", k);
        g.set("V", v);
        g.realize({out.kiln.raw_buffer()});
        kd::compare_relative(out, 1e-5, 1e-2);
    }
}

}  // namespace

TEST_CASE("attention: every schedule against Halide", "[pattern][attention]") {
    for (const std::string &s : kd::kSchedules) check_attention(s);
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
    auto report = [&](const std::string &s) {
        kd::KilnGenerator g({"attention"}, kiln::ScheduleFile::load(kd::schedule_path("attention", s)));
        return g.pipeline().report(sizes, kiln::Target::host(), cache);
    };
    kiln::PipelineReport unfused = report("unfused"), fused = report("fused"), tiled = report("host_tiled");
    const int64_t eliminated = 2 * (s_bytes + s_bytes + pv_bytes);
    CHECK(unfused.memory_bytes - fused.memory_bytes == eliminated);
    CHECK(unfused.memory_bytes - tiled.memory_bytes == eliminated);
    CHECK(fused.bytes_saved() == eliminated);
    CHECK(fused.exact);
}
