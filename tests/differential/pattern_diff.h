// Helpers of the fusion-pattern cases (gemm, conv_bn_relu, attention): the
// Kiln side is the generator of generators/ under a schedule file of
// schedules/ (ScheduleFile::apply, so the .sched files themselves are what
// is proven); the Halide side is the same algorithm and the equivalent
// schedule written in the test. Outputs are compared by their largest
// relative error, |kiln - halide| / max(|halide|, floor).
//
//   kd::GeneratorRun k("gemm", {"activation=relu"}, "gemm/fused.sched");
//   k.bind("A", a); k.bind("B", b); k.bind("bias", bias);
//   k.realize({out.kiln.raw_buffer()});
//   CHECK(kd::max_relative_error(out.kiln, out.halide, 1e-3f) <= 1e-5);
#pragma once
#include <kiln/Generator.h>
#include <kiln/kiln.h>

#include <cmath>
#include <memory>
#include <string>
#include <vector>

#include "diff.h"

#ifndef KILN_SOURCE_DIR  // set by tests/CMakeLists.txt
#define KILN_SOURCE_DIR "."
#endif

namespace kd {

// The path of a shipped schedule file: "gemm/fused.sched" -> <source>/schedules/gemm/fused.sched.
inline std::string schedule_path(const std::string &rel) { return std::string(KILN_SOURCE_DIR) + "/schedules/" + rel; }

// A generator built with GeneratorParams and scheduled by a shipped file.
struct GeneratorRun {
    std::unique_ptr<kiln::GeneratorBase> gen;
    kiln::Pipeline pipeline;

    GeneratorRun(const std::string &name, const std::vector<std::string> &params, const std::string &schedule)
        : gen(kiln::GeneratorRegistry::create(name)) {
        gen->set_generator_params(params);
        pipeline = gen->build_pipeline();
        kiln::ScheduleFile::load(schedule_path(schedule)).apply(pipeline, kiln::Target::host());
    }

    // Bind a float32 buffer Input (1 to 4 dimensions) by name.
    void bind(const std::string &input, const kiln::Buffer<float> &b) {
        for (const auto *in : gen->inputs()) {
            if (in->name() != input) continue;
            if (bind_as<1>(in, b) || bind_as<2>(in, b) || bind_as<3>(in, b) || bind_as<4>(in, b)) return;
        }
        FAIL("generator has no float32 buffer Input '" << input << "'");
    }
    void realize(const std::vector<halide_buffer_t *> &outs) { pipeline.realize_raw(outs); }

private:
    template<int D> bool bind_as(const kiln::GeneratorInputBase *in, const kiln::Buffer<float> &b) {
        const auto *p = dynamic_cast<const kiln::Input<Halide::Runtime::Buffer<float, D>> *>(in);
        if (!p) return false;
        kiln::ImageParam param = p->param();
        param.set(b);
        return true;
    }
};

// A float32 buffer of the given extents with reproducible values uniform in [lo, hi].
inline kiln::Buffer<float> random_tensor(const std::vector<int> &extents, uint32_t seed, float lo = -1, float hi = 1) {
    kiln::Buffer<float> b(extents);
    uint32_t i = 0;
    b.for_each_value([&](float &v) { v = lo + (hi - lo) * (float)kt::noise((int)i++, (int)seed, 0, 1 << 20, seed) / (1 << 20); });
    return b;
}

// The largest |a - b| / max(|b|, floor) over all elements (b the reference).
inline double max_relative_error(const kiln::Buffer<float> &a, const kiln::Buffer<float> &b, double floor) {
    double worst = 0;
    b.for_each_element([&](const int *p) {
        double x = a(p), y = b(p);
        double e = std::isnan(x) || std::isnan(y) ? INFINITY : std::fabs(x - y) / std::max(std::fabs(y), floor);
        worst = std::max(worst, e);
    });
    return worst;
}

// Checks the twin outputs of `out` within `tolerance` relative error.
inline void check_relative(const Out<float> &out, double tolerance, double floor) {
    double e = max_relative_error(out.kiln, out.halide, floor);
    if (std::getenv("KILN_DIFF_ULPS")) std::printf("%s: max relative error %g\n", out.name.c_str(), e);
    INFO(out.name << ": max relative error " << e << " (floor " << floor << "), tolerance " << tolerance);
    CHECK(e <= tolerance);
}

}  // namespace kd
