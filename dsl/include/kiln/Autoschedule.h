// The autoscheduler: Kiln chooses a schedule for a pipeline, and says why.
//
//   Pipeline p(output);
//   AutoscheduleResult r = autoschedule(p, Target::host(), {{"output", {4096, 4096}}});
//   std::cout << r.schedule_text;   // a .sched file, a comment per stanza saying why
//   std::cout << r.explanation;     // every decision, the alternatives and their predicted costs
//   p.realize(out);                 // the schedule is applied to the pipeline's Funcs
//
// The search (docs/autoschedule.md) is deterministic and greedy: outputs and
// Funcs with update definitions get a loop structure of their own (rows or
// 2-D tiles, the innermost dimension vectorized, the outermost parallel);
// every other Func, consumers first, is inlined, computed at the root, or
// computed inside its consumers' group (per tile, per row, or per strip
// with its storage sliding), whichever the cost model predicts cheapest;
// then each group's tile shape is chosen. Each candidate is lowered and its
// loop nest counted (the fusion report's counts, analysis/LoopCounts.h);
// the cost model turns the counts into time with named terms (arithmetic,
// memory traffic per cache level, parallel overhead, allocations) from a
// MachineModel. Every decision is a directive of the schedule language, so
// the result can be read, edited and checked in like a hand schedule.
#pragma once
#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "Pipeline.h"
#include "ScheduleFile.h"
#include "Target.h"

namespace kiln {

// What the cost model knows about the machine. host() reads the cache
// sizes from /sys/devices/system/cpu/cpu0/cache and the thread count as
// the runtime's parallel loops count it ($KILN_NUM_THREADS if set, over a
// machine file's `threads`; else the cores the process may run on); the
// clock, issue rate, bandwidths and overheads come from the
// machine file kiln-calibrate wrote (machine_file()) if there is one, else
// they are defaults for a current x86-64 core (docs/autoschedule.md,
// "Calibration").
struct MachineModel {
    int64_t l1_bytes = 32 << 10, l2_bytes = 1 << 20, l3_bytes = 16 << 20;  // per core, per core, shared
    // Ways of L1 and L2 (sysfs): a line at an address goes into one of
    // size / ways / line_bytes sets, so loads at a stride of a large power
    // of two reach a few sets only (CostTerms::aliasing).
    int l1_ways = 8, l2_ways = 16;
    int64_t line_bytes = 64;
    int threads = 2;
    double ghz = 3.0;
    double ops_per_cycle = 2;            // vector (or scalar) operations issued per cycle and core
    double unvectorized_lanes = 4;       // a loop the schedule does not vectorize: g++ does (detected(): the host's width)
    // A vector register's bytes (detected(): the host's; 32, AVX2's, by
    // default): a vector computing wider values than it stores takes
    // several (FuncCounts::vector_value_bytes).
    int64_t vector_bytes = 32;
    double div_cycles = 8, transcendental_cycles = 20;  // per vector, beyond one operation
    double l1_bytes_per_ns = 100, l2_bytes_per_ns = 50, l3_bytes_per_ns = 25;  // per core
    double dram_bytes_per_ns = 15, dram_total_bytes_per_ns = 30;  // one core, all cores
    double parallel_loop_ns = 3000;      // starting one parallel loop (fork and join), its workers spinning
    // Starting one whose workers sleep: they must be woken (a futex, and on a
    // virtual machine an idle virtual CPU's wake-up). Measured 37-54 us on
    // the 2-core Zen 4 virtual machines Kiln is developed on.
    double parallel_wake_ns = 40000;
    // Whether the workers sleep between parallel loops, so that every loop
    // pays parallel_wake_ns: OMP_WAIT_POLICY=passive or GOMP_SPINCOUNT=0 in
    // the environment of the search (detected()); the kernels are assumed
    // to run in the same one. Otherwise they spin between loops and a loop
    // pays parallel_loop_ns.
    bool workers_sleep = false;
    double parallel_start_ns() const { return workers_sleep ? parallel_wake_ns : parallel_loop_ns; }
    double allocation_ns = 200;          // one heap allocation
    double page_ns = 150;                // first touch of a 4 KiB page of a fresh allocation

    // Where the figures came from: "defaults", or the machine file's path.
    std::string source = "defaults";

    static MachineModel host();      // detected(), then the machine file if there is one
    static MachineModel detected();  // caches and threads of this machine, the rates' defaults
    std::string to_string() const;  // one line, for the explanation

