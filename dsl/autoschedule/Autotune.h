// Autotuning (AutoscheduleOptions::autotune): the search's best candidates
// by predicted cost are run, and the one measured fastest is kept.
//
//   candidates: 1 (the model's choice) predicted 1.20 ms, 2 predicted 1.31 ms
//     -> measured 1.05 ms and 0.92 ms: candidate 2 is chosen
//
// measure_on_random_inputs() is the default timer: the pipeline as it is
// scheduled now, JIT-compiled for the target and run on inputs of random
// values that cover what it reads at the estimated sizes.
#pragma once
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "Snapshot.h"
#include "kiln/Autoschedule.h"

namespace kiln {
namespace internal {

// How many timed runs measure_on_random_inputs() takes the minimum of,
// after one warm-up run (which includes the compile).
constexpr int autotune_runs = 5;

// Runs every candidate (its schedule text applied to p's Funcs, restored
// from `snapshot` after) through `measure`, fills r.autotuned in the order
// given, and returns the index of the fastest candidate that ran: 0 (the
// first, the model's choice) when none ran or it was fastest.
size_t autotune(const Pipeline &p, const Target &t, const Snapshot &snapshot, std::vector<AutotuneCandidate> candidates,
                const std::function<double(const Pipeline &)> &measure, AutoscheduleResult &r);

// The time in ms (min of `runs` runs after a warm-up) of p as scheduled
// now, JIT-compiled for t, on inputs of random values (floats in [0, 1),
// integers in [0, 255]) covering the region the schedule reads for outputs
// of the given sizes, scalar Params at their current values. The inputs
// bound to p's ImageParams before are bound again after.
double measure_on_random_inputs(const Pipeline &p, const Target &t,
                                const std::map<std::string, std::vector<int>> &sizes, int runs = autotune_runs);

}  // namespace internal
}  // namespace kiln
