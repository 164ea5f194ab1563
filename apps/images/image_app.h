// What the image apps (kiln-blur, kiln-unsharp, kiln-harris) share: their
// command line, the input PNG as a float image, timing an AOT kernel, and
// writing the result.
#pragma once
#include <HalideBuffer.h>

#include <CLI/CLI.hpp>
#include <functional>
#include <string>

namespace kiln_apps {

struct AppOptions {
    std::string input, output;
    std::string schedule = "host_tiled";  // which linked function: "unfused" or "host_tiled"
    int runs = 1;
};
// The positional INPUT and OUTPUT, --schedule and --runs.
void add_app_options(CLI::App &app, AppOptions &o, const std::string &output_help);

// Run `body`; an exception is printed as "<program>: error: <what>" and
// gives exit status 1, else 0.
int run_guarded(const std::string &program, const std::function<void()> &body);

struct InputImage {
    Halide::Runtime::Buffer<float, 3> pixels;  // planar (x, y, c), values in [0, 1]
    int bits = 8;                              // the file's bit depth, for the output
};
InputImage read_input(const std::string &path);
// Values clamped to [0, 1], written with `bits` per sample.
void write_output(const std::string &path, const Halide::Runtime::Buffer<const float, 3> &image, int bits);

// Call `kernel` `runs` times (a Kiln function: 0 on success, else an error
// code, after a message on stderr) and return the best time in ms; a
// std::runtime_error naming `what` if it fails.
double time_kernel(int runs, const std::function<int()> &kernel, const std::string &what);

}  // namespace kiln_apps
