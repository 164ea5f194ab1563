// Bitwise operators, shifts, absd, mux, saturating_cast and min/max of
// several values against Halide 14, in int32, int16 and uint8, scalar and
// vectorized (a vector body and its scalar tail). Shift amounts vary per
// pixel within [0, bits); constant amounts and masks take the multiply,
// divide and modulo forms.
#include "diff.h"

TEST_CASE("differential: bitwise operators and shifts", "[differential][bitwise]") {
    kiln::Buffer<int32_t> input = kt::random_image<int32_t>(75, 40, -1, 0, -100000, 100000, 17);
    for (int vectorized = 0; vectorized < 2; vectorized++) {
        INFO("vectorized " << vectorized);
        auto out = kd::outs<int32_t>({"o1", "o2", "o3", "o4", "o5"}, {67, 31}, {0, 1});
        kd::run(
            [&](auto lib) {
                using L = decltype(lib);
                typename L::ImageParam in(L::i32, 2, "in");
                L::set(in, input);
                typename L::Var x("x"), y("y");
                typename L::Func o1("o1"), o2("o2"), o3("o3"), o4("o4"), o5("o5");
                typename L::Expr a = in(x, y), b = in(x + 1, y), c = in(x, y + 1);
                typename L::Expr s = b & 31;  // a varying shift amount in [0, 32)
                o1(x, y) = ((a & 0xff) ^ (b | 0xf0)) + (a & b) - (a | c) + (~a ^ c);
                o2(x, y) = (a >> 3) + (a << 2) + (a >> s) + ((a & 0xffff) << (s & 15)) + (a & 0x12345);
                typename L::Expr u = cast(L::u8, a), v = cast(L::u8, b);
                o3(x, y) = cast(L::i32, (u << 3) | (u >> 5)) + cast(L::i32, ~u) * 3 +
                           cast(L::i32, (u ^ v) >> (v & 7)) + cast(L::i32, u << (v & 7));
                typename L::Expr h = cast(L::i16, a), k = cast(L::i16, c);
                o4(x, y) = cast(L::i32, (h >> 4) ^ (k << 3)) + cast(L::i32, (h & k) | (h >> (cast(L::i16, s) & 15)));
                o5(x, y) = cast(L::i32, absd(a, b)) + cast(L::i32, absd(u, v)) + cast(L::i32, absd(h, k)) +
                           max(a, b, c) - min(a, b, c, 7) + mux(x % 3, {a, b * 2, -c}) +
                           cast(L::i32, saturating_cast(L::u8, a)) + cast(L::i32, saturating_cast(L::i16, a)) +
                           cast(L::i32, saturating_cast(L::i8, cast(L::f32, b) * 0.01f));
                if (vectorized)
                    for (auto *f : {&o1, &o2, &o3, &o4, &o5}) f->vectorize(x, 8);
                return typename L::Pipeline({o1, o2, o3, o4, o5});
            },
            kd::pairs(out));
        for (auto &o : out) kd::compare(o);
    }
}

TEST_CASE("differential: a shift amount and a mask in an index", "[differential][bitwise]") {
    kiln::Buffer<int32_t> input = kt::random_image<int32_t>(40, 20, 0, 0, -1000, 1000, 3);
    kd::Out<int32_t> out("out", {64, 30});
    kd::run(
        [&](auto lib) {
            using L = decltype(lib);
            typename L::ImageParam in(L::i32, 2, "in");
            L::set(in, input);
            typename L::Var x("x"), y("y");
            typename L::Func out("out");
            // Upsampling by shifts and a deinterleave by masks: bounds inference must see x >> 1 and y & 15.
            out(x, y) = in(x >> 1, y & 15) + in((x & 7) + 16, (y >> 2) + 1);
            out.vectorize(x, 8);
            return typename L::Pipeline(out);
        },
        {out.pair()});
    kd::compare(out);
}

TEST_CASE("differential: lerp of floats, uint8, uint16 and int16", "[differential][lerp]") {
    kiln::Buffer<int32_t> input = kt::random_image<int32_t>(70, 20, 0, 0, 0, 65535, 31);
    auto out = kd::outs<int32_t>({"l8", "l16", "ls", "lw"}, {64, 20});
    auto lf = kd::outs<float>({"lf"}, {64, 20});
    kd::run(
        [&](auto lib) {
            using L = decltype(lib);
            typename L::ImageParam in(L::i32, 2, "in");
            L::set(in, input);
            typename L::Var x("x"), y("y");
            typename L::Func l8("l8"), l16("l16"), ls("ls"), lw("lw"), lf("lf");  // NOLINT(shadow)
            typename L::Expr a = in(x, y), b = in(x + 1, y), c = in(x + 2, y);
            // A weight in [0, 1] both compute exactly (Kiln would multiply by the reciprocal of 65535).
            typename L::Expr fw = cast(L::f32, c % 1025) * 0.0009765625f;
            l8(x, y) = cast(L::i32, lerp(cast(L::u8, a), cast(L::u8, b), cast(L::u8, c))) +
                       cast(L::i32, lerp(cast(L::u8, a), cast(L::u8, b), fw)) * 1000;
            l16(x, y) = cast(L::i32, lerp(cast(L::u16, a), cast(L::u16, b), cast(L::u8, c))) +
                        cast(L::i32, lerp(cast(L::u16, a), cast(L::u16, b), fw));
            ls(x, y) = cast(L::i32, lerp(cast(L::i16, a - 32768), cast(L::i16, b - 32768), cast(L::u16, c)));
            lw(x, y) = cast(L::i32, lerp(cast(L::u8, a), cast(L::u8, b), cast(L::u16, c)));
            lf(x, y) = lerp(cast(L::f32, a), cast(L::f32, b), fw) + lerp(cast(L::f32, b), cast(L::f32, a), cast(L::u8, c));
            l8.vectorize(x, 16);
            ls.vectorize(x, 8);
            return typename L::Pipeline({l8, l16, ls, lw, lf});
        },
        kd::pairs(out, lf), kd::H::strict_float());  // Halide would contract a * b + c
    for (auto &o : out) kd::compare(o);
    kd::compare(lf[0], 2);  // Kiln multiplies by the reciprocal of 255 where strict Halide divides
}

