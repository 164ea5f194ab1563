// A generator of generators/ under one of its schedule files, JIT-compiled
// in this process: how apps/bench runs Kiln, so the schedules measured are
// the ones shipped in schedules/<generator>/.
//
//   KilnRunner k("gemm_bias_act", {"activation=relu"}, "host_tiled");
//   k.bind("A", a); k.bind("B", b); k.bind("bias", bias);
//   k.realize({c.raw_buffer()});
//
// The JIT cache is pointed at a fresh directory, so the first realize()
// measures a real compilation (compile_ms).
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
    void realize(const std::vector<halide_buffer_t *> &outputs);
    const std::string &schedule_path() const { return schedule_path_; }
    static kiln::Target target();

private:
    const kiln::GeneratorInputBase &input(const std::string &name) const;
    std::unique_ptr<kiln::GeneratorBase> gen_;
    kiln::Pipeline pipeline_;
    std::string schedule_path_;
};

// Point Kiln's JIT cache at a new empty directory (compile times are then
// measured without the cache); removed at exit.
void use_fresh_jit_cache();

}  // namespace kiln_bench
