// The timed simulator against cycle counts worked out by hand from the
// default machine (machine.json): issue 1 cycle/instruction, flags 1 cycle,
// MTE2/MTE3 64 B/cycle + 200 cycles latency, vector 256 B/cycle.
#include <catch2/catch.hpp>

#include "npu_helpers.h"

using namespace npu_test;

namespace {

struct Bufs {
    std::vector<float> in = ramp(8 * 64 * 8), out = std::vector<float>(8 * 64 * 8);
    Device dev;
    GlobalTensor gi = dev.bind("in", DType::F32, in.data(), in.size()),
                 go = dev.bind("out", DType::F32, out.data(), out.size());
};

}  // namespace

TEST_CASE("serial load, compute, store: every step waits for the last", "[npu][timing]") {
    Bufs b;
    SimReport r = b.dev.run(1, [&](Core &c) {
        Tile t = c.tile(Mem::UB, 0, DType::F32, 8, 64);  // 2048 bytes
        c.TLOAD(t, b.gi.at(0, 64));       // #0 MTE2: starts 0, busy 32, done 0 + 32 + 200 = 232
        flag(c, Pipe::MTE2, Pipe::V);     // #1 SET on MTE2 at 32, the flag set when the load completes: 232
                                          // #2 WAIT on V, issued at 2: 232..233, stalled 230
        c.TADDS(t, t, 1.0f);              // #3 V: 2048 / 256 = 8 cycles: 233..241
        flag(c, Pipe::V, Pipe::MTE3);     // #4 241..242, #5 WAIT on MTE3 (issued at 5): 242..243
        c.TSTORE(b.go.at(0, 64), t);      // #6 MTE3: 243 + 32 + 200 = 475
    });
    CHECK(r.cycles == 475);
    CHECK(r.pipes[(int)Pipe::V].stall == 230);
    CHECK(r.pipes[(int)Pipe::MTE3].stall == 242 - 5);
    CHECK(r.pipes[(int)Pipe::V].busy == 8 + 2);
    CHECK(r.pipes[(int)Pipe::MTE2].busy == 32 + 1);
    CHECK(r.gm_read_bytes == 2048);
    CHECK(r.gm_write_bytes == 2048);
    CHECK(r.dma_bytes["GM->UB"] == 2048);
    CHECK(r.family_counts["sync"] == 4);
    CHECK(r.peak_bytes[(int)Mem::UB] == 2048);
    CHECK(b.out[5] == b.in[5] + 1.0f);
}

TEST_CASE("independent instructions on different pipes overlap, DMA is pipelined", "[npu][timing]") {
    Bufs b;
    SimOptions opt;
    opt.trace = true;
    SimReport r = b.dev.run(1, [&](Core &c) {
        Tile t0 = c.tile(Mem::UB, 0, DType::F32, 8, 64), t1 = c.tile(Mem::UB, 2048, DType::F32, 8, 64),
             t2 = c.tile(Mem::UB, 4096, DType::F32, 8, 64);
        c.TLOAD(t0, b.gi.at(0, 64));    // MTE2 0..32 busy, done 232
        c.TLOAD(t1, b.gi.at(512, 64));  // issued 1; MTE2 free at 32: done 32 + 32 + 200 = 264
        c.TDUP(t2, 0.0f);               // V, issued 2: 2..10
    }, opt);
    CHECK(r.cycles == 264);
    CHECK(r.pipes[(int)Pipe::MTE2].busy == 64);
    CHECK(r.pipes[(int)Pipe::V].busy == 8);
    REQUIRE(r.events.size() == 3);
    CHECK(r.events[1].start == 32);
    CHECK(r.busy_ratio(Pipe::MTE2) == Approx(64.0 / 264));
    std::string trace = r.trace_json();
    CHECK(trace.find("\"name\":\"TLOAD\"") != std::string::npos);
    CHECK(trace.find("\"thread_name\"") != std::string::npos);
}

