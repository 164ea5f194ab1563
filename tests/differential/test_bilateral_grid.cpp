// The bilateral grid (generators/bilateral_grid.cpp) under its two shipped
// schedules against the same algorithm in Halide 14 with the same file
// applied (halide_apply), on images whose sizes are and are not multiples
// of s_sigma and of the 8-lane vectors, with values outside [0, 1] so that
// the clamps matter.
//
// Tolerance: none. Every grid cell sums its block of pixels in the same
// order (r.x inner, r.y outer) in both libraries, the blurs and the slice are
// the same expressions (Kiln's lerp is Halide's float lerp,
// zero * (1 - w) + one * w), and Halide runs with strict_float, so nothing
// is contracted or reassociated: the outputs are compared bit for bit.
#include "patterns.h"

namespace {

// generators/bilateral_grid.cpp in Halide, scheduled by `file`.
Halide::Func halide_bilateral_grid(const kiln::Buffer<float> &image, float r_sigma_value, int s,
                                   const kiln::ScheduleFile &file) {
    using namespace Halide;
    Buffer<float> input(*image.raw_buffer());
    Param<float> r_sigma("r_sigma");
    r_sigma.set(r_sigma_value);
    Var x("x"), y("y"), z("z"), c("c");
    Func clamped = BoundaryConditions::repeat_edge(input);
    RDom r(0, s, 0, s, "r");
    Expr v = clamp(clamped(x * s + r.x - s / 2, y * s + r.y - s / 2), 0.0f, 1.0f);
    Func histogram("histogram");
    histogram(x, y, z, c) = 0.0f;
    histogram(x, y, cast<int>(v * (1.0f / r_sigma) + 0.5f), c) += mux(c, {v, 1.0f});
    auto taps = [](Expr a, Expr b, Expr m, Expr d, Expr e) { return a + b * 4 + m * 6 + d * 4 + e; };
    Func blurz("blurz"), blurx("blurx"), blury("blury");
    blurz(x, y, z, c) = taps(histogram(x, y, z - 2, c), histogram(x, y, z - 1, c), histogram(x, y, z, c),
                             histogram(x, y, z + 1, c), histogram(x, y, z + 2, c));
    blurx(x, y, z, c) = taps(blurz(x - 2, y, z, c), blurz(x - 1, y, z, c), blurz(x, y, z, c),
                             blurz(x + 1, y, z, c), blurz(x + 2, y, z, c));
    blury(x, y, z, c) = taps(blurx(x, y - 2, z, c), blurx(x, y - 1, z, c), blurx(x, y, z, c),
                             blurx(x, y + 1, z, c), blurx(x, y + 2, z, c));
    Expr vz = clamp(input(x, y), 0.0f, 1.0f) * (1.0f / r_sigma);
    Expr zi = cast<int>(vz), zf = vz - zi;
    Expr xi = x / s, yi = y / s;
    Expr xf = cast<float>(x % s) / s, yf = cast<float>(y % s) / s;
    auto plane = [&](Expr k) {
        return lerp(lerp(blury(xi, yi, k, c), blury(xi + 1, yi, k, c), xf),
                    lerp(blury(xi, yi + 1, k, c), blury(xi + 1, yi + 1, k, c), xf), yf);
    };
    Func interpolated("interpolated"), output("output");
    interpolated(x, y, c) = lerp(plane(zi), plane(zi + 1), zf);
    output(x, y) = interpolated(x, y, 0) / interpolated(x, y, 1);
    kd::halide_apply(file,
                     {{"histogram", histogram}, {"blurz", blurz}, {"blurx", blurx}, {"blury", blury},
                      {"interpolated", interpolated}, {"output", output}},
                     {{"r.x", r.x}, {"r.y", r.y}});
    return output;
}

void check_bilateral_grid(const std::string &schedule, int s_sigma) {
    kiln::ScheduleFile file = kiln::ScheduleFile::load(kd::schedule_path("bilateral_grid", schedule));
    const float r_sigma = 0.1f;
    kd::KilnGenerator g({"bilateral_grid", {"s_sigma=" + std::to_string(s_sigma)}, {{"r_sigma", r_sigma}}}, file);
    // Multiples of s_sigma and of 8 lanes, and neither.
    for (auto [w, h] : {std::pair{64, 48}, std::pair{77, 35}, std::pair{13, 9}}) {
        INFO("bilateral_grid under " << schedule << ".sched, s_sigma=" << s_sigma << ", " << w << "x" << h);
        kiln::Buffer<float> image = kd::random_buffer({w, h}, -0.2f, 1.2f, (unsigned)(w * h));
        kd::Out<float> out("output", {w, h});
        Halide::Buffer<float> hout(*out.halide.raw_buffer());
        halide_bilateral_grid(image, r_sigma, s_sigma, file).realize(hout, kd::H::strict_float());
        g.set("input", image);
        g.realize({out.kiln.raw_buffer()});
        kd::compare(out);  // bit-exact
    }
}

}  // namespace

TEST_CASE("bilateral_grid: unfused and host_tiled against Halide", "[pattern][bilateral_grid]") {
    for (const char *s : {"unfused", "host_tiled"}) {
        check_bilateral_grid(s, 8);
        check_bilateral_grid(s, 5);
    }
}
