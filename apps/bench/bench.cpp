// bench: Kiln against Halide 14, same algorithm, same schedule, same input,
// same thread count, measured in one run together with the machine's memory
// bandwidth (a STREAM-style triad).
//
// The pipeline is the 3x3 blur of apps/demo under its tiled schedule:
//   blur_y: tile(x, y, xi, yi, 256, 32) vectorize(xi, 8) parallel(y)
//   blur_x: compute_at(blur_y, x) vectorize(x, 8)
// Each system is JIT-compiled and warmed up once, then timed as the best of
// --runs runs. Outputs are cross-checked; the program fails if they differ.
// Results: a table on stdout and JSON in --json (bench_results.json).
#include <kiln/kiln.h>
// Kiln's Error.h and Halide.h both define user_error, user_assert,
// internal_error and internal_assert. This program uses none of them.
#undef user_error
#undef user_assert
#undef internal_error
#undef internal_assert
#include <Halide.h>

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>
#include <omp.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <fstream>
#include <functional>
#include <limits>
#include <memory>
#include <random>
#include <string>
#include <thread>
#include <vector>

namespace {

using Image = kiln::Buffer<float, 2>;
using nlohmann::json;

constexpr double kTolerance = 1e-5;
const char *const kSchedule =
    "blur_y: tile(x, y, xi, yi, 256, 32) vectorize(xi, 8) parallel(y); "
    "blur_x: compute_at(blur_y, x) vectorize(x, 8)";

struct Options {
    bool quick = false;
    int size = 4096;
    int runs = 10;
    int threads = 2;
    std::string json_path = "bench_results.json";
};

// Times of one pipeline: the first call (JIT compile + run), then the runs.
struct Timing {
    double first_ms = 0;
    std::vector<double> runs_ms;
    double best() const { return *std::min_element(runs_ms.begin(), runs_ms.end()); }
    double median() const {
        std::vector<double> v = runs_ms;
        std::sort(v.begin(), v.end());
        return v[v.size() / 2];
    }
};

double milliseconds_since(std::chrono::steady_clock::time_point t0) {
    return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
}

Timing time_runs(int runs, const std::function<void()> &f) {
    Timing t;
    auto t0 = std::chrono::steady_clock::now();
    f();
    t.first_ms = milliseconds_since(t0);
    for (int i = 0; i < runs; i++) {
        t0 = std::chrono::steady_clock::now();
        f();
        t.runs_ms.push_back(milliseconds_since(t0));
    }
    return t;
}

struct KilnBlur {
    kiln::ImageParam input;
    kiln::Func output;
};

KilnBlur kiln_blur_tiled() {
    using namespace kiln;
    ImageParam input(Float(32), 2, "input");
    Var x("x"), y("y"), xi("xi"), yi("yi");
    Func clamped = BoundaryConditions::repeat_edge(input);
    Func blur_x("blur_x"), blur_y("blur_y");
    blur_x(x, y) = (clamped(x - 1, y) + clamped(x, y) + clamped(x + 1, y)) / 3;
    blur_y(x, y) = (blur_x(x, y - 1) + blur_x(x, y) + blur_x(x, y + 1)) / 3;
    blur_y.tile(x, y, xi, yi, 256, 32).vectorize(xi, 8).parallel(y);
    blur_x.compute_at(blur_y, x).vectorize(x, 8);
    return {input, blur_y};
}

struct HalideBlur {
    Halide::ImageParam input;
    Halide::Func output;
};

HalideBlur halide_blur_tiled() {
    using namespace Halide;
    ImageParam input(Float(32), 2, "input");
    Var x("x"), y("y"), xi("xi"), yi("yi");
    Func clamped = BoundaryConditions::repeat_edge(input);
    Func blur_x("blur_x"), blur_y("blur_y");
    blur_x(x, y) = (clamped(x - 1, y) + clamped(x, y) + clamped(x + 1, y)) / 3;
    blur_y(x, y) = (blur_x(x, y - 1) + blur_x(x, y) + blur_x(x, y + 1)) / 3;
    blur_y.tile(x, y, xi, yi, 256, 32).vectorize(xi, 8).parallel(y);
    blur_x.compute_at(blur_y, x).vectorize(x, 8);
    return {input, blur_y};
}

// STREAM triad a[i] = b[i] + s * c[i] over three arrays of `n` doubles, on
// `threads` threads; the best of `runs` runs after a warm-up, in GB/s
// (3 * 8 * n bytes moved per run, as STREAM counts them).
double triad_gb_per_s(size_t n, int runs, int threads) {
    std::unique_ptr<double[]> a(new double[n]), b(new double[n]), c(new double[n]);
    const long len = (long)n;
#pragma omp parallel for num_threads(threads) schedule(static)
    for (long i = 0; i < len; i++) {  // first touch on the threads that use the pages
        a[i] = 0.0;
        b[i] = 1.0;
        c[i] = 2.0;
    }
    const double s = 3.0;
    double best = std::numeric_limits<double>::infinity();
    for (int r = 0; r <= runs; r++) {
        auto t0 = std::chrono::steady_clock::now();
#pragma omp parallel for num_threads(threads) schedule(static)
        for (long i = 0; i < len; i++) {
            a[i] = b[i] + s * c[i];
        }
        if (r > 0) {
            best = std::min(best, milliseconds_since(t0));
        }
    }
    if (a[n / 2] != 7.0) {
        throw std::runtime_error("triad computed a wrong value");
    }
    return 3.0 * sizeof(double) * (double)n / (best * 1e-3) / 1e9;
}

double max_abs_diff(const Image &a, const Image &b) {
    double m = 0;
    for (int y = 0; y < a.height(); y++) {
        for (int x = 0; x < a.width(); x++) {
            m = std::max(m, std::fabs((double)a(x, y) - (double)b(x, y)));
        }
    }
    return m;
}

json pipeline_json(const char *system, const Timing &t, double bytes, double bandwidth_gbps) {
    const double gbps = bytes / (t.best() * 1e-3) / 1e9;
    return {{"system", system},
            {"first_run_ms", t.first_ms},
            {"best_ms", t.best()},
            {"median_ms", t.median()},
            {"runs_ms", t.runs_ms},
            {"bytes", bytes},
            {"gb_per_s", gbps},
            {"percent_of_bandwidth", 100.0 * gbps / bandwidth_gbps}};
}

int run_bench(const Options &opt) {
    // Both runtimes read their thread count on first use.
    const std::string threads = std::to_string(opt.threads);
    setenv("KILN_NUM_THREADS", threads.c_str(), 1);
    setenv("HL_NUM_THREADS", threads.c_str(), 1);

    const int w = opt.size, h = opt.size;
    std::printf("blur3x3 %dx%d float32, %d threads, best of %d runs after a warm-up\n", w, h, opt.threads, opt.runs);
    std::printf("schedule (both systems): %s\n", kSchedule);

    const size_t triad_n = (opt.quick ? 64u : 256u) << 17;  // doubles per array: 64 or 256 MiB
    const double bandwidth = triad_gb_per_s(triad_n, opt.runs, opt.threads);
    std::printf("memory bandwidth (triad, 3 arrays of %zu MiB): %.2f GB/s\n\n", triad_n * sizeof(double) >> 20,
                bandwidth);

    Image input(w, h), kiln_out(w, h), halide_out(w, h);
    std::mt19937 rng(12345);
    std::uniform_real_distribution<float> uniform(0.0f, 1.0f);
    input.for_each_value([&](float &v) { v = uniform(rng); });

    KilnBlur kb = kiln_blur_tiled();
    kb.input.set(input);
    const Timing kiln_t = time_runs(opt.runs, [&] { kb.output.realize(kiln_out); });

    HalideBlur hb = halide_blur_tiled();
    Halide::Buffer<float> h_in(input.data(), w, h), h_out(halide_out.data(), w, h);
    hb.input.set(h_in);
    const Timing halide_t = time_runs(opt.runs, [&] {
        hb.output.realize(h_out);  // the first call JIT-compiles
    });

    const double bytes = 2.0 * sizeof(float) * (double)w * (double)h;  // input read + output written
    const double diff = max_abs_diff(kiln_out, halide_out);
    const double ratio = kiln_t.best() / halide_t.best();
    json result = {
        {"benchmark", "blur3x3"},
        {"schedule", kSchedule},
        {"width", w},
        {"height", h},
        {"runs", opt.runs},
        {"threads", opt.threads},
        {"cores", std::thread::hardware_concurrency()},
        {"quick", opt.quick},
        {"targets", {{"kiln", kiln::Target::host().to_string()},
                     {"halide", Halide::get_jit_target_from_environment().to_string()}}},
        {"bandwidth", {{"kernel", "triad"}, {"array_bytes", triad_n * sizeof(double)}, {"gb_per_s", bandwidth}}},
        {"pipelines", {pipeline_json("kiln", kiln_t, bytes, bandwidth),
                       pipeline_json("halide", halide_t, bytes, bandwidth)}},
        {"ratio_kiln_over_halide", ratio},
        {"max_abs_diff", diff},
        {"outputs_agree", diff <= kTolerance},
    };

    std::printf("%-8s %14s %10s %11s %8s %16s\n", "system", "first run ms", "best ms", "median ms", "GB/s",
                "% of bandwidth");
    for (const json &p : result["pipelines"]) {
        std::printf("%-8s %14.1f %10.3f %11.3f %8.2f %15.1f%%\n", p["system"].get<std::string>().c_str(),
                    p["first_run_ms"].get<double>(), p["best_ms"].get<double>(), p["median_ms"].get<double>(),
                    p["gb_per_s"].get<double>(), p["percent_of_bandwidth"].get<double>());
    }
    std::printf("\nkiln / halide time: %.3f (below 1: Kiln is faster)\n", ratio);
    std::printf("max |kiln - halide| = %.3g\n", diff);

    std::ofstream(opt.json_path) << result.dump(2) << "\n";
    std::printf("wrote %s\n", opt.json_path.c_str());

    if (diff > kTolerance) {
        std::fprintf(stderr, "FAILED: Kiln and Halide outputs differ by more than %g\n", kTolerance);
        return 1;
    }
    return 0;
}

}  // namespace

int main(int argc, char **argv) {
    Options opt;
    CLI::App app{"Kiln vs Halide 14: 3x3 blur, same schedule, plus a memory-bandwidth probe"};
    app.add_flag("--quick", opt.quick, "Small problem (1024x1024 unless --size) and a smaller bandwidth probe");
    app.add_option("--size", opt.size, "Image width and height")->check(CLI::Range(256, 32768));
    app.add_option("--runs", opt.runs, "Timed runs per pipeline (the best is reported)")->check(CLI::Range(1, 100000));
    app.add_option("--threads", opt.threads, "Threads for both systems")->check(CLI::Range(1, 1024));
    app.add_option("--json", opt.json_path, "Where to write the results");
    CLI11_PARSE(app, argc, argv);
    if (opt.quick && app.count("--size") == 0) {
        opt.size = 1024;
    }

    try {
        return run_bench(opt);
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
