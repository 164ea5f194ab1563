// Differential tests of the fusion patterns (generators/ + schedules/): for
// each schedule file of a pattern, the Kiln side is the generator itself
// with the file applied (ScheduleFile::apply), the Halide side the same
// algorithm written in Halide 14 inside the test with the same file applied
// by halide_apply(); both run on the same random inputs at several sizes,
// some not multiples of any split or vector factor, and the outputs must
// agree within a stated maximum relative error.
//
//   kd::check_pattern({"softmax", {}, {}, -4, 4, 1e-5, 0}, {"unfused", "fused", "host_tiled"},
//                     [](const kiln::ScheduleFile &file) {
//                         kd::HalidePattern h;
//                         ... define the Funcs, halide_apply(file, {...}, {{"r", r}}) ...
//                         return h;
//                     });
#pragma once
#include <kiln/Generator.h>

#include "diff.h"
#include "halide_schedule.h"

#include <functional>
#include <memory>
#include <random>

namespace kd {

// The schedules every pattern has.
const std::vector<std::string> kSchedules = {"unfused", "fused", "host_tiled"};

// The Halide program of a pattern: its pipeline and its inputs by the
// generator's Input names.
struct HalidePattern {
    Halide::Pipeline pipeline;
    std::map<std::string, Halide::ImageParam> images;
    std::map<std::string, Halide::Param<float>> scalars;
};

// What a pattern's test feeds both sides and how close they must be.
struct PatternCase {
    std::string generator;
    std::vector<std::string> params;        // GeneratorParams, "name=value"
    std::map<std::string, float> scalars;   // scalar Inputs
    float lo = -4, hi = 4;                  // input values are uniform in [lo, hi)
    double tolerance = 1e-5;                // largest |kiln - halide| / max(|halide|, scale)
    double scale = 0;                       // 0: purely relative
    // Directives schedule files cannot express yet, applied to the Kiln
    // pipeline after the file (the Halide side applies them itself).
    std::function<void(const kiln::Pipeline &)> also;
    // Halide with StrictFloat (no FMA contraction) unless false: Halide 14's
    // StrictFloat target computes Tuple updates wrongly (test_tuples.cpp).
    bool strict_float = true;
};

// The path of schedules/<generator>/<schedule>.sched in this source tree.
inline std::string schedule_path(const std::string &generator, const std::string &schedule) {
    return std::string(KILN_SOURCE_DIR) + "/schedules/" + generator + "/" + schedule + ".sched";
}

// A generator built, scheduled by a file and bound to inputs by name.
class KilnGenerator {
public:
    KilnGenerator(const PatternCase &c, const kiln::ScheduleFile &file)
        : g_(kiln::GeneratorRegistry::create(c.generator)) {
        g_->set_generator_params(c.params);
        pipeline_ = g_->build_pipeline();
        file.apply(pipeline_);
        if (c.also) c.also(pipeline_);
        for (const auto &[name, value] : c.scalars) {
            const auto *in = dynamic_cast<const kiln::Input<float> *>(input(name));
            REQUIRE(in);
            kiln::Param<float> p = in->param();
            p.set(value);
        }
    }
    const kiln::GeneratorBase &generator() const { return *g_; }
    void set(const std::string &name, const kiln::Buffer<float> &b) {
        kiln::ImageParam p;
        if (const auto *in1 = dynamic_cast<const kiln::Input<kiln::Buffer<float, 1>> *>(input(name))) p = in1->param();
        if (const auto *in2 = dynamic_cast<const kiln::Input<kiln::Buffer<float, 2>> *>(input(name))) p = in2->param();
        if (const auto *in3 = dynamic_cast<const kiln::Input<kiln::Buffer<float, 3>> *>(input(name))) p = in3->param();
        if (const auto *in4 = dynamic_cast<const kiln::Input<kiln::Buffer<float, 4>> *>(input(name))) p = in4->param();
        // An Input whose type is a GeneratorParam (type=float32 here).
        if (const auto *v1 = dynamic_cast<const kiln::Input<kiln::Buffer<void, 1>> *>(input(name))) p = v1->param();
        if (const auto *v2 = dynamic_cast<const kiln::Input<kiln::Buffer<void, 2>> *>(input(name))) p = v2->param();
        REQUIRE(p.defined());
        p.set(b);
    }
    // A buffer Input of element type T and D dimensions; a scalar Input of type T.
    template<typename T, int D> void set(const std::string &name, const kiln::Buffer<T> &b) {
        const auto *in = dynamic_cast<const kiln::Input<kiln::Buffer<T, D>> *>(input(name));
        REQUIRE(in);
        kiln::ImageParam p = in->param();
        p.set(b);
    }
    template<typename T> void set_scalar(const std::string &name, T value) {
        const auto *in = dynamic_cast<const kiln::Input<T> *>(input(name));
        REQUIRE(in);
        kiln::Param<T> p = in->param();
        p.set(value);
    }
    void realize(const std::vector<halide_buffer_t *> &outs) { pipeline_.realize_raw(outs); }
    kiln::Pipeline &pipeline() { return pipeline_; }

private:
    const kiln::GeneratorInputBase *input(const std::string &name) const {
        for (const auto *in : g_->inputs())
            if (in->name() == name) return in;
        FAIL("generator " << g_->name() << " has no Input '" << name << "'");
        return nullptr;
    }
    std::unique_ptr<kiln::GeneratorBase> g_;
    kiln::Pipeline pipeline_;
};

// Checks Kiln's float output against Halide's: the largest
// |kiln - halide| / max(|halide|, scale) must be at most `tolerance`
// (KILN_DIFF_ULPS=1 prints it). Returns it.
inline double compare_relative(const Out<float> &out, double tolerance, double scale) {
    double worst = 0;
    int bad = 0;
    std::ostringstream first;
    out.halide.for_each_element([&](const int *p) {
        double k = out.kiln(p), h = out.halide(p);
        double err = k == h ? 0 : std::fabs(k - h) / std::max(std::fabs(h), scale);
        if (std::isnan(err)) err = INFINITY;
        worst = std::max(worst, err);
        if (err <= tolerance) return;
        if (bad++ == 0) {
            first.precision(9);
            first << "at (" << p[0] << ", " << p[1] << "): kiln " << k << ", halide " << h;
        }
    });
    if (std::getenv("KILN_DIFF_ULPS")) std::printf("%s: max relative error %.3g\n", out.name.c_str(), worst);
    INFO(out.name << ": " << bad << " element(s) off by more than " << tolerance << " relative; first " << first.str());
    CHECK(bad == 0);
    return worst;
}

// Uniform values in [lo, hi) from a seed.
inline kiln::Buffer<float> random_buffer(const std::vector<int> &sizes, float lo, float hi, unsigned seed) {
    kiln::Buffer<float> b(sizes);
    std::mt19937 rng(seed);
    std::uniform_real_distribution<float> dist(lo, hi);
    b.for_each_value([&](float &v) { v = dist(rng); });
    return b;
}

// Runs the pattern under each schedule at several sizes (width x rows; 1-D
// inputs are one row long) on both sides and compares every output.
template<typename BuildHalide>
void check_pattern(const PatternCase &c, const std::vector<std::string> &schedules, BuildHalide build_halide) {
    const std::vector<std::pair<int, int>> sizes = {{64, 16}, {37, 19}, {203, 45}, {1000, 17}};
    for (const std::string &schedule : schedules) {
        kiln::ScheduleFile file = kiln::ScheduleFile::load(schedule_path(c.generator, schedule));
        KilnGenerator kiln_side(c, file);
        HalidePattern h = build_halide(file);
        for (const auto &[name, value] : c.scalars) h.scalars.at(name).set(value);
        for (auto [w, hgt] : sizes) {
            INFO(c.generator << " under " << schedule << ".sched, " << w << "x" << hgt);
            unsigned seed = 1;
            std::vector<kiln::Buffer<float>> inputs;
            for (const auto *in : kiln_side.generator().inputs()) {
                kiln::Argument a = in->argument();
                if (!a.is_buffer) continue;
                std::vector<int> extent = a.dimensions == 1 ? std::vector<int>{w} : std::vector<int>{w, hgt};
                inputs.push_back(random_buffer(extent, c.lo, c.hi, seed++));
                kiln_side.set(a.name, inputs.back());
                h.images.at(a.name).set(Halide::Buffer<float>(*inputs.back().raw_buffer()));
            }
            std::vector<Out<float>> outs;
            for (const auto *o : kiln_side.generator().outputs()) outs.emplace_back(o->name(), std::vector<int>{w, hgt});
            std::vector<halide_buffer_t *> k, hb;
            for (auto &o : outs) {
                k.push_back(o.kiln.raw_buffer());
                hb.push_back(o.halide.raw_buffer());
            }
            H::realize(h.pipeline, hb, c.strict_float ? H::strict_float() : H::host());
            kiln_side.realize(k);
            for (const auto &o : outs) compare_relative(o, c.tolerance, c.scale);
        }
    }
}

}  // namespace kd
