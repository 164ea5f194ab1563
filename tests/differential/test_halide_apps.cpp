// Halide's camera RAW pipeline, local Laplacian filter and Harris corner
// detector (generators/camera_pipe.cpp, generators/local_laplacian.cpp,
// generators/harris.cpp) under their shipped host schedules, and its max
// filter, histogram equalization and IIR blur (max_filter.cpp,
// hist_equalize.cpp, iir_blur.cpp) under host_tiled, against their Halide
// 14 twins (apps/common/halide_apps.h) with the same file applied
// (halide_apply), on images of two sizes each.
//
// Tolerance: the camera pipe's output is compared bit for bit (integer
// arithmetic; its curve table is float, the same IEEE operations in both
// libraries, Halide under strict_float). The local Laplacian's remapping
// table calls exp(), which Halide computes with its own approximation (up
// to 9 ulps off, test_math.cpp) and Kiln with the C library's: a pixel whose
// float value is that close to a step of the uint16 output rounds the other
// way. Its outputs may differ by 1 (of 65535), at under 1% of the pixels.
// harris is float arithmetic written the same way in both, Halide under
// strict_float and Kiln's default float mode: bit for bit.
// The max filter's and the IIR blur's float outputs and the equalized
// image's bytes are identical (max() is exact; the blur's multiply-adds are
// the same IEEE operations in the same order, Halide under strict_float).
#include "halide_apps.h"
#include "patterns.h"

