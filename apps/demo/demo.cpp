// Kiln demo: one algorithm, a 3x3 box blur, under four schedules.
//
// The algorithm is written once (build() below); each schedule only decides
// where blur_x is computed and stored and how the loops run. All four must
// produce the same image, so the table shows what the schedule alone buys.
// Every pipeline is JIT-compiled on its first run (cached under
// $XDG_CACHE_HOME/kiln), then timed as the best of kRuns runs. `demo --help`
// prints what it does and the environment variables it reads.
#include <kiln/kiln.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <filesystem>
#include <limits>
#include <string>
#include <thread>
#include <vector>

#ifndef KILN_DEMO_OUTPUT_DIR  // set by apps/CMakeLists.txt to a directory in the build tree
#define KILN_DEMO_OUTPUT_DIR "."
#endif

namespace {

using kiln::Func;
using kiln::ImageParam;
using kiln::Var;
using Image = kiln::Buffer<float, 2>;

constexpr int kSize = 4096;
constexpr int kRuns = 10;
constexpr double kTolerance = 1e-5;

enum Schedule { Root, Fused, Tiled, Sliding, NumSchedules };

const char *const kScheduleNames[NumSchedules] = {
    "(a) compute_root (unfused)",
    "(b) compute_at(blur_y, y) (fused)",
    "(c) fused + tiled + vector + parallel",
    "(d) sliding window + vector + parallel",
};

struct Blur {
    ImageParam input;
    Func output;
};

// The algorithm, then schedule `s`. Each call builds a fresh graph, since a
// schedule cannot be undone on a Func.
Blur build(Schedule s) {
    ImageParam input(kiln::Float(32), 2, "input");
    Var x("x"), y("y"), xi("xi"), yi("yi"), yo("yo");

    Func clamped = kiln::BoundaryConditions::repeat_edge(input);
    Func blur_x("blur_x"), blur_y("blur_y");
    blur_x(x, y) = (clamped(x - 1, y) + clamped(x, y) + clamped(x + 1, y)) / 3;
    blur_y(x, y) = (blur_x(x, y - 1) + blur_x(x, y) + blur_x(x, y + 1)) / 3;

    switch (s) {
    case Root:
        // All of blur_x is computed and written to memory, then read back by blur_y.
        blur_x.compute_root();
        break;
    case Fused:
        // Per output row, the three rows of blur_x it reads: no full-size
        // intermediate, but every blur_x row is computed three times.
        blur_x.compute_at(blur_y, y);
        break;
    case Tiled:
        // 256x32 tiles, rows of tiles spread over threads; per tile, the
        // 256x34 region of blur_x it needs, in a buffer that stays in cache.
        blur_y.tile(x, y, xi, yi, 256, 32).vectorize(xi, 8).parallel(y);
        blur_x.compute_at(blur_y, x).vectorize(x, 8);
        break;
    case Sliding:
        // Strips of 64 rows spread over threads. Inside a strip blur_x is
        // stored once (store_at the strip) and computed a row at a time
        // (compute_at the row): each row is computed once and reused by the
        // next two output rows, and its buffer folds to three rows.
        blur_y.split(y, yo, yi, 64).parallel(yo).vectorize(x, 8);
        blur_x.store_at(blur_y, yo).compute_at(blur_y, yi).vectorize(x, 8);
        break;
    case NumSchedules:
        break;
    }
    return {input, blur_y};
}

// A deterministic test image with values in [0, 1).
Image make_input(int w, int h) {
    Image im(w, h);
    for (int y = 0; y < h; y++) {
        for (int x = 0; x < w; x++) {
            uint32_t v = (uint32_t)x * 2654435761u ^ (uint32_t)y * 2246822519u;
            v ^= v >> 15;
            v *= 2654435761u;
            im(x, y) = (float)(v >> 8) / (float)(1u << 24);
        }
    }
    return im;
}

// The same blur as plain loops, in the same float operation order, to check
// schedule (a) itself.
Image reference_blur(const Image &in) {
    const int w = in.width(), h = in.height();
    auto at = [&](int x, int y) { return in(std::clamp(x, 0, w - 1), std::clamp(y, 0, h - 1)); };
    Image bx(w, h + 2);
    bx.set_min(0, -1);
    for (int y = -1; y <= h; y++) {
        for (int x = 0; x < w; x++) {
            bx(x, y) = (at(x - 1, y) + at(x, y) + at(x + 1, y)) / 3.0f;
        }
    }
    Image out(w, h);
    for (int y = 0; y < h; y++) {
        for (int x = 0; x < w; x++) {
            out(x, y) = (bx(x, y - 1) + bx(x, y) + bx(x, y + 1)) / 3.0f;
        }
    }
    return out;
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

double milliseconds_since(std::chrono::steady_clock::time_point t0) {
    return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
}

struct Timing {
    double first_ms;  // includes the JIT compilation (or cache load)
    double best_ms;   // best of kRuns runs after that
};

Timing run(Blur &b, const Image &input, Image &output) {
    b.input.set(input);
    auto t0 = std::chrono::steady_clock::now();
    b.output.realize(output);
    Timing t{milliseconds_since(t0), std::numeric_limits<double>::infinity()};
    for (int i = 0; i < kRuns; i++) {
        t0 = std::chrono::steady_clock::now();
        b.output.realize(output);
        t.best_ms = std::min(t.best_ms, milliseconds_since(t0));
    }
    return t;
}

int run_demo() {
    const char *threads = std::getenv("KILN_NUM_THREADS");
    std::printf("Kiln demo: 3x3 blur of a %dx%d float image, best of %d runs after one warm-up run\n", kSize, kSize,
                kRuns);
    std::printf("threads: %s (%u cores)\n\n", threads ? threads : "all cores, set KILN_NUM_THREADS to change",
                std::thread::hardware_concurrency());

    const Image input = make_input(kSize, kSize);
    std::vector<Image> outputs;
    std::vector<Timing> timings;
    for (int s = 0; s < NumSchedules; s++) {
        Blur b = build((Schedule)s);
        outputs.emplace_back(kSize, kSize);
        timings.push_back(run(b, input, outputs.back()));
    }

    std::printf("%-40s %14s %12s %9s %18s\n", "schedule", "first run ms", "best ms", "speedup", "max |diff| vs (a)");
    bool agree = true;
    for (int s = 0; s < NumSchedules; s++) {
        const double diff = max_abs_diff(outputs[s], outputs[Root]);
        agree = agree && diff <= kTolerance;
        std::printf("%-40s %14.1f %12.2f %8.2fx %18.3g\n", kScheduleNames[s], timings[s].first_ms, timings[s].best_ms,
                    timings[Root].best_ms / timings[s].best_ms, diff);
    }
    const double ref_diff = max_abs_diff(outputs[Root], reference_blur(input));
    agree = agree && ref_diff <= kTolerance;
    std::printf("\n(a) against plain C++ loops: max |diff| = %.3g\n", ref_diff);
    std::printf("(first run includes JIT compilation unless the kernel was already cached)\n");

    const std::filesystem::path dir = KILN_DEMO_OUTPUT_DIR;
    std::filesystem::create_directories(dir);
    const std::filesystem::path emitted = dir / "blur3x3_fused.cpp";
    build(Fused).output.compile_to_cpp(emitted.string(), "blur3x3_fused");
    std::printf("\nC++ emitted for schedule (b): %s\n", emitted.string().c_str());
    std::printf("KILN_DEBUG=1 prints the IR after every lowering pass, KILN_TIME_PASSES=1 times them.\n");

    if (!agree) {
        std::fprintf(stderr, "FAILED: schedules disagree by more than %g\n", kTolerance);
        return 1;
    }
    return 0;
}

void print_usage(std::FILE *to) {
    std::fprintf(to,
                 "Usage: demo\n"
                 "\n"
                 "Blurs a %dx%d float image (3x3 box blur) under four schedules of the same\n"
                 "algorithm, each JIT-compiled, and prints the first-run and best-of-%d times,\n"
                 "the speedups and the largest difference from the unfused schedule and from\n"
                 "plain C++ loops; then writes the C++ emitted for the fused schedule to\n"
                 "  %s/blur3x3_fused.cpp\n"
                 "Exits with 1 if the schedules disagree, 2 on a Kiln error.\n"
                 "\n"
                 "Environment:\n"
                 "  KILN_NUM_THREADS   threads of the parallel schedules (default: all cores)\n"
                 "  XDG_CACHE_HOME     the JIT cache is $XDG_CACHE_HOME/kiln (default ~/.cache/kiln)\n"
                 "  KILN_DEBUG=1       print the IR after every lowering pass\n"
                 "  KILN_TIME_PASSES=1 time the lowering passes\n",
                 kSize, kSize, kRuns, KILN_DEMO_OUTPUT_DIR);
}

}  // namespace

int main(int argc, char **argv) {
    if (argc > 1) {  // the demo takes no arguments: --help prints the usage, anything else is a mistake
        std::string arg = argv[1];
        if (arg == "-h" || arg == "--help") return print_usage(stdout), 0;
        std::fprintf(stderr, "demo: error: unknown argument \"%s\"; the demo takes none\n\n", argv[1]);
        return print_usage(stderr), 1;
    }
    try {
        return run_demo();
    } catch (const kiln::CompileError &e) {
        std::fprintf(stderr, "Kiln compile error: %s\n", e.what());
    } catch (const kiln::RuntimeError &e) {
        std::fprintf(stderr, "Kiln kernel error %d: %s\n", e.code, e.what());
    } catch (const std::exception &e) {
        std::fprintf(stderr, "error: %s\n", e.what());
    }
    return 2;
}