TEST_CASE("differential: count_leading_zeros, count_trailing_zeros, popcount", "[differential][bitwise]") {
    kiln::Buffer<int32_t> input = kt::random_image<int32_t>(70, 12, 0, 0, -70000, 70000, 41);
    auto out = kd::outs<int32_t>({"c32", "c8", "c16"}, {64, 12});
    kd::run(
        [&](auto lib) {
            using L = decltype(lib);
            typename L::ImageParam in(L::i32, 2, "in");
            L::set(in, input);
            typename L::Var x("x"), y("y");
            typename L::Func c32("c32"), c8("c8"), c16("c16");
            typename L::Expr a = in(x, y) & 0x7ff0f;  // zeros, small and negative-free values
            typename L::Expr s = in(x, y);           // negative ones too
            c32(x, y) = count_leading_zeros(a) + 100 * count_trailing_zeros(s) + 10000 * popcount(s);
            typename L::Expr u = cast(L::u8, a);
            c8(x, y) = cast(L::i32, count_leading_zeros(u)) + 100 * cast(L::i32, count_trailing_zeros(u)) +
                       10000 * cast(L::i32, popcount(u));
            typename L::Expr h = cast(L::i16, s);
            c16(x, y) = cast(L::i32, count_leading_zeros(h)) + 100 * cast(L::i32, count_trailing_zeros(h)) +
                        10000 * cast(L::i32, popcount(h));
            c8.vectorize(x, 16);
            c16.vectorize(x, 8);
            return typename L::Pipeline({c32, c8, c16});
        },
        kd::pairs(out));
    for (auto &o : out) kd::compare(o);
}

TEST_CASE("differential: concise casts", "[differential][bitwise]") {
    // Wide enough to saturate 8 and 16 bits from int32, and (squared, as a
    // float) 32 bits from float; a vector body and its scalar tail.
    kiln::Buffer<int32_t> input = kt::random_image<int32_t>(70, 20, 0, 0, -200000, 200000, 29);
    for (int vectorized = 0; vectorized < 2; vectorized++) {
        INFO("vectorized " << vectorized);
        auto ints = kd::outs<int32_t>({"narrow", "from_float", "wide"}, {61, 20}, {0, 0});
        auto floats = kd::outs<float>({"floats"}, {61, 20}, {0, 0});
        kd::run(
            [&](auto lib) {
                using L = decltype(lib);
                using namespace kiln::ConciseCasts;
                using namespace Halide::ConciseCasts;
                typename L::ImageParam in(L::i32, 2, "in");
                L::set(in, input);
                typename L::Var x("x"), y("y");
                typename L::Func narrow("narrow"), from_float("from_float"), wide("wide"), fl("floats");
                typename L::Expr a = in(x, y), b = in(x + 1, y);
                typename L::Expr f = f32(a) * 37.5f, g = f32(b) * f32(b);
                narrow(x, y) = i32(u8_sat(a)) + i32(i8_sat(b)) + i32(u16_sat(a)) + i32(i16_sat(b)) + i32(u8(a)) +
                               i32(i16(b)) + i32(u16(a + b)) + i32(i8(a - b));
                // (No sum that overflows int32, no float cast out of range
                // but the saturating ones: both are undefined in Halide.)
                from_float(x, y) = i32(u8_sat(f)) + i32(i16_sat(f)) + (i32_sat(g) >> 2) + i32(u32_sat(g) >> 16) +
                                   i32(u16_sat(-f)) + i32(i16(f * 0.0001f));
                wide(x, y) = i32(i64_sat(g) / 1000000) + i32(u64_sat(-f) + u64(a & 1023)) + i32(u32(a) >> 20) +
                             i32(i64(a) * i64(b) >> 40);
                typename L::Expr half = f64(typename L::Expr(0.5f)), tiny = f64(typename L::Expr(1e-9f));
                fl(x, y) = f32(f16(f * 0.001f)) + f32(bf16(f)) + f32(f64(f) * half) - f32(f64(g) * tiny);
                if (vectorized)
                    for (auto *fn : {&narrow, &from_float, &wide, &fl}) fn->vectorize(x, 8);
                return typename L::Pipeline({narrow, from_float, wide, fl});
            },
            kd::pairs(ints, floats), kd::H::strict_float());  // the float sum in its order
        kd::compare(ints);
        kd::compare(floats);
    }
}
