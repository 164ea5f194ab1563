// float32 exp, log and tanh are Kiln's own (runtime/kiln_prologue.h), not
// the C library's: checked here over a sweep of the whole float range
// (every 4099th bit pattern, plus 0, denormals, inf and nan) against
// double-precision libm, in ulps of the float result, and the vector body
// of a loop is checked to give the same bits as its scalar tail.
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

Buffer<float> sweep() {
    std::vector<float> v = {0.0f, -0.0f, 1e-45f, -1e-45f, 1e-40f, INFINITY, -INFINITY, NAN, 1.0f, -1.0f,
                            88.72f, 88.73f, -103.97f, -103.98f, 9.0f, -9.01f};
    for (uint64_t b = 0; b < (1ull << 32); b += 4099) {
        uint32_t bits = (uint32_t)b;
        float x;
        std::memcpy(&x, &bits, 4);
        v.push_back(x);
    }
    while (v.size() % 8 != 5) v.push_back(0.5f);  // a scalar tail of 5 after the vectors
    Buffer<float> b((int)v.size());
    for (size_t i = 0; i < v.size(); i++) b((int)i) = v[i];
    return b;
}

struct Outputs {
    Buffer<float> exp_, log_, tanh_;
};

Outputs run(const Buffer<float> &input, int lanes) {
    ImageParam in(Float(32), 1, "in");
    in.set(input);
    Var x("x");
    Func e("e"), l("l"), t("t");
    e(x) = exp(in(x));
    l(x) = log(in(x));
    t(x) = tanh(in(x));
    for (Func *f : {&e, &l, &t})
        if (lanes > 1) f->vectorize(x, lanes, TailStrategy::GuardWithIf);
    const int n = input.width();
    Outputs o{Buffer<float>(n), Buffer<float>(n), Buffer<float>(n)};
    Pipeline({e, l, t}).realize_raw({o.exp_.raw_buffer(), o.log_.raw_buffer(), o.tanh_.raw_buffer()});
    return o;
}

}  // namespace

TEST_CASE("math: float32 exp, log, tanh within 2.5 ulp over the float range; vector and scalar agree bitwise",
          "[math]") {
    Buffer<float> in = sweep();
    Outputs vec = run(in, 8), scalar = run(in, 1);
    double worst[3] = {0, 0, 0};
    int mismatched = 0;
    for (int i = 0; i < in.width(); i++) {
        const double x = in(i);
        const float got[3] = {vec.exp_(i), vec.log_(i), vec.tanh_(i)};
        const float tail[3] = {scalar.exp_(i), scalar.log_(i), scalar.tanh_(i)};
        const double ref[3] = {std::exp(x), std::log(x), std::tanh(x)};
        for (int k = 0; k < 3; k++) {
            worst[k] = std::max(worst[k], ulps(got[k], ref[k]));
            if (std::memcmp(&got[k], &tail[k], 4) != 0) mismatched++;
        }
    }
    INFO("points " << in.width() << ", worst ulps: exp " << worst[0] << ", log " << worst[1] << ", tanh "
                   << worst[2]);
    CHECK(worst[0] <= 1.0);
    CHECK(worst[1] <= 2.0);
    CHECK(worst[2] <= 2.5);
    CHECK(mismatched == 0);
}
