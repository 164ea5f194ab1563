// The header kiln-gen writes for the npu target declares everything the
// host stub defines, NAME_npu_report() included, so an application calls it
// through the header as it calls the kernel.
#include <catch2/catch.hpp>

#include <HalideBuffer.h>

#include <string>

#include "blur3x3_npu.h"

TEST_CASE("generator: the npu target's header declares NAME_npu_report, the last run's report", "[generator][npu]") {
    Halide::Runtime::Buffer<float> in(64, 32), out(64, 32);
    in.fill(1.0f);
    REQUIRE(blur3x3_npu(in.raw_buffer(), out.raw_buffer()) == 0);
    const char *report = blur3x3_npu_npu_report();  // NAME_npu_report, declared in blur3x3_npu.h
    REQUIRE(report != nullptr);
    std::string json = report;
    CHECK(json.rfind("{", 0) == 0);
    CHECK(json.find("\"cycles\"") != std::string::npos);
}
