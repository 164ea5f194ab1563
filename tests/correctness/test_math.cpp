// Operators and functions: select (two-way and chained), min, max, clamp,
// abs (whose result is unsigned for signed ints), float modulo, the math
// functions in float (scalar and vectorized) and double, and Param<T>
// scalars of every type whose values change between realizations.
#include "check.h"

using namespace kiln;

namespace {

const int kWidth = 67, kMin = -20;

// A float input with ties (k + 0.5), negatives and values in (0, 1].
Buffer<float> float_input() {
    return kt::image1<float>(kWidth, kMin, [](int i) { return i % 5 == 0 ? i * 0.5f : kt::noise(i, 6, -3000, 3000) / 500.0f; });
}

// exp, log, ... of the input, each a separate output, optionally vectorized.
void math_functions(int vector_lanes) {
    ImageParam in(Float(32), 1, "in");
    Var x("x");
    Buffer<float> a = float_input();
    in.set(a);
    kt::Outputs1D<float> outs;
    auto add = [&](const char *name, Expr e, std::function<double(float)> ref) {
        Func f(name);
        f(x) = e;
        if (vector_lanes > 1) f.vectorize(x, vector_lanes);
        outs.add(f, [&a, ref](int i) { return ref(a(i)); });
    };
    Expr v = in(x), pos = abs(v) + 0.25f;
    add("exp", exp(v), [](float t) { return std::exp(t); });
    add("log", log(pos), [](float t) { return std::log(std::fabs(t) + 0.25f); });
    add("sqrt", sqrt(pos), [](float t) { return std::sqrt(std::fabs(t) + 0.25f); });
    add("pow", pow(pos, v * 0.5f), [](float t) { return std::pow(std::fabs(t) + 0.25f, t * 0.5f); });
    add("sin", sin(v), [](float t) { return std::sin(t); });
    add("cos", cos(v), [](float t) { return std::cos(t); });
    add("tanh", tanh(v), [](float t) { return std::tanh(t); });
    Expr unit = v * 0.15f;  // |unit| <= 0.9: the domain of asin, acos, atanh
    add("tan", tan(v * 0.2f), [](float t) { return std::tan(t * 0.2f); });
    add("asin", asin(unit), [](float t) { return std::asin(t * 0.15f); });
    add("acos", acos(unit), [](float t) { return std::acos(t * 0.15f); });
    add("atan", atan(v), [](float t) { return std::atan(t); });
    add("atan2", atan2(v, pos - 1.5f), [](float t) { return std::atan2(t, std::fabs(t) + 0.25f - 1.5f); });
    add("sinh", sinh(v), [](float t) { return std::sinh(t); });
    add("cosh", cosh(v), [](float t) { return std::cosh(t); });
    add("asinh", asinh(v), [](float t) { return std::asinh(t); });
    add("acosh", acosh(pos + 1.0f), [](float t) { return std::acosh(std::fabs(t) + 0.25f + 1.0f); });
    add("atanh", atanh(unit), [](float t) { return std::atanh(t * 0.15f); });
    add("hypot", hypot(v, pos), [](float t) { return std::sqrt(t * t + (std::fabs(t) + 0.25f) * (std::fabs(t) + 0.25f)); });
    add("trunc", trunc(v), [](float t) { return std::trunc(t); });
    add("floor", floor(v), [](float t) { return std::floor(t); });
    add("ceil", ceil(v), [](float t) { return std::ceil(t); });
    add("round", round(v), [](float t) { return std::nearbyint(t); });  // ties to even
    add("fmod", v % 1.5f, [](float t) { return t - 1.5f * std::floor(t * (1 / 1.5f)); });
    outs.run(kWidth, kMin, 2e-5);
}

}  // namespace

TEST_CASE("math: float functions, scalar", "[math]") {
    math_functions(1);
}

TEST_CASE("math: float functions, vectorized", "[math]") {
    math_functions(8);
}

