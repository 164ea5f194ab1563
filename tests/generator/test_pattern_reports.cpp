// The fusion report of every fusion pattern (generators/ + schedules/): the
// bytes a fused schedule saves against the unfused one are exactly
// 2 x the size of each intermediate it keeps out of memory (written once
// and read back once in the report's model), at a realistic size.
//
// With the default 1 MiB cache only whole-image intermediates count (a
// per-row vector of 2048 floats is 8 KiB and stays in cache); with a 4 KiB
// cache the per-row statistics count too, while the fused schedules' own
// buffers (one row of 1024 floats, or one value) still fit.
#include <kiln/Generator.h>
#include <kiln/kiln.h>

#include <catch2/catch.hpp>

using namespace kiln;

namespace {

const int W = 1024, H = 2048;
const int64_t kPlane = int64_t(W) * H * 4, kColumn = int64_t(H) * 4;  // bytes of one [W, H] and one [H] float buffer

// The report of `generator` under schedules/<generator>/<schedule>.sched.
PipelineReport report(const std::string &generator, const std::string &schedule, int64_t cache_bytes,
                      const std::vector<std::string> &params = {}) {
    auto g = GeneratorRegistry::create(generator);
    g->set_generator_params(params);
    Pipeline p = g->build_pipeline();
    ScheduleFile::load(KILN_SOURCE_DIR "/schedules/" + generator + "/" + schedule + ".sched").apply(p);
    std::map<std::string, std::vector<int>> sizes;
    for (const auto *in : g->inputs())
        if (in->argument().is_buffer) sizes[in->name()] = in->argument().dimensions == 1 ? std::vector<int>{W}
                                                                                          : std::vector<int>{W, H};
    for (const auto *out : g->outputs()) sizes[out->name()] = {W, H};
    PipelineReport r = p.report(sizes, Target::host(), cache_bytes);
    CHECK(r.exact);
    return r;
}

// Bytes saved by each of `schedules` against unfused must be `saved`.
void check_saved(const std::string &generator, const std::vector<std::string> &schedules, int64_t cache_bytes,
                 int64_t saved, const std::vector<std::string> &params = {}) {
    PipelineReport unfused = report(generator, "unfused", cache_bytes, params);
    CHECK(unfused.bytes_saved() == 0);  // unfused is its own baseline
    for (const std::string &s : schedules) {
        INFO(generator << " " << s << ", cache " << cache_bytes << " bytes");
        PipelineReport fused = report(generator, s, cache_bytes, params);
        CHECK(unfused.memory_bytes - fused.memory_bytes == saved);
    }
}

const int64_t kBigCache = 1 << 20, kSmallCache = 4096;

}  // namespace

TEST_CASE("pattern reports: pointwise chains save two planes per eliminated stage", "[generator][report]") {
    for (const char *v : {"variant=softplus", "variant=tanh_affine"})  // stage1, stage2
        check_saved("elementwise_chain", {"fused", "host_tiled"}, kBigCache, 2 * 2 * kPlane, {v});
    check_saved("forward_ad", {"fused", "host_tiled"}, kBigCache, 2 * 2 * kPlane);  // du_v, u_dv
    check_saved("bias_gelu", {"fused", "host_tiled"}, kBigCache, 2 * kPlane);       // biased
    check_saved("many_users", {"fused", "recompute", "host_tiled"}, kBigCache, 2 * kPlane);  // t
}

TEST_CASE("pattern reports: row patterns, whole-image and per-row intermediates", "[generator][report]") {
    // layernorm: normalized; with a small cache also sum, mean, sum_sq, inv_std.
    check_saved("layernorm", {"fused", "host_tiled"}, kBigCache, 2 * kPlane);
    check_saved("layernorm", {"fused", "host_tiled"}, kSmallCache, 2 * (kPlane + 4 * kColumn));
    // softmax: exps; with a small cache also row_max and row_sum.
    check_saved("softmax", {"fused", "recompute", "host_tiled"}, kBigCache, 2 * kPlane);
    check_saved("softmax", {"fused", "recompute", "host_tiled"}, kSmallCache, 2 * (kPlane + 2 * kColumn));
    // subtract_mean: only per-row vectors (row_sum, mean) are eliminated, so
    // with a cache that holds them the report sees no saving: the input read
    // twice by the unfused schedule is not in its model (docs/fusion.md).
    check_saved("subtract_mean", {"fused", "host_tiled"}, kBigCache, 0);
    check_saved("subtract_mean", {"fused", "host_tiled"}, kSmallCache, 2 * 2 * kColumn);
}

TEST_CASE("pattern reports: where the fused schedules compute and store", "[generator][report]") {
    PipelineReport r = report("softmax", "fused", kBigCache);
    for (const FuncReport &f : r.funcs) {
        if (f.is_output) continue;
        INFO(f.name);
        CHECK(f.compute_level == "output.y");
        CHECK(f.recompute == Approx(1.0));
        CHECK(f.realizations == H);
        CHECK_FALSE(f.in_memory);
    }
    PipelineReport unfused = report("layernorm", "unfused", kBigCache);
    for (const FuncReport &f : unfused.funcs)
        if (f.name == "normalized") CHECK(f.memory_bytes == 2 * kPlane);
}
