// Halide's camera RAW pipeline and local Laplacian filter
// (generators/camera_pipe.cpp, generators/local_laplacian.cpp) compiled
// ahead of time under their two schedules: host_tiled (Halide's CPU
// schedule) computes what unfused computes, bit for bit, on random images
// of two sizes each. (The differential tier checks both against Halide.)
#include "aot.h"
#include "camera_pipe_host_tiled.h"
#include "camera_pipe_unfused.h"
#include "local_laplacian_host_tiled.h"
#include "local_laplacian_unfused.h"

using namespace aot;

namespace {

// A colour matrix (3 rows of 4: the gains of r, g, b, then an offset),
// near the identity, different per colour temperature.
Buffer<float> colour_matrix(float gain, float offset) {
    Buffer<float> m(4, 3);
    for (int y = 0; y < 3; y++)
        for (int x = 0; x < 4; x++) m(x, y) = x == 3 ? offset : x == y ? gain : (gain - 1.0f) * -0.5f;
    return m;
}

template<typename T> void check_same(const Buffer<T> &unfused, const Buffer<T> &tiled) {
    std::string first;
    int bad = count_mismatches(unfused, tiled, first);
    INFO("host_tiled against unfused; first mismatch " << first);
    CHECK(bad == 0);
}

}  // namespace

TEST_CASE("generator: camera_pipe host_tiled computes what unfused computes", "[generator][camera_pipe]") {
    Buffer<float> m3200 = colour_matrix(1.6f, -40.0f), m7000 = colour_matrix(2.1f, -30.0f);
    // Output widths a multiple of the widest vectors (64 lanes); the input
    // 32 columns and 48 rows larger, as in Halide's app.
    for (auto [w, h] : {std::pair{128, 64}, std::pair{192, 38}}) {
        INFO(w << "x" << h);
        Buffer<uint16_t> raw(w + 32, h + 48);
        fill_random(raw, 0, 1024, (unsigned)w);
        raw(40, 30) = 1023;  // a hot pixel
        Buffer<uint8_t> unfused(w, h, 3), tiled(w, h, 3);
        REQUIRE(camera_pipe_unfused(raw, m3200, m7000, 3700.0f, 2.0f, 50.0f, 1.0f, 25, 1023, unfused) == 0);
        REQUIRE(camera_pipe_host_tiled(raw, m3200, m7000, 3700.0f, 2.0f, 50.0f, 1.0f, 25, 1023, tiled) == 0);
        check_same(unfused, tiled);
    }
}

TEST_CASE("generator: local_laplacian host_tiled computes what unfused computes", "[generator][local_laplacian]") {
    for (auto [w, h] : {std::pair{96, 72}, std::pair{77, 130}}) {
        INFO(w << "x" << h);
        Buffer<uint16_t> in(w, h, 3);
        fill_random(in, 0, 65536, (unsigned)h);
        Buffer<uint16_t> unfused(w, h, 3), tiled(w, h, 3);
        REQUIRE(local_laplacian_unfused(in, 8, 1.0f, 1.0f, unfused) == 0);
        REQUIRE(local_laplacian_host_tiled(in, 8, 1.0f, 1.0f, tiled) == 0);
        check_same(unfused, tiled);
    }
}
