// KilnRunner (kiln_runner.h).
#include "kiln_runner.h"

#include <cstdlib>
#include <filesystem>
#include <map>
#include <set>
#include <stdexcept>

#include "lab_buffers.h"

#ifndef KILN_BENCH_SCHEDULE_DIR  // set by apps/CMakeLists.txt to the source tree's schedules/
#define KILN_BENCH_SCHEDULE_DIR "schedules"
#endif

namespace kiln_bench {

namespace fs = std::filesystem;

KilnRunner::KilnRunner(const std::string &generator, const std::vector<std::string> &params,
                       const std::string &schedule)
    : generator_(generator), params_(params), gen_(kiln::GeneratorRegistry::create(generator)) {
    gen_->set_generator_params(params);
    pipeline_ = gen_->build_pipeline();
    if (schedule == "auto") {
        schedule_path_ = "auto";
        autoschedule_pending_ = true;
        return;
    }
    schedule_path_ = (fs::path(KILN_BENCH_SCHEDULE_DIR) / generator / (schedule + ".sched")).string();
    schedule_ = kiln::ScheduleFile::load(schedule_path_);
    schedule_.apply(gen_->schedulable(), target());
}

kiln::Pipeline KilnRunner::forward_pass() const {
    return schedule_.schedule_forward(kiln::forward_with_residuals(gen_->differentiated(), pipeline_.outputs()),
                                      target());
}

void KilnRunner::bind_saved(const std::string &func, const Halide::Runtime::Buffer<void> &buffer) {
    pipeline_.functions().at(func).saved_buffer().set(buffer);
}

std::unique_ptr<KilnRunner> KilnRunner::twin(const std::string &schedule) const {
    auto t = std::make_unique<KilnRunner>(generator_, params_, schedule);
    for (const auto &[name, buffer] : bound_) t->bind(name, buffer);
    for (const auto &[name, value] : scalars_) t->set(name, value);
    return t;
}

const kiln::GeneratorInputBase &KilnRunner::input(const std::string &name) const {
    for (const kiln::GeneratorInputBase *in : gen_->inputs())
        if (in->name() == name) return *in;
    throw std::runtime_error("bench: generator " + gen_->name() + " has no Input \"" + name + "\"");
}

void KilnRunner::bind(const std::string &name, const Halide::Runtime::Buffer<void> &buffer) {
    kiln_lab::image_param(input(name)).set(buffer);
    bound_.emplace_back(name, buffer);
}

void KilnRunner::set(const std::string &name, const std::string &value) {
    if (!kiln_lab::set_scalar(input(name), value))
        throw std::runtime_error("bench: \"" + value + "\" is not a value of Input " + name);
    scalars_.emplace_back(name, value);
}

kiln::Target KilnRunner::target() { return kiln::Target::host().with(kiln::Target::FastMath); }

void KilnRunner::compile(const std::vector<halide_buffer_t *> &outputs) {
    if (autoschedule_pending_) {
        std::map<std::string, std::vector<int>> sizes;
        auto extents = [](const halide_buffer_t *b) {
            std::vector<int> e;
            for (int d = 0; d < b->dimensions; d++) e.push_back(b->dim[d].extent);
            return e;
        };
        for (const auto &[name, buffer] : bound_) sizes[name] = extents(buffer.raw_buffer());
        size_t k = 0;
        for (const kiln::GeneratorOutputBase *out : gen_->outputs()) {
            if (k < outputs.size()) sizes[out->name()] = extents(outputs[k]);
            k += out->arguments().size();  // a Tuple output has one buffer per element
        }
        autoschedule_pending_ = false;
        // The schedule a build gets (kiln-gen -s auto): a budget in schedules,
        // not time, so the row does not depend on how busy the machine is.
        kiln::AutoscheduleResult r =
            kiln::autoschedule(pipeline_, target(), sizes, kiln::AutoscheduleOptions::reproducible());
        autoschedule_ms_ = r.search_ms;
        autoschedule_text_ = r.schedule_text;
    }
    if (!compiled_) {
        static std::set<std::string> compiled;  // the kernels this process compiled
        std::string key = generator_ + "\n" + schedule_path_ + "\n" + autoschedule_text_;
        for (const std::string &p : params_) key += "\n" + p;
        reused_kernel_ = !compiled.insert(key).second;
        compiled_ = true;
    }
    pipeline_.compile_jit(target());
}

void KilnRunner::realize(const std::vector<halide_buffer_t *> &outputs) {
    compile(outputs);
    pipeline_.realize_raw(outputs, target());
}

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
