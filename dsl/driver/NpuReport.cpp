// See NpuReport.h.
#include "NpuReport.h"

#include <HalideBuffer.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <nlohmann/json.hpp>

#include "codegen/NpuIdeal.h"
#include "codegen/NpuKernel.h"
#include "driver/JIT.h"
#include "ir/Error.h"

namespace kiln {
namespace internal {

NpuReportFigures npu_report_figures(const Pipeline &p, const std::string &fn, const std::vector<Argument> &args,
                                    const std::map<std::string, std::vector<int>> &sizes, const Target &t,
                                    int64_t model_bytes) {
    // Each buffer of its argument's type (a bf16 kernel checks that its
    // buffers hold bf16), zero bytes: 0 in every type.
    std::vector<Halide::Runtime::Buffer<void>> buffers;
    std::vector<int64_t> scalars(args.size(), 0);
    std::vector<void *> argv;
    buffers.reserve(args.size());
    for (size_t i = 0; i < args.size(); i++) {
        if (!args[i].is_buffer) {
            argv.push_back(&scalars[i]);
            continue;
        }
        auto it = sizes.find(args[i].name);
        user_assert(it != sizes.end()) << "NPU report: no size for buffer " << args[i].name
                                       << "; give it with --estimate " << args[i].name << "=W[,H]";
        buffers.emplace_back(to_halide_type(args[i].type), it->second);
        std::memset(buffers.back().data(), 0, buffers.back().size_in_bytes());
        argv.push_back(buffers.back().raw_buffer());
    }
    std::string name = fn + "_report";
    auto m = JITModule::compile(p.compile_to_cpp_source(name, args, t), name, t);
    try {
        m->run_or_throw(argv.data());
    } catch (const std::exception &e) {
        user_error << "NPU report: the kernel did not run on the simulator with the report's sizes ("
                   << e.what() << "); give sizes the schedule fits with --estimate";
    }
    auto report = (const char *(*)())m->symbol(name + "_npu_report");
    internal_assert(report) << "NPU report: the kernel has no " << name << "_npu_report";
    nlohmann::json r = nlohmann::json::parse(report()), o;
    for (const char *k : {"cycles", "cores", "gm_read_bytes", "gm_write_bytes", "dma_bytes", "peak_bytes"}) o[k] = r[k];
    o["model_bytes"] = model_bytes;
    for (auto &kv : r["pipes"].items()) o["busy_ratio"][kv.key()] = kv.value()["busy_ratio"];
    std::string text = "NPU (simulated on " + r["machine"].get<std::string>() + ", " + std::to_string(r["cores"].get<int>()) +
                       " core(s), zero-filled inputs): " + std::to_string(r["cycles"].get<uint64_t>()) + " cycles\n";
    char line[512];
    std::snprintf(line, sizeof line, "  GM bytes: read %llu, written %llu (the fusion report's NPU model: %lld in all)\n",
                  (unsigned long long)r["gm_read_bytes"].get<uint64_t>(),
                  (unsigned long long)r["gm_write_bytes"].get<uint64_t>(), (long long)model_bytes);
    text += line;
    text += "  DMA bytes:";
    for (auto &kv : r["dma_bytes"].items()) text += " " + kv.key() + " " + std::to_string(kv.value().get<uint64_t>());
    text += "\n  on-chip footprint (peak bytes):";
    for (auto &kv : r["peak_bytes"].items())
        if (kv.value().get<uint64_t>() > 0) text += " " + kv.key() + " " + std::to_string(kv.value().get<uint64_t>());
    // Placement: the peak of the buffers live at once, and what it would be without sharing.
    if (auto placement = (const char *(*)())m->symbol(name + "_npu_placement")) {
        nlohmann::json pl = nlohmann::json::parse(placement());
        o["placement"] = pl;
        text += "\n  on-chip buffers per tile (bytes live at once / without sharing):";
        for (auto &kv : pl.items()) {
            text += " " + kv.key() + " " + std::to_string(kv.value()["peak"].get<uint64_t>()) + " / " +
                    std::to_string(kv.value()["unshared"].get<uint64_t>());
            if (kv.value().contains("sharing_peak"))  // npu_select_and_place fell back to recomputing
                text += " (repeated subexpressions recomputed: computing each once needed " +
                        std::to_string(kv.value()["sharing_peak"].get<uint64_t>()) + ")";
        }
    }
    // The roofline of the stream Kiln generated, and of the algorithm's ideal one (NpuIdeal.h).
    const npu::Machine machine = npu_target_machine();
    const double cycles = r["cycles"].get<double>();
    const double generated = std::max({r["gm_read_bytes"].get<double>() / machine.rate(npu::Pipe::MTE2).bytes_per_cycle,
                                       r["gm_write_bytes"].get<double>() / machine.rate(npu::Pipe::MTE3).bytes_per_cycle,
                                       r["pipes"]["V"]["busy_cycles"].get<double>() / r["cores"].get<double>(),
                                       r["pipes"]["M"]["busy_cycles"].get<double>() / r["cores"].get<double>()});
    const NpuIdealStream ideal = npu_ideal_stream(p, sizes, machine);
    o["roofline_cycles"] = generated;
    o["ideal_roofline_cycles"] = ideal.roofline_cycles();
    o["ideal"] = {{"gm_read_bytes", ideal.gm_read_bytes}, {"gm_write_bytes", ideal.gm_write_bytes},
                  {"read_cycles", ideal.read_cycles},     {"write_cycles", ideal.write_cycles},
                  {"vector_cycles", ideal.vector_cycles}, {"matrix_cycles", ideal.matrix_cycles}};
    std::snprintf(line, sizeof line,
                  "\n  roofline: %.0f cycles for the stream generated (cycles / roofline %.2f), %.0f for the "
                  "algorithm's ideal stream (%.2f; GM %lld + %lld bytes, vector %.0f, matrix %.0f cycles%s)",
                  generated, cycles / generated, ideal.roofline_cycles(), cycles / ideal.roofline_cycles(),
                  (long long)ideal.gm_read_bytes, (long long)ideal.gm_write_bytes, ideal.vector_cycles,
                  ideal.matrix_cycles, r["cores"].get<int>() > 1 ? "; one core's" : "");
    text += line;
    text += "\n  busy:";
    for (auto &kv : r["pipes"].items()) {
        std::snprintf(line, sizeof line, " %s %.1f%%", kv.key().c_str(), 100 * kv.value()["busy_ratio"].get<double>());
        text += line;
    }
    text += "\n";
    return {text, o.dump()};
}

}  // namespace internal
}  // namespace kiln
