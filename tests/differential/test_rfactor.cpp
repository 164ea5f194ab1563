// rfactor against Halide 14: the same reductions with the same rfactor
// schedule on both sides. A row sum vectorized across 8 lanes of each row
// and a 2-D sum made parallel over one dimension (int32: exact); a float
// row max (exact: max does not round) and a float row sum (both sides add
// in the same order: lanes, then the 8 lane totals in order; held to
// 4 ulps for the libraries' code generators); a row argmax Tuple factored
// over contiguous blocks (exact, ties included). Widths are not multiples
// of the split factors.
#include "diff.h"
#include "halide_schedule.h"

namespace {

// One output over rows: define(lib, in, y) returns the Func, realized over
// `rows` rows of a width x rows input with values in [lo, hi).
template<typename T, typename Define>
void rows_case(const std::string &name, int width, int rows, int lo, int hi, int64_t ulps, Define define) {
    kiln::Buffer<T> image = kt::random_image<T>(width, rows, 0, 0, lo, hi, 5);
    auto o = kd::outs<T>({name}, {rows}, {0});
    kd::run(
        [&](auto lib) {
            using L = decltype(lib);
            typename L::ImageParam in(L::template type<T>(), 2, "in");
            L::set(in, image);
            typename L::Var y("y");
            return typename L::Pipeline(define(lib, in, y));
        },
        kd::pairs(o));
    kd::compare(o, ulps);
}

// The schedule the row cases share: the row's RVar split by 8 and its
// inner part factored into 8 lanes, vectorized (inside the blocks loop).
template<typename L>
void lanes_of(typename L::Func &f, const typename L::RDom &r, const typename L::Var &y) {
    typename L::RVar ro("ro"), ri("ri");
    typename L::Var u("u");
    f.update(0).split(r.x, ro, ri, 8);
    typename L::Func lanes = f.update(0).rfactor(ri, u);
    lanes.compute_at(f, y).vectorize(u);
    lanes.update(0).reorder(u, ro).vectorize(u);
}

}  // namespace

TEST_CASE("rfactor: a row sum vectorized across 8 lanes (int32, exact)", "[rfactor]") {
    for (int width : {64, 203, 1001}) {
        INFO("width " << width);
        rows_case<int32_t>("rsum", width, 13, -1000, 1000, 0, [](auto lib, auto in, auto y) {
            using L = decltype(lib);
            typename L::RDom r(0, in.width(), "r");
            typename L::Func f("rsum");
            f(y) = 0;
            f(y) += in(r, y);
            lanes_of<L>(f, r, y);
            f.parallel(y);
            f.update(0).parallel(y);
            return f;
        });
    }
}

TEST_CASE("rfactor: a float row max and row sum, vectorized", "[rfactor]") {
    for (int width : {77, 1000}) {
        INFO("width " << width);
        rows_case<float>("rmax", width, 9, -500, 500, 0, [](auto lib, auto in, auto y) {
            using L = decltype(lib);
            typename L::RDom r(0, in.width(), "r");
            typename L::Func f("rmax");
            f(y) = -1e30f;
            f(y) = max(f(y), in(r, y));
            lanes_of<L>(f, r, y);
            return f;
        });
        rows_case<float>("rsumf", width, 9, -1, 1, 4, [](auto lib, auto in, auto y) {
            using L = decltype(lib);
            typename L::RDom r(0, in.width(), "r");
            typename L::Func f("rsumf");
            f(y) = 0.0f;
            f(y) += in(r, y);
            lanes_of<L>(f, r, y);
            return f;
        });
    }
}

TEST_CASE("rfactor: a 2-D reduction made parallel over one RDom dimension (int32, exact)", "[rfactor]") {
    rows_case<int32_t>("weighted", 45, 31, -50, 50, 0, [](auto lib, auto in, auto y) {
        using L = decltype(lib);
        // weighted(y) = sum over the whole image of in * (y + 1), rows 0..30 of
        // the output; the RDom's rows are factored and run in parallel.
        typename L::RDom r(0, in.width(), 0, in.height(), "r");
        typename L::Var v("v");
        typename L::Func f("weighted");
        f(y) = y;
        f(y) += in(r.x, r.y) * (y + 1);
        typename L::Func part = f.update(0).rfactor({{r.y, v}});
        part.compute_root().update(0).parallel(v);
        f.update(0).vectorize(y, 8, L::GuardWithIf);
        return f;
    });
}

TEST_CASE("rfactor: a row argmax Tuple over contiguous blocks (int32, exact, ties)", "[rfactor][tuple]") {
    kiln::Buffer<int32_t> image = kt::random_image<int32_t>(203, 11, 0, 0, 0, 20, 3);  // many ties
    auto o = kd::outs<int32_t>({"amax.0", "amax.1"}, {11}, {0});
    kd::run(
        [&](auto lib) {
            using L = decltype(lib);
            typename L::ImageParam in(L::i32, 2, "in");
            L::set(in, image);
            typename L::Var y("y"), u("u");
            typename L::RDom r(0, in.width(), "r");
            typename L::RVar ro("ro"), ri("ri");
            typename L::Func f("amax");
            f(y) = typename L::Tuple(in(0, y), 0);
            typename L::Expr v = in(r, y);
            // Halide 14 recognizes an argmax spelled with max for the value.
            f(y) = typename L::Tuple(max(f(y)[0], v), select(v < f(y)[0], f(y)[1], r));
            f.update(0).split(r, ro, ri, 16);
            typename L::Func blocks = f.update(0).rfactor(ro, u);
            blocks.compute_root().update(0).parallel(u);
            return typename L::Pipeline(f);
        },
        kd::pairs(o));
    kd::compare(o);
}

TEST_CASE("rfactor: a schedule file's rfactor, applied to Halide by halide_apply", "[rfactor][sched]") {
    const char *text = "total.update(0): split(r, ro, ri, 8) rfactor(ri, u, total_lanes) parallel(y)\n"
                       "total_lanes: compute_at(total, y) vectorize(u)\n"
                       "total_lanes.update(0): reorder(u, ro) vectorize(u)\n";
    kiln::ScheduleFile file = kiln::ScheduleFile::parse(text, "rfactor.sched");
    kiln::Buffer<int32_t> image = kt::random_image<int32_t>(99, 7, 0, 0, -100, 100, 2);
    auto o = kd::outs<int32_t>({"total"}, {7}, {0});
    kd::run(
        [&](auto lib) {
            using L = decltype(lib);
            typename L::ImageParam in(L::i32, 2, "in");
            L::set(in, image);
            typename L::Var y("y");
            typename L::RDom r(0, in.width(), "r");
            typename L::Func f("total");
            f(y) = 0;
            f(y) += in(r, y) * 3;
            if constexpr (std::is_same<L, kd::K>::value) file.apply(kiln::Pipeline(f));
            else kd::halide_apply(file, {{"total", f}}, {{"r", r.x}});
            return typename L::Pipeline(f);
        },
        kd::pairs(o));
    kd::compare(o);
}
