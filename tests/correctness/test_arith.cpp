// Integer semantics: Euclidean division and modulo of negative numbers by
// positive and negative constants (powers of two and not, 1, -1, 0) and by
// per-pixel divisors including zero, in int8/uint8/int16/int32, scalar and
// vectorized; wrap-around of narrow types; casts between every kind of type.
#include "check.h"

#include <cmath>
#include <limits>

using namespace kiln;

namespace {

const int kWidth = 67, kMin = -9;

std::string suffix(int c) { return c < 0 ? "m" + std::to_string(-c) : std::to_string(c); }

// num / c and num % c for every constant c, and num / den, num % den, where
// num spans [lo, hi] and den spans [dlo, dhi] (zero included).
template<typename T>
void division(const std::vector<int> &divisors, int lo, int hi, int dlo, int dhi, int vector_lanes) {
    ImageParam num(type_of<T>(), 1, "num"), den(type_of<T>(), 1, "den");
    Var x("x");
    Buffer<T> n = kt::image1<T>(kWidth, kMin, [=](int i) {
        return i == kMin ? lo : i == kMin + 1 ? hi : kt::noise(i, 0, lo, hi);  // the extremes, then noise
    });
    Buffer<T> d = kt::image1<T>(kWidth, kMin, [=](int i) { return kt::noise(i, 1, dlo, dhi); });
    num.set(n);
    den.set(d);
    kt::Outputs1D<T> outs;
    for (int c : divisors) {
        Func q("div_" + suffix(c)), r("mod_" + suffix(c));
        q(x) = num(x) / c;
        r(x) = num(x) % c;
        outs.add(q, [&n, c](int i) { return (T)kt::div_euclid(n(i), c); });
        outs.add(r, [&n, c](int i) { return (T)kt::mod_euclid(n(i), c); });
    }
    Func qv("div_var"), rv("mod_var");
    qv(x) = num(x) / den(x);
    rv(x) = num(x) % den(x);
    outs.add(qv, [&](int i) { return (T)kt::div_euclid(n(i), d(i)); });
    outs.add(rv, [&](int i) { return (T)kt::mod_euclid(n(i), d(i)); });
    if (vector_lanes > 1)
        for (auto &f : outs.funcs) f.vectorize(x, vector_lanes);
    outs.run(kWidth, kMin);
}

const std::vector<int> kSigned = {-7, -4, -3, -2, -1, 0, 1, 2, 3, 4, 7, 16};
const std::vector<int> kUnsigned = {0, 1, 2, 3, 4, 7, 16, 200};

// op(a, b) over two inputs of type T, compared with the same op on ints
// converted back to T (two's complement wrap-around).
template<typename T, typename... Ops>
void wrap_around(int lo, int hi, int blo, int bhi, int vector_lanes, Ops... ops) {
    ImageParam pa(type_of<T>(), 1, "a"), pb(type_of<T>(), 1, "b");
    Var x("x");
    Buffer<T> a = kt::image1<T>(kWidth, kMin, [=](int i) { return i == kMin ? lo : kt::noise(i, 2, lo, hi); });
    Buffer<T> b = kt::image1<T>(kWidth, kMin, [=](int i) { return i == kMin ? bhi : kt::noise(i, 3, blo, bhi); });
    pa.set(a);
    pb.set(b);
    kt::Outputs1D<T> outs;
    int k = 0;
    auto add = [&](auto op) {
        Func f("wrap" + std::to_string(k++));
        f(x) = op(Expr(pa(x)), Expr(pb(x)));
        if (vector_lanes > 1) f.vectorize(x, vector_lanes);
        outs.add(f, [&a, &b, op](int i) { return (T)op((int)a(i), (int)b(i)); });
    };
    (add(ops), ...);
    outs.run(kWidth, kMin);
}

auto sum3 = [](auto a, auto b) { return a + b * 3; };
auto diff = [](auto a, auto b) { return a - b; };
auto times = [](auto a, auto b) { return a * b; };
auto negate = [](auto a, auto) { return -a; };
auto offset = [](auto a, auto) { return a + 100; };

}  // namespace

