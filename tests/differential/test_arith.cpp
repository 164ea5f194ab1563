// Integer and select semantics: Euclidean division and modulo of negative
// values by constants (zero included) and by Params, in int32, int16, int8,
// uint8 and uint32; wrap-around of uint8 and int16 arithmetic, the type
// coercion of mixed operands, and casts between widths, signedness and float;
// select, min, max, clamp and abs (whose result is unsigned for signed ints);
// float division and modulo by a constant and by a Param. Every output is one Func of a
// multi-output pipeline, vectorized and parallel, compared exactly.
#include "diff.h"

namespace {

const std::vector<int> kSize = {61, 7}, kMin = {-30, -3};

// An input over the outputs' region (61x7 at (-30, -3)): random values in
// [lo, hi], divided by `scale`.
template<typename T>
kiln::Buffer<T> input(int lo, int hi, uint32_t seed, double scale = 1) {
    return kt::image<T>(61, 7, -30, -3, [=](int x, int y) { return kt::noise(x, y, lo, hi, seed) / scale; });
}

// The same schedule for every output: vectors of `lanes`, parallel rows.
template<typename Var>
auto vectors(const Var &x, const Var &y, int lanes) {
    return [=](auto &f) { f.vectorize(x, lanes).parallel(y); };
}

}  // namespace

TEST_CASE("arith: int32 division and modulo by constants and Params", "[arith][div]") {
    const std::vector<int> divisors = {INT32_MIN, -2147483647, -65536, -7, -4, -3, -1, 0,
                                       1,         3,           4,      16, 65537, 1000000007, INT32_MAX};
    const std::vector<int> params = {INT32_MIN, -6, 0, 5, 641};
    std::vector<std::string> names;
    for (int c : divisors) {
        names.push_back("div_by_" + std::to_string(c));
        names.push_back("mod_by_" + std::to_string(c));
    }
    for (int p : params) {
        names.push_back("div_by_param_" + std::to_string(p));
        names.push_back("mod_by_param_" + std::to_string(p));
    }
    // Negative and positive numerators, and the largest magnitudes at the
    // left edge (INT32_MIN is left out: INT32_MIN / -1 overflows).
    kiln::Buffer<int32_t> num = kt::image<int32_t>(61, 7, -30, -3, [](int x, int y) {
        if (x == -30) return y % 2 ? INT32_MAX : INT32_MIN + 1;
        return kt::noise(x, y, -1000, 1000);
    });
    auto o = kd::outs<int32_t>(names, kSize, kMin);
    kd::run(
        [&](auto lib) {
            using L = decltype(lib);
            typename L::ImageParam in(L::i32, 2, "num");
            L::set(in, num);
            typename L::Var x("x"), y("y");
            typename L::Expr a = in(x, y);
            std::vector<typename L::Expr> values;
            for (int c : divisors) {
                values.push_back(a / c);
                values.push_back(a % c);
            }
            for (int v : params) {
                typename L::template Param<int32_t> p("p" + std::to_string(values.size()));
                p.set(v);
                values.push_back(a / p);
                values.push_back(a % p);
            }
            return kd::pipeline_of<L>(values, x, y, vectors(x, y, 8));
        },
        kd::pairs(o));
    kd::compare(o);
}

