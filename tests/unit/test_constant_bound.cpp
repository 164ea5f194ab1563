// Constant bounds of run-time expressions (analysis/ConstantBound.h): a
// tile clamped at its region's end (camera_pipe's per-tile buffers), loop
// variables, products of extents, expressions with no bound, and a sampled
// check that random expressions never pass the bound found.
#include <catch2/catch.hpp>

#include "analysis/ConstantBound.h"
#include "ir/IRPrinter.h"
#include "kiln/IROperator.h"
#include "unit/ir_helpers.h"

using namespace kiln;
using namespace kiln::internal;
using kiln_test::var;

namespace {

// The lets of dimension d of a Func f computed per tile of `size` points of
// its consumer g (loop variable g.s0.<v>.<v>), the tile clamped to g's
// region at the end, and f.extent.<d> as storage flattening writes it
// (bounds inference's max(extent, size) folded in).
void clamped_tile(BoundFacts &f, const std::string &v, int d, int size) {
    const std::string g = "g.s0." + v, t = "f.s0." + v, dn = std::to_string(d);
    Expr base = var(g + ".min") + var(g + "." + v) * size;
    f.push_loop(g + "." + v, 0, var(g + "." + v + ".loop_extent"));
    f.push_let(t + ".min", max(base, var(g + ".min")));
    f.push_let(t + ".max", min(base + (size - 1), var(g + ".max")));
    Expr e = var(t + ".max") - var(t + ".min");
    f.push_let("f.extent." + dn, (e - min(e - (size - 1), 0)) + 1);
}

// A tile of 64 x 2.
BoundFacts clamped_tile() {
    BoundFacts f;
    clamped_tile(f, "y", 1, 2);
    clamped_tile(f, "x", 0, 64);
    return f;
}

}  // namespace

TEST_CASE("constant_upper_bound: a tile clamped at its region's end", "[constant_bound]") {
    BoundFacts f = clamped_tile();
    CHECK(constant_upper_bound(var("f.extent.1"), f) == std::optional<int64_t>(2));
    CHECK(constant_lower_bound(var("f.extent.1"), f) == std::optional<int64_t>(2));
    CHECK(constant_upper_bound(var("f.extent.0"), f) == std::optional<int64_t>(64));
    // The allocation's size: a product of extents that cannot be negative.
    CHECK(constant_upper_bound(var("f.extent.0") * var("f.extent.1") * 3, f) == std::optional<int64_t>(384));
    CHECK(constant_upper_bound((var("f.extent.1") * 64) * 3, f) == std::optional<int64_t>(384));
    // The region itself has no constant bound (g's region is a run-time value).
    CHECK_FALSE(constant_upper_bound(var("f.s0.y.max"), f).has_value());
    CHECK_FALSE(constant_upper_bound(var("g.s0.y.max") - var("g.s0.y.min") + 1, f).has_value());
}

TEST_CASE("constant_upper_bound: loop variables, divisions and remainders", "[constant_bound]") {
    BoundFacts f;
    f.push_loop("y", 0, 16);
    f.push_loop("x", var("n"), 8);
    CHECK(constant_upper_bound(var("y") * 4, f) == std::optional<int64_t>(60));
    CHECK(constant_lower_bound(var("y") * -4, f) == std::optional<int64_t>(-60));
    CHECK(constant_upper_bound((var("y") + 3) / 4, f) == std::optional<int64_t>(4));
    CHECK(constant_upper_bound(var("x") - var("n"), f) == std::optional<int64_t>(7));  // x in [n, n + 7]
    CHECK(constant_upper_bound(var("m") % 5, f) == std::optional<int64_t>(4));
    CHECK(constant_upper_bound(select(var("c") > 0, var("y"), 20), f) == std::optional<int64_t>(20));
    CHECK(constant_upper_bound(Expr(7), f) == std::optional<int64_t>(7));
}

TEST_CASE("constant_upper_bound: no bound without a proof", "[constant_bound]") {
    BoundFacts f;
    f.push_loop("y", 0, var("n"));
    f.push_let("e", max(var("n"), 1) + 1);
    CHECK_FALSE(constant_upper_bound(var("n"), f).has_value());
    CHECK_FALSE(constant_upper_bound(var("y"), f).has_value());       // a loop of n iterations
    CHECK_FALSE(constant_upper_bound(var("e"), f).has_value());       // max(n, 1) grows with n
    CHECK(constant_lower_bound(var("e"), f) == std::optional<int64_t>(2));
    // A product with a factor that may be negative: no bound from the
    // factors' bounds (-5 * -5 passes 1 * 1).
    f.push_let("a", min(var("n"), 1));
    CHECK_FALSE(constant_upper_bound(var("a") * var("a"), f).has_value());
    CHECK_FALSE(constant_upper_bound(var("a") * var("y"), f).has_value());
    // The value of an unknown call or load.
    CHECK_FALSE(constant_upper_bound(Call::make(Int(32), "f", {Expr(0)}, Call::Func), f).has_value());
}

namespace {

// Random expressions over x in [-4, 4], y in [0, 7] (loops) and w = a
// random expression of x and y (a let), each bounded at most by its value
// at every point of the loops.
int check_random_constant_bounds(uint32_t seed, int count) {
    kiln_test::RandomExprs gen(seed, {"x", "y", "w"});
    kiln_test::RandomExprs let_gen(seed + 1, {"x", "y"});
    int violations = 0, bounded = 0;
    for (int k = 0; k < count && violations < 5; k++) {
        Expr w = let_gen.gen_int(let_gen.pick(1, 3));
        Expr e = gen.gen_int(gen.pick(1, 4));
        BoundFacts f;
        f.push_loop("x", -4, 9);
        f.push_loop("y", 0, 8);
        f.push_let("w", w);
        std::optional<int64_t> hi = constant_upper_bound(e, f), lo = constant_lower_bound(e, f);
        bounded += hi.has_value() + lo.has_value();
        for (int x = -4; x <= 4 && violations < 5; x++) {
            for (int y = 0; y <= 7; y++) {
                kiln_test::Interpreter in;
                in.env["x"] = x;
                in.env["y"] = y;
                in.env["w"] = in.eval(w);
                int64_t v = in.eval(e);
                if (in.overflow) continue;
                if ((hi && v > *hi) || (lo && v < *lo)) {
                    violations++;
                    FAIL_CHECK(e << " with w = " << w << " is " << v << " at x=" << x << " y=" << y
                                 << ", outside [" << (lo ? std::to_string(*lo) : "-inf") << ", "
                                 << (hi ? std::to_string(*hi) : "+inf") << "]");
                    break;
                }
            }
        }
    }
    if (violations == 0) CHECK(bounded > count);  // most expressions get bounds
    return violations;
}

}  // namespace

TEST_CASE("constant_upper_bound: random expressions never pass their bounds", "[constant_bound][random]") {
    CHECK(check_random_constant_bounds(1234u, 1500) == 0);
}
