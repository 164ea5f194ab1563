// kiln-unsharp: unsharp masking of every channel of a PNG, with the unsharp
// generator (float32) compiled ahead of time under two schedules.
//
//   kiln-unsharp apps/data/scene.png sharp.png --amount 1.5 --schedule host_tiled
#include <cstdio>

#include "image_app.h"
#include "unsharp_host_tiled.h"
#include "unsharp_unfused.h"

int main(int argc, char **argv) {
    kiln_apps::AppOptions o;
    float amount = 1.0f;
    CLI::App app{"kiln-unsharp: unsharp masking of a PNG (generator unsharp, compiled ahead of time)"};
    kiln_apps::add_app_options(app, o, "output PNG (same channels and bit depth)");
    app.add_option("--amount,-a", amount, "how much of the detail to add back")
        ->capture_default_str()
        ->check(CLI::Range(0.0f, 8.0f));
    CLI11_PARSE(app, argc, argv);

    auto kernel = o.schedule == "unfused" ? unsharp_unfused : unsharp_host_tiled;
    return kiln_apps::run_guarded("kiln-unsharp", [&] {
        kiln_apps::InputImage in = kiln_apps::read_input(o.input);
        Halide::Runtime::Buffer<float, 3> out(in.pixels.width(), in.pixels.height(), in.pixels.channels());
        double ms = kiln_apps::time_kernel(o.runs, [&] {
            for (int c = 0; c < in.pixels.channels(); c++)
                if (int err = kernel(in.pixels.sliced(2, c).raw_buffer(), amount, out.sliced(2, c).raw_buffer()))
                    return err;
            return 0;
        }, "unsharp_" + o.schedule);
        kiln_apps::write_output(o.output, out, in.bits);  // values beyond [0, 1] are clamped
        std::printf("kiln-unsharp (%s, amount %g): %dx%d, %d channels, %.3f ms -> %s\n", o.schedule.c_str(), amount,
                    out.width(), out.height(), out.channels(), ms, o.output.c_str());
    });
}
