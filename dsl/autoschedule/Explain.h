// The autoscheduler's account of a search (kiln/Autoschedule.h): the text
// and JSON explanation and the header of the schedule file, from the
// decisions the search recorded in an AutoscheduleResult.
//
//   Autoschedule for blur_y (target x86-64-linux-avx2; sizes blur_y 4096x4096)
//   machine: ...
//   searched 14 schedules in 210 ms (budget: no limit in schedules, 1000 ms); predicted 3.1 ms (...)
//   skipped: ...                       what the search left to its default rule
//   blur_x: compute_at(blur_y, yi) store_at(blur_y, yo)
//     <why>
//     * <chosen option>   <its cost terms>
//       <note>
//
// The schedule file's header names the sizes, the schedules searched and
// the prediction, and not the search's time, which differs from run to run:
// a build whose search stopped at a budget of schedules writes the same file
// every time.
#pragma once
#include <map>
#include <string>
#include <vector>

#include "kiln/Autoschedule.h"

namespace kiln {
namespace internal {

// Why alternative `best` of d beat the others: its prediction and the
// term where the runner-up loses most.
std::string decision_reason(const AutoscheduleDecision &d, size_t best);

// Fills r.explanation and r.explanation_json, and puts the header before
// r.schedule_text. `pipeline` names the first output.
void explain(AutoscheduleResult &r, const std::string &pipeline, const Target &t,
             const std::map<std::string, std::vector<int>> &sizes, const AutoscheduleOptions &o);

}  // namespace internal
}  // namespace kiln
