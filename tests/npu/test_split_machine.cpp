// The split cube/vector machine (runtime/npu/machine_split.json): kinds of
// core in the machine file, instructions refused on the wrong kind,
// cross-core flags (SET_CROSS / WAIT_CROSS) timed jointly across cores, the
// race check across cores through a GM workspace, and deadlocks across cores.
// The kernels are written by hand: a cube core computes a GEMM tile into a
// GM workspace, the group's two vector cores apply a bias + ReLU epilogue to
// half of its rows each.
#include <catch2/catch.hpp>

#include <functional>
#include <string>

#include "npu_helpers.h"

using namespace npu_test;

namespace {

constexpr uint32_t kM = 64, kK = 64, kN = 128;  // a tile: (kM x kK) x (kK x kN) f32
constexpr uint32_t kHalf = kM / 2;              // rows of a tile per vector core

// How the cross-core flags of the GEMM kernel are written.
enum class Flags { Right, None, WrongPipe, NeverSet };

struct Gemm {
    int tiles;
    std::vector<float> a, b, bias, out;
    Device dev{split_machine()};
    GlobalTensor ga, gb, gbias, gws, gout;

    explicit Gemm(int tiles)
        : tiles(tiles), a(ramp((size_t)tiles * kM * kK, -1, 1, 1)), b(ramp(kK * kN, -1, 1, 2)),
          bias(ramp(kN, -1, 1, 3)), out((size_t)tiles * kM * kN) {
        ga = dev.bind("a", DType::F32, a.data(), a.size());
        gb = dev.bind("b", DType::F32, b.data(), b.size());
        gbias = dev.bind("bias", DType::F32, bias.data(), bias.size());
        gws = dev.bind_owned("workspace", DType::F32, 2 * kM * kN);  // two slots: double-buffered
        gout = dev.bind("out", DType::F32, out.data(), out.size());
    }

    // relu(A_t x B + bias), summed in k order in f32 as the cube does.
    float want(int t, uint32_t i, uint32_t j) const {
        float acc = 0.0f;
        for (uint32_t k = 0; k < kK; k++) acc = acc + a[((size_t)t * kM + i) * kK + k] * b[k * kN + j];
        float v = acc + bias[j];
        return v > 0.0f ? v : 0.0f;
    }

    // Tile t's product into workspace slot t % 2, then SET_CROSS(FIX, slot):
    // "full". Before overwriting a slot it waits WAIT_CROSS(FIX, 2 + slot):
    // "free", set by both vector cores once they have loaded it.
    void cube(Core &c, Flags flags) const {
        Tile la = c.tile(Mem::L1, 0, DType::F32, kM, kK, "a"), lb = c.tile(Mem::L1, kM * kK * 4, DType::F32, kK, kN, "b");
        Tile a0 = c.tile(Mem::L0A, 0, DType::F32, kM, kK), b0 = c.tile(Mem::L0B, 0, DType::F32, kK, kN);
        Tile acc = c.tile(Mem::L0C, 0, DType::F32, kM, kN, "acc");
        c.TLOAD(lb, gb.at(0, kN));
        for (int t = 0; t < tiles; t++) {
            const int slot = t % 2;
            if (t > 0) c.WAIT_FLAG(Pipe::MTE1, Pipe::MTE2, 0);  // L1's A read by the last TMOV
            c.TLOAD(la, ga.at((int64_t)t * kM * kK, kK));
            flag(c, Pipe::MTE2, Pipe::MTE1);
            if (t > 0) c.WAIT_FLAG(Pipe::M, Pipe::MTE1, 0);     // L0A read by the last TMATMUL
            c.TMOV(a0, la);
            if (t == 0) c.TMOV(b0, lb);
            c.SET_FLAG(Pipe::MTE1, Pipe::MTE2, 0);
            flag(c, Pipe::MTE1, Pipe::M);
            if (t > 0) c.WAIT_FLAG(Pipe::FIX, Pipe::M, 0);      // L0C read by the last store
            c.TMATMUL(acc, a0, b0);
            c.SET_FLAG(Pipe::M, Pipe::MTE1, 0);
            flag(c, Pipe::M, Pipe::FIX);
            if (flags != Flags::None) c.WAIT_CROSS(Pipe::FIX, 2 + slot);
            c.TSTORE(gws.at((int64_t)slot * kM * kN, kN), acc);
            c.SET_FLAG(Pipe::FIX, Pipe::M, 0);
            if (flags == Flags::Right) c.SET_CROSS(Pipe::FIX, slot);
            // On M, the flag does not wait for the fix pipe's store: the vectors may read the slot too early.
            if (flags == Flags::WrongPipe) c.SET_CROSS(Pipe::M, slot);
        }
        c.WAIT_FLAG(Pipe::MTE1, Pipe::MTE2, 0);
        c.WAIT_FLAG(Pipe::M, Pipe::MTE1, 0);
        c.WAIT_FLAG(Pipe::FIX, Pipe::M, 0);
    }

