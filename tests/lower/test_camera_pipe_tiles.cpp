// camera_pipe's shipped host_tiled schedule lowers its per-tile stages once:
// curved's columns split ShiftInwards (its last tile of a row shifted to end
// at the row's end) and demosaiced's row pair RoundUp give the demosaic and
// the colour correction constant V x 2 extents in every tile, so no pass
// copies them. With RoundUp columns, partition_loops copied the whole tile
// for the last one (its producers clamped to the row), and with ShiftInwards
// rows it partitioned the demosaic's row loop: two more copies of the
// kernel's largest code, 35-45% of the C++ compiler's time on it
// (docs/performance.md, "Compile time (session 51)").
#include <catch2/catch.hpp>

#include <string>

#include "kiln/Generator.h"
#include "kiln/ScheduleFile.h"
#include "kiln/kiln.h"

using namespace kiln;

namespace {

int occurrences(const std::string &s, const std::string &what) {
    int n = 0;
    for (size_t at = s.find(what); at != std::string::npos; at = s.find(what, at + what.size())) n++;
    return n;
}

}  // namespace

TEST_CASE("camera_pipe host_tiled: the demosaic and the colour correction are lowered once per tile",
          "[lower][camera_pipe]") {
    // AVX-512: V = natural_vector_size(uint16) * 2 = 64 columns a tile.
    const Target t("x86-64-linux-avx512-fast_math");
    auto g = GeneratorRegistry::create("camera_pipe");
    Pipeline p = g->build_pipeline();
    ScheduleFile::load(std::string(KILN_SOURCE_DIR) + "/schedules/camera_pipe/host_tiled.sched").apply(p, t);
    const std::string s = p.lowered_stmt(t);
    CHECK(occurrences(s, "produce demosaiced") == 1);
    CHECK(occurrences(s, "produce corrected") == 1);
    // Neither curved's tile loop nor the demosaic's row loop has a steady
    // state with edges beside it.
    CHECK(s.find("curved.s0.x.x.steady") == std::string::npos);
    CHECK(s.find("demosaiced.s0.y.y.steady") == std::string::npos);
    // Every tile is 64 columns, the last one shifted inwards.
    CHECK(occurrences(s, "min((curved.s0.x.x * 64), (curved.s0.x.loop_extent - 64))") >= 1);
}
