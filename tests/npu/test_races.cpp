// The race checker: pipes are ordered only by flags and barriers, so a
// kernel missing one flag pair is reported with both instructions.
#include <catch2/catch.hpp>

#include "npu_helpers.h"

using namespace npu_test;

namespace {

SimReport run_stream(bool double_buffer, int skip, int cores = 1) {
    std::vector<float> in = ramp(8 * 64 * 4 * cores), out(in.size());
    Device dev;
    GlobalTensor gi = dev.bind("in", DType::F32, in.data(), in.size()),
                 go = dev.bind("out", DType::F32, out.data(), out.size());
    return dev.run(cores, [&](Core &c) {
        GlobalTensor i = gi, o = go;
        stream_kernel(c, i, o, 4, 8, 64, double_buffer, skip);
    });
}

}  // namespace

TEST_CASE("a correctly synchronized kernel has no races", "[npu][race]") {
    CHECK(run_stream(false, -1).race_count == 0);
    CHECK(run_stream(true, -1).race_count == 0);
}

TEST_CASE("removing any one flag pair is caught, naming both instructions", "[npu][race]") {
    for (bool db : {false, true})
        for (int skip = 0; skip < 4; skip++) {
            INFO("double buffer " << db << ", flag pair " << skip << " removed");
            SimReport r = run_stream(db, skip);
            REQUIRE(r.race_count > 0);
            const std::string &t = r.races[0].text;
            CHECK(t.find("with no flag ordering them") != std::string::npos);
            CHECK(r.races[0].first != r.races[0].second);
        }
    SimReport r = run_stream(false, 0);
    CHECK(r.races[0].text.find("TLOAD") != std::string::npos);
    CHECK(r.races[0].text.find("TADDS") != std::string::npos);
}

TEST_CASE("races_are_errors throws with the list", "[npu][race]") {
    std::vector<float> in(512), out(512);
    Device dev;
    GlobalTensor gi = dev.bind("in", DType::F32, in.data(), 512), go = dev.bind("out", DType::F32, out.data(), 512);
    SimOptions opt;
    opt.races_are_errors = true;
    auto kernel = [&](Core &c) {
        Tile t = c.tile(Mem::UB, 0, DType::F32, 8, 64);
        c.TLOAD(t, gi.at(0, 64));
        c.TSTORE(go.at(0, 64), t);  // MTE3 reads what MTE2 writes: no flag
    };
    CHECK_THROWS_WITH(dev.run(1, kernel, opt), Catch::Contains("1 race(s)") && Catch::Contains("#0 TLOAD") &&
                                                   Catch::Contains("#1 TSTORE"));
}

TEST_CASE("cores writing the same GM bytes race", "[npu][race]") {
    std::vector<float> in(512), out(512);
    Device dev;
    GlobalTensor gi = dev.bind("in", DType::F32, in.data(), 512), go = dev.bind("out", DType::F32, out.data(), 512);
    auto kernel = [&](Core &c, bool disjoint) {
        Tile t = c.tile(Mem::UB, 0, DType::F32, 4, 64);
        int64_t off = disjoint ? c.index() * 256 : 0;
        c.TLOAD(t, gi.at(off, 64));
        flag(c, Pipe::MTE2, Pipe::MTE3);
        c.TSTORE(go.at(off, 64), t);
    };
    CHECK(dev.run(2, [&](Core &c) { kernel(c, true); }).race_count == 0);
    SimReport r = dev.run(2, [&](Core &c) { kernel(c, false); });
    REQUIRE(r.race_count == 1);
    CHECK(r.races[0].text.find("cores are not synchronized") != std::string::npos);
}

TEST_CASE("regions overlap only where bytes meet", "[npu][race]") {
    // Two column halves of one 8-row tile with 256-byte rows do not overlap.
    Region left{1, 0, 256, 128, 8}, right{1, 128, 256, 128, 8}, row3{1, 3 * 256 + 64, 256, 8, 1};
    CHECK_FALSE(overlap(left, right));
    CHECK(overlap(left, row3));
    CHECK_FALSE(overlap(right, row3));
    Region other_mem = right;
    other_mem.space = 2;
    CHECK_FALSE(overlap(other_mem, right));
}
