// bench: every suite pipeline under its tuned Kiln schedule against Halide 14
// (same algorithm, same schedule, JIT) and the libraries that do the same
// work (OpenBLAS, oneDNN, OpenCV), in one process and one run, together
// with the machine's roofline (triad bandwidth, FMA peak). docs/performance.md
// explains the method and holds the latest table.
//
//   OMP_WAIT_POLICY=PASSIVE ./build/bin/bench            # the full suite
//   ./build/bin/bench --quick                           # small sizes: a smoke check
//   ./build/bin/bench --only gemm,softmax --runs 20
//   ./build/bin/bench --auto       # + kiln::autoschedule and Halide's three autoschedulers
//   ./build/bin/bench --auto --only max_filter --schedules out   # + each one's schedule in out/
//
// Writes a table on stdout, --json (bench_results.json) and --svg
// (bench_chart.svg); with --schedules DIR, each autoscheduler's chosen
// schedule as a file of its own. Exit status 1 if any output disagrees
// with Kiln's.
#include <CLI/CLI.hpp>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <stdexcept>
#include <thread>

#include "anchors.h"
#include "case_util.h"
#include "kiln_runner.h"
#include "suite.h"

namespace kiln_bench {

const std::vector<SuiteCase> &suite() {
    static const std::vector<SuiteCase> cases = {
        {"softplus", bench_softplus}, {"tanh_affine", bench_tanh_affine}, {"blur3x3", bench_blur3x3},
        {"unsharp", bench_unsharp},   {"harris", bench_harris},
        {"luma_blur5x5_unfused", bench_luma_blur5x5_unfused}, {"luma_blur5x5_fused", bench_luma_blur5x5_fused},
        {"bilateral_grid", bench_bilateral_grid}, {"bilateral_grid_unfused", bench_bilateral_grid_unfused},
        {"camera_pipe", bench_camera_pipe}, {"camera_pipe_unfused", bench_camera_pipe_unfused},
        {"local_laplacian", bench_local_laplacian}, {"local_laplacian_unfused", bench_local_laplacian_unfused},
        {"max_filter", bench_max_filter}, {"hist_equalize", bench_hist_equalize}, {"iir_blur", bench_iir_blur},
        {"forward_ad", bench_forward_ad}, {"many_users", bench_many_users}, {"bias_gelu", bench_bias_gelu},
        {"subtract_mean", bench_subtract_mean}, {"layernorm", bench_layernorm}, {"softmax", bench_softmax},
        {"gemm_relu_512", bench_gemm_512}, {"gemm_relu_1024", bench_gemm_1024}, {"gemm_relu_2048", bench_gemm_2048},
        {"gemm_gelu_1024", bench_gemm_gelu}, {"conv_bn_relu", bench_conv_bn_relu},
        {"attention_1024", bench_attention_1024}, {"attention_2048", bench_attention_2048},
        {"blur3x3_grad", bench_blur3x3_grad}, {"softplus_grad", bench_softplus_grad},
        {"bias_gelu_grad", bench_bias_gelu_grad}, {"softmax_grad", bench_softmax_grad},
        {"layernorm_grad", bench_layernorm_grad}, {"gemm_relu_grad", bench_gemm_relu_grad},
        {"conv_bn_relu_grad", bench_conv_bn_relu_grad}, {"attention_grad", bench_attention_grad},
    };
    return cases;
}

namespace {

bool selected(const SuiteOptions &o, const std::string &name) {
    if (o.only.empty()) return true;
    for (const std::string &p : o.only)
        if (name.compare(0, p.size(), p) == 0) return true;
    return false;
}

// "max_filter host_tiled 1536x2560", "halide mullapudi2016" ->
// "max_filter_host_tiled_1536x2560.halide_mullapudi2016.cpp": each row an
// autoscheduler chose the schedule of, its .sched text (Kiln) or the C++
// Halide's AutoSchedulerResults::schedule_source holds, in dir.
void write_schedules(const CaseResult &c, const std::string &dir) {
    auto file_name = [](std::string s) {
        for (char &ch : s)
            if (ch == ' ' || ch == '/') ch = '_';
        return s;
    };
    for (const Entry &e : c.entries) {
        if (e.schedule.empty() || e.search_ms < 0) continue;
        const bool halide = e.system.compare(0, 7, "halide ") == 0;
        const std::filesystem::path path =
            std::filesystem::path(dir) / (file_name(c.name) + "." + file_name(e.system) + (halide ? ".cpp" : ".sched"));
        std::ofstream f(path);
        f << e.schedule;
        if (!f) throw std::runtime_error("bench: cannot write " + path.string());
        std::fprintf(stderr, "wrote %s\n", path.c_str());
    }
}

int run(const SuiteOptions &o, const std::string &json_path, const std::string &svg_path,
        const std::string &schedules_dir) {
    // Every system gets the same number of threads.
    const std::string threads = std::to_string(o.threads);
    setenv("KILN_NUM_THREADS", threads.c_str(), 1);
    setenv("HL_NUM_THREADS", threads.c_str(), 1);
    set_anchor_threads(o.threads);
    use_fresh_jit_cache();

    std::printf("Kiln bench: %d threads, best of %d runs after a warm-up%s\n", o.threads, o.runs,
                o.quick ? " (quick: small sizes)" : "");
    const Roofline roof = measure_roofline(o.quick, o.runs, o.threads);
    std::printf("Kiln target %s (float mode of Halide's default: reassociation and FMA contraction allowed)\n",
                KilnRunner::target().to_string().c_str());
    std::printf("Halide target %s (kiln_halide::jit_target(): Halide's host detection without what CPUID says "
                "this CPU lacks)\n",
                kiln_halide::jit_target().to_string().c_str());
    std::printf("roofline: triad %.1f GB/s, FMA peak %.0f GFLOP/s (%s)\n", roof.bandwidth_gbps, roof.peak_gflops,
                roof.fma_isa.c_str());
    warm_up_halide();
    warm_up_kiln();

    // The JSON file is written after every case, so that a run stopped
    // early (an autoscheduler's search of many minutes) keeps the cases it
    // finished; the table is printed at the end.
    std::vector<CaseResult> results;
    nlohmann::json cases = nlohmann::json::array();
    auto write_json = [&] {
        nlohmann::json j = {{"threads", o.threads},
                            {"runs", o.runs},
                            {"quick", o.quick},
                            {"cores", std::thread::hardware_concurrency()},
                            {"kiln_target", KilnRunner::target().to_string()},
                            {"halide_target", kiln_halide::jit_target().to_string()},
                            {"roofline",
                             {{"triad_gb_per_s", roof.bandwidth_gbps},
                              {"fma_peak_gflop_per_s", roof.peak_gflops},
                              {"fma_isa", roof.fma_isa}}},
                            {"geomean_kiln_over_halide", geomean_kiln_over_halide(results)},
                            {"geomean_kiln_auto_over_kiln", geomean_over_kiln(results, "kiln auto")},
                            {"cases", cases}};
        for (const std::string &system : other_autoschedulers(results)) {
            const AutoComparison cmp = compare_with_kiln_auto(results, system);
            j["over_kiln_auto"][system] = {{"geomean", cmp.geomean},
                                           {"cases", cmp.cases},
                                           {"kiln_auto_faster", cmp.kiln_auto_faster},
                                           {"refused_or_failed", cmp.failed}};
        }
        std::ofstream(json_path) << j.dump(2) << "\n";
    };
    for (const SuiteCase &sc : suite()) {
        if (!selected(o, sc.name)) continue;
        std::fprintf(stderr, "running %s...\n", sc.name.c_str());
        results.push_back(sc.run(o));
        for (Entry &e : take_auto_rows()) results.back().entries.push_back(std::move(e));
        cases.push_back(to_json(results.back(), roof));
        write_json();
        if (!schedules_dir.empty()) write_schedules(results.back(), schedules_dir);
    }
    print_table(results, roof);
    std::ofstream(svg_path) << chart_svg(results, roof);
    std::printf("wrote %s and %s\n", json_path.c_str(), svg_path.c_str());

    bool agree = true;
    for (const CaseResult &c : results) agree &= c.outputs_agree();
    if (!agree) std::fprintf(stderr, "FAILED: some outputs disagree with Kiln's (see the table)\n");
    return agree ? 0 : 1;
}

}  // namespace
}  // namespace kiln_bench

