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
