// One self-contained HTML page showing what a schedule does (the `-e
// stmt_html` view): the lowered loop nest as collapsible blocks, the fusion
// report beside it (Report.h) with a bar per Func for points computed and
// memory bytes against the unfused baseline, and the emitted C++, in which
// clicking a loop of the nest highlights its `for` line. Every Func keeps
// one colour throughout. No external resources: the page opens offline.
//
//   std::ofstream("blur.html") << stmt_html(Pipeline(blur_y), "blur", {{"blur_y", {1920, 1080}}});
//
// `sizes` are the report's buffer sizes (see Pipeline::report).
#pragma once
#include <map>
#include <string>
#include <vector>

#include "Pipeline.h"

namespace kiln {

// Text made safe inside HTML/SVG elements and quoted attributes (& < > " ').
std::string html_escape(const std::string &s);

std::string stmt_html(const Pipeline &p, const std::string &fn_name,
                      const std::map<std::string, std::vector<int>> &sizes, const Target &t = Target::host());
// The same with an explicit signature (as Pipeline::compile_to_cpp_source),
// and, if the schedule is the autoscheduler's, its explanation
// (AutoscheduleResult::explanation): a panel with one folded entry per
// decision (the choice, its predicted time, the alternatives).
std::string stmt_html(const Pipeline &p, const std::string &fn_name, const std::vector<Argument> &args,
                      const std::map<std::string, std::vector<int>> &sizes, const Target &t,
                      const std::string &explanation = "");

}  // namespace kiln
