// 16-bit floats through the JIT: float16 and bfloat16 inputs and outputs,
// arithmetic rounded after every operation (lower/EmulateFloat16.h), and the
// conversions both ways over every 16-bit pattern, scalar and vectorized
// (16 lanes: F16C's vcvtph2ps/vcvtps2ph on targets that have it).
#include "check.h"

using namespace kiln;

namespace {

const int kAll = 65536;

// Every 16-bit pattern, as the 16-bit type T.
template<typename T>
Buffer<T> all_patterns() {
    Buffer<T> b(kAll);
    for (int i = 0; i < kAll; i++) b(i) = T::make_from_bits((uint16_t)i);
    return b;
}

// got and want hold the same value: equal bits, or both NaN.
template<typename T>
bool same(T got, T want) {
    return got.same_bits(want) || (got.is_nan() && want.is_nan());
}

// Counts the points where out differs from want(i), reporting the first.
template<typename T, typename Want>
void check_each(const Buffer<T> &out, Want want) {
    int bad = 0;
    std::string first;
    for (int i = out.dim(0).min(); i <= out.dim(0).max(); i++) {
        T w = want(i);
        if (same(out(i), w)) continue;
        if (bad++ == 0)
            first = "at " + std::to_string(i) + ": got bits " + std::to_string(out(i).to_bits()) + ", want " +
                    std::to_string(w.to_bits());
    }
    INFO(bad << " mismatching element(s); first " << first);
    CHECK(bad == 0);
}

// out(x) = sqrt(|a| * 3 - a) + min(a, 2): each operation rounded to T, against
// the same operations on the host type, over every pattern of a.
template<typename T>
void arithmetic(Type t, int lanes) {
    ImageParam in(t, 1, "in");
    Var x("x");
    Func out("out");
    Expr a = in(x);
    out(x) = sqrt(select(a < 0, -a, a) * 3 - a) + min(a, cast(t, 2));
    if (lanes > 1) out.vectorize(x, lanes);
    Buffer<T> input = all_patterns<T>();
    in.set(input);
    Buffer<T> result(kAll);
    out.realize(result);
    check_each(result, [&](int i) {
        float v = input(i);
        T abs_v(v < 0 ? -v : v);
        T prod((float)abs_v * 3.0f);
        T diff((float)prod - v);
        T root(std::sqrt((float)diff));
        T lo(v < 2.0f ? v : 2.0f);  // min is select(a < b, a, b): a NaN gives 2
        return T((float)root + (float)lo);
    });
}

}  // namespace

TEST_CASE("float16: arithmetic is rounded after every operation", "[float16]") {
    for (int lanes : {1, 16}) {
        INFO("vectorized " << lanes);
        arithmetic<float16_t>(Float(16), lanes);
    }
}

TEST_CASE("float16: bfloat16 arithmetic is rounded after every operation", "[float16]") {
    for (int lanes : {1, 16}) {
        INFO("vectorized " << lanes);
        arithmetic<bfloat16_t>(BFloat(16), lanes);
    }
}

TEST_CASE("float16: widening to float32 is exact for every pattern", "[float16]") {
    for (int lanes : {1, 8, 16}) {
        INFO("vectorized " << lanes);
        ImageParam h(Float(16), 1, "h"), b(BFloat(16), 1, "b");
        Var x("x");
        Func from_h("from_h"), from_b("from_b");
        from_h(x) = cast<float>(h(x));
        from_b(x) = cast<float>(b(x));
        if (lanes > 1) from_h.vectorize(x, lanes), from_b.vectorize(x, lanes);
        Buffer<float16_t> hs = all_patterns<float16_t>();
        Buffer<bfloat16_t> bs = all_patterns<bfloat16_t>();
        h.set(hs), b.set(bs);
        Buffer<float> fh(kAll), fb(kAll);
        from_h.realize(fh);
        from_b.realize(fb);
        int bad = 0;
        for (int i = 0; i < kAll; i++) {
            float want_h = kiln_float16_to_float((uint16_t)i), want_b = kiln_bfloat16_to_float((uint16_t)i);
            bad += !(fh(i) == want_h || (std::isnan(fh(i)) && std::isnan(want_h)));
            bad += !(fb(i) == want_b || (std::isnan(fb(i)) && std::isnan(want_b)));
            bad += std::isnan(want_h) != std::isnan(fh(i)) || std::signbit(want_h) != std::signbit(fh(i));
        }
        CHECK(bad == 0);
    }
}