TEST_CASE("math: double functions keep double precision", "[math]") {
    ImageParam in(Float(64), 1, "in");
    Var x("x");
    Buffer<double> a = kt::image1<double>(kWidth, kMin, [](int i) { return 1.0 + i * 1e-9; });
    in.set(a);
    kt::Outputs1D<double> outs;
    Func e("exp_d"), l("log_d"), s("sqrt_d");
    e(x) = exp(in(x)) - 2.718281828459045;
    l(x) = log(in(x)) * 1e6;
    s(x) = sqrt(in(x) * 4.0) - 2.0;
    outs.add(e, [&](int i) { return std::exp(a(i)) - 2.718281828459045; });
    outs.add(l, [&](int i) { return std::log(a(i)) * 1e6; });
    outs.add(s, [&](int i) { return std::sqrt(a(i) * 4.0) - 2.0; });
    outs.run(kWidth, kMin, 1e-13);
}

TEST_CASE("math: select, min, max, clamp on ints and floats", "[math]") {
    ImageParam pa(Int(32), 1, "a"), pb(Int(32), 1, "b");
    Var x("x");
    Buffer<int> a = kt::image1<int>(kWidth, kMin, [](int i) { return kt::noise(i, 7, -50, 50); });
    Buffer<int> b = kt::image1<int>(kWidth, kMin, [](int i) { return kt::noise(i, 8, -50, 50); });
    pa.set(a);
    pb.set(b);

    kt::Outputs1D<int> ints;
    Func chain("chain"), two("two"), mn("mn"), mx("mx"), cl("cl");
    chain(x) = select(x < -5, pa(x), x < 10, pb(x), pa(x) * pb(x));
    two(x) = select(pa(x) > pb(x), pa(x) - pb(x), pb(x) - pa(x));
    mn(x) = min(pa(x), pb(x) + 3);
    mx(x) = max(pa(x), 7);
    cl(x) = clamp(pa(x) * 3, -20, pb(x) + 60);
    for (Func f : {chain, two, mn, mx, cl}) f.vectorize(x, 4);
    ints.add(chain, [&](int i) { return i < -5 ? a(i) : i < 10 ? b(i) : a(i) * b(i); });
    ints.add(two, [&](int i) { return std::abs(a(i) - b(i)); });
    ints.add(mn, [&](int i) { return std::min(a(i), b(i) + 3); });
    ints.add(mx, [&](int i) { return std::max(a(i), 7); });
    ints.add(cl, [&](int i) { return std::min(std::max(a(i) * 3, -20), b(i) + 60); });
    ints.run(kWidth, kMin);

    kt::Outputs1D<float> floats;
    Func fsel("fsel"), fclamp("fclamp"), fabs_("fabs"), fdiv("fdiv");
    Expr fa = cast<float>(pa(x)) * 0.25f;
    fsel(x) = select(fa < 0.0f, fa * 2.0f, max(fa, 3.5f));
    fclamp(x) = clamp(fa, -4.5f, 6.25f);
    fabs_(x) = abs(fa);
    fdiv(x) = fa / (cast<float>(pb(x)) + 0.5f);  // by a variable: IEEE division
    fdiv.vectorize(x, 8);
    floats.add(fsel, [&](int i) { float t = a(i) * 0.25f; return t < 0 ? t * 2 : std::max(t, 3.5f); });
    floats.add(fclamp, [&](int i) { return std::min(std::max(a(i) * 0.25f, -4.5f), 6.25f); });
    floats.add(fabs_, [&](int i) { return std::fabs(a(i) * 0.25f); });
    floats.add(fdiv, [&](int i) { return a(i) * 0.25f / ((float)b(i) + 0.5f); });
    floats.run(kWidth, kMin);
}

TEST_CASE("math: abs of a signed int has the unsigned type", "[math][cast]") {
    ImageParam p8(Int(8), 1, "p8");
    ImageParam p32(Int(32), 1, "p32");
    Var x("x");
    Func a8("abs8"), a32("abs32");
    a8(x) = abs(p8(x));
    a32(x) = abs(p32(x) - 50);
    CHECK(a8.type() == UInt(8));
    CHECK(a32.type() == UInt(32));
    a8.vectorize(x, 16);
    Buffer<int8_t> b8 = kt::image1<int8_t>(kWidth, kMin, [](int i) { return i == kMin ? -128 : kt::noise(i, 9, -128, 127); });
    Buffer<int> b32 = kt::image1<int>(kWidth, kMin, [](int i) { return i == kMin ? INT32_MIN + 50 : kt::noise(i, 10, -9999, 9999); });
    p8.set(b8);
    p32.set(b32);
    Buffer<uint8_t> o8(kWidth);
    o8.set_min(kMin);
    a8.realize(o8);
    kt::check(o8, [&](int i) { return (uint8_t)std::abs((int)b8(i)); });  // abs(-128) == 128
    Buffer<uint32_t> o32(kWidth);
    o32.set_min(kMin);
    a32.realize(o32);
    kt::check(o32, [&](int i) { return (double)(uint32_t)std::llabs((int64_t)b32(i) - 50); });
}