    // Rows [32 v, 32 v + 32) of each tile (v: the vector core's place in its group).
    void vector(Core &c, Flags flags) const {
        const uint32_t v = (uint32_t)(c.block() % 2), bytes = kHalf * kN * 4;
        Tile acc = c.tile(Mem::UB, 0, DType::F32, kHalf, kN, "acc"), res = c.tile(Mem::UB, bytes, DType::F32, kHalf, kN, "out");
        Tile tb = c.tile(Mem::UB, 2 * bytes, DType::F32, 1, kN, "bias");
        c.TLOAD(tb, gbias.at(0, kN));
        if (flags != Flags::None)
            for (int slot = 0; slot < 2; slot++) c.SET_CROSS(Pipe::MTE2, 2 + slot);  // both slots free
        for (int t = 0; t < tiles; t++) {
            const int slot = t % 2;
            if (flags != Flags::None) c.WAIT_CROSS(Pipe::MTE2, flags == Flags::NeverSet ? 7 : slot);
            if (t > 0) c.WAIT_FLAG(Pipe::V, Pipe::MTE2, 0);     // acc read by the last TCOLEXPANDADD
            c.TLOAD(acc, gws.at((int64_t)slot * kM * kN + v * kHalf * kN, kN));
            if (flags != Flags::None) c.SET_CROSS(Pipe::MTE2, 2 + slot);  // the slot is free once loaded
            flag(c, Pipe::MTE2, Pipe::V);
            if (t > 0) c.WAIT_FLAG(Pipe::MTE3, Pipe::V, 0);     // out read by the last store
            c.TCOLEXPANDADD(res, acc, tb);
            c.SET_FLAG(Pipe::V, Pipe::MTE2, 0);
            c.TRELU(res, res);
            flag(c, Pipe::V, Pipe::MTE3);
            c.TSTORE(gout.at(((int64_t)t * kM + v * kHalf) * kN, kN), res);
            c.SET_FLAG(Pipe::MTE3, Pipe::V, 0);
        }
        c.WAIT_FLAG(Pipe::V, Pipe::MTE2, 0);
        c.WAIT_FLAG(Pipe::MTE3, Pipe::V, 0);
    }

    SimReport run(Flags flags, const SimOptions &options = {}) {
        return dev.run_groups(1, {{"cube", [&](Core &c) { cube(c, flags); }},
                                  {"vector", [&](Core &c) { vector(c, flags); }}},
                              options);
    }

    int wrong() const {
        int bad = 0;
        for (int t = 0; t < tiles; t++)
            for (uint32_t i = 0; i < kM; i++)
                for (uint32_t j = 0; j < kN; j++) bad += !same_bits(out[((size_t)t * kM + i) * kN + j], want(t, i, j));
        return bad;
    }
};

std::string error_of(const std::function<void()> &f) {
    try {
        f();
    } catch (const NpuError &e) {
        return e.what();
    }
    return "no error";
}

}  // namespace

TEST_CASE("the split machine file: cube and vector kinds, one cube to two vector cores", "[npu][split][machine]") {
    const Machine &m = split_machine();
    REQUIRE(m.kinds.size() == 2);
    const CoreKind &cube = m.kinds[0], &vec = m.kinds[1];
    CHECK(cube.name == "cube");
    CHECK(vec.name == "vector");
    CHECK(cube.per_group == 1);
    CHECK(vec.per_group == 2);
    CHECK(m.groups() == 8);
    CHECK(m.cores == 24);
    for (Mem mem : {Mem::GM, Mem::L1, Mem::L0A, Mem::L0B, Mem::L0C}) CHECK(cube.has(mem));
    CHECK_FALSE(cube.has(Mem::UB));
    CHECK(vec.has(Mem::UB));
    CHECK_FALSE(vec.has(Mem::L1));
    for (Pipe p : {Pipe::S, Pipe::MTE2, Pipe::MTE1, Pipe::M, Pipe::FIX}) CHECK(cube.has(p));
    CHECK_FALSE(cube.has(Pipe::V));
    CHECK_FALSE(cube.has(Pipe::MTE3));
    for (Pipe p : {Pipe::S, Pipe::MTE2, Pipe::V, Pipe::MTE3}) CHECK(vec.has(p));
    CHECK_FALSE(vec.has(Pipe::M));
    CHECK(m.cross_flag_cycles == 50);
    CHECK(std::string(split_machine_json()).find("Assumption") != std::string::npos);
    // The unified machine is one kind with everything.
    const Machine &u = default_machine();
    REQUIRE(u.kinds.size() == 1);
    CHECK_FALSE(u.split());
    CHECK(u.kinds[0].count == u.cores);
    CHECK(u.kinds[0].has(Mem::UB));
    CHECK(u.kinds[0].has(Pipe::FIX));
}

