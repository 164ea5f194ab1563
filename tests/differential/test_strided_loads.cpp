// Vectorized strided reads (f(2 * x), f(3 * x + 1)) and repeated-lane reads
// (f(x / 2), a demosaic's select between two half-resolution images, by
// column parity alone or by row and column parity, at odd and even
// origins) against Halide 14 with the same schedule: Kiln reads them as dense vectors
// and shuffles (runtime/kiln_prologue.h); the values must be identical.
#include "diff.h"

TEST_CASE("differential: strided and repeated-lane loads under vectorize", "[differential][vectorize]") {
    kiln::Buffer<uint16_t> input = kt::random_image<uint16_t>(200, 24, -3, 0, 0, 4000);
    auto build = [&](auto lib) {
        using L = decltype(lib);
        typename L::ImageParam in(L::u16, 2, "in");
        L::set(in, input);
        typename L::Var x("x"), y("y");
        typename L::Func half("half"), third("third"), up("up"), even("even"), odd("odd"), demosaic("demosaic");
        typename L::Func bayer_odd("bayer_odd"), bayer_even("bayer_even");
        // A 2x downsample (a pair of strided reads) and a stride-3 one.
        half(x, y) = (in(2 * x, y) + in(2 * x + 1, y)) / 2;
        third(x, y) = in(3 * x + 1, y) - in(3 * x, y);
        // A nearest-neighbour 2x upsample.
        up(x, y) = in(x / 2, y) * 3 + in(x / 2 + 1, y);
        // Two half-resolution images interleaved again by column parity.
        even(x, y) = in(2 * x, y);
        odd(x, y) = in(2 * x + 1, y + 1);
        demosaic(x, y) = select(x % 2 == 0, even(x / 2, y), odd(x / 2, y) + 1);
        for (auto *f : {&half, &third, &up, &demosaic}) f->vectorize(x, 16);
        // By row parity too, rows unrolled by two: a scalar test per row,
        // the column's per vector half (interleave_parity_selects); the
        // outputs start at odd and at even coordinates.
        for (auto *f : {&bayer_odd, &bayer_even}) {
            (*f)(x, y) = select(y % 2 == 0, select(x % 2 == 0, even(x / 2, y / 2), odd(x / 2, y / 2) + 1),
                                select(x % 2 == 0, odd(x / 2, y / 2), even(x / 2, y / 2) * 2));
            f->vectorize(x, 16).unroll(y, 2);
        }
        even.compute_root().vectorize(x, 8);
        odd.compute_root().vectorize(x, 8);
        return typename L::Pipeline({half, third, up, demosaic, bayer_odd, bayer_even});
    };
    std::vector<kd::Out<uint16_t>> out;
    out.emplace_back("half", std::vector<int>{60, 24}, std::vector<int>{-1, 0});
    out.emplace_back("third", std::vector<int>{61, 24}, std::vector<int>{-1, 0});
    out.emplace_back("up", std::vector<int>{121, 24}, std::vector<int>{-4, 0});
    out.emplace_back("demosaic", std::vector<int>{117, 23}, std::vector<int>{-2, 0});
    out.emplace_back("bayer_odd", std::vector<int>{117, 21}, std::vector<int>{-1, 1});
    out.emplace_back("bayer_even", std::vector<int>{120, 20}, std::vector<int>{2, 2});
    kd::run(build, kd::pairs(out));
    for (auto &o : out) kd::compare(o);
}
