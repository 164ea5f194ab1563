#include "image_app.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <limits>
#include <stdexcept>

#include "png_io.h"

namespace kiln_apps {

void add_app_options(CLI::App &app, AppOptions &o, const std::string &output_help) {
    app.add_option("input", o.input, "input PNG (gray, gray+alpha, RGB or RGBA; 8 or 16-bit)")->required();
    app.add_option("output", o.output, output_help)->required();
    app.add_option("--schedule,-s", o.schedule, "the linked schedule")
        ->capture_default_str()
        ->check(CLI::IsMember({"unfused", "host_tiled"}));
    app.add_option("--runs,-n", o.runs, "time the best of N runs")->capture_default_str()->check(CLI::PositiveNumber);
}

int run_guarded(const std::string &program, const std::function<void()> &body) {
    try {
        body();
        return 0;
    } catch (const std::exception &e) {
        std::fprintf(stderr, "%s: error: %s\n", program.c_str(), e.what());
        return 1;
    }
}

InputImage read_input(const std::string &path) {
    Halide::Runtime::Buffer<void, 3> png = load_png(path);
    return {to_float(png), png.type().bits};
}

void write_output(const std::string &path, const Halide::Runtime::Buffer<const float, 3> &image, int bits) {
    save_png(path, from_float(image, bits));
}

double time_kernel(int runs, const std::function<int()> &kernel, const std::string &what) {
    double best = std::numeric_limits<double>::infinity();
    for (int i = 0; i < std::max(runs, 1); i++) {
        auto t0 = std::chrono::steady_clock::now();
        int err = kernel();
        auto t1 = std::chrono::steady_clock::now();
        if (err != 0) throw std::runtime_error(what + " failed with Kiln error code " + std::to_string(err));
        best = std::min(best, std::chrono::duration<double, std::milli>(t1 - t0).count());
    }
    return best;
}

}  // namespace kiln_apps