TEST_CASE("machine files with bad kinds are refused, naming the field", "[npu][split][machine]") {
    const std::string text = split_machine_json();
    auto with = [&](const std::string &from, const std::string &to) {
        std::string t = text;
        size_t at = t.find(from);
        REQUIRE(at != std::string::npos);
        t.replace(at, from.size(), to);
        return t;
    };
    CHECK(error_of([&] { parse_machine(with("\"cores\": 24", "\"cores\": 12")); })
              .find("'cores' is 12 but the kinds have 24 cores together") != std::string::npos);
    CHECK(error_of([&] { parse_machine(with("\"count\": 16", "\"count\": 15")); })
              .find("kind 'vector' has 15 cores, not a multiple of its per_group 2") != std::string::npos);
    CHECK(error_of([&] { parse_machine(with("\"per_group\": 2", "\"per_group\": 4")); })
              .find("kind 'vector' makes 4 groups but kind 'cube' makes 8") != std::string::npos);
    CHECK(error_of([&] { parse_machine(with("[\"GM\", \"UB\"]", "[\"GM\", \"VB\"]")); })
              .find("'kinds[1].memories' names \"VB\"; the names are GM, UB, L1, L0A, L0B, L0C") != std::string::npos);
    CHECK(error_of([&] { parse_machine(with("\"name\": \"vector\"", "\"name\": \"cube\"")); })
              .find("two kinds are called 'cube'") != std::string::npos);
}

TEST_CASE("an instruction whose memory or pipe the core's kind lacks is refused", "[npu][split][machine]") {
    std::vector<float> buf(kM * kN);
    Device dev(split_machine());
    GlobalTensor g = dev.bind("buf", DType::F32, buf.data(), buf.size());
    auto on = [&](const std::string &kind, const std::function<void(Core &)> &k) {
        return error_of([&] {
            Device::KindKernels kernels{{"cube", [](Core &) {}}, {"vector", [](Core &) {}}};
            kernels[kind] = k;
            dev.run_groups(1, kernels);
        });
    };
    // The fix pipe of a cube core cannot reach UB.
    std::string fix = on("cube", [](Core &c) {
        c.TMOV(c.tile(Mem::UB, 0, DType::F32, kM, kN), c.tile(Mem::L0C, 0, DType::F32, kM, kN));
    });
    CHECK(fix.find("instruction #0 TMOV") != std::string::npos);
    CHECK(fix.find("the fix pipe of a cube core writes GM only: a cube core has no UB (the vector cores do;") !=
          std::string::npos);
    CHECK(on("vector", [&](Core &c) { c.TLOAD(c.tile(Mem::L1, 0, DType::F32, kM, kN), g.at(0, kN)); })
              .find("the MTE2 pipe of a vector core writes UB only: a vector core has no L1") != std::string::npos);
    CHECK(on("vector", [](Core &c) {
              c.TMATMUL(c.tile(Mem::L0C, 0, DType::F32, 16, 16), c.tile(Mem::L0A, 0, DType::F32, 16, 16),
                        c.tile(Mem::L0B, 0, DType::F32, 16, 16));
          }).find("destination is in L0C, which a vector core of machine 'kiln-npu-split' lacks (its memories: GM, "
                  "UB; the cube cores have L0C)") != std::string::npos);
    CHECK(on("cube", [](Core &c) { c.TDUP(c.tile(Mem::UB, 0, DType::F32, 8, 8), 1.0f); })
              .find("destination is in UB, which a cube core") != std::string::npos);
    CHECK(on("cube", [](Core &c) { c.SET_FLAG(Pipe::M, Pipe::V, 0); })
              .find("a cube core of machine 'kiln-npu-split' has no V pipe (its pipes: S, MTE2, MTE1, M, FIX)") !=
          std::string::npos);
    CHECK(on("vector", [](Core &c) { c.SET_CROSS(Pipe::M, 0); }).find("a vector core of machine 'kiln-npu-split' has no M pipe") !=
          std::string::npos);
    CHECK(on("vector", [](Core &c) { c.SET_CROSS(Pipe::V, 16); }).find("cross-core flags are 0..15") != std::string::npos);
    // A unified machine takes no cross-core flags, and a split one no single kernel.
    CHECK(error_of([] {
              Device u;
              u.run(1, [](Core &c) { c.SET_CROSS(Pipe::V, 0); });
          }).find("SET_CROSS joins the cores of different kinds in a group, but machine 'kiln-npu-default' has one "
                  "kind of core") != std::string::npos);
    CHECK(error_of([&] { dev.run(1, [](Core &) {}); })
              .find("record one kernel per kind with Device::run_groups") != std::string::npos);
    CHECK(error_of([&] { dev.run_groups(1, {{"cube", [](Core &) {}}}); })
              .find("no kernel for the vector cores") != std::string::npos);
}