TEST_CASE("arith: int32 division and modulo, scalar", "[arith][division]") {
    division<int32_t>(kSigned, -100000, 100000, -5, 5, 1);
}

TEST_CASE("arith: int32 division and modulo, vectorized", "[arith][division]") {
    division<int32_t>(kSigned, -100000, 100000, -5, 5, 8);
}

TEST_CASE("arith: int16 division and modulo, vectorized", "[arith][division]") {
    division<int16_t>(kSigned, -32768, 32767, -5, 5, 16);
}

TEST_CASE("arith: int8 division and modulo (including -128 / -1), scalar", "[arith][division]") {
    division<int8_t>(kSigned, -128, 127, -5, 5, 1);
}

TEST_CASE("arith: int8 division and modulo (including -128 / -1), vectorized", "[arith][division]") {
    division<int8_t>(kSigned, -128, 127, -5, 5, 16);
}

TEST_CASE("arith: uint8 division and modulo, vectorized", "[arith][division]") {
    division<uint8_t>(kUnsigned, 0, 255, 0, 5, 16);
}

TEST_CASE("arith: uint8 wrap-around, vectorized", "[arith][wrap]") {
    wrap_around<uint8_t>(0, 255, 0, 255, 16, sum3, diff, times, offset);
}

TEST_CASE("arith: int8 wrap-around, scalar", "[arith][wrap]") {
    wrap_around<int8_t>(-128, 127, -128, 127, 1, sum3, diff, times, negate, offset);
}

TEST_CASE("arith: int8 wrap-around, vectorized", "[arith][wrap]") {
    wrap_around<int8_t>(-128, 127, -128, 127, 16, sum3, diff, times, negate, offset);
}

TEST_CASE("arith: int16 and uint16 wrap-around, vectorized", "[arith][wrap]") {
    wrap_around<int16_t>(-32768, 32767, -300, 300, 8, sum3, diff, times, negate, offset);
    wrap_around<uint16_t>(0, 65535, 0, 255, 8, sum3, diff, times, offset);
}

