// Float sums under fast_math, which split_float_sums runs over several
// vector accumulators and a remainder: row sums of run-time widths (below
// one block of accumulators, at it, odd remainders) and input minima,
// float32 and float64, a sum of two terms per step. Under fast_math each
// result is within a stated bound of a float64 reference; without it,
// bit-identical to the serial float sum in the loop's order.
#include "check.h"

#include <limits>

using namespace kiln;

namespace {

const int widths[] = {1, 7, 31, 63, 64, 65, 127, 128, 129, 255, 257, 1000, 1023};

// out(y) = init + sum over r of in(r, y) * scale(r, y) (scale 1 if not
// `weighted`), the input's width and minimum a run time matter.
template<typename T>
struct RowSum {
    ImageParam in{type_of<T>(), 2, "ssin"};
    Func sum{"ssum"}, out{"ssout"};
    Var x{"x"}, y{"y"};
    RowSum(bool weighted) {
        RDom r(in.dim(0).min(), in.dim(0).extent(), "r");
        sum(y) = cast<T>(Expr(0.25));
        if (weighted) sum(y) += in(r, y) * in(r, y) + in(r, y);
        else sum(y) += in(r, y);
        out(y) = sum(y);
        sum.compute_at(out, y);
    }
};

// Terms in [1, 2): a term left out or added twice moves the sum by 1 or
// more, far outside the tolerances below.
template<typename T>
Buffer<T> input(int w, int h, int min_x) {
    Buffer<T> b(w, h);
    b.set_min(min_x, 0);
    for (int yy = 0; yy < h; yy++)
        for (int xx = min_x; xx < min_x + w; xx++) b(xx, yy) = T(1) + T(kt::noise(xx, yy, 0, 1 << 20, 7)) / T(1 << 21);
    return b;
}

template<typename T>
void check_sums(bool weighted) {
    const int h = 3;
    for (int w : widths) {
        for (int min_x : {0, -5}) {
            INFO("width " << w << ", min " << min_x << ", weighted " << weighted);
            Buffer<T> b = input<T>(w, h, min_x);
            for (bool fast : {false, true}) {
                RowSum<T> p(weighted);
                p.in.set(b);
                Target t = Target::host();
                if (fast) t = t.with(Target::FastMath);
                Buffer<T> o(h);
                p.out.realize(o, t);
                for (int yy = 0; yy < h; yy++) {
                    T serial = T(0.25);
                    double exact = 0.25, magnitude = 0.25;
                    for (int xx = min_x; xx < min_x + w; xx++) {
                        T v = b(xx, yy);
                        // As the loop computes it without fast_math: no FMA
                        // contraction (the volatile keeps g++ from one here).
                        volatile T square = v * v;
                        T term = weighted ? square + v : v;
                        serial = serial + term;
                        double dv = (double)v, dterm = weighted ? dv * dv + dv : dv;
                        exact += dterm;
                        magnitude += std::fabs(dterm);
                    }
                    if (!fast) {
                        CHECK(o(yy) == serial);
                    } else {
                        // Any order of n additions is within n ulps of the
                        // magnitude; FMA contraction of the products
                        // (fast_math) only makes each term more exact.
                        const double eps = std::numeric_limits<T>::epsilon();
                        CHECK(std::fabs((double)o(yy) - exact) <= (w + 2) * eps * magnitude);
                    }
                }
            }
        }
    }
}

}  // namespace

TEST_CASE("split sums: float32 row sums of run-time widths, fast_math within bound, otherwise serial bits",
          "[correctness][split_sums]") {
    check_sums<float>(false);
}

TEST_CASE("split sums: float32 sums of two terms per step", "[correctness][split_sums]") { check_sums<float>(true); }

TEST_CASE("split sums: float64 row sums", "[correctness][split_sums]") { check_sums<double>(false); }

TEST_CASE("split sums: under fast_math the host lowering splits the sum, without it, not", "[correctness][split_sums]") {
    RowSum<float> p(false);
    CHECK(p.out.lowered_stmt(Target::host().with(Target::FastMath)).find("ssum.parts.") != std::string::npos);
    CHECK(p.out.lowered_stmt(Target::host()).find("ssum.parts.") == std::string::npos);
}
