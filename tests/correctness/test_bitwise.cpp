// Shifts by amounts Halide leaves open: negative amounts shift the other
// way, amounts of the type's width or more shift every bit out (an
// arithmetic right shift of a negative value leaves -1), in int8, uint16
// and int32, scalar and vectorized, against a C++ reference of that rule.
#include "check.h"

using namespace kiln;

namespace {

// A shift of a (of type E) by n, which has E's width and its own signedness.
template<typename E>
int64_t shifted(int64_t a, int64_t n, bool left) {
    const int bits = 8 * sizeof(E);
    if (n < 0) {
        left = !left;
        n = -n;
    }
    using U = std::make_unsigned_t<E>;
    if (left) return n >= bits ? 0 : (E)(U)((U)(E)a << n);
    if (n >= bits) return std::is_signed<E>::value && (E)a < 0 ? -1 : 0;
    return (E)((E)a >> n);
}

// Shifts of E values by amounts of type S (E's width).
template<typename E, typename S>
void check_shifts(bool vectorized) {
    INFO(type_of<E>().to_string() << " by " << type_of<S>().to_string() << (vectorized ? ", vectorized" : ""));
    Buffer<int> a = kt::random_image<int>(70, 9, 0, 0, -30000, 30000, 5);
    Buffer<int> n = kt::random_image<int>(70, 9, 0, 0, -2 * (int)sizeof(E) * 8, 2 * (int)sizeof(E) * 8, 6);
    ImageParam av(Int(32), 2, "av"), nv(Int(32), 2, "nv");
    av.set(a);
    nv.set(n);
    Var x("x"), y("y");
    Func l("l"), r("r");
    Type t = type_of<E>();
    l(x, y) = cast<int>(cast(t, av(x, y)) << cast<S>(nv(x, y)));
    r(x, y) = cast<int>(cast(t, av(x, y)) >> cast<S>(nv(x, y)));
    if (vectorized) {
        l.vectorize(x, 16);
        r.vectorize(x, 16);
    }
    // An unsigned amount read from a negative int is a large positive one.
    auto amount = [&](int px, int py) { return (int64_t)(S)n(px, py); };
    kt::realize_and_check<int>(l, {{67, 9, 0, 0}}, [&](int px, int py) { return (double)shifted<E>(a(px, py), amount(px, py), true); });
    kt::realize_and_check<int>(r, {{67, 9, 0, 0}}, [&](int px, int py) { return (double)shifted<E>(a(px, py), amount(px, py), false); });
}

}  // namespace

TEST_CASE("shifts: negative and oversized amounts", "[bitwise][shift]") {
    for (bool v : {false, true}) {
        check_shifts<int8_t, int8_t>(v);
        check_shifts<uint16_t, int16_t>(v);  // negative amounts of an unsigned value
        check_shifts<uint16_t, uint16_t>(v);
        check_shifts<int32_t, int32_t>(v);
        check_shifts<int32_t, uint32_t>(v);
    }
}

TEST_CASE("saturating_cast: float to int at the ends of the range", "[bitwise][saturating_cast]") {
    Buffer<float> in(5);
    const float v[] = {3e9f, -3e9f, 2147483520.0f, 255.7f, -0.5f};
    for (int i = 0; i < 5; i++) in(i) = v[i];
    ImageParam p(Float(32), 1, "p");
    p.set(in);
    Var x("x"), y("y");
    Func i32("i32"), u8("u8");
    i32(x, y) = saturating_cast<int32_t>(p(x));
    u8(x, y) = cast<int>(saturating_cast<uint8_t>(p(x)));
    // At or above 2^31 the maximum itself, as Halide 14 gives (2^31 - 1 is no
    // float32: the largest float below 2^31 casts exactly).
    const double want32[] = {2147483647.0, -2147483648.0, 2147483520.0, 255, 0};
    const double want8[] = {255, 0, 255, 255, 0};
    kt::realize_and_check<int>(i32, {{5, 1, 0, 0}}, [&](int px, int) { return want32[px]; });
    // From float64 to int64: 2^63 - 1 is no double either (3e19 gives 2^63 - 1).
    Func i64("i64");
    i64(x, y) = cast<int>(saturating_cast<int64_t>(cast<double>(p(x)) * 1e10) >> 40);
    const double want64[] = {8388607, -8388608, 8388607, 2, -1};
    kt::realize_and_check<int>(i64, {{5, 1, 0, 0}}, [&](int px, int) { return want64[px]; });
    kt::realize_and_check<int>(u8, {{5, 1, 0, 0}}, [&](int px, int) { return want8[px]; });
}