    // The machine file: `name = value` lines (the fields above, by name;
    // `#` starts a comment), as kiln-calibrate writes it. $KILN_MACHINE names
    // it (`none`: no file, the defaults); otherwise
    // $XDG_CONFIG_HOME/kiln/machine.txt (~/.config/kiln/machine.txt).
    static std::string machine_file();
    // The fields a file sets, over this model's; throws CompileError naming
    // the file, the line and the problem (unknown name, a value that is not
    // a positive number).
    MachineModel with_file(const std::string &path) const;
    // The file's text: every field, with `header` as leading comment lines.
    std::string file_text(const std::string &header = "") const;
};

struct AutoscheduleOptions {
    MachineModel machine = MachineModel::host();
    // Stop searching after this many milliseconds per time_limit_funcs
    // Funcs of the pipeline (at least this many: 1 s for up to 30 Funcs,
    // 3.4 s for local_laplacian's 101). Each schedule evaluated lowers the
    // whole pipeline, so a search's time grows with its Funcs; the limit
    // grows with them. The choices made so far are kept, the rest placed by
    // the default rule; the explanation says what was skipped. Where the
    // search stops then depends on the machine's load.
    double time_limit_ms = 1000;
    static constexpr int time_limit_funcs = 30;
    // The limit of a search over `funcs` Funcs.
    double time_limit_for(size_t funcs) const {
        return funcs > (size_t)time_limit_funcs ? time_limit_ms * funcs / time_limit_funcs : time_limit_ms;
    }
    // Whether time_limit_ms counts the search's own CPU time (its thread's)
    // instead of the time on the clock, which a busy machine stretches.
    bool time_limit_is_cpu = false;
    // Stop searching after this many schedules evaluated (0: no limit).
    // A budget in schedules stops at the same point on every run, so the
    // same pipeline, sizes, target and machine give the same schedule.
    int max_states = 0;

    // What generator builds use (kiln-gen -s auto, kiln_add_library(...
    // SCHEDULE auto)): a budget of `max_states` schedules, so that the same
    // build chooses the same schedule, and the time limit counted in the
    // search's CPU time (which a busy machine stretches far less than the
    // clock). The suite's searches end well within both; a pipeline whose
    // search would take longer than the limit (camera_pipe, local_laplacian
    // at full size) stops there, at a point that may vary a little with
    // the load. A build that must not vary gives a budget of its own
    // (kiln-gen --max-states), which raises the limit to
    // generator_time_limit_ms per time_limit_funcs Funcs, an outer safety.
    static constexpr int generator_max_states = 1500;
    static constexpr double generator_time_limit_ms = 120000;
    static AutoscheduleOptions reproducible(int max_states = generator_max_states);