TEST_CASE("math: Param<T> scalars of every type, changed between realizations", "[math][param]") {
    Param<float> scale("scale");
    Param<double> shift("shift");
    Param<int> offset("offset");
    Param<int16_t> small("small");
    Param<uint8_t> byte("byte");
    Param<bool> flip("flip");
    ImageParam in(Int(32), 2, "in");
    Var x("x"), y("y");
    Func out("out");
    Expr v = cast<double>(cast<float>(in(x, y) + offset) * scale) + shift;
    v = v + cast<double>(small) * cast<double>(byte);
    out(x, y) = select(flip, -v, v);
    out.vectorize(x, 4).parallel(y);
    Buffer<int> a = kt::random_image<int>(23, 11, 0, 0, -1000, 1000);
    in.set(a);
    auto run = [&](float sc, double sh, int off, int16_t sm, uint8_t by, bool fl) {
        scale.set(sc);
        shift.set(sh);
        offset.set(off);
        small.set(sm);
        byte.set(by);
        flip.set(fl);
        kt::realize_and_check<double>(out, {{23, 11, 0, 0}}, [&](int px, int py) {
            double r = (double)((float)(a(px, py) + off) * sc) + sh + (double)sm * (double)by;
            return fl ? -r : r;
        }, 1e-12);
    };
    run(0.5f, 1e-9, 3, -300, 255, false);
    run(-2.25f, 1e6, -70000, 32767, 1, true);
    CHECK(offset.get() == -70000);
}

TEST_CASE("math: vectorized selects whose condition and values have different widths", "[math][select]") {
    ImageParam pu(UInt(8), 1, "u"), pf(Float(32), 1, "f"), pd(Float(64), 1, "d");
    Var x("x");
    Buffer<uint8_t> u = kt::image1<uint8_t>(kWidth, kMin, [](int i) { return kt::noise(i, 20, 0, 255); });
    Buffer<float> f = float_input();
    Buffer<double> d = kt::image1<double>(kWidth, kMin, [](int i) { return kt::noise(i, 21, -99, 99) * 0.125; });
    pu.set(u);
    pf.set(f);
    pd.set(d);
    Func mask("mask"), wide("wide"), narrow("narrow"), mixed("mixed");
    mask(x) = pu(x) > 100;  // a Func of bools, stored
    mask.compute_root().vectorize(x, 16);
    wide(x) = select(mask(x), pf(x), pf(x) * -2.0f) + cast<float>(select(pd(x) < 0.0, pd(x), 1.0));
    narrow(x) = cast<float>(select(pf(x) > 0.0f && pd(x) > 0.0, pu(x), cast<uint8_t>(pu(x) / 2)));
    mixed(x) = select(pu(x) % 3 == 0, cast<float>(pd(x)), pf(x)) * cast<float>(mask(x) || pf(x) < -1.0f);
    kt::Outputs1D<float> outs;
    for (Func g : {wide, narrow, mixed}) g.vectorize(x, 8);
    outs.add(wide, [&](int i) { return (u(i) > 100 ? f(i) : f(i) * -2.0f) + (float)(d(i) < 0 ? d(i) : 1.0); });
    outs.add(narrow, [&](int i) { return (float)(f(i) > 0 && d(i) > 0 ? u(i) : u(i) / 2); });
    outs.add(mixed, [&](int i) { return (u(i) % 3 == 0 ? (float)d(i) : f(i)) * (float)(u(i) > 100 || f(i) < -1.0f); });
    outs.run(kWidth, kMin);
}