namespace {

template<typename T> kiln::Buffer<T> random_ints(const std::vector<int> &sizes, int lo, int hi, unsigned seed) {
    kiln::Buffer<T> b(sizes);
    std::mt19937 rng(seed);
    std::uniform_int_distribution<int> u(lo, hi - 1);
    b.for_each_value([&](T &v) { v = (T)u(rng); });
    return b;
}

void check_camera_pipe(const std::string &schedule) {
    kiln::ScheduleFile file = kiln::ScheduleFile::load(kd::schedule_path("camera_pipe", schedule));
    kd::KilnGenerator app({"camera_pipe"}, file);
    kiln::Buffer<float> m3200 = kd::random_buffer({4, 3}, -1.0f, 2.0f, 1);
    kiln::Buffer<float> m7000 = kd::random_buffer({4, 3}, -1.0f, 2.0f, 2);
    m3200(3, 0) = -40.0f;  // offsets of the size the matrices have
    m7000(3, 1) = -25.0f;
    // Output widths a multiple of the widest vectors (64 lanes), heights of
    // 32-row strips and not; the input 32 columns and 48 rows larger, as in
    // Halide's app (the entry checks of both schedules accept it).
    for (auto [w, h] : {std::pair{128, 64}, std::pair{64, 46}}) {
        INFO("camera_pipe under " << schedule << ".sched, " << w << "x" << h);
        kiln::Buffer<uint16_t> raw = random_ints<uint16_t>({w + 32, h + 48}, 0, 1024, (unsigned)(w + h));
        kd::Out<uint8_t> out("processed", {w, h, 3});
        Halide::Buffer<uint8_t> hout(*out.halide.raw_buffer());
        kiln_halide::HalideApp twin =
            kiln_halide::camera_pipe(Halide::Buffer<uint16_t>(*raw.raw_buffer()), Halide::Buffer<float>(*m3200.raw_buffer()),
                                     Halide::Buffer<float>(*m7000.raw_buffer()), 3700.0f, 2.0f, 50.0f, 1.0f, 25, 1023);
        kd::halide_apply(file, twin.funcs, {}, {}, twin.images);
        twin.output.realize(hout, kd::H::strict_float());
        app.set<uint16_t, 2>("input", raw);
        app.set<float, 2>("matrix_3200", m3200);
        app.set<float, 2>("matrix_7000", m7000);
        app.set_scalar("color_temp", 3700.0f);
        app.set_scalar("gamma", 2.0f);
        app.set_scalar("contrast", 50.0f);
        app.set_scalar("sharpen_strength", 1.0f);
        app.set_scalar("black_level", 25);
        app.set_scalar("white_level", 1023);
        app.realize({out.kiln.raw_buffer()});
        kd::compare(out);
    }
}

void check_local_laplacian(const std::string &schedule) {
    kiln::ScheduleFile file = kiln::ScheduleFile::load(kd::schedule_path("local_laplacian", schedule));
    kd::KilnGenerator app({"local_laplacian", {"pyramid_levels=8"}}, file);
    for (auto [w, h] : {std::pair{96, 72}, std::pair{61, 130}}) {
        INFO("local_laplacian under " << schedule << ".sched, " << w << "x" << h);
        kiln::Buffer<uint16_t> in = random_ints<uint16_t>({w, h, 3}, 0, 65536, (unsigned)(w * h));
        kd::Out<uint16_t> out("output", {w, h, 3});
        Halide::Buffer<uint16_t> hout(*out.halide.raw_buffer());
        kiln_halide::HalideApp twin =
            kiln_halide::local_laplacian(Halide::Buffer<uint16_t>(*in.raw_buffer()), 8, 1.0f, 1.0f, 8);
        kd::halide_apply(file, twin.funcs, {}, {}, twin.images);
        twin.output.realize(hout, kd::H::strict_float());
        app.set<uint16_t, 3>("input", in);
        app.set_scalar("levels", 8);
        app.set_scalar("alpha", 1.0f);
        app.set_scalar("beta", 1.0f);
        app.realize({out.kiln.raw_buffer()});
        int off_by_one = 0, worse = 0;
        out.kiln.for_each_element([&](const int *p) {
            int d = std::abs((int)out.kiln(p) - (int)out.halide(p));
            off_by_one += d == 1;
            worse += d > 1;
        });
        INFO(off_by_one << " of " << out.kiln.number_of_elements() << " values off by one");
        CHECK(worse == 0);
        CHECK(off_by_one * 100 < (int)out.kiln.number_of_elements());
    }
}

// Every shipped host schedule: host_tiled's strips of 32 rows (a sliding
// window, the two gradients in one loop) on a height of whole strips and
// not, a width of whole vectors and not.
void check_harris(const std::string &schedule) {
    kiln::ScheduleFile file = kiln::ScheduleFile::load(kd::schedule_path("harris", schedule));
    kd::KilnGenerator app({"harris"}, file);
    for (auto [w, h] : {std::pair{64, 64}, std::pair{37, 45}}) {
        INFO("harris under " << schedule << ".sched, " << w << "x" << h);
        kiln::Buffer<float> in = kd::random_buffer({w, h, 3}, 0.0f, 1.0f, (unsigned)(w * h));
        kd::Out<float> out("output", {w, h});
        Halide::Buffer<float> hout(*out.halide.raw_buffer());
        kiln_halide::HalideApp twin = kiln_halide::harris(Halide::Buffer<float>(*in.raw_buffer()), 0.04f);
        kd::halide_apply(file, twin.funcs, {}, {}, twin.images);
        twin.output.realize(hout, kd::H::strict_float());
        app.set<float, 3>("input", in);
        app.set_scalar("k", 0.04f);
        app.realize({out.kiln.raw_buffer()});
        kd::compare(out);
    }
}

// Sizes: widths that are not a multiple of the output's 256-column strips
// or of the 8-lane vectors (ShiftInwards tails of both), and one of a
// single strip; radius 26 (the app's) and a small one.
void check_max_filter(int radius) {
    kiln::ScheduleFile file = kiln::ScheduleFile::load(kd::schedule_path("max_filter", "host_tiled"));
    kd::KilnGenerator app({"max_filter", {"radius=" + std::to_string(radius)}}, file);
    for (auto [w, h] : {std::pair{300, 37}, std::pair{256, 61}}) {
        INFO("max_filter radius=" << radius << ", " << w << "x" << h);
        kiln::Buffer<float> in = kd::random_buffer({w, h, 3}, -100.0f, 100.0f, (unsigned)(w + h + radius));
        kd::Out<float> out("output", {w, h, 3});
        Halide::Buffer<float> hout(*out.halide.raw_buffer());
        kiln_halide::HalideApp twin = kiln_halide::max_filter(Halide::Buffer<float>(*in.raw_buffer()), radius);
        kd::halide_apply(file, twin.funcs, twin.rvars, {}, twin.images);
        twin.output.realize(hout, kd::H::strict_float());
        app.set<float, 3>("input", in);
        app.realize({out.kiln.raw_buffer()});
        kd::compare(out);
    }
}

// Widths and heights not a multiple of the 8-lane vectors or the 8-row
// parallel tasks, and ones that are.
void check_hist_equalize() {
    kiln::ScheduleFile file = kiln::ScheduleFile::load(kd::schedule_path("hist_equalize", "host_tiled"));
    kd::KilnGenerator app({"hist_equalize"}, file);
    for (auto [w, h] : {std::pair{123, 45}, std::pair{64, 96}}) {
        INFO("hist_equalize, " << w << "x" << h);
        // Mostly dark pixels, so that the equalization moves them.
        kiln::Buffer<uint8_t> in = random_ints<uint8_t>({w, h, 3}, 0, 256, (unsigned)(w * h));
        in.for_each_value([](uint8_t &v) { v = (uint8_t)(v * v / 255); });
        kd::Out<uint8_t> out("output", {w, h, 3});
        Halide::Buffer<uint8_t> hout(*out.halide.raw_buffer());
        kiln_halide::HalideApp twin = kiln_halide::hist_equalize(Halide::Buffer<uint8_t>(*in.raw_buffer()));
        kd::halide_apply(file, twin.funcs, twin.rvars, {}, twin.images);
        twin.output.realize(hout, kd::H::strict_float());
        app.set<uint8_t, 3>("input", in);
        app.realize({out.kiln.raw_buffer()});
        kd::compare(out);
    }
}

// Sizes not a multiple of the V x 4V tiles in either pass (ShiftInwards
// tails), and ones that are (V up to 16: 64 x 128).
void check_iir_blur() {
    kiln::ScheduleFile file = kiln::ScheduleFile::load(kd::schedule_path("iir_blur", "host_tiled"));
    kd::KilnGenerator app({"iir_blur"}, file);
    for (auto [w, h] : {std::pair{100, 70}, std::pair{64, 128}}) {
        INFO("iir_blur, " << w << "x" << h);
        kiln::Buffer<float> in = kd::random_buffer({w, h, 3}, 0.0f, 1.0f, (unsigned)(w * h));
        kd::Out<float> out("output", {w, h, 3});
        Halide::Buffer<float> hout(*out.halide.raw_buffer());
        kiln_halide::HalideApp twin = kiln_halide::iir_blur(Halide::Buffer<float>(*in.raw_buffer()), 0.1f);
        kd::halide_apply(file, twin.funcs, twin.rvars, {}, twin.images);
        twin.output.realize(hout, kd::H::strict_float());
        app.set<float, 3>("input", in);
        app.set_scalar("alpha", 0.1f);
        app.realize({out.kiln.raw_buffer()});
        kd::compare(out);
    }
}

}  // namespace

TEST_CASE("harris: every host schedule against Halide", "[pattern][harris]") {
    for (const char *s : {"unfused", "fused", "host_tiled"}) check_harris(s);
}

TEST_CASE("camera_pipe: unfused and host_tiled against Halide", "[pattern][camera_pipe]") {
    for (const char *s : {"unfused", "host_tiled"}) check_camera_pipe(s);
}

TEST_CASE("local_laplacian: unfused and host_tiled against Halide", "[pattern][local_laplacian]") {
    for (const char *s : {"unfused", "host_tiled"}) check_local_laplacian(s);
}

TEST_CASE("max_filter: host_tiled against Halide", "[pattern][max_filter]") {
    for (int radius : {26, 5}) check_max_filter(radius);
}

TEST_CASE("hist_equalize: host_tiled against Halide", "[pattern][hist_equalize]") { check_hist_equalize(); }

TEST_CASE("iir_blur: host_tiled against Halide", "[pattern][iir_blur]") { check_iir_blur(); }