    // Autotuning (kiln-gen --autotune N): after the search, run the
    // `autotune` best schedules it evaluated by predicted cost (the cost
    // model's choice first) and keep the one measured fastest; 0: the cost
    // model alone. A host target only; at most max_autotune. The result then
    // depends on the machine's timing, not only on the model.
    int autotune = 0;
    static constexpr int max_autotune = 64;
    // How a candidate is timed (ms), its schedule applied to the pipeline's
    // Funcs. Unset: JIT-compiled for the target and run on random inputs of
    // the estimated sizes, the minimum of 5 runs after a warm-up. Tests
    // give a function of their own, so that no test depends on timing.
    std::function<double(const Pipeline &)> measure;
};

// The predicted time of a schedule, split into the cost model's terms (ns).
struct CostTerms {
    double compute = 0;   // arithmetic, after vector lanes and parallel tasks
    double memory = 0;    // bytes moved to and from L2, L3 and DRAM
    double overhead = 0;  // parallel loops started and allocations made
    // Lines loaded again from a farther level because the loads' stride
    // (a large power of two) leaves them few of a cache's sets: a GEMM's
    // B(x, k) read a row apart per k (docs/autoschedule.md, "Aliasing").
    double aliasing = 0;
    double total() const { return compute + memory + overhead + aliasing; }
    // "1.23 ms (compute 0.80, memory 0.40, overhead 0.03)", with ", aliasing
    // 0.10" where that term is not 0.
    std::string to_string() const;
};

// One option considered for a Func or a group.
struct AutoscheduleAlternative {
    std::string option;     // "inline", "compute_root", "compute_at(output, x)", "tile 64x32", ...
    bool legal = true;      // false: the schedule language or lowering refused it (see note)
    CostTerms cost;         // of the whole pipeline with this option
    std::string note;       // what decided it: the recompute, where its storage lives, the error
};

struct AutoscheduleDecision {
    std::string func;
    std::string chosen;  // one of the alternatives' options
    std::string reason;  // one line, also the .sched comment
    std::vector<AutoscheduleAlternative> alternatives;
};

// A schedule autotuning ran (AutoscheduleOptions::autotune).
struct AutotuneCandidate {
    std::string schedule;      // its .sched text, without comments
    CostTerms predicted;       // the cost model's prediction
    double measured_ms = -1;   // -1: it did not run (see error)
    std::string error;
};

struct AutoscheduleResult {
    ScheduleFile schedule;        // what was applied
    std::string schedule_text;    // the .sched text, a comment per stanza
    std::vector<AutoscheduleDecision> decisions;
    CostTerms predicted;          // of the chosen schedule
    int states_evaluated = 0;
    double search_ms = 0;
    double time_limit_ms = 0;  // the search's limit (AutoscheduleOptions::time_limit_for its Funcs)
    // Why the search stopped early: "" (it did not), "state budget" (the
    // same on every run) or "time limit" (depends on the machine's load).
    std::string stopped_by;
    std::vector<std::string> skipped;  // what the search could not do, and why
    // Autotuning: the candidates run, the model's choice first, then by
    // predicted cost; the index of the one kept (-1: no autotuning).
    std::vector<AutotuneCandidate> autotuned;
    int autotune_chosen = -1;
    std::string explanation;      // text: the machine, every decision and its alternatives
    std::string explanation_json;
};

// Choose a schedule for p's Funcs for buffers of the given sizes (by output
// or input name, as Pipeline::report takes them; outputs not given are 1024
// in every dimension) and apply it. Funcs must not have been scheduled
// (their schedules are replaced). Never fails on a pipeline that lowers: an
// option that does not lower is skipped and named in the explanation.
AutoscheduleResult autoschedule(const Pipeline &p, const Target &t,
                                const std::map<std::string, std::vector<int>> &estimates,
                                const AutoscheduleOptions &options = AutoscheduleOptions());

// The cost model's prediction for the schedule p's Funcs have now (any
// schedule, hand-written or chosen), for buffers of the given sizes (as
// autoschedule takes them). kiln-lab prints it beside the measured time.
CostTerms predicted_time(const Pipeline &p, const Target &t, const std::map<std::string, std::vector<int>> &sizes,
                         const MachineModel &m = MachineModel::host());

// Autodiff (docs/autodiff.md, "Saving forward values"): for a backward
// pipeline, which forward Funcs the forward pass saves for it (Func::save())
// and which it recomputes, chosen by the cost model: greedily, the save that
// lowers the backward pass's predicted time (autoscheduled each way) plus
// the forward pass's time to write the residual the most, as bits where the
// backward pass reads the Func only through one comparison, while the
// residuals fit `budget` bytes (0: no limit) at the sizes given (the box the
// backward pass reads of each, else a forward output's size). `narrow`
// (Residual::Float16 or BFloat16) allows that lower-precision copy of a
// float Func where it is predicted cheaper than saving it whole: the user's
// call, since its gradients differ by the rounding (docs/autodiff.md). The
// saves chosen and the backward schedule are applied to the Funcs.
//
//   SaveChoices c = choose_saves(Pipeline({d(A), d(B), d(bias)}), {output}, t,
//                                {{"output", {512, 512}}, ...}, 64 << 10);
//   std::cout << c.explanation;   // bias_add: save(bits) -- saving it (32.0 KiB, ...) takes ...
struct SaveDecision {
    std::string func;
    Residual how = Residual::None;        // chosen (None: recomputed)
    Residual considered = Residual::None;  // the encoding kept: Bits if legal, else Whole or the narrow copy
    int64_t bytes = 0;                     // of its residual at the sizes given
    CostTerms recompute, saved;            // the backward pass before and with the save
    double write_ns = 0;                   // the forward pass writing the residual
    std::string reason, note;              // why; what refused an encoding
};
struct SaveChoices {
    std::vector<SaveDecision> decisions;  // the saves in the order chosen, then the Funcs recomputed
    int64_t bytes = 0;                    // of every residual chosen
    CostTerms recompute_all, predicted;   // the backward pass recomputing everything, and as chosen
    AutoscheduleResult backward;          // the backward pass's autoschedule, applied
    std::string explanation;              // the saves, then the backward pass's explanation
    std::string schedule_text() const;    // the save stanzas (a comment each), then the backward schedule
};
SaveChoices choose_saves(const Pipeline &backward, const std::vector<Func> &forward, const Target &t,
                         const std::map<std::string, std::vector<int>> &sizes, int64_t budget = 0,
                         const AutoscheduleOptions &options = AutoscheduleOptions(),
                         Residual narrow = Residual::None);

}  // namespace kiln
