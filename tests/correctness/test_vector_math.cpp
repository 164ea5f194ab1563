// float32 exp, log and tanh are Kiln's own (runtime/kiln_vector_math.h), not
// the C library's: checked here against double-precision libm, in ulps of
// the float result, over a sweep of float32 bit patterns (every 64th on the
// host target, every 1021st on the narrower instruction sets) plus the edge
// cases (0, denormals, the overflow and underflow thresholds, the largest
// floats, inf, nan), at 1, 4, 8 and 16 lanes, with and without fast_math
// (which lets g++ reassociate the arithmetic the functions rely on), and
// on the host's instruction set and the AVX2 and SSE4.1 ones (without
// AVX-512 the scaling by 2^n takes another path; without FMA every
// multiply-add rounds twice). Every vector width must give the scalar's bits.
// Under fast_math tanh is the cheaper kiln_tanh_fast (within 3.5 ulp instead
// of 2.5, and never above 1 in magnitude).
#include "check.h"

#include <cmath>
#include <cstring>

using namespace kiln;

namespace {

// Distance of `got` from the exact value `ref` in ulps of the float nearest ref.
double ulps(float got, double ref) {
    if (std::isnan(ref)) return std::isnan(got) ? 0 : INFINITY;
    float r = (float)ref;
    if (std::isinf(r)) return got == r ? 0 : INFINITY;
    double ulp = std::fabs((double)std::nextafter(r, INFINITY) - (double)r);
    if (std::isinf(ulp) || ulp == 0) ulp = std::fabs((double)r - (double)std::nextafter(r, 0.0f));
    return std::fabs((double)got - ref) / std::max(ulp, 1.4e-45);
}

float from_bits(uint32_t bits) {
    float x;
    std::memcpy(&x, &bits, 4);
    return x;
}

std::vector<float> edge_cases() {
    std::vector<float> v = {0.0f, 1.0f, 2.0f, 0.5f, 1e-30f, 0.55f, 0.5499999f, 9.0f, 9.01f, 9.1f, 9.2f, 1e30f,
                            // exp: e^x overflows above 88.7228394 and rounds to 0 below -103.972679;
                            // its results are denormal below -87.33654.
                            88.72f, 88.7228394f, 88.7228470f, 88.73f, 88.376f, 88.38f, 89.0f, 90.0f, 87.33654f,
                            87.34f, 103.97f, 103.972679f, 103.98f, 104.0f, 150.0f, 20.0f, 17.0f, 30.0f,
                            // log: the reduction's boundary sqrt(2)/2 and its neighbours
                            0.70710677f, 0.70710683f, 1.41421354f, 1.4142137f};
    const uint32_t bits[] = {0x00000001, 0x00000002, 0x00400000, 0x007fffff, 0x00800000, 0x00800001,
                             0x7f7fffff, 0x7f800000, 0x7fc00000, 0x3f7fffff, 0x3f800001};
    for (uint32_t b : bits) v.push_back(from_bits(b));
    const size_t n = v.size();
    for (size_t i = 0; i < n; i++) v.push_back(-v[i]);
    return v;
}

// The sweep: the edge cases, then every step-th bit pattern, then 0.25
// until the count leaves a scalar tail of 5 after whole 16-lane vectors.
struct Sweep {
    std::vector<float> edges = edge_cases();
    uint32_t step;
    size_t size() const {
        size_t n = edges.size() + (size_t)(((1ull << 32) + step - 1) / step);
        return n + (21 - n % 16) % 16;
    }
    float operator[](size_t i) const {
        if (i < edges.size()) return edges[i];
        const uint64_t b = (uint64_t)(i - edges.size()) * step;
        return b < (1ull << 32) ? from_bits((uint32_t)b) : 0.25f;
    }
};

const int widths[] = {1, 4, 8, 16};

struct Worst {
    double ulps[3] = {0, 0, 0};
    float at[3] = {0, 0, 0};
    long long mismatched = 0;  // vector lanes whose bits differ from the scalar's
    long long tanh_above_one = 0;  // |tanh(x)| > 1
};

// exp, log and tanh of `input` at each of `widths`, compiled for `target`.
Worst measure(const Sweep &input, const Target &target) {
    Worst w;
    const int chunk = 1 << 20;
    ImageParam in(Float(32), 1, "in");
    Var x("x");
    std::vector<Func> outs;
    for (int lanes : widths) {
        Func e("exp_" + std::to_string(lanes)), l("log_" + std::to_string(lanes)), t("tanh_" + std::to_string(lanes));
        e(x) = exp(in(x));
        l(x) = log(in(x));
        t(x) = tanh(in(x));
        for (Func *f : {&e, &l, &t}) {
            if (lanes > 1) f->vectorize(x, lanes, TailStrategy::GuardWithIf);
            outs.push_back(*f);
        }
    }
    Pipeline p(outs);
    for (size_t start = 0; start < input.size(); start += chunk) {
        const int n = (int)std::min(input.size() - start, (size_t)chunk);
        Buffer<float> b(n);
        for (int i = 0; i < n; i++) b(i) = input[start + i];
        in.set(b);
        std::vector<Buffer<float>> results;
        std::vector<halide_buffer_t *> raw;
        for (size_t k = 0; k < outs.size(); k++) results.emplace_back(n);
        for (Buffer<float> &r : results) raw.push_back(r.raw_buffer());
        p.realize_raw(raw, target);
        for (int i = 0; i < n; i++) {
            const double xd = b(i);
            const double ref[3] = {std::exp(xd), std::log(xd), std::tanh(xd)};
            for (int f = 0; f < 3; f++) {
                const float scalar = results[f](i);
                const double u = ulps(scalar, ref[f]);
                if (!(u <= w.ulps[f])) w.ulps[f] = u, w.at[f] = b(i);
                if (f == 2 && std::fabs(scalar) > 1.0f) w.tanh_above_one++;
                for (size_t k = 1; k < sizeof(widths) / sizeof(widths[0]); k++) {
                    const float v = results[3 * k + f](i);
                    if (std::memcmp(&v, &scalar, 4) != 0 && !(std::isnan(v) && std::isnan(scalar))) w.mismatched++;
                }
            }
        }
    }
    return w;
}

void check(const Worst &w, const Target &target) {
    INFO("target " << target.to_string() << ": worst ulps exp " << w.ulps[0] << " at " << w.at[0] << ", log "
                   << w.ulps[1] << " at " << w.at[1] << ", tanh " << w.ulps[2] << " at " << w.at[2]
                   << "; vector lanes differing from the scalar: " << w.mismatched);
    CHECK(w.ulps[0] <= 1.0);
    CHECK(w.ulps[1] <= 2.0);
    CHECK(w.ulps[2] <= (target.has(Target::FastMath) ? 3.5 : 2.5));
    CHECK(w.mismatched == 0);
    CHECK(w.tanh_above_one == 0);
}

}  // namespace

