// kiln-lab's shared types: the command line, what every schedule is fed,
// and what one schedule's run gives (lab.cpp runs them, lab_results.cpp
// reports them).
#pragma once
#include <kiln/Generator.h>

#include <map>
#include <string>
#include <utility>
#include <vector>

namespace kiln_lab {

// The command line (see main() in lab.cpp).
struct Options {
    std::string generator;
    std::vector<std::string> schedules;
    std::string input;
    std::string size;
    std::vector<std::string> params;
    std::vector<std::string> shapes;  // name=E0xE1x...: the extents of a buffer Input or Output
    std::string target = "host";
    int runs = 10;
    std::string out = "lab_out";
    double tolerance = 1e-6;
    int64_t cache_kb = 1024;
    bool cpu_time = false;  // time the runs by process CPU time instead of wall-clock time
    bool list = false;
    bool autoschedule = false;  // --auto: an "auto" row, the schedule kiln::autoschedule chooses
    int autotune = 0;           // --autotune N: the auto row's N best candidates run, the fastest kept
};

// What the lab feeds every schedule.
struct Setup {
    std::vector<std::string> generator_params;                    // name=value
    std::vector<std::pair<std::string, std::string>> scalars;     // scalar Input name, value
    std::map<std::string, Halide::Runtime::Buffer<void>> inputs;  // buffer Input name -> data
    std::vector<kiln::Argument> outputs;                          // in signature order
    std::vector<std::vector<int>> output_extents;                 // of each output
    std::string size;                                             // "WxH"
    std::map<std::string, std::vector<int>> sizes;                // for the fusion report
    std::string description;                                      // of the input, for the header
    int png_bits = 0;                                             // bit depth of a PNG input, else 0
};

// One schedule's run.
struct Outcome {
    std::string name, file;
    double first_ms = 0, best_ms = 0;
    kiln::PipelineReport report;
    std::vector<Halide::Runtime::Buffer<void>> outputs;
    std::vector<double> max_diff;  // per output, against the reference (the first schedule that ran)
    std::string error;             // why the schedule failed, "" if it ran
    double predicted_ms = 0;       // the autoscheduler's cost model for this schedule (0: not predicted)
    // --autotune: (predicted ms, measured ms) of each candidate that ran,
    // timed as the rows are (--cpu-time, --runs) on this run's inputs.
    std::vector<std::pair<double, double>> autotuned;
    // The auto row: what the search could not do, and why (its `skipped`).
    std::vector<std::string> skipped;
    // A backward generator's schedule that saves forward Funcs: what it
    // saves ("f", or "f (as f_bits)"), the forward pass's best time (by the
    // rows' clock; the row's own time is the backward kernel's) and the
    // buffers it wrote, which the backward kernel read.
    std::vector<std::string> saved;
    double forward_ms = 0;
    std::vector<Halide::Runtime::Buffer<void>> forward_buffers;
};

// Spearman's rank correlation of (predicted, measured) pairs, ties at
// their mean rank (NaN with fewer than 3, or when every prediction or
// every measurement is the same); of the schedules that ran.
double rank_correlation(std::vector<std::pair<double, double>> pairs);
double rank_correlation(const std::vector<Outcome> &results);

// The table of results, one row per schedule; speedups against `ref`.
// `time_label` heads the column of best times ("time ms", "cpu ms").
std::string results_table(const std::vector<Outcome> &results, const Outcome &ref, const std::string &time_label);
// The largest absolute difference between two outputs of the same shape (NaN
// against a number counts as infinite).
double max_abs_diff(const Halide::Runtime::Buffer<const void> &a, const Halide::Runtime::Buffer<const void> &b);
// Into o.out: report.json, chart.svg and, for a PNG input, SCHEDULE.png.
void write_results(const Options &o, const Setup &s, const std::vector<Outcome> &results, const Outcome &ref,
                   const kiln::Target &target);
// Write a text file; a std::runtime_error if it cannot.
void write_file(const std::string &path, const std::string &text);

}  // namespace kiln_lab