int main(int argc, char **argv) {
    kiln_bench::SuiteOptions o;
    std::string json_path = "bench_results.json", svg_path = "bench_chart.svg", schedules_dir;
    CLI::App app{"Kiln against Halide 14, OpenBLAS, oneDNN and OpenCV, with the machine's roofline"};
    app.add_flag("--quick", o.quick, "Small sizes and 3 runs: a smoke check, not a measurement");
    app.add_option("--runs", o.runs, "Timed runs per system (the minimum is reported)")->check(CLI::Range(1, 100000));
    app.add_option("--threads", o.threads, "Threads for every system")->check(CLI::Range(1, 1024));
    app.add_option("--only", o.only, "Run only cases whose names start with these (comma-separated)")->delimiter(',');
    app.add_flag("--auto", kiln_bench::auto_rows(),
                 "Also run each case's generator under the schedule kiln::autoschedule chooses (a \"kiln auto\" row) "
                 "and, where the case has a Halide twin, the twin under Halide 14's Mullapudi2016, Adams2019 and "
                 "Li2018 autoschedulers with the same estimates (\"halide mullapudi2016\", ... rows)");
    app.add_option("--json", json_path, "Where to write the results");
    app.add_option("--svg", svg_path, "Where to write the chart");
    app.add_option("--schedules", schedules_dir,
                   "With --auto: write the schedule each autoscheduler chose to this directory, one file a case and "
                   "autoscheduler (CASE.SYSTEM.sched for Kiln's, CASE.SYSTEM.cpp for Halide's schedule_source)")
        ->check(CLI::ExistingDirectory);
    CLI11_PARSE(app, argc, argv);
    if (o.quick && app.count("--runs") == 0) o.runs = 3;
    for (const std::string &name : o.only) {
        bool known = false;
        for (const auto &sc : kiln_bench::suite()) known |= sc.name.compare(0, name.size(), name) == 0;
        if (!known) {
            std::fprintf(stderr, "bench: no case starts with \"%s\"; the cases are:", name.c_str());
            for (const auto &sc : kiln_bench::suite()) std::fprintf(stderr, " %s", sc.name.c_str());
            std::fprintf(stderr, "\n");
            return 2;
        }
    }
    try {
        return kiln_bench::run(o, json_path, svg_path, schedules_dir);
    } catch (const kiln::CompileError &e) {
        std::fprintf(stderr, "Kiln compile error: %s\n", e.what());
    } catch (const kiln::RuntimeError &e) {
        std::fprintf(stderr, "Kiln kernel error %d: %s\n", e.code, e.what());
    } catch (const Halide::Error &e) {
        std::fprintf(stderr, "Halide error: %s\n", e.what());
    } catch (const std::exception &e) {
        std::fprintf(stderr, "error: %s\n", e.what());
    }
    return 2;
}
