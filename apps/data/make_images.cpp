// Writes the small test images in apps/data: synthetic scenes (no external
// content), regenerated with
//
//   build/bin/kiln-make-test-images apps/data
//
//   scene.png         256x256 RGB, 8-bit    the lab's and the image apps' default input
//   scene_gray16.png  192x144 gray, 16-bit  another bit depth and shape
//   scene_rgba.png    128x128 RGBA, 8-bit   with an alpha channel
#include <cstdio>
#include <exception>
#include <string>

#include "image_ops.h"
#include "png_io.h"

int main(int argc, char **argv) {
    if (argc != 2) {
        std::fprintf(stderr, "usage: %s OUTPUT_DIR\n", argv[0]);
        return 1;
    }
    const std::string dir = argv[1];
    struct Spec {
        const char *name;
        int width, height, channels, bits;
        uint32_t seed;
    };
    const Spec specs[] = {
        {"scene.png", 256, 256, 3, 8, 1},
        {"scene_gray16.png", 192, 144, 1, 16, 2},
        {"scene_rgba.png", 128, 128, 4, 8, 3},
    };
    try {
        for (const Spec &s : specs) {
            auto image = kiln_apps::synthetic_photo(s.width, s.height, s.channels, s.seed);
            kiln_apps::save_png(dir + "/" + s.name, kiln_apps::from_float(image, s.bits));
            std::printf("wrote %s/%s (%dx%d, %d channels, %d-bit)\n", dir.c_str(), s.name, s.width, s.height,
                        s.channels, s.bits);
        }
    } catch (const std::exception &e) {
        std::fprintf(stderr, "error: %s\n", e.what());
        return 1;
    }
    return 0;
}
