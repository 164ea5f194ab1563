// Attention with algorithm=online (generators/attention.cpp): the key-blocked
// online softmax, under online/unfused.sched (everything at the root) and
// online/flash.sched (per block of query rows, S and P only per key tile), against
// the same algorithm in Halide 14 with the same files applied, and against
// the two-pass attention (unfused) in Kiln; and the fusion report of flash:
// S and P never reach memory.
//
// Tolerances: against Halide, 1e-5 relative to max(|O|, 1e-2) as for the
// two-pass attention (same sums in the same order; exp differs by a few
// ulps). Halide runs without StrictFloat (its StrictFloat target computes
// Tuple updates wrongly in Halide 14), so it may contract into FMAs.
// Against the two-pass algorithm, 1e-5 as well: the online merge rescales
// partial sums by exp factors of at most 1, which adds a few roundings per
// key block, far below that bound at these sizes.
#include "patterns.h"

#include <limits>

namespace {

const int kBlock = 32;  // the generator's default key_block

// The online algorithm of generators/attention.cpp in Halide, scheduled by `file`.
Halide::Func halide_online_attention(const kiln::Buffer<float> &q, const kiln::Buffer<float> &k,
                                     const kiln::Buffer<float> &v, const kiln::ScheduleFile &file) {
    using namespace Halide;
    Buffer<float> Q(*q.raw_buffer()), K(*k.raw_buffer()), V(*v.raw_buffer());
    Var c("c"), i("i"), j("j"), r("r"), kb("kb");
    Expr d = Q.dim(0).extent(), keys = K.dim(1).extent();
    Expr blocks = (keys + (kBlock - 1)) / kBlock;
    RDom rd(0, d, "rd"), rj(0, kBlock, "rj"), rb(0, blocks, "rb");
    Func key_t("key_t"), scores("scores"), block_max("block_max"), probs("probs"), block_sum("block_sum"),
        block_pv("block_pv"), state("state"), output("output");
    key_t(j, r) = K(r, j);
    scores(j, i) = 0.0f;
    scores(j, i) += Q(rd, i) * key_t(j, rd);
    Expr key = kb * kBlock + rj, inside = key < keys, clamped = min(key, keys - 1);
    Expr lowest = std::numeric_limits<float>::lowest(), alpha = 1.0f / sqrt(cast<float>(d));
    block_max(kb, i) = lowest;
    block_max(kb, i) = max(block_max(kb, i), select(inside, scores(clamped, i), lowest));
    probs(j, i) = exp((scores(j, i) - block_max(j / kBlock, i)) * alpha);
    block_sum(kb, i) = 0.0f;
    block_sum(kb, i) += select(inside, probs(clamped, i), 0.0f);
    block_pv(c, kb, i) = 0.0f;
    block_pv(c, kb, i) += select(inside, probs(clamped, i) * V(c, clamped), 0.0f);
    state(c, i) = Tuple(lowest, 0.0f, 0.0f);
    Expr m = state(c, i)[0], l = state(c, i)[1], acc = state(c, i)[2], bm = block_max(rb, i);
    Expr m2 = max(m, bm), a = exp((m - m2) * alpha), b = exp((bm - m2) * alpha);
    state(c, i) = Tuple(m2, l * a + block_sum(rb, i) * b, acc * a + block_pv(c, rb, i) * b);
    output(c, i) = state(c, i)[2] / state(c, i)[1];
    kd::halide_apply(file,
                     {{"key_t", key_t}, {"scores", scores}, {"block_max", block_max}, {"probs", probs},
                      {"block_sum", block_sum}, {"block_pv", block_pv}, {"state", state}, {"output", output}},
                     {{"rd", rd}, {"rj", rj}, {"rb", rb}});
    return output;
}

void set_qkv(kd::KilnGenerator &g, const kiln::Buffer<float> &q, const kiln::Buffer<float> &k,
             const kiln::Buffer<float> &v) {
    g.set("Q", q);
    g.set("K", k);
    g.set("V", v);
}

}  // namespace

