// The measuring side of apps/bench: timing (a warm-up, then the minimum and
// median of N runs), the results of one suite case across systems, and the
// output (a table on stdout, JSON, an SVG chart).
//
// Every case reports the work it does as ideal memory traffic (each input
// read once, each output written once) and as flops, so a time becomes GB/s
// and GFLOP/s and a percentage of the roofline measured in the same run.
#pragma once
#include <nlohmann/json.hpp>

#include <functional>
#include <string>
#include <vector>

#include <sys/resource.h>

#include "probes.h"

namespace kiln_bench {

struct Timing {
    double first_ms = 0;  // the first call: JIT compilation (if any) + one run
    // CPU time of the first call (this thread and the processes it waited
    // for: the JIT's compiler) and of this thread in the fastest run, which
    // a loaded machine disturbs far less than wall-clock time.
    double first_cpu_ms = 0, best_run_cpu_ms = 0;
    std::vector<double> runs_ms;
    // CPU time of every thread of the process in each timed run: over the
    // run's wall time, how many cores it kept busy (near the thread count
    // when a parallel kernel's threads ran side by side, near 1 when they
    // took turns on one core).
    std::vector<double> runs_process_cpu_ms;
    double best() const;
    double median() const;
};

// f() once (the warm-up; its time is first_ms), then `runs` timed calls.
Timing time_runs(int runs, const std::function<void()> &f);
// CPU milliseconds so far of RUSAGE_THREAD, RUSAGE_SELF or RUSAGE_CHILDREN
// (the waited-for child processes).
double cpu_ms(int who);

// One system's measurement of a case.
struct Entry {
    std::string system;       // "kiln", "halide", "openblas sgemm", ...
    std::string note;         // what exactly was run, if not the same work
    Timing timing;
    double compile_ms = -1;   // JIT compile time (cache disabled), if measured
    double compile_cpu_ms = -1;  // its CPU time (the compiler processes' included)
    bool compile_reused = false;  // Kiln: the kernel an earlier case compiled, loaded again
    double max_rel_err = 0;   // against Kiln's output
    bool same_work = true;    // false: an anchor that does less or other work (shown, not ratioed)
    double tolerance = -1;    // the largest max_rel_err accepted, if not the case's
    double search_ms = -1;    // an autoscheduler's search time, if one chose the schedule
    std::string schedule;     // the schedule it chose: .sched text for Kiln, C++ for Halide
    // Why there is no measurement ("refused: ..." by an autoscheduler,
    // "failed: ..." to compile or run); empty when there is one.
    std::string failure;
};

struct CaseResult {
    std::string name;         // "gemm_bias_relu 1024"
    std::string schedule;     // Kiln's schedule (file or description)
    double bytes = 0;         // ideal memory traffic of one run
    double flops = 0;         // arithmetic of one run (0: memory-bound case)
    double tolerance = 0;     // max relative error accepted against Kiln
    std::vector<Entry> entries;  // entries[0] is Kiln

    const Entry *find(const std::string &system) const;
    bool outputs_agree() const;
};

nlohmann::json to_json(const CaseResult &c, const Roofline &roof);
void print_table(const std::vector<CaseResult> &cases, const Roofline &roof);
// Geometric mean of Kiln / Halide time over the cases that have both.
double geomean_kiln_over_halide(const std::vector<CaseResult> &cases);
// Geometric mean of `system`'s time / Kiln's (its hand schedule) over the
// cases that have it (0 if none), and the case where that ratio is largest.
double geomean_over_kiln(const std::vector<CaseResult> &cases, const std::string &system, std::string *worst = nullptr,
                         double *worst_ratio = nullptr);
// `system` (an autoscheduler's row) against "kiln auto" over the cases
// that measured both: the geometric mean of system / kiln auto time, how
// many cases that is, and in how many Kiln auto is faster (0 cases: none).
struct AutoComparison {
    double geomean = 0;
    int cases = 0, kiln_auto_faster = 0, failed = 0;
};
AutoComparison compare_with_kiln_auto(const std::vector<CaseResult> &cases, const std::string &system);
// The systems of the cases' rows other than "kiln auto" that an
// autoscheduler chose the schedule of (search_ms set, or refused), in the
// order they first appear.
std::vector<std::string> other_autoschedulers(const std::vector<CaseResult> &cases);
// Horizontal bars: per case, each system's time relative to Kiln's.
std::string chart_svg(const std::vector<CaseResult> &cases, const Roofline &roof);

// Max |a - b| / max(|b|, 0.01 max|b|) over n values: relative error, with
// values near zero (results of cancellation, where one rounding of an
// intermediate is relatively huge) measured against 1% of the output's range.
double max_rel_err(const float *a, const float *b, size_t n);

}  // namespace kiln_bench
