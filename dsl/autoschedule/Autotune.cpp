// Autotuning: the candidates run, the fastest kept (Autotune.h).
#include "Autotune.h"

#include <chrono>
#include <cmath>
#include <cstring>
#include <random>

#include "analysis/ConcreteSizes.h"
#include "ir/Error.h"
#include "ir/Simplify.h"
#include "ir/Substitute.h"
#include "lower/BoundsInference.h"
#include "lower/Lower.h"

namespace kiln {
namespace internal {

namespace {

// Random values of b's type over all of it: floats in [0, 1) (16-bit ones
// in [0.5, 1)), integers in [0, 255] ([0, 127] for int8), booleans 0 or 1,
// so that values used as indices stay in the range image pipelines expect.
void fill_random(Halide::Runtime::Buffer<void> &b, std::mt19937 &rng) {
    const halide_type_t ty = b.type();
    const size_t bytes = (ty.bits + 7) / 8, n = b.number_of_elements();
    auto *data = static_cast<uint8_t *>(b.data());
    std::uniform_real_distribution<double> unit(0.0, 1.0);
    for (size_t i = 0; i < n; i++) {
        uint64_t bits = 0;
        if (ty.code == halide_type_float && ty.bits == 32) {
            float v = (float)unit(rng);
            std::memcpy(&bits, &v, 4);
        } else if (ty.code == halide_type_float && ty.bits == 64) {
            double v = unit(rng);
            std::memcpy(&bits, &v, 8);
        } else if (ty.code == halide_type_float) {
            bits = 0x3800 | (rng() & 0x3ff);  // IEEE half: exponent of 0.5, random mantissa
        } else if (ty.code == halide_type_bfloat) {
            bits = 0x3f00 | (rng() & 0x7f);  // the top half of a float32 in [0.5, 1)
        } else {
            bits = ty.bits == 1 ? rng() & 1 : rng() % (ty.code == halide_type_int && ty.bits == 8 ? 128 : 256);
        }
        std::memcpy(data + i * bytes, &bits, bytes);  // little-endian: the low bytes
    }
}

// Binds buffers to ImageParams and, on destruction, what was bound before.
class Bindings {
public:
    void bind(const std::shared_ptr<ParameterContents> &p, Halide::Runtime::Buffer<void> b) {
        saved.push_back({p, p->buffer, p->held});
        p->held = Halide::Runtime::Buffer<const void>(b);
        p->buffer = p->held.raw_buffer();
    }
    ~Bindings() {
        for (auto it = saved.rbegin(); it != saved.rend(); ++it) {
            it->p->held = it->held;
            it->p->buffer = it->buffer;
        }
    }

private:
    struct Saved {
        std::shared_ptr<ParameterContents> p;
        const halide_buffer_t *buffer;
        Halide::Runtime::Buffer<const void> held;
    };
    std::vector<Saved> saved;
};

}  // namespace

size_t autotune(const Pipeline &p, const Target &t, const Snapshot &snapshot, std::vector<AutotuneCandidate> candidates,
                const std::function<double(const Pipeline &)> &measure, AutoscheduleResult &r) {
    r.autotuned = std::move(candidates);
    size_t best = 0;
    bool any = false;
    std::string first_error;
    for (size_t i = 0; i < r.autotuned.size(); i++) {
        AutotuneCandidate &c = r.autotuned[i];
        snapshot.restore();
        try {
            ScheduleFile::parse(c.schedule, "autotune").apply(p, t);
            double ms = measure(p);
            if (!std::isfinite(ms) || ms < 0)
                c.error = "the measure function returned " + std::to_string(ms) + ", not a time in ms";
            else
                c.measured_ms = ms;
        } catch (const std::exception &e) {
            std::string msg = e.what();
            c.error = msg.substr(0, msg.find('\n'));
        }
        snapshot.restore();
        if (!c.error.empty() && first_error.empty()) first_error = "candidate " + std::to_string(i + 1) + ": " + c.error;
        if (c.error.empty() && (!any || c.measured_ms < r.autotuned[best].measured_ms)) best = i;
        any |= c.error.empty();
    }
    if (!any)
        r.skipped.push_back("autotune: no candidate ran (" + first_error + "); the cost model's choice is kept");
    r.autotune_chosen = (int)best;
    return best;
}

double measure_on_random_inputs(const Pipeline &p, const Target &t,
                                const std::map<std::string, std::vector<int>> &sizes, int runs) {
    internal_assert(runs > 0) << "measure_on_random_inputs: " << runs << " runs";
    std::vector<std::shared_ptr<FunctionContents>> outs;
    for (const Func &f : p.outputs()) outs.push_back(f.contents());
    ConcreteSizes cs = concrete_sizes(outs, sizes, "autotune");
    // The inputs cover what this schedule reads (a stencil without a
    // boundary condition reads past the outputs' sizes).
    LowerOptions lo;
    lo.stop = LowerStop::LoopNest;
    PipelineRegions regions;
    lo.regions = &regions;
    lower(outs, "", {}, t, lo);
    const std::map<std::string, Expr> values = substitutions(cs);

    std::mt19937 rng(0);  // the same inputs for every candidate
    Bindings bindings;
    for (const auto &[name, param] : find_parameters(find_environment(outs))) {
        if (!param->is_buffer || param->is_output) continue;
        auto size = cs.sizes.find(name);
        internal_assert(size != cs.sizes.end()) << "autotune: no size for input " << name;
        std::vector<int> mins(size->second.size(), 0), extents = size->second;
        auto box = regions.inputs.find(name);
        for (size_t d = 0; box != regions.inputs.end() && d < box->second.size() && d < extents.size(); d++) {
            const Interval &read = box->second[d];
            std::optional<int64_t> lo, hi;
            if (read.has_lower()) lo = constant_value(read.min, values);
            if (read.has_upper()) hi = constant_value(read.max, values);
            int64_t first = lo ? std::min<int64_t>(*lo, 0) : 0, last = std::max<int64_t>(hi ? *hi : 0, extents[d] - 1);
            mins[d] = (int)first;
            extents[d] = (int)(last - first + 1);
        }
        Halide::Runtime::Buffer<void> b(to_halide_type(param->type), extents);
        b.set_min(mins);
        fill_random(b, rng);
        bindings.bind(param, b);
    }
    std::vector<Halide::Runtime::Buffer<void>> out_buffers;
    for (const auto &f : outs)
        for (const Type &ty : f->types) out_buffers.emplace_back(to_halide_type(ty), sizes.at(f->name));
    std::vector<halide_buffer_t *> raw;
    for (auto &b : out_buffers) raw.push_back(b.raw_buffer());

    Pipeline q = p;
    q.realize_raw(raw, t);  // compiles, and warms the caches
    double best = 0;
    for (int i = 0; i < runs; i++) {
        auto start = std::chrono::steady_clock::now();
        q.realize_raw(raw, t);
        double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
        best = i == 0 ? ms : std::min(best, ms);
    }
    return best;
}

}  // namespace internal
}  // namespace kiln
