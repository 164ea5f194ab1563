// Random pipelines with random schedules (tests/fuzz/random_pipeline.h)
// through Halide 14's JIT as well: the fuzz tier's pipeline is built once for
// each library from the same PipelineSpec (build_stages), Kiln draws a legal
// random schedule, and its .sched text is given to Halide through
// halide_apply(), so both sides run the same algorithm under the same
// schedule. Both outputs must equal each other and the direct evaluation.
//
// Every random pipeline is expressible in Halide. A schedule Halide refuses
// (its rules for compute_at sites or ShiftInwards tails differ in corners)
// is counted, not failed. CI runs a few cases (each is two JIT compilations);
// KILN_FUZZ_ITERS=N runs N/200, KILN_FUZZ_SEED another seed.
#include <catch2/catch.hpp>

#include "diff.h"
#include "fuzz/fuzz.h"
#include "fuzz/random_pipeline.h"
#include "halide_schedule.h"

using namespace kiln_fuzz;

namespace {

struct Tally {
    int compared = 0, kiln_rejected = 0, halide_rejected = 0;
};

// The first difference between `got` and the row-major `want`, or "".
std::string difference(const kiln::Buffer<int32_t> &got, const std::vector<int32_t> &want, int w, int h) {
    for (int y = 0; y < h; y++)
        for (int x = 0; x < w; x++)
            if (got(x, y) != want[y * w + x])
                return "at (" + std::to_string(x) + ", " + std::to_string(y) + "): got " + std::to_string(got(x, y)) +
                       ", expected " + std::to_string(want[y * w + x]);
    return "";
}

void compare_one(uint32_t seed, Tally &t) {
    Rng r(seed);
    PipelineSpec p = random_pipeline(r);
    kiln::Buffer<int32_t> input(p.in_w, p.in_h);
    std::vector<int32_t> flat(p.in_w * p.in_h);
    for (int y = 0; y < p.in_h; y++)
        for (int x = 0; x < p.in_w; x++) input(x, y) = flat[y * p.in_w + x] = r.pick(-50, 50);
    std::vector<int32_t> want = reference(p, flat);

    // Kiln: the first of up to four random schedules it accepts.
    std::string text;
    kiln::Buffer<int32_t> kout(p.out_w, p.out_h);
    bool accepted = false;
    for (int attempt = 0; attempt < 4 && !accepted; attempt++) {
        Built b;
        build(p, b);
        text = random_schedule(p, b, r);
        try {
            b.in.set(input);
            b.output().realize(kout);
            accepted = true;
        } catch (const kiln::CompileError &) {
            t.kiln_rejected++;
        }
    }
    if (!accepted) return;
    INFO("seed " << seed << "\n" << p.to_string() << "schedule:\n" << text);

    // Halide 14: the same stages, the same schedule text.
    Halide::ImageParam in(Halide::Int(32), 2, "in");
    Halide::Var x("x"), y("y");
    std::vector<Halide::Func> stages = build_stages<kd::H>(p, in, x, y);
    std::map<std::string, Halide::Func> funcs;
    for (size_t k = 0; k < stages.size(); k++) funcs.emplace("f" + std::to_string(k), stages[k]);
    kd::halide_apply(kiln::ScheduleFile::parse(text, "random.sched"), funcs);
    kd::H::set(in, input);
    kiln::Buffer<int32_t> hout(p.out_w, p.out_h);
    hout.fill(0x5eed);
    try {
        kd::H::Pipeline hp(stages.back());
        kd::H::realize(hp, {hout.raw_buffer()}, kd::H::host());
    } catch (const Halide::Error &e) {
        t.halide_rejected++;
        WARN("Halide 14 refuses a schedule Kiln accepts:\n" << text << e.what());
        return;
    }
    t.compared++;
    std::string kiln_diff = difference(kout, want, p.out_w, p.out_h);
    std::string halide_diff = difference(hout, want, p.out_w, p.out_h);
    CHECK(kiln_diff == "");
    CHECK(halide_diff == "");
}

}  // namespace

TEST_CASE("fuzz: random pipelines and schedules agree with Halide 14", "[differential][fuzz]") {
    Tally t;
    uint32_t base = kiln_fuzz::seed(7000);
    int n = kiln_fuzz::iterations(5, 5);
    for (int i = 0; i < n; i++) compare_one(base + i, t);
    CHECK(t.compared > 0);
    WARN("compared " << t.compared << " random pipelines and schedules with Halide 14; " << t.kiln_rejected
                     << " schedules rejected by Kiln, " << t.halide_rejected << " by Halide");
}