TEST_CASE("cube computes a GEMM tile into a GM workspace, two vector cores its epilogue", "[npu][split]") {
    Gemm g(1);
    SimOptions opt;
    opt.trace = true;
    SimReport r = g.run(Flags::Right, opt);
    INFO(r.text());
    CHECK(g.wrong() == 0);
    CHECK(r.race_count == 0);
    REQUIRE(r.cores == 3);
    CHECK(r.kinds[r.per_core[0].kind] == "cube");
    CHECK(r.kinds[r.per_core[1].kind] == "vector");
    CHECK(r.kinds[r.per_core[2].kind] == "vector");
    // The cube: B (32768 B) on MTE2 0..512, A (16384 B) 512..768, done 968;
    //   the TMOVs on MTE1 969..1161, done 1181; TMATMUL 4 x 8 x 8 = 256
    //   cycles 1182..1438; its wait for a free slot (set at 208 by both
    //   vector cores) passes at once; the FIX store of 32768 B from 1442 at
    //   the core's GM share, 256 / 3 = 85 B/cycle: 386 cycles, done 1442 +
    //   386 + 50 = 1878, when SET_CROSS sets "full"; its last wait 1878..1879.
    // Each vector core: WAIT_CROSS on MTE2 1878 + 50 = 1928..1929; its
    //   16384 B load 1929..2185, done 2385; V 2386..2515 (TCOLEXPANDADD,
    //   TRELU: 64 cycles each); the store 2517 + 256 + 200 = 2973; its last
    //   wait 2973..2974.
    CHECK(r.per_core[0].cycles == 1879);
    CHECK(r.per_core[1].cycles == 2974);
    CHECK(r.per_core[2].cycles == 2974);
    CHECK(r.cycles == 2974);
    CHECK(r.per_core[0].gm_wait == 386 - 256);
    int waits = 0;
    for (const TraceEvent &e : r.events) {
        if (e.core == 0 || e.pipe != Pipe::MTE2) continue;
        if (e.text.rfind("WAIT_CROSS", 0) == 0) {
            CHECK(e.start == 1928);
            waits++;
        }
        if (e.text.rfind("TLOAD UB[0x0", 0) == 0) {
            CHECK(e.start == 1929);
            waits++;
        }
    }
    CHECK(waits == 4);
    // The GM round trip: the cube writes the accumulator, the vectors read it back.
    CHECK(r.dma_bytes["L0C->GM"] == kM * kN * 4);
    CHECK(r.dma_bytes["GM->UB"] == kM * kN * 4 + 2 * kN * 4);
    CHECK(r.exchange_write_bytes == kM * kN * 4);
    CHECK(r.exchange_read_bytes == kM * kN * 4);
    CHECK(r.text().find("GM round trip between kinds: 32768 bytes written, 32768 read back") != std::string::npos);
    CHECK(r.json().find("\"gm_exchange_bytes\"") != std::string::npos);
    CHECK(r.trace_json().find("core 1 (vector)") != std::string::npos);
    CHECK(r.text().find("1    vector     2974") != std::string::npos);
}

TEST_CASE("a double-buffered workspace over several tiles: cross-core flags count", "[npu][split]") {
    Gemm g(5);
    SimReport r = g.run(Flags::Right);
    INFO(r.text());
    CHECK(g.wrong() == 0);
    CHECK(r.race_count == 0);
    CHECK(r.op_counts["SET_CROSS"] == 5 + 2 * (2 + 5));
    CHECK(r.op_counts["WAIT_CROSS"] == 5 + 2 * 5);
    // Double buffering overlaps the cube's next tile with the vectors' epilogue.
    Gemm one(1);
    SimReport r1 = one.run(Flags::Right);
    CHECK(r.cycles < 5 * r1.cycles);
}