TEST_CASE("float16: narrowing from float32, float64 and int32 rounds to nearest even", "[float16]") {
    // Every float16 value, the midpoints between neighbours (ties), points
    // just off them, and values past the largest finite one.
    std::vector<double> values;
    for (int i = 0; i < 0x7c00; i++) {
        double v = kiln_float16_to_float((uint16_t)i), next = kiln_float16_to_float((uint16_t)(i + 1));
        double mid = (v + next) / 2;
        for (double d : {v, mid, mid + (next - v) / 4096, mid - (next - v) / 4096}) values.push_back(d), values.push_back(-d);
    }
    for (double d : {65504.0, 65519.0, 65520.0, 1e6, 1e-9, 3e-8, 1.0 + 1.0 / 2048 + 1.0 / (1ll << 40)})
        values.push_back(d), values.push_back(-d);
    const int n = (int)values.size();
    Buffer<float> f32(n);
    Buffer<double> f64(n);
    Buffer<int32_t> ints(n);
    for (int i = 0; i < n; i++) f32(i) = (float)values[i], f64(i) = values[i], ints(i) = i * 37 - n * 9;
    ImageParam a(Float(32), 1, "a"), d(Float(64), 1, "d"), k(Int(32), 1, "k");
    a.set(f32), d.set(f64), k.set(ints);
    for (int lanes : {1, 16}) {
        INFO("vectorized " << lanes);
        Var x("x");
        Func h32("h32"), h64("h64"), hint("hint"), b32("b32"), b64("b64");
        h32(x) = cast<float16_t>(a(x));
        h64(x) = cast(Float(16), d(x));
        hint(x) = cast<float16_t>(k(x));
        b32(x) = cast<bfloat16_t>(a(x));
        b64(x) = cast(BFloat(16), d(x));
        for (Func *f : {&h32, &h64, &hint, &b32, &b64})
            if (lanes > 1) f->vectorize(x, lanes);
        Buffer<float16_t> r32(n), r64(n), rint(n);
        Buffer<bfloat16_t> s32(n), s64(n);
        h32.realize(r32), h64.realize(r64), hint.realize(rint), b32.realize(s32), b64.realize(s64);
        check_each(r32, [&](int i) { return float16_t(f32(i)); });
        check_each(r64, [&](int i) { return float16_t(f64(i)); });
        check_each(rint, [&](int i) { return float16_t((double)ints(i)); });
        check_each(s32, [&](int i) { return bfloat16_t(f32(i)); });
        check_each(s64, [&](int i) { return bfloat16_t(f64(i)); });
    }
    // float64 narrows once: through float32 this tie-breaking bit would be lost.
    CHECK(float16_t(1.0 + 1.0 / 2048 + 1.0 / (1ll << 40)).to_bits() == 0x3c01);
    CHECK(float16_t((float)(1.0 + 1.0 / 2048 + 1.0 / (1ll << 40))).to_bits() == 0x3c00);
}

TEST_CASE("float16: a sum over an RDom rounds every step, and 16-bit values are stored", "[float16]") {
    ImageParam in(Float(16), 1, "in");
    Var x("x");
    RDom r(0, 64);
    Func acc("acc"), out("out");
    acc(x) = cast<float16_t>(0);
    acc(x) += in(x + r);
    out(x) = acc(x);
    acc.compute_root();
    Buffer<float16_t> input(64 + 100);
    for (int i = 0; i < input.width(); i++) input(i) = float16_t(1.0f + (i % 7) * 0.001f);
    in.set(input);
    Buffer<float16_t> result(100);
    out.realize(result);
    check_each(result, [&](int i) {
        float16_t s(0.0f);
        for (int k = 0; k < 64; k++) s = float16_t((float)s + (float)input(i + k));
        return s;
    });
    // The float32 sum is well away from the float16 one.
    float exact = 0;
    for (int k = 0; k < 64; k++) exact += (float)input(k);
    CHECK(std::fabs(exact - (float)result(0)) > 0.01f);
}
