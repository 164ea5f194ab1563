// The bilateral grid (generators/bilateral_grid.cpp) compiled ahead of time
// under its two shipped schedules: host_tiled computes what unfused
// computes bit for bit, and unfused matches a plain C++ reference written
// from the algorithm (a grid, three blurs, the trilinear slice) on small
// random images, at s_sigma = 8 (the default) and r_sigma = 0.1.
//
// Tolerance against the reference: 1e-5 relative. The reference does the
// same float operations in the same order, but it is compiled by the test's
// compiler, which may contract a * b + c; the kernels never do.
#include "aot.h"
#include "bilateral_grid_host_tiled.h"
#include "bilateral_grid_unfused.h"

#include <algorithm>
#include <vector>

using namespace aot;

namespace {

// The algorithm, one loop nest a stage, on a grid that covers every cell
// the slice reads (x in [0, w / s + 1], y likewise, z in [0, 1 / r + 1]).
Buffer<float> reference(const Buffer<float> &in, int s, float r_sigma) {
    const int w = in.width(), h = in.height();
    const int gw = w / s + 2, gh = h / s + 2, gd = (int)(1.0f / r_sigma) + 2;
    const float inv_r = 1.0f / r_sigma;
    auto pixel = [&](int x, int y) { return in(std::clamp(x, 0, w - 1), std::clamp(y, 0, h - 1)); };
    // Grids of (x, y, z, c); the margins of 2 cells in x, y and z take the
    // blurs' reads outside the grid (the splat fills them like any cell).
    const int m = 2, nx = gw + 2 * m, ny = gh + 2 * m, nz = gd + 2 * m;
    auto grid = [&]() { return std::vector<float>((size_t)nx * ny * nz * 2, 0.0f); };
    auto at = [&](std::vector<float> &g, int x, int y, int z, int c) -> float & {
        return g[(((size_t)(c * nz + z + m) * ny + y + m) * nx) + x + m];
    };
    std::vector<float> hist = grid(), bz = grid(), bx = grid(), by = grid();
    for (int y = -m; y < gh + m; y++)
        for (int x = -m; x < gw + m; x++)
            for (int ry = 0; ry < s; ry++)
                for (int rx = 0; rx < s; rx++) {
                    float v = std::clamp(pixel(x * s + rx - s / 2, y * s + ry - s / 2), 0.0f, 1.0f);
                    int z = (int)(v * inv_r + 0.5f);
                    at(hist, x, y, z, 0) += v;
                    at(hist, x, y, z, 1) += 1.0f;
                }
    // Each blur over the cells whose five reads are inside the grid.
    auto blur = [&](std::vector<float> &src, std::vector<float> &dst, int dx, int dy, int dz) {
        for (int c = 0; c < 2; c++)
            for (int z = -m + 2 * dz; z < gd + m - 2 * dz; z++)
                for (int y = -m + 2 * dy; y < gh + m - 2 * dy; y++)
                    for (int x = -m + 2 * dx; x < gw + m - 2 * dx; x++) {
                        auto t = [&](int k) { return at(src, x + k * dx, y + k * dy, z + k * dz, c); };
                        at(dst, x, y, z, c) = t(-2) + t(-1) * 4 + t(0) * 6 + t(1) * 4 + t(2);
                    }
    };
    blur(hist, bz, 0, 0, 1);
    blur(bz, bx, 1, 0, 0);
    blur(bx, by, 0, 1, 0);
    auto lerp = [](float a, float b, float t) { return a * (1.0f - t) + b * t; };
    Buffer<float> out(w, h);
    for (int y = 0; y < h; y++)
        for (int x = 0; x < w; x++) {
            float vz = std::clamp(in(x, y), 0.0f, 1.0f) * inv_r;
            int zi = (int)vz;
            float zf = vz - zi;
            int xi = x / s, yi = y / s;
            float xf = (float)(x % s) / s, yf = (float)(y % s) / s;
            float sliced[2];
            for (int c = 0; c < 2; c++) {
                auto plane = [&](int k) {
                    return lerp(lerp(at(by, xi, yi, k, c), at(by, xi + 1, yi, k, c), xf),
                                lerp(at(by, xi, yi + 1, k, c), at(by, xi + 1, yi + 1, k, c), xf), yf);
                };
                sliced[c] = lerp(plane(zi), plane(zi + 1), zf);
            }
            out(x, y) = sliced[0] / sliced[1];
        }
    return out;
}

}  // namespace

TEST_CASE("generator: bilateral_grid schedules agree and match a C++ reference", "[generator][bilateral_grid]") {
    const float r_sigma = 0.1f;
    for (auto [w, h] : {std::pair{64, 40}, std::pair{53, 29}}) {
        INFO(w << "x" << h);
        Buffer<float> in(w, h), unfused(w, h), tiled(w, h);
        fill_random(in, -0.2, 1.2, (unsigned)w);
        REQUIRE(bilateral_grid_unfused(in, r_sigma, unfused) == 0);
        REQUIRE(bilateral_grid_host_tiled(in, r_sigma, tiled) == 0);
        {
            std::string first;
            int bad = count_mismatches(unfused, tiled, first);
            INFO("host_tiled against unfused; first mismatch " << first);
            CHECK(bad == 0);
        }
        {
            std::string first;
            int bad = count_mismatches(reference(in, 8, r_sigma), unfused, first, 1e-5);
            INFO("unfused against the reference; first mismatch " << first);
            CHECK(bad == 0);
        }
    }
}