TEST_CASE("arith: casts between int, uint, float and double", "[arith][cast]") {
    ImageParam pf(Float(32), 1, "f"), pi(Int(32), 1, "i");
    Var x("x");
    Buffer<float> f = kt::image1<float>(kWidth, kMin, [](int i) { return (float)kt::noise(i, 4, -2000, 2000) / 7.0f; });
    Buffer<int> in = kt::image1<int>(kWidth, kMin, [](int i) { return kt::noise(i, 5, -100000, 100000); });
    pf.set(f);
    pi.set(in);

    kt::Outputs1D<int32_t> ints;
    Func trunc("trunc"), from_bool("from_bool"), from_u8("from_u8"), from_i8("from_i8");
    trunc(x) = cast<int>(pf(x));                          // toward zero, as in C
    from_bool(x) = cast<int>(pi(x) > x) * 5;
    from_u8(x) = cast<int>(cast<uint8_t>(pi(x))) - 300;   // wraps to [0, 255] first
    from_i8(x) = cast<int>(cast<int8_t>(pi(x)));
    ints.add(trunc, [&](int i) { return (int)f(i); });
    ints.add(from_bool, [&](int i) { return (in(i) > i) * 5; });
    ints.add(from_u8, [&](int i) { return (int)(uint8_t)in(i) - 300; });
    ints.add(from_i8, [&](int i) { return (int)(int8_t)in(i); });

    ImageParam pu(UInt(8), 1, "u"), ps(Int(8), 1, "s");
    Buffer<uint8_t> u = kt::image1<uint8_t>(kWidth, kMin, [](int i) { return kt::noise(i, 14, 0, 255); });
    Buffer<int8_t> sg = kt::image1<int8_t>(kWidth, kMin, [](int i) { return kt::noise(i, 15, -128, 127); });
    pu.set(u);
    ps.set(sg);
    Func mixed_sign("mixed_sign");
    mixed_sign(x) = cast<int>(pu(x) + ps(x));  // uint8 + int8 is int8: wraps
    ints.add(mixed_sign, [&](int i) { return (int)(int8_t)(u(i) + sg(i)); });
    ints.run(kWidth, kMin);

    kt::Outputs1D<uint8_t> bytes;
    Func u8_of_float("u8_of_float"), u8_of_int("u8_of_int");
    u8_of_float(x) = cast<uint8_t>(abs(pf(x)) / 2);  // in [0, 143)
    u8_of_int(x) = cast<uint8_t>(pi(x) * 37);
    bytes.add(u8_of_float, [&](int i) { return (uint8_t)(std::fabs(f(i)) * (1 / 2.0f)); });
    bytes.add(u8_of_int, [&](int i) { return (uint8_t)(in(i) * 37); });
    bytes.run(kWidth, kMin);

    kt::Outputs1D<float> floats;
    Func mixed("mixed"), of_int("of_int");
    mixed(x) = pi(x) / 1000 + pf(x) * 0.5f;  // int division first, then int + float -> float
    of_int(x) = cast<float>(pi(x)) * 0.25f;
    floats.add(mixed, [&](int i) { return (float)kt::div_euclid(in(i), 1000) + f(i) * 0.5f; });
    floats.add(of_int, [&](int i) { return (float)in(i) * 0.25f; });
    floats.run(kWidth, kMin, 1e-6);

    kt::Outputs1D<double> doubles;
    Func precise("precise");
    precise(x) = cast<double>(pi(x)) * 1e-10 + 1.0;  // needs double precision
    doubles.add(precise, [&](int i) { return (double)in(i) * 1e-10 + 1.0; });
    doubles.run(kWidth, kMin, 1e-15);
}

TEST_CASE("arith: division by a Param (zero and negative too) in a vectorized loop", "[arith][division][param]") {
    ImageParam num(Int(32), 1, "num");
    Param<int> p("p");
    Var x("x");
    Func q("q"), r("r");
    q(x) = num(x) / p;
    r(x) = num(x) % p;
    q.vectorize(x, 8);
    r.vectorize(x, 8);
    Buffer<int> n = kt::image1<int>(kWidth, kMin, [](int i) { return kt::noise(i, 16, -1000, 1000); });
    num.set(n);
    kt::Outputs1D<int> outs;
    int pv = 0;
    outs.add(q, [&](int i) { return (int)kt::div_euclid(n(i), pv); });
    outs.add(r, [&](int i) { return (int)kt::mod_euclid(n(i), pv); });
    for (int v : {5, -3, 0, 1}) {
        pv = v;
        p.set(v);
        INFO("p = " << v);
        outs.run(kWidth, kMin);
    }
}