TEST_CASE("a wait stalls its pipe until the flag is set, counting sets in order", "[npu][timing]") {
    Bufs b;
    SimReport r = b.dev.run(1, [&](Core &c) {
        Tile t0 = c.tile(Mem::UB, 0, DType::F32, 8, 64), t1 = c.tile(Mem::UB, 2048, DType::F32, 8, 64);
        c.WAIT_FLAG(Pipe::MTE2, Pipe::V, 3);  // #0 V waits for the set issued later: program order is no constraint
        c.TDUP(t1, 1.0f);                     // #1 behind the wait on V
        c.TLOAD(t0, b.gi.at(0, 64));          // #2 MTE2: 2..34, done 234
        c.SET_FLAG(Pipe::MTE2, Pipe::V, 3);   // #3 on MTE2 at 34, the flag set at 234
    });
    // #0 234..235 (stall 234), #1 235..243
    CHECK(r.pipes[(int)Pipe::V].stall == 234);
    CHECK(r.cycles == 243);
}

TEST_CASE("PIPE_BARRIER holds issue until the pipe has drained", "[npu][timing]") {
    Bufs b;
    SimReport r = b.dev.run(1, [&](Core &c) {
        Tile t0 = c.tile(Mem::UB, 0, DType::F32, 8, 64), t1 = c.tile(Mem::UB, 2048, DType::F32, 8, 64);
        c.TLOAD(t0, b.gi.at(0, 64));  // done 232
        c.PIPE_BARRIER(Pipe::MTE2);   // at 232
        c.TADDS(t1, t0, 1.0f);        // issued 233: 233..241, and ordered after the load (no race)
    });
    CHECK(r.cycles == 241);
    CHECK(r.race_count == 0);
}

TEST_CASE("double buffering overlaps MTE2 with V and takes fewer cycles", "[npu][timing]") {
    const int tiles = 8;
    SimReport single, dbl;
    std::vector<float> out1, out2;
    for (bool db : {false, true}) {
        Bufs b;
        SimOptions opt;
        opt.trace = true;
        opt.races_are_errors = true;
        SimReport r = b.dev.run(1, [&](Core &c) { stream_kernel(c, b.gi, b.go, tiles, 8, 64, db); }, opt);
        (db ? dbl : single) = r;
        for (size_t i = 0; i < b.in.size(); i++) REQUIRE(b.out[i] == b.in[i] + 1.0f);
    }
    CHECK(dbl.cycles < single.cycles);
    // Some load runs while a vector op of another tile runs.
    bool overlapped = false;
    for (const TraceEvent &l : dbl.events)
        for (const TraceEvent &v : dbl.events)
            if (l.pipe == Pipe::MTE2 && l.text.rfind("TLOAD", 0) == 0 && v.pipe == Pipe::V &&
                v.text.rfind("TADDS", 0) == 0 && l.start < v.end && v.start < l.end)
                overlapped = true;
    CHECK(overlapped);
    INFO(single.text() << dbl.text());
    CHECK(single.cycles > 0);
}

namespace {

// The default machine with its shared GM bandwidth set to `gm` bytes a
// cycle (0: the field left out, every core at its own pipes' rates).
Machine machine_with_gm(uint64_t gm) {
    std::string text = default_machine_json();
    const std::string field = "\"gm\": {\"bytes_per_cycle\": 256,";
    const size_t at = text.find(field);
    REQUIRE(at != std::string::npos);
    if (gm == 0) {
        text.replace(at, field.size(), "\"gm_left_out\": {");
    } else {
        text.replace(at, field.size(), "\"gm\": {\"bytes_per_cycle\": " + std::to_string(gm) + ",");
    }
    return parse_machine(text);
}

// Each core loads `tiles` 8 x 64 f32 tiles (2048 bytes, 32 MTE2 cycles at
// 64 B/cycle) of its own part of `in` back to back into one UB tile, then
// runs `exps` TEXPs of 32 cycles (8 x 64 f32 at 256 B/cycle, x4) on another.
SimReport stream_or_compute(const Machine &m, int cores, int tiles, int exps) {
    std::vector<float> in = ramp((size_t)8 * 64 * tiles * cores);
    Device dev(m);
    GlobalTensor gi = dev.bind("in", DType::F32, in.data(), in.size());
    SimOptions opt;
    opt.races_are_errors = true;
    return dev.run(cores, [&](Core &c) {
        Tile t = c.tile(Mem::UB, 0, DType::F32, 8, 64), e = c.tile(Mem::UB, 2048, DType::F32, 8, 64);
        for (int i = 0; i < tiles; i++) c.TLOAD(t, gi.at(((int64_t)c.index() * tiles + i) * 512, 64));
        c.TDUP(e, 0.5f);
        for (int i = 0; i < exps; i++) c.TEXP(e, e);
    }, opt);
}

}  // namespace

