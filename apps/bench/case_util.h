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

namespace kiln_bench {

using FBuf = Halide::Runtime::Buffer<float>;

// A dense float buffer of the given extents, uniform in [lo, hi).
FBuf random_buffer(const std::vector<int> &extents, float lo, float hi, unsigned seed);
FBuf zeros_like(const FBuf &b);

// Halide's view of a buffer (shares the allocation).
Halide::Buffer<float> halide_view(FBuf &b);

// Kiln: first call = JIT compilation (fresh cache) + one run; compile_ms is
// the first call minus the median run. With auto_rows() on, the same
// generator under the schedule kiln::autoschedule chooses is run too (for
// the first Kiln pipeline of a case), into buffers like outs, checked
// against them (within 1e-4: see case_util.cpp), and kept for take_auto_rows().
Entry run_kiln(KilnRunner &k, const std::vector<FBuf *> &outs, int runs);
// The same for outputs of any type (no auto row).
Entry run_kiln(KilnRunner &k, const std::vector<halide_buffer_t *> &outs, int runs);
bool &auto_rows();
// The "kiln auto" entries run_kiln made since the last call.
std::vector<Entry> take_auto_rows();
// Halide: compile_jit() is timed on its own (compile_ms), then the runs.
Entry run_halide(Halide::Pipeline p, const std::vector<FBuf *> &outs, int runs);
Entry run_halide(Halide::Pipeline p, Halide::Realization outs, int runs);
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