TEST_CASE("a workspace without cross-core flags, or flagged on the wrong pipe, is a race", "[npu][split][race]") {
    for (Flags f : {Flags::None, Flags::WrongPipe}) {
        Gemm g(1);
        SimReport r = g.run(f);
        INFO(r.text());
        REQUIRE(r.race_count > 0);
        bool found = false;
        for (const Race &race : r.races)
            found |= race.text.find("core 0 (cube) #") != std::string::npos &&
                     race.text.find("TSTORE GM#3") != std::string::npos && race.text.find("TLOAD UB") != std::string::npos &&
                     race.text.find("touch the same GM bytes (write/read); cores are not synchronized") != std::string::npos;
        CHECK(found);
        CHECK(r.races[0].first_core != r.races[0].core);
    }
    // Races as errors: the same list.
    Gemm g(1);
    SimOptions opt;
    opt.races_are_errors = true;
    CHECK_THROWS_WITH(g.run(Flags::None, opt), Catch::Contains("race(s)") && Catch::Contains("no SET_CROSS / WAIT_CROSS"));
}

TEST_CASE("a cross-core wait that is never set is a deadlock across cores", "[npu][split]") {
    Gemm g(1);
    std::string e = error_of([&] { g.run(Flags::NeverSet); });
    CHECK(e.find("2 cores deadlock: every pipe of each waits for a flag never set:") != std::string::npos);
    CHECK(e.find("core 1 (vector, group 0) MTE2: #3 WAIT_CROSS(MTE2, flag 7) (its set #1 by core 0 (set 0 times))") !=
          std::string::npos);
    CHECK(e.find("core 2 (vector, group 0) MTE2: #3 WAIT_CROSS(MTE2, flag 7)") != std::string::npos);
    // A cube waiting for its vector cores, which wait for it.
    Device dev(split_machine());
    std::string both = error_of([&] {
        dev.run_groups(1, {{"cube", [](Core &c) { c.WAIT_CROSS(Pipe::FIX, 0); c.SET_CROSS(Pipe::FIX, 1); }},
                           {"vector", [](Core &c) { c.WAIT_CROSS(Pipe::V, 1); c.SET_CROSS(Pipe::V, 0); }}});
    });
    CHECK(both.find("3 cores deadlock") != std::string::npos);
    CHECK(both.find("core 0 (cube, group 0) FIX: #0 WAIT_CROSS(FIX, flag 0) (its set #1 by core 1 (set 0 times) 2 "
                    "(set 0 times))") != std::string::npos);
}

TEST_CASE("groups are independent: each cube feeds its own vector cores", "[npu][split]") {
    // Two groups, each cube core writing its own slot: flags join the cores of a group only.
    std::vector<float> out(2 * 2 * 8 * 8);
    Device dev(split_machine());
    GlobalTensor ws = dev.bind_owned("ws", DType::F32, 2 * 8 * 8), go = dev.bind("out", DType::F32, out.data(), out.size());
    SimReport r = dev.run_groups(2, {{"cube", [&](Core &c) {
                                          Tile acc = c.tile(Mem::L0C, 0, DType::F32, 8, 8);
                                          Tile a = c.tile(Mem::L0A, 0, DType::F32, 8, 8), b = c.tile(Mem::L0B, 0, DType::F32, 8, 8);
                                          c.TMATMUL(acc, a, b);  // zeros
                                          flag(c, Pipe::M, Pipe::FIX);
                                          c.TSTORE(ws.at(c.group() * 64, 8), acc);
                                          c.SET_CROSS(Pipe::FIX, 0);
                                      }},
                                     {"vector", [&](Core &c) {
                                          Tile t = c.tile(Mem::UB, 0, DType::F32, 8, 8);
                                          c.WAIT_CROSS(Pipe::MTE2, 0);
                                          c.TLOAD(t, ws.at(c.group() * 64, 8));
                                          flag(c, Pipe::MTE2, Pipe::V);
                                          c.TADDS(t, t, (float)c.block());
                                          flag(c, Pipe::V, Pipe::MTE3);
                                          c.TSTORE(go.at(c.block() * 64, 8), t);
                                      }}});
    CHECK(r.cores == 6);
    CHECK(r.race_count == 0);
    for (int blk = 0; blk < 4; blk++) CHECK(out[blk * 64 + 9] == (float)blk);
    CHECK(dev.num_groups() == 2);
}