TEST_CASE("arith: uint8 and int16 wrap-around, mixed types and casts", "[arith][cast]") {
    kiln::Buffer<uint8_t> ua = input<uint8_t>(0, 255, 1);
    kiln::Buffer<uint8_t> ub = input<uint8_t>(0, 255, 2);
    kiln::Buffer<int16_t> sa = input<int16_t>(-32768, 32767, 3);
    auto o8 = kd::outs<uint8_t>({"u8_add", "u8_sub", "u8_mul", "u8_of_i16", "u8_of_float", "u8_div_param"}, kSize,
                                kMin);
    auto oi8 = kd::outs<int8_t>({"i8_plus_u8", "i8_of_i16", "i8_div_m3", "i8_mod_m3"}, kSize, kMin);
    auto o16 = kd::outs<int16_t>({"i16_add", "i16_mul", "i16_times_u8", "i16_div", "i16_mod", "i16_div_param",
                                  "i16_mod_param", "i16_of_float"},
                                 kSize, kMin);
    auto ou16 = kd::outs<uint16_t>({"u16_of_i16", "u16_times_u8"}, kSize, kMin);
    auto o32 = kd::outs<int32_t>({"i32_widened"}, kSize, kMin);
    kd::run(
        [&](auto lib) {
            using L = decltype(lib);
            typename L::ImageParam pa(L::u8, 2, "a"), pb(L::u8, 2, "b"), ps(L::i16, 2, "s");
            L::set(pa, ua);
            L::set(pb, ub);
            L::set(ps, sa);
            typename L::template Param<uint8_t> d("d");
            typename L::template Param<int16_t> e("e");
            d.set(7);
            e.set(-5);
            typename L::Var x("x"), y("y");
            typename L::Expr a = pa(x, y), b = pb(x, y), s = ps(x, y), c = cast(L::i8, s);
            std::vector<typename L::Expr> values = {
                a + b, a - b, a * b, cast(L::u8, s), cast(L::u8, cast(L::f32, a) * 0.9f + 3.5f), a / d,
                cast(L::i8, b) + a,  // int8 + uint8 is int8
                c, c / -3, c % -3,
                s + s, s * 3,
                s * b,  // int16 * uint8 is int16
                s / 7, s % 7, s / e, s % e, cast(L::i16, cast(L::f32, s) * 0.75f - 0.5f),
                cast(L::u16, s),
                cast(L::u16, a) * b,  // uint16 * uint8 is uint16
                cast(L::i32, s) * cast(L::i32, a) - cast(L::i32, b)};
            return kd::pipeline_of<L>(values, x, y, vectors(x, y, 16));
        },
        kd::pairs(o8, oi8, o16, ou16, o32));
    kd::compare(o8);
    kd::compare(oi8);
    kd::compare(o16);
    kd::compare(ou16);
    kd::compare(o32);
}

TEST_CASE("arith: select, min, max, clamp and abs of ints and floats", "[arith][select]") {
    kiln::Buffer<int32_t> ia = input<int32_t>(-500, 500, 4);
    kiln::Buffer<int32_t> ib = input<int32_t>(-500, 500, 5);
    kiln::Buffer<int8_t> ic = input<int8_t>(-128, 127, 6);
    kiln::Buffer<float> fa_img = input<float>(-12800, 12800, 7, 64), fb_img = input<float>(-12800, 12800, 8, 64);
    auto oi = kd::outs<int32_t>({"select", "select_chain", "min", "max", "clamp"}, kSize, kMin);
    auto ou = kd::outs<uint32_t>({"abs_diff", "abs", "u32_div", "u32_mod"}, kSize, kMin);
    auto o8 = kd::outs<uint8_t>({"abs_i8"}, kSize, kMin);
    auto of = kd::outs<float>(
        {"fselect", "fmin", "fmax", "fclamp", "fabs", "fdiv_const", "fdiv_param", "fmod_const", "fmod_param"}, kSize,
        kMin);
    kd::run(
        [&](auto lib) {
            using L = decltype(lib);
            typename L::ImageParam pa(L::i32, 2, "a"), pb(L::i32, 2, "b"), pc(L::i8, 2, "c");
            typename L::ImageParam pfa(L::f32, 2, "fa"), pfb(L::f32, 2, "fb");
            L::set(pa, ia);
            L::set(pb, ib);
            L::set(pc, ic);
            L::set(pfa, fa_img);
            L::set(pfb, fb_img);
            typename L::template Param<float> p("p");
            p.set(3.0f);
            typename L::Var x("x"), y("y");
            typename L::Expr a = pa(x, y), b = pb(x, y), c = pc(x, y);
            typename L::Expr fa = pfa(x, y), fb = pfb(x, y);
            std::vector<typename L::Expr> values = {
                select(a > b, a - b, b * 2), select(a < 0, -1, a == 0, 0, 1), min(a, b), max(a, 3),
                clamp(a, -100, 100), abs(a - b), abs(a), cast(L::u32, a) / 7, cast(L::u32, a) % 7, abs(c),
                select(fa < 0.5f, -fa, fa * 2.0f), min(fa, fb), max(fa, -1.5f), clamp(fa, -10.0f, 10.0f), abs(fa),
                fa / 3.0f,  // a multiplication by the reciprocal of 3 (in both)
                fa / p,     // a division
                fa % 1.5f, fa % p};
            return kd::pipeline_of<L>(values, x, y, vectors(x, y, 8));
        },
        kd::pairs(oi, ou, o8, of));
    kd::compare(oi);
    kd::compare(ou);
    kd::compare(o8);
    kd::compare(of);
}
