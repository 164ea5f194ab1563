// Update definitions: a sum and a max over a 2-D RDom (two outputs of one
// pipeline, their updates parallel, one vectorized), an RDom restricted by
// where(), a histogram whose update writes at computed coordinates, and an
// update of an intermediate vectorized over a pure Var.
#include "diff.h"

namespace {

// The outputs define(lib, clamped, x, y) returns, over an int32 image that
// covers [-9, 76) x [-9, 54) read through repeat_edge (`clamped`), realized
// over 67x45 at (-12, 20) and compared.
template<typename Define>
void reduce(const std::vector<std::string> &names, Define define) {
    kiln::Buffer<int32_t> image = kt::random_image<int32_t>(85, 63, -9, -9, -1000, 1000, 7);
    auto o = kd::outs<int32_t>(names, {67, 45}, {-12, 20});
    kd::run(
        [&](auto lib) {
            using L = decltype(lib);
            typename L::ImageParam in(L::i32, 2, "in");
            L::set(in, image);
            typename L::Var x("x"), y("y");
            return typename L::Pipeline(define(lib, L::repeat_edge(in), x, y));
        },
        kd::pairs(o));
    kd::compare(o);
}

}  // namespace

TEST_CASE("reductions: sum and max over a 2-D RDom, updates parallel", "[reduction]") {
    reduce({"box_sum", "box_max"}, [](auto lib, auto clamped, auto x, auto y) {
        using L = decltype(lib);
        typename L::template Param<int32_t> rows("rows");
        rows.set(3);
        typename L::RDom r(-2, 5, -1, rows, "r");
        typename L::Func sum("box_sum"), mx("box_max");
        sum(x, y) = 0;
        sum(x, y) += clamped(x + r.x, y + r.y);
        mx(x, y) = -1000000;
        mx(x, y) = max(mx(x, y), clamped(x + r.x, y + r.y) * 3 - x);
        sum.parallel(y);
        sum.update(0).parallel(y);
        mx.vectorize(x, 8);
        // Explicit: Halide 14's Auto tail for an update's pure Var is
        // RoundUp even on an output (and fails the output bounds check).
        mx.update(0).vectorize(x, 8, L::GuardWithIf).parallel(y);
        return std::vector<typename L::Func>{sum, mx};
    });
}

TEST_CASE("reductions: a 2-D RDom restricted to a disk by where()", "[reduction][where]") {
    reduce({"disk_sum"}, [](auto lib, auto clamped, auto x, auto y) {
        using L = decltype(lib);
        typename L::RDom r(-3, 7, -3, 7, "r");
        r.where(r.x * r.x + r.y * r.y <= 9);
        r.where(r.x != r.y);
        typename L::Func disk("disk_sum");
        disk(x, y) = x - y;
        disk(x, y) += clamped(x + r.x, y + r.y) * (r.x + 4);
        disk.parallel(y);
        disk.update(0).vectorize(x, 8, L::GuardWithIf).parallel(y);
        return std::vector<typename L::Func>{disk};
    });
}

TEST_CASE("reductions: update of an intermediate vectorized over a pure Var", "[reduction][update]") {
    reduce({"diff"}, [](auto lib, auto clamped, auto x, auto y) {
        using L = decltype(lib);
        typename L::RDom r(0, 4, "r");
        typename L::Func rows("rows"), diff("diff");
        rows(x, y) = clamped(x, y) * 2;
        rows(x, y) += clamped(x + r, y - r) * (r + 1);
        diff(x, y) = rows(x + 1, y) - rows(x, y);
        diff.vectorize(x, 8).parallel(y);
        rows.compute_at(diff, y).vectorize(x, 8);
        rows.update(0).vectorize(x, 8);  // Auto: RoundUp, rows is not an output
        return std::vector<typename L::Func>{diff};
    });
}

TEST_CASE("reductions: histogram, the update at computed coordinates", "[reduction][histogram]") {
    kiln::Buffer<uint8_t> image = kt::random_image<uint8_t>(53, 31, -4, 6, 0, 255, 8);
    kd::Out<int32_t> o("hist", {70}, {-3});
    kd::run(
        [&](auto lib) {
            using L = decltype(lib);
            typename L::ImageParam in(L::u8, 2, "in");
            L::set(in, image);
            typename L::Var x("x");
            typename L::RDom r(in.dim(0).min(), in.dim(0).extent(), in.dim(1).min(), in.dim(1).extent(), "r");
            typename L::Func hist("hist");
            hist(x) = 0;
            // Bins of 4 values, the lowest bins shifted below zero and the
            // highest clamped into the last one.
            typename L::Expr bin = clamp(cast(L::i32, in(r.x, r.y)) / 4 - 3, -3, 55);
            hist(bin) += 1;
            hist.vectorize(x, 8);
            hist.update(0).serial(r.y);  // updates at computed coordinates stay serial
            return typename L::Pipeline(hist);
        },
        {o.pair()});
    kd::compare(o);
}
