// Halide 14's autoschedulers as plugins (halide_auto.h).
#include "halide_auto.h"

#include <chrono>
#include <filesystem>
#include <map>
#include <sstream>
#include <stdexcept>

#include "halide_target.h"

// Set by apps/CMakeLists.txt from Halide's CMake package.
#ifndef KILN_HALIDE_PLUGIN_MULLAPUDI2016
#define KILN_HALIDE_PLUGIN_MULLAPUDI2016 ""
#endif
#ifndef KILN_HALIDE_PLUGIN_ADAMS2019
#define KILN_HALIDE_PLUGIN_ADAMS2019 ""
#endif
#ifndef KILN_HALIDE_PLUGIN_LI2018
#define KILN_HALIDE_PLUGIN_LI2018 ""
#endif

namespace kiln_bench {

namespace {

const std::map<std::string, std::string> &plugin_files() {
    static const std::map<std::string, std::string> files = {{"Mullapudi2016", KILN_HALIDE_PLUGIN_MULLAPUDI2016},
                                                             {"Adams2019", KILN_HALIDE_PLUGIN_ADAMS2019},
                                                             {"Li2018", KILN_HALIDE_PLUGIN_LI2018}};
    return files;
}

void load_once(const std::string &name) {
    static std::map<std::string, bool> loaded;
    if (loaded[name]) return;
    auto it = plugin_files().find(name);
    if (it == plugin_files().end()) throw std::runtime_error("bench: no Halide autoscheduler named " + name);
    if (it->second.empty() || !std::filesystem::exists(it->second))
        throw std::runtime_error("bench: the plugin of Halide's " + name + " autoscheduler is not installed (\"" +
                                 it->second + "\"); install libhalide14-0-dev's plugins or leave out --auto");
    Halide::load_plugin(it->second);
    loaded[name] = true;
}

}  // namespace

const std::vector<std::string> &halide_autoschedulers() {
    static const std::vector<std::string> names = {"Mullapudi2016", "Adams2019", "Li2018"};
    return names;
}

Halide::MachineParams halide_machine_params(int threads) {
    return Halide::MachineParams(threads, (uint64_t)kiln::MachineModel::host().l3_bytes, 40);
}

Halide::Region estimates_of(const halide_buffer_t &b) {
    Halide::Region r;
    for (int d = 0; d < b.dimensions; d++) r.emplace_back(b.dim[d].min, b.dim[d].extent);
    return r;
}

void set_output_estimates(Halide::Pipeline p, const std::vector<FBuf *> &outs) {
    std::vector<Halide::Func> funcs = p.outputs();
    if (funcs.size() != outs.size())
        throw std::logic_error("bench: a Halide twin has " + std::to_string(funcs.size()) + " outputs, the case " +
                               std::to_string(outs.size()) + " buffers");
    for (size_t i = 0; i < funcs.size(); i++) funcs[i].set_estimates(estimates_of(*outs[i]->raw_buffer()));
}

double halide_autoschedule(Halide::Pipeline p, const std::string &name, int threads, std::string *schedule) {
    load_once(name);
    auto t0 = std::chrono::steady_clock::now();
    Halide::AutoSchedulerResults r = p.auto_schedule(name, kiln_halide::jit_target(), halide_machine_params(threads));
    const double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
    if (schedule) *schedule = r.schedule_source;
    return ms;
}

std::string first_line(const std::string &message) {
    auto trimmed = [](const std::string &s) {
        const size_t text = s.find_first_not_of(" \t");
        return text == std::string::npos ? std::string() : s.substr(text);
    };
    std::istringstream lines(message);
    std::string line;
    while (std::getline(lines, line)) {
        line = trimmed(line);
        if (line.compare(0, 6, "Error:") == 0) line = trimmed(line.substr(6));
        if (!line.empty()) return line;
    }
    return "(no message)";
}

}  // namespace kiln_bench
