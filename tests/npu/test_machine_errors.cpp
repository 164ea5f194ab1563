// Machine files, and the errors a kernel gets for breaking the machine's
// rules: capacity, alignment, bounds, operand memories, deadlock.
#include <catch2/catch.hpp>

#include <cstdio>
#include <fstream>

#include "npu_helpers.h"

using namespace npu_test;

TEST_CASE("the default machine file states every figure", "[npu][machine]") {
    const Machine &m = default_machine();
    CHECK(m.capacity(Mem::UB) == 192 * 1024);
    CHECK(m.capacity(Mem::L1) == 512 * 1024);
    CHECK(m.capacity(Mem::L0A) == 64 * 1024);
    CHECK(m.capacity(Mem::L0B) == 64 * 1024);
    CHECK(m.capacity(Mem::L0C) == 128 * 1024);
    CHECK(m.alignment == 32);
    CHECK(m.matrix_m * m.matrix_n * (m.matrix_k_bytes / 2) == 16 * 16 * 16);
    CHECK(m.rate(Pipe::MTE2).bytes_per_cycle == 64);
    CHECK(std::string(default_machine_json()).find("assumption") != std::string::npos);
}

TEST_CASE("another machine file changes the simulation", "[npu][machine]") {
    std::string text = default_machine_json();
    size_t at = text.find("\"bytes_per_cycle\": 64");
    REQUIRE(at != std::string::npos);
    text.replace(at, 21, "\"bytes_per_cycle\": 32");  // MTE2 at half the bandwidth
    std::string path = "npu_test_machine.json";
    std::ofstream(path) << text;
    Machine slow = load_machine(path);
    std::remove(path.c_str());
    CHECK(slow.rate(Pipe::MTE2).bytes_per_cycle == 32);
    std::vector<float> in(512);
    Device dev(slow);
    GlobalTensor gi = dev.bind("in", DType::F32, in.data(), 512);
    SimReport r = dev.run(1, [&](Core &c) { c.TLOAD(c.tile(Mem::UB, 0, DType::F32, 8, 64), gi.at(0, 64)); });
    CHECK(r.cycles == 64 + 200);
    CHECK_THROWS_WITH(parse_machine("{\"cores\": 1}"), Catch::Contains("missing field 'alignment'"));
    CHECK_THROWS_WITH(load_machine("/nonexistent/machine.json"), Catch::Contains("cannot read"));
    CHECK_THROWS_WITH(parse_machine("{"), Catch::Contains("not valid JSON"));
    std::string zero_gm = default_machine_json();
    at = zero_gm.find("\"gm\": {\"bytes_per_cycle\": 256");
    REQUIRE(at != std::string::npos);
    zero_gm.replace(at, 29, "\"gm\": {\"bytes_per_cycle\": 0");
    CHECK_THROWS_WITH(parse_machine(zero_gm), Catch::Contains("field 'gm.bytes_per_cycle' must be a positive integer"));
}

TEST_CASE("capacity, alignment, bounds and memory errors name the instruction and the numbers", "[npu][machine]") {
    std::vector<float> in(512);
    Device dev;
    GlobalTensor gi = dev.bind("in", DType::F32, in.data(), 512);
    auto fails = [&](const std::function<void(Core &)> &k) {
        try {
            dev.run(1, k);
        } catch (const NpuError &e) {
            return std::string(e.what());
        }
        return std::string("no error");
    };
    std::string over = fails([&](Core &c) { c.TLOAD(c.tile(Mem::UB, 190 * 1024, DType::F32, 8, 256), gi.at(0, 64)); });
    CHECK(over.find("instruction #0 TLOAD") != std::string::npos);
    CHECK(over.find("UB has 196608 bytes (over by 6144)") != std::string::npos);
    CHECK(fails([&](Core &c) { c.TLOAD(c.tile(Mem::UB, 16, DType::F32, 8, 8), gi.at(0, 8)); })
              .find("address 16 is not a multiple of 32 bytes") != std::string::npos);
    CHECK(fails([&](Core &c) { c.TLOAD(c.tile(Mem::UB, 0, DType::F32, 8, 6), gi.at(0, 6)); })
              .find("rows are 24 bytes (6 x f32), not a multiple of 32 bytes") != std::string::npos);
    CHECK(fails([&](Core &c) { c.TLOAD(c.tile(Mem::UB, 0, DType::F32, 8, 64), gi.at(64, 64)); })
              .find("GM buffer 'in' has 512 elements but the access spans elements [64, 575]") != std::string::npos);
    CHECK(fails([&](Core &c) { c.TLOAD(c.tile(Mem::L0A, 0, DType::F32, 8, 64), gi.at(0, 64)); })
              .find("no TLOAD path from GM to L0A") != std::string::npos);
    CHECK(fails([&](Core &c) {
              Tile t = c.tile(Mem::L1, 0, DType::F32, 8, 64);
              c.TADD(t, t, t);
          }).find("destination must be in UB, not L1") != std::string::npos);
    CHECK(fails([&](Core &c) {
              Tile t = c.tile(Mem::UB, 0, DType::F32, 8, 64), s = t;
              s.set_valid(4, 64);
              c.TADD(t, s, t);
          }).find("source a's valid region 4x64 does not cover the 8x64") != std::string::npos);
    CHECK(fails([&](Core &c) {
              Tile t = c.tile(Mem::UB, 0, DType::I32, 8, 8);
              c.TEXP(t, t);
          }).find("TEXP needs f32 or f16 tiles, not i32") != std::string::npos);
    std::string dead = fails([&](Core &c) {
        c.WAIT_FLAG(Pipe::MTE2, Pipe::V, 1);
        c.TDUP(c.tile(Mem::UB, 0, DType::F32, 8, 8), 0.0f);
    });
    CHECK(dead.find("core 0 deadlocks") != std::string::npos);
    CHECK(dead.find("V: #0 WAIT_FLAG(MTE2 -> V, event 1)") != std::string::npos);
}