// Rewrites the simplifier may be tempted into: each output compared with a
// direct evaluation, so an identity that ignores Euclidean rounding or
// narrow wrap-around shows up. Constants are folded at compile time.
TEST_CASE("arith: identities and constant folding keep Euclidean and wrap-around semantics", "[arith][simplify]") {
    ImageParam pv(Int(32), 1, "v"), pu(UInt(8), 1, "u"), ps(Int(16), 1, "s");
    Var x("x");
    Buffer<int> v = kt::image1<int>(kWidth, kMin, [](int i) { return kt::noise(i, 17, -1000, 1000); });
    Buffer<uint8_t> u = kt::image1<uint8_t>(kWidth, kMin, [](int i) { return i < kMin + 3 ? 255 - (i - kMin) : kt::noise(i, 18, 0, 255); });
    Buffer<int16_t> s = kt::image1<int16_t>(kWidth, kMin, [](int i) { return kt::noise(i, 19, -32768, 32767); });
    pv.set(v);
    pu.set(u);
    ps.set(s);
    auto e = [](int a, int b) { return kt::div_euclid(a, b); };
    auto m = [](int a, int b) { return kt::mod_euclid(a, b); };

    kt::Outputs1D<int> outs;
    int k = 0;
    auto add = [&](Expr ex, std::function<double(int)> ref) {
        Func f("id" + std::to_string(k++));
        f(x) = ex;
        outs.add(f, std::move(ref));
    };
    Expr V = pv(x), U = pu(x), S = ps(x);
    add((x * 3 + 1) % 3 + (x / 2) * 2 + x % 2, [&](int i) { return 1 + i; });
    add((x - 1) / -2 + (x + 7) / 4 * 4, [&](int i) { return e(i - 1, -2) + e(i + 7, 4) * 4; });
    add((V / 4) / 3 - V / 12, [&](int i) { return e(e(v(i), 4), 3) - e(v(i), 12); });
    add((V / -4) / 3, [&](int i) { return e(e(v(i), -4), 3); });
    add(V % 8 + V % -8 * 100, [&](int i) { return m(v(i), 8) + m(v(i), -8) * 100; });
    add(V / 8 * 8 + V % 8 - V, [](int) { return 0; });
    add(select(V > 3, V, 3) - max(V, 3) + min(V, V + 1), [&](int i) { return v(i); });
    add(Expr(-7) / 2 + Expr(-7) % -2 * 10 + Expr(7) / -2 * 100 + Expr(7) % -2 * 1000 + x * 0,
        [&](int) { return e(-7, 2) + m(-7, -2) * 10 + e(7, -2) * 100 + m(7, -2) * 1000; });
    add(cast<int>(U + 1 > U) + cast<int>(U - 1 < U) * 2, [&](int i) {
        return (int)((uint8_t)(u(i) + 1) > u(i)) + (int)((uint8_t)(u(i) - 1) < u(i)) * 2;
    });
    add(cast<int>(U * 2 / 2), [&](int i) { return (int)(uint8_t)(u(i) * 2) / 2; });
    add(cast<int>(S * 2 / 2) + cast<int>(S + 20000 - 20000), [&](int i) {
        return (int16_t)(s(i) * 2) / 2 + (int)s(i);
    });
    add(cast<int>(cast<uint8_t>(250) + cast<uint8_t>(10)) + cast<int>(cast<int16_t>(30000) + cast<int16_t>(30000)) +
            cast<int>(cast<uint8_t>(cast<int8_t>(-1))) + cast<int>(cast<uint8_t>(x)) + x * 0,
        [](int i) { return 4 + (int16_t)(60000 - 65536) + 255 + (int)(uint8_t)i; });
    outs.run(kWidth, kMin);
    for (auto &f : outs.funcs) f.vectorize(x, 8);
    outs.pipeline = Pipeline();  // recompile, vectorized
    outs.run(kWidth, kMin);
}

