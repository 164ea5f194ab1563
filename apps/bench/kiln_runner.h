// A generator of generators/ under one of its schedule files, JIT-compiled
// in this process: how apps/bench runs Kiln, so the schedules measured are
// the ones shipped in schedules/<generator>/.
//
//   KilnRunner k("gemm_bias_act", {"activation=relu"}, "host_tiled");
//   k.bind("A", a); k.bind("B", b); k.bind("bias", bias);
//   k.realize({c.raw_buffer()});
//
// The JIT cache is pointed at a fresh directory, so compile() (or the first
// realize()) measures a real compilation (compile_ms), unless an earlier
// runner in this process compiled the same kernel: the same generator,
// params and schedule (gemm_bias_act at 1024 after 512: the sizes are
// run-time arguments), which the JIT then loads again (reused_kernel()).
//
// The schedule "auto" is chosen by kiln::autoschedule at the first
// compile() or realize(), for the sizes of the buffers bound and realized
// into (the search time is then part of the compile, as a JIT compile is).
//
// The target is the host with fast_math: float reassociation and FMA
// contraction allowed, which is Halide's default float mode, so both
// systems are held to the same rules (Kiln's default is stricter).
#pragma once
#include <kiln/Generator.h>
#include <kiln/kiln.h>

#include <memory>
#include <string>
#include <vector>

namespace kiln_bench {

class KilnRunner {
public:
    KilnRunner(const std::string &generator, const std::vector<std::string> &params, const std::string &schedule);
    // Bind a buffer Input (kept by reference: the buffer must outlive the runs).
    void bind(const std::string &input, const Halide::Runtime::Buffer<void> &buffer);
    // Set a scalar Input from text.
    void set(const std::string &input, const std::string &value);
    // JIT-compile for the host (and, for "auto", choose the schedule for the
    // sizes of `outputs` first), as the first realize() would.
    void compile(const std::vector<halide_buffer_t *> &outputs);
    void realize(const std::vector<halide_buffer_t *> &outputs);
    const std::string &schedule_path() const { return schedule_path_; }
    static kiln::Target target();
    // The same generator and params under `schedule`, with the same inputs
    // bound and scalars set.
    std::unique_ptr<KilnRunner> twin(const std::string &schedule) const;
    // A backward generator whose schedule saves forward Funcs (save()): the
    // forward pass that writes them (forward_with_residuals(), scheduled by
    // the file's [forward] section if it has one), and the buffer the
    // backward pass reads the Func `func` from.
    kiln::Pipeline forward_pass() const;
    void bind_saved(const std::string &func, const Halide::Runtime::Buffer<void> &buffer);
    // For "auto": how long the search took (ms), after the first realize().
    double autoschedule_ms() const { return autoschedule_ms_; }
    const std::string &autoschedule_text() const { return autoschedule_text_; }  // the chosen .sched
    // Whether the first compile() found the kernel compiled by an earlier
    // runner of this process (then it measured no compilation).
    bool reused_kernel() const { return reused_kernel_; }

private:
    const kiln::GeneratorInputBase &input(const std::string &name) const;
    std::string generator_;
    std::vector<std::string> params_;
    std::unique_ptr<kiln::GeneratorBase> gen_;
    kiln::Pipeline pipeline_;
    std::string schedule_path_;
    kiln::ScheduleFile schedule_;
    bool autoschedule_pending_ = false;
    double autoschedule_ms_ = 0;
    std::string autoschedule_text_;
    bool compiled_ = false, reused_kernel_ = false;
    std::vector<std::pair<std::string, Halide::Runtime::Buffer<void>>> bound_;  // handles sharing the data
    std::vector<std::pair<std::string, std::string>> scalars_;
};

// Point Kiln's JIT cache at a new empty directory (compile times are then
// measured without the cache); removed at exit.
void use_fresh_jit_cache();

}  // namespace kiln_bench
