// kiln-harris: the Harris corner response of a PNG, with the harris
// generator compiled ahead of time under two schedules. The output is a gray
// image: black where the response is not positive (flat areas and edges),
// brighter towards the strongest corner (square root of response / max).
//
//   kiln-harris apps/data/scene.png corners.png --schedule host_tiled
#include <algorithm>
#include <cmath>
#include <cstdio>

#include "harris_host_tiled.h"
#include "harris_unfused.h"
#include "image_app.h"
#include "image_ops.h"

int main(int argc, char **argv) {
    kiln_apps::AppOptions o;
    float k = 0.04f;
    CLI::App app{"kiln-harris: Harris corner response of a PNG (generator harris, compiled ahead of time)"};
    kiln_apps::add_app_options(app, o, "output PNG: the response, gray");
    app.add_option("-k", k, "the Harris k: response = det - k * trace^2")
        ->capture_default_str()
        ->check(CLI::Range(0.0f, 0.25f));
    CLI11_PARSE(app, argc, argv);

    auto kernel = o.schedule == "unfused" ? harris_unfused : harris_host_tiled;
    return kiln_apps::run_guarded("kiln-harris", [&] {
        kiln_apps::InputImage in = kiln_apps::read_input(o.input);
        Halide::Runtime::Buffer<float, 3> rgb = kiln_apps::with_channels(in.pixels, 3);
        Halide::Runtime::Buffer<float, 2> response(rgb.width(), rgb.height());
        double ms = kiln_apps::time_kernel(
            o.runs, [&] { return kernel(rgb.raw_buffer(), k, response.raw_buffer()); }, "harris_" + o.schedule);

        float top = 0;
        response.for_each_value([&](float v) { top = std::max(top, v); });
        Halide::Runtime::Buffer<float, 3> shown(response.width(), response.height(), 1);
        shown.for_each_element([&](int x, int y, int) {
            float v = response(x, y);
            shown(x, y, 0) = top > 0 && v > 0 ? std::sqrt(v / top) : 0.0f;
        });
        kiln_apps::write_output(o.output, shown, in.bits);
        std::printf("kiln-harris (%s, k %g): %dx%d, %.3f ms, strongest response %g -> %s\n", o.schedule.c_str(), k,
                    response.width(), response.height(), ms, top, o.output.c_str());
    });
}
