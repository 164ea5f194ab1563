// Fuzzing the simplifier and the bounds analysis with the random expression
// generator and reference interpreter of tests/unit/ir_helpers.h:
// - simplify(e) (plain and with variable ranges) evaluates like e at random
//   points, with negative and zero divisors and constants large enough to
//   reach int32 overflow (points where e overflows are skipped: the simplifier
//   assumes index arithmetic does not overflow, IR.h);
// - bounds_of_expr_in_scope(e) contains every value e takes at random points
//   of the ranges (checked where both ends are constants after simplify).
#include <catch2/catch.hpp>

#include "analysis/Bounds.h"
#include "fuzz.h"
#include "ir/Simplify.h"
#include "unit/ir_helpers.h"

using namespace kiln;
using namespace kiln::internal;
using kiln_test::Interpreter;
using kiln_test::RandomExprs;

namespace {

using Ranges = std::map<std::string, std::pair<int64_t, int64_t>>;

// Random ranges for x, y, z: small, or near the int32 edges.
Ranges random_ranges(RandomExprs &g) {
    Ranges r;
    for (const char *v : {"x", "y", "z"}) {
        int64_t lo = g.pick(0, 3) == 0 ? (int64_t)g.pick(-1, 1) * (1 << 30) + g.pick(-8, 8) : g.pick(-20, 20);
        r[v] = {lo, lo + g.pick(0, 12)};
    }
    return r;
}

void sample(RandomExprs &g, const Ranges &r, Interpreter &in) {
    for (const auto &kv : r) in.env[kv.first] = kv.second.first + g.pick(0, (int)(kv.second.second - kv.second.first));
}

}  // namespace

TEST_CASE("fuzz: simplify keeps the value of random int32 expressions", "[fuzz][simplify]") {
    int iters = kiln_fuzz::iterations(3000);
    uint32_t seed = kiln_fuzz::seed(20261122);
    int compared = 0, failures = 0;
    for (int n = 0; n < iters && failures < 5; n++) {
        RandomExprs g(seed + n, {"x", "y", "z"}, n % 2 ? RandomExprs::AnyExpr : RandomExprs::NonNegativeConstOrPositive);
        Ranges ranges = random_ranges(g);
        Expr e = g.gen_int(g.pick(1, 5));
        Expr simplified[2] = {simplify(e), simplify(e, ranges)};
        for (int k = 0; k < 6; k++) {
            Interpreter in;
            sample(g, ranges, in);
            int64_t expected = in.eval(e);
            if (in.overflow) continue;
            for (const Expr &s : simplified) {
                Interpreter out;
                out.env = in.env;
                int64_t got = out.eval(s);
                compared++;
                if (got != expected && !out.overflow) {
                    failures++;
                    FAIL_CHECK("seed " << seed + n << ": at x=" << in.env["x"] << " y=" << in.env["y"] << " z="
                                       << in.env["z"] << ": " << e << " == " << expected << " but simplified " << s
                                       << " == " << got);
                    break;
                }
            }
        }
    }
    CHECK(compared > iters);
    WARN("simplified expressions compared at " << compared << " points");
}

TEST_CASE("fuzz: bounds of random expressions contain every value", "[fuzz][bounds]") {
    // Every point of the (small) ranges is evaluated in 64 bits; an
    // expression that overflows int32 anywhere is skipped (the analysis
    // assumes it does not), otherwise its exact range must lie inside the
    // computed bounds.
    int iters = kiln_fuzz::iterations(3000);
    uint32_t seed = kiln_fuzz::seed(1122);
    int checked = 0, failures = 0;
    for (int n = 0; n < iters && failures < 5; n++) {
        RandomExprs g(seed + n, {"x", "y", "z"}, n % 2 ? RandomExprs::AnyExpr : RandomExprs::NonNegativeConstOrPositive);
        Ranges ranges = random_ranges(g);
        for (auto &kv : ranges) kv.second.second = std::min(kv.second.second, kv.second.first + 5);
        Expr e = g.gen_int(g.pick(1, 5));
        Scope scope;
        for (const auto &kv : ranges) scope.push(kv.first, Interval(Expr((int)kv.second.first), Expr((int)kv.second.second)));
        Interval b = bounds_of_expr_in_scope(e, scope);
        Expr lo_e = b.has_lower() ? simplify(b.min) : Expr(), hi_e = b.has_upper() ? simplify(b.max) : Expr();
        const int64_t *lo = lo_e.defined() ? as_const_int(lo_e) : nullptr;
        const int64_t *hi = hi_e.defined() ? as_const_int(hi_e) : nullptr;
        int64_t vmin = INT64_MAX, vmax = INT64_MIN;
        Interpreter in;
        const auto &rx = ranges["x"], &ry = ranges["y"], &rz = ranges["z"];
        for (int64_t x = rx.first; x <= rx.second; x++)
            for (int64_t y = ry.first; y <= ry.second; y++)
                for (int64_t z = rz.first; z <= rz.second; z++) {
                    in.env = {{"x", x}, {"y", y}, {"z", z}};
                    int64_t v = in.eval(e);
                    vmin = std::min(vmin, v), vmax = std::max(vmax, v);
                }
        if (in.overflow) continue;
        checked++;
        if ((lo && vmin < *lo) || (hi && vmax > *hi)) {
            failures++;
            FAIL_CHECK("seed " << seed + n << ": " << e << " takes [" << vmin << ", " << vmax << "] on x in ["
                               << rx.first << ", " << rx.second << "], y in [" << ry.first << ", " << ry.second
                               << "], z in [" << rz.first << ", " << rz.second << "], outside its bounds ["
                               << (lo_e.defined() ? to_string(lo_e) : "-inf") << ", "
                               << (hi_e.defined() ? to_string(hi_e) : "+inf") << "]");
        }
    }
    CHECK(checked > iters / 2);
    WARN("bounds checked for " << checked << " expressions over their whole domain");
}

TEST_CASE("fuzz: Euclidean division and modulo fold like the interpreter", "[fuzz][simplify]") {
    // Constant operands over the whole int32 range, including INT32_MIN / -1
    // (wraps to INT32_MIN, as the emitted code does) and zero divisors (0).
    int iters = kiln_fuzz::iterations(3000);
    std::mt19937 rng(kiln_fuzz::seed(7));
    const int32_t edges[] = {0, 1, -1, 2, -2, 7, -7, INT32_MAX, INT32_MIN, INT32_MAX - 1, INT32_MIN + 1};
    auto pick = [&]() -> int32_t {
        if (rng() % 2) return edges[rng() % (sizeof(edges) / sizeof(edges[0]))];
        return (int32_t)rng();
    };
    int failures = 0;
    for (int n = 0; n < iters && failures < 5; n++) {
        int32_t a = pick(), b = pick();
        int64_t q = kiln_test::euclid_div(a, b), r = kiln_test::euclid_mod(a, b);
        int32_t want_q = (int32_t)(uint32_t)(uint64_t)q, want_r = (int32_t)r;  // wraps INT32_MIN / -1
        Expr q_expr = simplify(Div::make(Expr(a), Expr(b))), r_expr = simplify(Mod::make(Expr(a), Expr(b)));
        const int64_t *got_q = as_const_int(q_expr), *got_r = as_const_int(r_expr);
        bool ok = got_q && got_r && *got_q == want_q && *got_r == want_r;
        if (!ok) {
            failures++;
            FAIL_CHECK(a << " / " << b << ": expected " << want_q << " rem " << want_r << ", simplify gives "
                         << (got_q ? std::to_string(*got_q) : "?") << " rem " << (got_r ? std::to_string(*got_r) : "?"));
        }
    }
}