TEST_CASE("math: float32 exp, log, tanh within 1, 2, 2.5 (fast_math 3.5) ulp at every vector width, host target",
          "[math]") {
    const Sweep in{edge_cases(), 64};
    for (const Target &t : {Target::host(), Target::host().with(Target::FastMath)}) check(measure(in, t), t);
}

TEST_CASE("math: float32 exp, log, tanh within 1, 2, 2.5 (fast_math 3.5) ulp at every vector width, narrower instruction sets",
          "[math]") {
    const Sweep in{edge_cases(), 1021};
    for (const Target &base : kt::narrower_targets())
        for (const Target &t : {base, base.with(Target::FastMath)}) check(measure(in, t), t);
}

TEST_CASE("math: exp, log and tanh of the IEEE special values", "[math]") {
    const float inf = INFINITY, nan = NAN;
    const std::vector<float> in = {0.0f, -0.0f, 1.0f, inf, -inf, nan, -1.0f, 89.0f, -104.0f, 1e-45f, -1e-45f};
    for (const Target &t : {Target::host(), Target::host().with(Target::FastMath)}) {
        for (int lanes : widths) {
            ImageParam p(Float(32), 1, "in");
            Buffer<float> b((int)in.size());
            for (size_t i = 0; i < in.size(); i++) b((int)i) = in[i];
            p.set(b);
            Var x("x");
            Func e("e"), l("l"), th("th");
            e(x) = exp(p(x));
            l(x) = log(p(x));
            th(x) = tanh(p(x));
            for (Func *f : {&e, &l, &th})
                if (lanes > 1) f->vectorize(x, lanes, TailStrategy::GuardWithIf);
            Buffer<float> eo(b.width()), lo(b.width()), to(b.width());
            Pipeline({e, l, th}).realize_raw({eo.raw_buffer(), lo.raw_buffer(), to.raw_buffer()}, t);
            INFO("target " << t.to_string() << ", " << lanes << " lanes");
            // 0, -0, 1, inf, -inf, nan, -1, 89, -104, smallest denormal and its negative
            CHECK(eo(0) == 1.0f);
            CHECK(eo(1) == 1.0f);
            CHECK(eo(3) == inf);
            CHECK(eo(4) == 0.0f);
            CHECK(std::isnan(eo(5)));
            CHECK(eo(7) == inf);
            CHECK(eo(8) == 0.0f);
            CHECK(eo(9) == 1.0f);
            CHECK(lo(0) == -inf);
            CHECK(lo(1) == -inf);
            CHECK(lo(2) == 0.0f);
            CHECK(lo(3) == inf);
            CHECK(std::isnan(lo(4)));
            CHECK(std::isnan(lo(5)));
            CHECK(std::isnan(lo(6)));
            CHECK(ulps(lo(9), std::log((double)in[9])) <= 2.0);
            CHECK(std::isnan(lo(10)));
            CHECK(to(0) == 0.0f);
            CHECK(to(3) == 1.0f);
            CHECK(to(4) == -1.0f);
            CHECK(std::isnan(to(5)));
            CHECK(to(9) == 1e-45f);
            CHECK(to(10) == -1e-45f);
        }
    }
}