namespace {

// The emitted C++ of a pipeline for the host, from its first stage on.
std::string body_of(const Pipeline &p) {
    std::string src = p.compile_to_cpp_source("k");
    size_t body = src.find("// produce ");
    REQUIRE(body != std::string::npos);
    return src.substr(body);
}

// Rounding averages (a + b + 1) / 2 of two unsigned 8- or 16-bit inputs,
// written in a wider type and cast back, as camera_pipe's avg() does: the
// vectorized ones are computed in their own lanes (kiln_rounding_average,
// one pavgb/pavgw per register); the near misses and the scalar loop keep
// the IR's arithmetic. Inputs span the type, the extremes included.
template<typename T, typename W>
void rounding_averages(int lanes) {
    const int w = 300, hi = (int)std::numeric_limits<T>::max();  // w: above the widest vector
    ImageParam pa(type_of<T>(), 1, "a"), pb(type_of<T>(), 1, "b");
    Var x("x");
    Buffer<T> a = kt::image1<T>(w, kMin, [=](int i) { return i == kMin ? hi : i == kMin + 1 ? 0 : kt::noise(i, 6, 0, hi); });
    Buffer<T> b = kt::image1<T>(w, kMin, [=](int i) { return i == kMin ? hi : i == kMin + 1 ? hi : kt::noise(i, 7, 0, hi); });
    pa.set(a);
    pb.set(b);
    Expr wa = cast<W>(pa(x)), wb = cast<W>(pb(x));
    Func left("avg_left"), right("avg_right"), in_int("avg_in_int"), scalar("avg_scalar");
    left(x) = cast<T>((wa + wb + 1) / 2);
    right(x) = cast<T>((wa + (wb + 1)) / 2);        // another association
    in_int(x) = cast<T>((cast<int32_t>(pa(x)) + pb(x) + 1) / 2);  // a wider signed type
    scalar(x) = cast<T>((wa + wb + 1) / 2);
    Func floor_avg("floor_avg"), plus_two("plus_two"), narrow("narrow_sum");
    floor_avg(x) = cast<T>((wa + wb) / 2);          // rounds down: not pavg
    plus_two(x) = cast<T>((wa + wb + 2) / 2);       // may exceed T: not pavg
    narrow(x) = (pa(x) + pb(x) + 1) / 2;            // in T itself, wrapping: not pavg
    auto ref = [&](int add) {
        return [&a, &b, add](int i) { return (double)(T)(((int)a(i) + (int)b(i) + add) / 2); };
    };
    kt::Outputs1D<T> outs;
    outs.add(left, ref(1));
    outs.add(right, ref(1));
    outs.add(in_int, ref(1));
    outs.add(scalar, ref(1));
    outs.add(floor_avg, ref(0));
    outs.add(plus_two, ref(2));
    outs.add(narrow, [&](int i) { return (double)(T)((T)(a(i) + b(i) + 1) / 2); });
    for (Func f : {left, right, in_int, floor_avg, plus_two, narrow}) f.vectorize(x, lanes);
    for (Func f : {left, right, in_int}) {
        INFO(f.name());
        CHECK(body_of(Pipeline(f)).find("kiln_rounding_average(") != std::string::npos);
    }
    for (Func f : {scalar, floor_avg, plus_two, narrow}) {
        INFO(f.name());
        CHECK(body_of(Pipeline(f)).find("kiln_rounding_average") == std::string::npos);
    }
    outs.run(w, kMin);
}

// Vector casts of T, an 8- or 16-bit integer type, to float, to int32 and
// to int64 and of float to T, which the emitted C++ converts in steps
// (CodeGen_C.cpp, conversion_steps: integers widen through the prologue's
// kiln_widen, to int32 before a float; float32 -> int32 -> uint8): the
// values are the casts' of the IR (float -> int truncates toward zero), at
// T's extremes and at floats with fractions of both signs, on the host's
// instruction set and the narrower ones (kiln_widen's vpmovzx / vpmovsx of
// each register size, and g++'s conversion of wider vectors). The scalar loops
// compute the same casts one value at a time.
template<typename T>
void narrow_float_casts(int lanes, const Target &target) {
    const int w = 300;  // above the widest vector
    const double lo = std::numeric_limits<T>::min(), hi = std::numeric_limits<T>::max();
    ImageParam pi(type_of<T>(), 1, "ints"), pf(Float(32), 1, "floats");
    Buffer<T> ints = kt::image1<T>(w, kMin, [=](int i) {
        return (T)(i == kMin ? lo : i == kMin + 1 ? hi : lo + (double)kt::noise(i, 5, 0, 65536) / 65535 * (hi - lo));
    });
    // In (lo - 1, hi + 1), so that every value truncates into T.
    Buffer<float> floats = kt::image1<float>(w, kMin, [=](int i) {
        return (float)(lo - 0.99 + (double)kt::noise(i, 9, 0, 65536) / 65535 * (hi - lo + 1.98));
    });
    pi.set(ints);
    pf.set(floats);
    Var x("x");
    Func to_float("to_float"), scalar_to_float("scalar_to_float"), to_int("to_int"), scalar_to_int("scalar_to_int"),
        int_to_int("int_to_int");
    to_float(x) = cast<float>(pi(x)) * 0.5f;
    scalar_to_float(x) = cast<float>(pi(x)) * 0.5f;
    to_int(x) = cast<T>(pf(x));
    scalar_to_int(x) = cast<T>(pf(x));
    int_to_int(x) = cast<T>(cast<int64_t>(pi(x)) * 3);
    Func to_int32("to_int32"), to_int64("to_int64");
    to_int32(x) = cast<int32_t>(pi(x)) * 3;
    to_int64(x) = cast<int32_t>(cast<int64_t>(pi(x)) - 7);
    kt::Outputs1D<int32_t> wide_out;
    wide_out.add(to_int32, [&](int i) { return (double)ints(i) * 3; });
    wide_out.add(to_int64, [&](int i) { return (double)ints(i) - 7; });
    kt::Outputs1D<float> floats_out;
    floats_out.add(to_float, [&](int i) { return (double)ints(i) * 0.5; });
    floats_out.add(scalar_to_float, [&](int i) { return (double)ints(i) * 0.5; });
    kt::Outputs1D<T> ints_out;
    ints_out.add(to_int, [&](int i) { return (double)(T)(int32_t)floats(i); });
    ints_out.add(scalar_to_int, [&](int i) { return (double)(T)(int32_t)floats(i); });
    ints_out.add(int_to_int, [&](int i) { return (double)(T)((int64_t)ints(i) * 3); });
    for (Func f : {to_float, to_int, int_to_int, to_int32, to_int64}) f.vectorize(x, lanes);
    for (Func f : {to_float, to_int32, to_int64}) {
        INFO(f.name());
        CHECK(body_of(Pipeline(f)).find("kiln_widen<") != std::string::npos);
    }
    CHECK(body_of(Pipeline(to_int)).find("__builtin_convertvector(__builtin_convertvector(") != std::string::npos);
    INFO(target.to_string());
    floats_out.run(w, kMin, 0, target);
    ints_out.run(w, kMin, 0, target);
    wide_out.run(w, kMin, 0, target);
}

// int32 and uint32 lanes widened to int64 and uint64 (kiln_widen's
// vpmovsxdq / vpmovzxdq), the values at both extremes.
template<typename T>
void widen_32_to_64(int lanes, const Target &target) {
    const int w = 300;
    ImageParam p(type_of<T>(), 1, "in");
    const double lo = std::numeric_limits<T>::min(), hi = std::numeric_limits<T>::max();
    Buffer<T> in = kt::image1<T>(w, kMin, [=](int i) {
        return (T)(i == kMin ? lo : i == kMin + 1 ? hi : lo + (double)kt::noise(i, 7, 0, 65536) / 65535 * (hi - lo));
    });
    p.set(in);
    Var x("x");
    Func wide("wide");
    // Halved in 64 bits, so that a wrong extension shows in the low 32 bits too.
    wide(x) = cast<int32_t>(cast<int64_t>(p(x)) / 2 - Expr((int64_t)(std::is_signed<T>::value ? 0 : (int64_t)1 << 31)));
    wide.vectorize(x, lanes);
    CHECK(body_of(Pipeline(wide)).find("kiln_widen<int64x") != std::string::npos);
    kt::Outputs1D<int32_t> out;
    out.add(wide, [&](int i) {
        return (double)(int32_t)(kt::div_euclid((int64_t)in(i), 2) - (std::is_signed<T>::value ? 0 : (int64_t)1 << 31));
    });
    INFO(target.to_string());
    out.run(w, kMin, 0, target);
}

}  // namespace

