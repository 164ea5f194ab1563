// kiln-blur: a 3x3 box blur of every channel of a PNG, with the blur3x3
// generator compiled ahead of time under two schedules.
//
//   kiln-blur apps/data/scene.png blurred.png --schedule host_tiled
#include <cstdio>

#include "blur3x3_host_tiled.h"
#include "blur3x3_unfused.h"
#include "image_app.h"

int main(int argc, char **argv) {
    kiln_apps::AppOptions o;
    CLI::App app{"kiln-blur: 3x3 box blur of a PNG (generator blur3x3, compiled ahead of time)"};
    kiln_apps::add_app_options(app, o, "output PNG (same channels and bit depth)");
    CLI11_PARSE(app, argc, argv);

    auto kernel = o.schedule == "unfused" ? blur3x3_unfused : blur3x3_host_tiled;
    return kiln_apps::run_guarded("kiln-blur", [&] {
        kiln_apps::InputImage in = kiln_apps::read_input(o.input);
        Halide::Runtime::Buffer<float, 3> out(in.pixels.width(), in.pixels.height(), in.pixels.channels());
        double ms = kiln_apps::time_kernel(o.runs, [&] {
            // One 2-D plane at a time: the generator blurs a single channel.
            for (int c = 0; c < in.pixels.channels(); c++)
                if (int err = kernel(in.pixels.sliced(2, c).raw_buffer(), out.sliced(2, c).raw_buffer())) return err;
            return 0;
        }, "blur3x3_" + o.schedule);
        kiln_apps::write_output(o.output, out, in.bits);
        std::printf("kiln-blur (%s): %dx%d, %d channels, %.3f ms -> %s\n", o.schedule.c_str(), out.width(),
                    out.height(), out.channels(), ms, o.output.c_str());
    });
}
