// KilnRunner (kiln_runner.h).
#include "kiln_runner.h"

#include <cstdlib>
#include <filesystem>
#include <stdexcept>

#include "lab_buffers.h"

#ifndef KILN_BENCH_SCHEDULE_DIR  // set by apps/CMakeLists.txt to the source tree's schedules/
#define KILN_BENCH_SCHEDULE_DIR "schedules"
#endif

namespace kiln_bench {

namespace fs = std::filesystem;

KilnRunner::KilnRunner(const std::string &generator, const std::vector<std::string> &params,
                       const std::string &schedule)
    : gen_(kiln::GeneratorRegistry::create(generator)) {
    gen_->set_generator_params(params);
    pipeline_ = gen_->build_pipeline();
    schedule_path_ = (fs::path(KILN_BENCH_SCHEDULE_DIR) / generator / (schedule + ".sched")).string();
    kiln::ScheduleFile::load(schedule_path_).apply(pipeline_, target());
}

const kiln::GeneratorInputBase &KilnRunner::input(const std::string &name) const {
    for (const kiln::GeneratorInputBase *in : gen_->inputs())
        if (in->name() == name) return *in;
    throw std::runtime_error("bench: generator " + gen_->name() + " has no Input \"" + name + "\"");
}

void KilnRunner::bind(const std::string &name, const Halide::Runtime::Buffer<void> &buffer) {
    kiln_lab::image_param(input(name)).set(buffer);
}

void KilnRunner::set(const std::string &name, const std::string &value) {
    if (!kiln_lab::set_scalar(input(name), value))
        throw std::runtime_error("bench: \"" + value + "\" is not a value of Input " + name);
}

kiln::Target KilnRunner::target() { return kiln::Target::host().with(kiln::Target::FastMath); }

void KilnRunner::realize(const std::vector<halide_buffer_t *> &outputs) { pipeline_.realize_raw(outputs, target()); }

void use_fresh_jit_cache() {
    static fs::path dir;
    if (!dir.empty()) return;
    std::string tmpl = (fs::temp_directory_path() / "kiln-bench-XXXXXX").string();
    if (!mkdtemp(tmpl.data())) throw std::runtime_error("bench: cannot create a temporary JIT cache directory");
    dir = tmpl;
    setenv("XDG_CACHE_HOME", dir.c_str(), 1);
    std::atexit([] {
        std::error_code ec;
        fs::remove_all(dir, ec);
    });
}

}  // namespace kiln_bench