TEST_CASE("cores share GM's bandwidth: streaming cores slow down, computing ones do not", "[npu][timing][gm]") {
    CHECK(default_machine().gm_bytes_per_cycle == 256);
    const int tiles = 16;  // 16 loads of 32 cycles: 512 cycles of MTE2, done 200 later
    SECTION("two cores streaming through GM of one core's rate take twice one core's transfer time") {
        const Machine gm64 = machine_with_gm(64);
        SimReport one = stream_or_compute(gm64, 1, tiles, 0), two = stream_or_compute(gm64, 2, tiles, 0);
        INFO(one.text() << two.text());
        CHECK(one.cycles == 512 + 200);
        CHECK(one.gm_wait == 0);
        // Each core has 32 B/cycle of GM: its loads take 64 cycles each.
        for (const CoreFigures &f : two.per_core) {
            CHECK(f.cycles == 2 * 512 + 200);
            CHECK(f.gm_wait == 512);
        }
        CHECK(two.cycles == 2 * 512 + 200);
        CHECK(two.gm_read_bytes == 2 * one.gm_read_bytes);
    }
    SECTION("with GM wide enough for both, or unshared, two cores take one core's time") {
        for (uint64_t gm : {(uint64_t)128, (uint64_t)0}) {
            SimReport two = stream_or_compute(machine_with_gm(gm), 2, tiles, 0);
            INFO("gm " << gm << "\n" << two.text());
            CHECK(two.cycles == 512 + 200);
            CHECK(two.gm_wait == 0);
        }
    }
    SECTION("on the default machine's 256 B/cycle, 4 cores loading at 64 B/cycle do not wait, 8 take twice as "
            "long") {
        SimReport four = stream_or_compute(default_machine(), 4, tiles, 0),
                  eight = stream_or_compute(default_machine(), 8, tiles, 0);
        INFO(four.text() << eight.text());
        CHECK(four.cycles == 512 + 200);
        CHECK(eight.cycles == 2 * 512 + 200);
    }
    SECTION("a compute-bound kernel still scales") {
        // One load, then 64 x 32 cycles of vector work: each core's load
        // takes 64 cycles at its 32 B/cycle of GM, under its vector work.
        const Machine gm64 = machine_with_gm(64);
        SimReport one = stream_or_compute(gm64, 1, 1, 64), two = stream_or_compute(gm64, 2, 1, 64);
        INFO(one.text() << two.text());
        CHECK(one.cycles > 64 * 32);
        CHECK(two.per_core[1].gm_wait == 32);
        CHECK(two.cycles == one.cycles);
    }
    SECTION("a core that moves no GM bytes takes no share") {
        // Three cores, the third without a load: the two others have 32 B/cycle each.
        const Machine gm64 = machine_with_gm(64);
        std::vector<float> in = ramp((size_t)8 * 64 * tiles * 2);
        Device dev(gm64);
        GlobalTensor gi = dev.bind("in", DType::F32, in.data(), in.size());
        SimReport r = dev.run(3, [&](Core &c) {
            Tile t = c.tile(Mem::UB, 0, DType::F32, 8, 64);
            if (c.index() == 2) {
                c.TDUP(t, 1.0f);
                return;
            }
            for (int i = 0; i < tiles; i++) c.TLOAD(t, gi.at(((int64_t)c.index() * tiles + i) * 512, 64));
        });
        CHECK(r.per_core[0].cycles == 2 * 512 + 200);
        CHECK(r.per_core[2].gm_wait == 0);
    }
}
