// Halide 14's own autoschedulers, for the bench's rows that compare them with
// kiln::autoschedule: Mullapudi2016, Adams2019 and Li2018, loaded as the
// plugins of Halide's package (its CMake targets Halide::Mullapudi2016, ...,
// whose files apps/CMakeLists.txt passes in).
//
//   Halide::Pipeline p = twin(false);   // the algorithm, unscheduled
//   set_output_estimates(p, {&out});     // the sizes Kiln's search is given
//   double ms = halide_autoschedule(p, "Adams2019", threads);
//   p.compile_jit(kiln_halide::jit_target());
//
// Every search is for kiln_halide::jit_target() (the CPU's features, never
// Halide's own host detection) and halide_machine_params(): the threads the
// bench runs with, the host's last-level cache as Kiln's cost model reads it
// (kiln::MachineModel::host()) and Halide's default balance (40).
//
// Adams2019 reads its cost model's weights from HL_WEIGHTS_DIR if set; the
// bench leaves it unset, and the plugin then uses the baseline weights built
// into it (it says "Loading weights from built-in data" under
// HL_DEBUG_AUTOSCHEDULE=1): weights trained by Halide's authors on other
// machines, not retrained here.
#pragma once
#include <string>
#include <vector>

#include "halide_compat.h"

namespace kiln_bench {

using FBuf = Halide::Runtime::Buffer<float>;

// The autoschedulers compared, by the names Halide registers them under.
const std::vector<std::string> &halide_autoschedulers();

Halide::MachineParams halide_machine_params(int threads);

// A buffer's extents in each dimension, as a Func's or ImageParam's estimates.
Halide::Region estimates_of(const halide_buffer_t &b);

// Each output Func of p gets the extents of the buffer it is realized into
// as its estimate (Func::set_estimates), in order.
void set_output_estimates(Halide::Pipeline p, const std::vector<FBuf *> &outs);

// Schedules p in place with the autoscheduler `name` (its plugin loaded on
// first use) and returns the search's wall-clock milliseconds; `schedule`,
// if given, gets the schedule it chose as Halide prints it (C++). A plugin
// that cannot schedule p throws Halide::Error; a plugin file that is
// missing, std::runtime_error.
double halide_autoschedule(Halide::Pipeline p, const std::string &name, int threads,
                           std::string *schedule = nullptr);

// The first non-empty line of an error message, without Halide's "Error:"
// prefix: what a table cell can show.
std::string first_line(const std::string &message);

}  // namespace kiln_bench