TEST_CASE("attention online: every schedule against Halide and against the two-pass algorithm",
          "[pattern][attention][online]") {
    kiln::ScheduleFile two_pass_file = kiln::ScheduleFile::load(kd::schedule_path("attention", "unfused"));
    kd::KilnGenerator two_pass({"attention"}, two_pass_file);
    for (const std::string &schedule : {"online/unfused", "online/flash"}) {
        kiln::ScheduleFile file = kiln::ScheduleFile::load(kd::schedule_path("attention", schedule));
        kd::KilnGenerator g({"attention", {"algorithm=online"}}, file);
        // seq: one partial key block, several whole ones, several and a partial one.
        for (auto [d, seq] : {std::pair{16, 29}, {16, 64}, {24, 77}}) {
            INFO("attention online under " << schedule << ".sched, d=" << d << " seq=" << seq);
            kiln::Buffer<float> q = kd::random_buffer({d, seq}, -1, 1, 1), k = kd::random_buffer({d, seq}, -1, 1, 2),
                                v = kd::random_buffer({d, seq}, -1, 1, 3);
            kd::Out<float> out("output", {d, seq});
            Halide::Buffer<float> hout(*out.halide.raw_buffer());
            halide_online_attention(q, k, v, file).realize(hout, kd::H::host());  // StrictFloat breaks Tuple updates
            set_qkv(g, q, k, v);
            g.realize({out.kiln.raw_buffer()});
            kd::compare_relative(out, 1e-5, 1e-2);

            kd::Out<float> vs("output vs two-pass", {d, seq});
            set_qkv(two_pass, q, k, v);
            g.realize({vs.kiln.raw_buffer()});
            two_pass.realize({vs.halide.raw_buffer()});  // the two-pass result in the reference slot
            kd::compare_relative(vs, 1e-5, 1e-2);
        }
    }
}

// flash: the tiles of S and P are vectors of keys, a partial key block's
// last one guarded, and bounds inference keeps the root key_t within K (the
// seq=29 and 77 cases above would stop with "input 'K' is read over" if it
// did not).
TEST_CASE("attention online: flash computes its S and P tiles as vectors", "[pattern][attention][online]") {
    kd::KilnGenerator g({"attention", {"algorithm=online"}},
                        kiln::ScheduleFile::load(kd::schedule_path("attention", "online/flash")));
    const std::string stmt = g.pipeline().lowered_stmt(kiln::Target::host());
    for (const char *tile : {"scores[ramp(", "probs[ramp("}) {
        INFO(tile);
        CHECK_THAT(stmt, Catch::Matchers::Contains(tile));
    }
}

// flash: S (scores) and P (probs) are computed per key tile inside the
// state's loop over key blocks and stay in cache; unfused, both are
// seq x seq planes in memory.
TEST_CASE("attention online: the fusion report shows S and P never reaching memory", "[pattern][attention][online][report]") {
    const int d = 32, seq = 256;
    const int64_t cache = 16 * 1024;
    std::map<std::string, std::vector<int>> sizes = {
        {"output", {d, seq}}, {"Q", {d, seq}}, {"K", {d, seq}}, {"V", {d, seq}}};
    auto report = [&](const std::string &s) {
        kd::KilnGenerator g({"attention", {"algorithm=online"}}, kiln::ScheduleFile::load(kd::schedule_path("attention", s)));
        return g.pipeline().report(sizes, kiln::Target::host(), cache);
    };
    kiln::PipelineReport unfused = report("online/unfused"), flash = report("online/flash");
    auto row = [](const kiln::PipelineReport &r, const std::string &name) {
        for (const auto &f : r.funcs)
            if (f.name == name) return f;
        FAIL("no report row for " << name);
        return kiln::FuncReport();
    };
    for (const char *name : {"scores", "probs"}) {
        INFO(name);
        CHECK(row(unfused, name).in_memory);
        CHECK(row(unfused, name).memory_bytes == 2 * (int64_t)seq * seq * 4);
        CHECK_FALSE(row(flash, name).in_memory);
        CHECK(row(flash, name).memory_bytes == 0);
        CHECK(row(flash, name).compute_level == "state.kbo");
    }
    CHECK(flash.memory_bytes < unfused.memory_bytes);
    INFO(flash.to_text());
    CHECK(flash.exact);
}
