// kiln-lab's chart: one self-contained SVG with two panels of horizontal
// bars, time and memory traffic per schedule, each schedule one colour.
#pragma once
#include <string>
#include <vector>

namespace kiln_lab {

struct ChartRow {
    std::string schedule;
    double time_ms = 0;    // best of the timed runs
    double memory_mb = 0;  // memory traffic from the fusion report
};

std::string chart_svg(const std::string &title, const std::vector<ChartRow> &rows);

}  // namespace kiln_lab
