// The fused row and column broadcast ops (TROWEXPAND*, TCOLEXPAND*) that
// softmax and layernorm select instead of an expanded tile and a binary op.
#include <catch2/catch.hpp>

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
