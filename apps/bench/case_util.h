// Shared pieces of the suite cases: random inputs, and running Kiln, Halide
// and an anchor into Entries (harness.h).
#pragma once
#include <functional>
#include <string>
#include <vector>

#include "halide_compat.h"
#include "halide_target.h"
#include "harness.h"
#include "kiln_runner.h"
#include "suite.h"

namespace kiln_bench {

using FBuf = Halide::Runtime::Buffer<float>;

// A dense float buffer of the given extents, uniform in [lo, hi).
FBuf random_buffer(const std::vector<int> &extents, float lo, float hi, unsigned seed);
FBuf zeros_like(const FBuf &b);

// Halide's view of a buffer (shares the allocation).
Halide::Buffer<float> halide_view(FBuf &b);

// Kiln: the JIT compilation (fresh cache: lowering, g++ and loading the
// kernel, CPU ms with the compiler's processes) is timed on its own, as
// Halide's compile_jit() is, then the runs (the first one a warm-up, as
// for Halide). With auto_rows() on, the same
// generator under the schedule kiln::autoschedule chooses is run too (for
// the first Kiln pipeline of a case), into buffers like outs, checked
// against them (within 1e-4: see case_util.cpp), and kept for take_auto_rows().
Entry run_kiln(KilnRunner &k, const std::vector<FBuf *> &outs, int runs);
// The same for outputs of any type (no auto row).
Entry run_kiln(KilnRunner &k, const std::vector<halide_buffer_t *> &outs, int runs);
bool &auto_rows();
// The "kiln auto" row of k's generator: the search (in its compile ms),
// then the runs into `outs`, unchecked (the caller compares them).
Entry run_kiln_auto(const KilnRunner &k, const std::vector<halide_buffer_t *> &outs, int runs);
// Kept for take_auto_rows(), as run_kiln keeps its own.
void add_auto_row(Entry e);
// The "kiln auto" entries run_kiln made since the last call.
std::vector<Entry> take_auto_rows();
// Halide: compile_jit() is timed on its own (compile_ms), then the runs.
Entry run_halide(Halide::Pipeline p, const std::vector<FBuf *> &outs, int runs);
// A case's Halide program: its algorithm under the hand schedule
// (scheduled = true) or unscheduled, for Halide's autoschedulers.
using HalideTwin = std::function<Halide::Pipeline(bool scheduled)>;
// run_halide(twin(true), outs, runs). With auto_rows() on, also the twin
// unscheduled, with the extents of outs as its estimates, under each of
// Halide's autoschedulers (halide_auto.h): rows "halide mullapudi2016",
// "halide adams2019" and "halide li2018", each checked against `ref` (the
// case's Kiln outputs) and kept for take_auto_rows(). An autoscheduler
// that refuses the pipeline, or whose schedule does not compile or run,
// gets a row that says so (Entry::failure).
// The autoschedulers are told of o.threads cores.
Entry run_halide(const HalideTwin &twin, const std::vector<FBuf *> &outs, const std::vector<FBuf *> &ref,
                 const SuiteOptions &o);
Entry run_halide(Halide::Pipeline p, Halide::Realization outs, int runs);
// Row "halide <name>" (lower case): p, unscheduled and with its estimates
// set, under Halide's autoscheduler `name` for `threads` cores, then
// `run(p)` (which realizes it, times it and sets the error against the
// case's Kiln outputs); the search's ms and the schedule it chose are kept.
// A refusal, or a schedule that does not compile or run, is a row that says
// so (Entry::failure).
Entry run_halide_autoscheduled(Halide::Pipeline p, const std::string &name, int threads,
                               const std::function<Entry(Halide::Pipeline)> &run);
Entry run_anchor(const std::string &system, const std::function<void()> &f, int runs, const std::string &note = "",
                 bool same_work = true);

// entry.max_rel_err = the largest relative error of `outs` against `ref`.
void check_against(Entry &entry, const std::vector<FBuf *> &outs, const std::vector<FBuf *> &ref);

// Halide's runtime set-up (about half a second, once per process) is paid
// here, not by the first case's compile time.
void warm_up_halide();
// Likewise Kiln's: the JIT cache directory's precompiled prologue and runtime
// object (dsl/driver/JITShared.h) are built here, once, as Halide builds its
// runtime once per process.
void warm_up_kiln();

}  // namespace kiln_bench
