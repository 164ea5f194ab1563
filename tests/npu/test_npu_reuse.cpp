// The fused row and column broadcast ops (TROWEXPAND*, TCOLEXPAND*) that
// softmax and layernorm select instead of an expanded tile and a binary op,
// and the 8-row double-buffered tiles that fit UB once buffers share it.
#include <catch2/catch.hpp>

#include <regex>

#include "npu_pipelines.h"

using namespace npu_pipelines;

TEST_CASE("softmax and layernorm select the fused row and column broadcast ops, never an expanded tile",
          "[npu][select][fused]") {
    auto has = [](const std::string &src, const char *op) { return src.find(std::string("core.") + op + "(") != std::string::npos; };
    Softmax s;
    s.fused(2, true);
    std::string src = Pipeline(s.output).compile_to_cpp_source("softmax2", Target("npu"));
    CHECK(has(src, "TROWEXPANDSUB"));
    CHECK(has(src, "TROWEXPANDDIV"));
    CHECK(!has(src, "TROWEXPAND"));
    CHECK(!has(src, "TSUB"));
    CHECK(!has(src, "TDIV"));
    LayerNorm l;
    l.fused(2, true);
    src = Pipeline(l.output).compile_to_cpp_source("layernorm2", Target("npu"));
    for (const char *op : {"TROWEXPANDSUB", "TROWEXPANDMUL", "TCOLEXPANDMUL", "TCOLEXPANDADD"}) {
        INFO(op);
        CHECK(has(src, op));
    }
    for (const char *op : {"TROWEXPAND", "TCOLEXPAND", "TSUB", "TADD"}) {  // TMUL: (x - mean)^2
        INFO(op);
        CHECK(!has(src, op));
    }
}

namespace {

// The "// UB: N bytes at once, M without sharing." line of an NPU kernel.
std::pair<uint64_t, uint64_t> ub_placement(const std::string &src) {
    std::smatch m;
    REQUIRE(std::regex_search(src, m, std::regex("// UB: ([0-9]+) bytes at once, ([0-9]+) without sharing")));
    return {std::stoull(m[1]), std::stoull(m[2])};
}

}  // namespace

TEST_CASE("softmax and layernorm in 8-row double-buffered tiles fit UB by sharing, outputs equal the host's",
          "[npu][codegen][fused][reuse]") {
    const uint64_t ub = 196608, bytes = (uint64_t)W * H * 4;
    Buffer<float, 2> in = make_input(), host(W, H), npu(W, H);
    {
        Softmax s;
        s.fused(8, true);
        s.input.set(in);
        s.output.realize(host);
        auto [peak, unshared] = ub_placement(Pipeline(s.output).compile_to_cpp_source("softmax8", Target("npu")));
        INFO("softmax UB: " << peak << " at once, " << unshared << " without sharing");
        CHECK(unshared > ub);  // overflowed before buffers shared UB
        CHECK(peak <= ub);
        json r = run_npu(Pipeline(s.output), in, npu, "softmax8_db");
        check_same(host, npu);
        CHECK(r["race_count"] == 0);
        CHECK(r["gm_read_bytes"] == bytes);
        CHECK(r["gm_write_bytes"] == bytes);
        CHECK(r["peak_bytes"]["UB"] == peak);
        CHECK(r["instructions_by_op"]["TROWEXPANDSUB"] == H / 8);
        CHECK(r["instructions_by_op"]["TROWEXPANDDIV"] == H / 8);
        CHECK(!r["instructions_by_op"].contains("TROWEXPAND"));
        INFO(r.dump(1));
        CHECK(r["cycles"].get<double>() <= 1.15 * roofline(r));
    }
    {
        // The 2-row tiles that fitted before: UB peak 98560 bytes then (each row statistic expanded
        // into a tile, buffers one after the other); the fused ops and sharing halve it.
        Softmax s;
        s.fused(2, true);
        auto [peak, unshared] = ub_placement(Pipeline(s.output).compile_to_cpp_source("softmax2", Target("npu")));
        INFO("softmax, 2-row tiles, UB: " << peak << " at once, " << unshared << " without sharing");
        CHECK(peak <= 98560 / 2);
        CHECK(peak < unshared);
    }
    Buffer<float, 1> gamma = make_row(0.5f, 1.0f), beta = make_row(0.25f, -0.5f);
    LayerNorm l;
    l.fused(8, true);
    l.input.set(in);
    l.gamma.set(gamma);
    l.beta.set(beta);
    l.output.realize(host);
    auto [peak, unshared] = ub_placement(Pipeline(l.output).compile_to_cpp_source("layernorm8", Target("npu")));
    INFO("layernorm UB: " << peak << " at once, " << unshared << " without sharing");
    CHECK(peak < unshared);
    CHECK(peak <= ub);
    json r = run_npu_args(Pipeline(l.output), {{"input", in}, {"gamma", gamma}, {"beta", beta}, {"output", npu}},
                          "layernorm8_db");
    check_same(host, npu);
    CHECK(r["race_count"] == 0);
    CHECK(r["gm_read_bytes"] == bytes + 2 * W * 4);
    CHECK(!r["instructions_by_op"].contains("TROWEXPAND"));
    CHECK(!r["instructions_by_op"].contains("TCOLEXPAND"));
    INFO(r.dump(1));
    CHECK(r["cycles"].get<double>() <= 1.15 * roofline(r));
}