namespace {

// sqrt, floor, ceil and round are exact: every vector width must give the
// C library's result of that lane, bit for bit (a NaN for a NaN).
template<typename T> long long exact_mismatches(const Buffer<T> &got, const Buffer<float> &in, int op) {
    long long bad = 0;
    for (int i = 0; i < in.width(); i++) {
        const T x = (T)in(i);
        const T ref = op == 0 ? std::sqrt(x) : op == 1 ? std::floor(x) : op == 2 ? std::ceil(x) : std::nearbyint(x);
        const T v = got(i);
        if (std::memcmp(&v, &ref, sizeof(T)) != 0 && !(std::isnan(v) && std::isnan(ref))) bad++;
    }
    return bad;
}

}  // namespace

TEST_CASE("math: sqrt, floor, ceil and round give the C library's bits at every vector width", "[math]") {
    const Sweep sweep{edge_cases(), 4099};
    Buffer<float> b((int)sweep.size());
    for (int i = 0; i < b.width(); i++) b(i) = sweep[(size_t)i];
    std::vector<Target> targets = kt::narrower_targets();
    targets.push_back(Target::host());
    for (const Target &t : targets) {
        ImageParam in(Float(32), 1, "in");
        in.set(b);
        Var x("x");
        std::vector<Func> outs;
        for (Type type : {Float(32), Float(64)})
            for (int lanes : {1, 4, 8, 16, 32}) {
                const Expr v = cast(type, in(x));
                for (Expr e : {sqrt(v), floor(v), ceil(v), round(v)}) {
                    Func f("f" + std::to_string(outs.size()));
                    f(x) = e;
                    if (lanes > 1) f.vectorize(x, lanes, TailStrategy::GuardWithIf);
                    outs.push_back(f);
                }
            }
        std::vector<Buffer<float>> f32;
        std::vector<Buffer<double>> f64;
        std::vector<halide_buffer_t *> raw;
        f32.reserve(outs.size()), f64.reserve(outs.size());  // raw points into them
        for (size_t k = 0; k < outs.size(); k++) {
            if (k < outs.size() / 2) f32.emplace_back(b.width()), raw.push_back(f32.back().raw_buffer());
            else f64.emplace_back(b.width()), raw.push_back(f64.back().raw_buffer());
        }
        Pipeline(outs).realize_raw(raw, t.with(Target::FastMath));
        for (size_t k = 0; k < f32.size(); k++) {
            INFO("target " << t.to_string() << ", float32 output " << k << " (op " << k % 4 << ")");
            CHECK(exact_mismatches(f32[k], b, (int)(k % 4)) == 0);
        }
        for (size_t k = 0; k < f64.size(); k++) {
            INFO("target " << t.to_string() << ", float64 output " << k << " (op " << k % 4 << ")");
            CHECK(exact_mismatches(f64[k], b, (int)(k % 4)) == 0);
        }
    }
}
