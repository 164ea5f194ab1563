// kiln-lab's rank correlation of predicted and measured times (the model's
// error in docs/autoschedule.md): Spearman's rho with ties at their mean rank;
// and how it compares outputs of any number of dimensions.
#include <catch2/catch.hpp>

#include <cmath>

#include <kiln/Float16.h>

#include "lab.h"
#include "lab_buffers.h"

using kiln_lab::rank_correlation;

TEST_CASE("lab: rank correlation of predicted and measured times", "[lab]") {
    CHECK(rank_correlation({{1, 10}, {2, 20}, {3, 30}, {4, 40}}) == Approx(1.0));
    CHECK(rank_correlation({{1, 40}, {2, 30}, {3, 20}, {4, 10}}) == Approx(-1.0));
    // Without ties: 1 - 6 sum(d^2) / (n (n^2 - 1)); ranks (0,1,2,3) against (1,0,2,3): 1 - 12/60.
    CHECK(rank_correlation({{1, 20}, {2, 10}, {3, 30}, {4, 40}}) == Approx(0.8));
    // Seven schedules the model cannot tell apart and one it predicts slower,
    // which is: the ranks agree on what the model does see.
    std::vector<std::pair<double, double>> tied;
    for (int i = 0; i < 7; i++) tied.push_back({0.92, 0.445 + 0.001 * ((i * 3) % 7)});
    tied.push_back({3.39, 5.02});
    // Ranks 3 (seven times) and 7 against 0..7: 14 / sqrt(14 * 42) = 1 / sqrt(3).
    CHECK(rank_correlation(tied) == Approx(1 / std::sqrt(3.0)));
    // Values within a millionth are ties too (the model's sums in another order).
    // Ranks (0.5, 0.5, 2) against (0, 1, 2): sqrt(3) / 2.
    CHECK(rank_correlation({{1.0, 1}, {1.0 + 1e-9, 2}, {2, 3}}) == Approx(std::sqrt(3.0) / 2));
    // No spread on one side: no ranking to compare.
    CHECK(std::isnan(rank_correlation({{1, 1}, {1, 2}, {1, 3}})));
    CHECK(std::isnan(rank_correlation({{1, 1}, {2, 2}})));
}

TEST_CASE("lab: a 4-D output compares point by point", "[lab]") {
    // A convolution's weights (out channel, in channel, tap x, tap y): every
    // point is a point of the folded buffer, so one changed value shows.
    Halide::Runtime::Buffer<float> a(3, 2, 2, 3), b(3, 2, 2, 3);
    a.for_each_element([&](const int *p) { a(p) = (float)(p[0] + 10 * p[1] + 100 * p[2] + 1000 * p[3]); });
    b.copy_from(a);
    CHECK(kiln_lab::max_abs_diff(a, b) == 0);
    Halide::Runtime::Buffer<double, 3> d = kiln_lab::to_double(a);
    CHECK(d.channels() == 6);
    CHECK(d(2, 1, 5) == 2 + 10 + 100 + 2000);  // c = 1 + 2 * 2
    b(2, 1, 1, 2) += 0.5f;
    CHECK(kiln_lab::max_abs_diff(a, b) == 0.5);
}

TEST_CASE("lab: bf16 and f16 buffers fill, widen and compare as float ones do", "[lab]") {
    // A bf16 (f16) generator's inputs get random values in [-1, 1) rounded
    // to 16 bits, and its outputs widen exactly for the comparison.
    for (const halide_type_t t : {halide_type_t(halide_type_bfloat, 16), halide_type_t(halide_type_float, 16)}) {
        INFO("type code " << (int)t.code);
        Halide::Runtime::Buffer<void> a = kiln_lab::random_buffer(t, {16, 4}, 3);
        REQUIRE(a.type() == t);
        Halide::Runtime::Buffer<double, 3> d = kiln_lab::to_double(a);
        int negative = 0;
        d.for_each_element([&](int x, int y, int) {
            const double v = d(x, y, 0);
            negative += v < 0;
            CHECK(v >= -1.0);
            CHECK(v <= 1.0);
            // The value is a 16-bit one: widening it again changes nothing.
            const float f = (float)v;
            CHECK((t.code == halide_type_bfloat ? (float)kiln::bfloat16_t(f) : (float)kiln::float16_t(f)) == f);
        });
        CHECK(negative > 0);
        Halide::Runtime::Buffer<void> b = kiln_lab::random_buffer(t, {16, 4}, 3);
        CHECK(kiln_lab::max_abs_diff(a, b) == 0);
        CHECK(kiln_lab::full_scale(t) == 1.0);
    }
    Halide::Runtime::Buffer<kiln::bfloat16_t> a(4), b(4);
    for (int i = 0; i < 4; i++) a(i) = b(i) = kiln::bfloat16_t(0.25f * i);
    b(3) = kiln::bfloat16_t(1.0f);
    CHECK(kiln_lab::max_abs_diff(a, b) == 0.25);
}