TEST_CASE("arith: vector casts from and to 8- and 16-bit integers in steps", "[arith][codegen]") {
    std::vector<Target> targets = kt::narrower_targets();
    targets.push_back(Target::host());
    for (const Target &t : targets) {
        narrow_float_casts<uint8_t>(8, t);
        narrow_float_casts<int8_t>(16, t);
        narrow_float_casts<uint16_t>(64, t);  // wider than a register
        narrow_float_casts<int16_t>(4, t);
        narrow_float_casts<uint8_t>(32, t);
        widen_32_to_64<int32_t>(8, t);
        widen_32_to_64<uint32_t>(16, t);
    }
}

// min and max of float and double vectors (the prologue's kiln_min and
// kiln_max: one minps / maxps a register) are the IR's select(a < b, a, b)
// and select(a > b, a, b): a nan on either side gives b, and min(-0, +0)
// gives +0 and min(+0, -0) gives -0, for vectors of one register, of part
// of one and of two (halves), on the host's instruction set and the
// narrower ones.
template<typename T>
void float_min_max(int lanes, const Target &target) {
    const int w = 64;
    const T special[] = {std::numeric_limits<T>::quiet_NaN(), (T)-0.0, (T)0.0, std::numeric_limits<T>::infinity(),
                         -std::numeric_limits<T>::infinity(), (T)1.5, (T)-2.5};
    const int n = sizeof(special) / sizeof(special[0]);
    // Every ordered pair of the special values, then noise.
    Buffer<T> a = kt::image1<T>(w, 0, [&](int i) { return i < n * n ? special[i / n] : (T)kt::noise(i, 8, -9, 9) / 4; });
    Buffer<T> b = kt::image1<T>(w, 0, [&](int i) { return i < n * n ? special[i % n] : (T)kt::noise(i, 9, -9, 9) / 4; });
    ImageParam pa(type_of<T>(), 1, "a"), pb(type_of<T>(), 1, "b");
    pa.set(a);
    pb.set(b);
    Var x("x");
    Func mn("mn"), mx("mx"), clamped("clamped");
    mn(x) = min(pa(x), pb(x));
    mx(x) = max(pa(x), pb(x));
    clamped(x) = clamp(pa(x), (T)-1, (T)1);  // max(min(a, 1), -1), constants on one side
    for (Func f : {mn, mx, clamped}) f.vectorize(x, lanes);
    Pipeline p({mn, mx, clamped});
    std::vector<Buffer<T>> outs;
    for (int k = 0; k < 3; k++) outs.emplace_back(w);
    p.realize_raw({outs[0].raw_buffer(), outs[1].raw_buffer(), outs[2].raw_buffer()}, target);
    auto same = [](T got, T want) { return std::isnan(want) ? std::isnan(got) : got == want && std::signbit(got) == std::signbit(want); };
    for (int i = 0; i < w; i++) {
        INFO(target.to_string() << " lanes " << lanes << " a " << a(i) << " b " << b(i));
        T m = a(i) < b(i) ? a(i) : b(i), M = a(i) > b(i) ? a(i) : b(i), lo = a(i) < (T)1 ? a(i) : (T)1;
        CHECK(same(outs[0](i), m));
        CHECK(same(outs[1](i), M));
        CHECK(same(outs[2](i), lo > (T)-1 ? lo : (T)-1));
    }
}

TEST_CASE("arith: min and max of float and double vectors keep the IR's selects", "[arith][codegen]") {
    std::vector<Target> targets = kt::narrower_targets();
    targets.push_back(Target::host());
    for (const Target &t : targets)
        for (int lanes : {4, 8, 16, 32}) {
            float_min_max<float>(lanes, t);
            float_min_max<double>(lanes, t);
        }
}

TEST_CASE("arith: rounding averages of uint8 and uint16 vectors in their own lanes", "[arith][codegen]") {
    rounding_averages<uint8_t, uint16_t>(64);  // one AVX-512 register
    rounding_averages<uint8_t, uint16_t>(16);
    rounding_averages<uint16_t, uint32_t>(32);
    rounding_averages<uint16_t, uint32_t>(64);  // wider than a register: in halves
    rounding_averages<uint16_t, uint32_t>(4);   // 8 bytes: no instruction, (a | b) - ((a ^ b) >> 1)
}
