// Interval analysis (analysis/Bounds.h): bounds_of_expr_in_scope over each
// kind of expression, box_touched over small loop nests, and a sampled check
// that evaluated expressions lie inside their computed constant intervals.
#include <catch2/catch.hpp>

#include "analysis/Bounds.h"
#include "analysis/Monotonic.h"
#include "ir/IRPrinter.h"
#include "ir/Simplify.h"
#include "unit/ir_helpers.h"

using namespace kiln;
using namespace kiln::internal;
using kiln_test::loop;
using kiln_test::var;

namespace {

Expr call(const std::string &f, std::vector<Expr> args) { return Call::make(Int(32), f, std::move(args), Call::Func); }

std::string str(const Interval &i) {
    return "[" + (i.has_lower() ? to_string(i.min) : std::string("-inf")) + ", " +
           (i.has_upper() ? to_string(i.max) : std::string("+inf")) + "]";
}
std::string str(const Box &b) {
    std::string s;
    for (const auto &i : b) s += str(i);
    return s;
}

// x in [0, 10], y in [-3, 5], n in [a, b] (symbolic), h in (-inf, 7], l in [2, +inf).
Scope test_scope() {
    Scope s;
    s.push("x", Interval(0, 10));
    s.push("y", Interval(-3, 5));
    s.push("n", Interval(var("a"), var("b")));
    s.push("h", Interval(Expr(), 7));
    s.push("l", Interval(2, Expr()));
    return s;
}

std::string bounds(const Expr &e) { return str(bounds_of_expr_in_scope(e, test_scope())); }

const Expr x = var("x"), y = var("y"), n = var("n"), h = var("h"), l = var("l"), q = var("q");

}  // namespace

TEST_CASE("Bounds: arithmetic", "[bounds]") {
    CHECK(bounds(x + 1) == "[1, 11]");
    CHECK(bounds(x - y) == "[-5, 13]");
    CHECK(bounds(x * 2) == "[0, 20]");
    CHECK(bounds(x * -2) == "[-20, 0]");
    CHECK(bounds(x * y) == "[-30, 50]");
    CHECK(bounds(y * y) == "[-15, 25]");  // each operand over its own interval
    CHECK(bounds((n + 1) * 2) == "[((a * 2) + 2), ((b * 2) + 2)]");
    CHECK(bounds(n - x) == "[(a - 10), b]");
    CHECK(bounds(q) == "[q, q]");  // a variable outside the scope is a point
    CHECK(bounds(q + x) == "[q, (q + 10)]");
    CHECK(bounds(Expr(3)) == "[3, 3]");
    SECTION("half-bounded intervals keep the bounded side") {
        CHECK(bounds(h + 1) == "[-inf, 8]");
        CHECK(bounds(h * -1) == "[-7, +inf]");
        CHECK(bounds(l * 3) == "[6, +inf]");
        CHECK(bounds(h - l) == "[-inf, 5]");
        CHECK(bounds(h + l) == "[-inf, +inf]");
        CHECK(bounds(h * y) == "[-inf, +inf]");
    }
    SECTION("a let is ranged over its value") {
        CHECK(bounds(Let::make("t", x + 1, var("t") * 2)) == "[2, 22]");
    }
}

TEST_CASE("Bounds: min, max and clamp", "[bounds]") {
    CHECK(bounds(min(x, y)) == "[-3, 5]");
    CHECK(bounds(max(x, y)) == "[0, 10]");
    CHECK(bounds(min(x, h)) == "[-inf, 7]");
    CHECK(bounds(max(h, x)) == "[0, 10]");
    CHECK(bounds(min(h, l)) == "[-inf, 7]");
    CHECK(bounds(max(h, l)) == "[2, +inf]");
    CHECK(bounds(clamp(h, 0, 99)) == "[0, 7]");
    CHECK(bounds(clamp(x * 20, 0, 99)) == "[0, 99]");
    CHECK(bounds(clamp(n, 0, 99)) == "[max(min(a, 99), 0), max(min(b, 99), 0)]");
    CHECK(bounds(clamp(var("u"), 0, 99)) == "[max(min(u, 99), 0), max(min(u, 99), 0)]");
    // A clamp bounds an otherwise unbounded (loaded) coordinate.
    CHECK(bounds(clamp(Load::make(Int(32), "idx", x), 0, 255)) == "[0, 255]");
}

// A min (max) in a sum whose other terms move with the same variable: they
// are bounded together, inside the min. A tile of 5 at x*5 clamped to the
// end q of its loop is at most 5 wide for every x, where ranging x in each
// term apart gives q - 0 + 4 - 0 + 1.
TEST_CASE("Bounds: a min in a sum that shares its variable", "[bounds]") {
    CHECK(bounds(min(x * 5 + 4, q) - x * 5 + 1) == "[min((q - 49), 5), min((q + 1), 5)]");
    CHECK(bounds(x * 5 - max(x * 5 - 4, q)) == "[min((0 - q), 4), min(((0 - q) + 50), 4)]");
    // The tile's end rounded up to a vector of 4: at most 8 past the last tile's start.
    CHECK(bounds(((min(x * 5 + 4, q) - x * 5 + 4) / 4) * 4 + x * 5) ==
          "[((min((q - 46), 8) / 4) * 4), (((min((q + 4), 8) / 4) * 4) + 50)]");
    // Nothing shared with the rest: each term over its own range.
    CHECK(bounds(min(x * 5 + 4, q) - y) == "[(min(q, 4) - 5), (min(q, 54) + 3)]");
}

TEST_CASE("Bounds: division and modulo", "[bounds]") {
    SECTION("by constants") {
        CHECK(bounds(x / 3) == "[0, 3]");
        CHECK(bounds(y / 2) == "[-2, 2]");
        CHECK(bounds(x / -2) == "[-5, 0]");
        CHECK(bounds(n / 4) == "[(a / 4), (b / 4)]");
        CHECK(bounds(y % 4) == "[0, 3]");
        CHECK(bounds(q % 4) == "[(q % 4), (q % 4)]");  // a point stays a point
        CHECK(bounds(n % 4) == "[0, 3]");
        CHECK(bounds(h % 8) == "[0, 7]");
        CHECK(bounds(x % -4) == "[0, 3]");  // Euclidean: never negative
    }
    SECTION("by symbolic values") {
        // A symbolic point divisor: a / m is monotonic in a.
        Expr m = var("m");
        CHECK(bounds(x / m) == "[min((0 / m), (10 / m)), max((0 / m), (10 / m))]");
        CHECK(bounds(x % m) == "[0, max((max(max(m, (0 - m)), 0) - 1), 0)]");
        // A divisor ranging over an interval that includes zero: unbounded.
        CHECK(bounds(x / y) == "[-inf, +inf]");
        CHECK(bounds(x / n) == "[-inf, +inf]");
        // A divisor ranging over positive constants: |x / d| <= |x|.
        CHECK(bounds(y / max(x, 1)) == "[-3, 5]");
        // Any bounded divisor bounds the remainder by its magnitude.
        CHECK(bounds(q % y) == "[0, 4]");
        CHECK(bounds(q % h) == "[-inf, +inf]");
    }
}

TEST_CASE("Bounds: select, comparisons, casts, loads and calls", "[bounds]") {
    CHECK(bounds(select(x < 3, x, y * 2)) == "[-6, 10]");
    CHECK(bounds(select(q > 0, h, l)) == "[-inf, +inf]");
    // A condition no ranged variable changes (q is not in the scope) picks a
    // side for every point: the interval keeps it, rather than the hull.
    CHECK(bounds(select(q >= 32, x - 31, x)) == "[select((q >= 32), -31, 0), select((q >= 32), -21, 10)]");
    CHECK(bounds(select(q >= 32, x, y)) == "[select((q >= 32), 0, -3), select((q >= 32), 10, 5)]");
    // An expression of no ranged variable is its own interval, even through
    // a float division or a cast between float and int.
    Expr p = var("p", Float(32));
    CHECK(bounds(Cast::make(Int(32), 1.0f / p)) == "[int32((1.000000f / p)), int32((1.000000f / p))]");
    CHECK(bounds(Cast::make(Float(32), Expr(255))) == "[255.000000f, 255.000000f]");
    Expr v = Cast::make(Float(32), Load::make(Float(32), "in", x));
    CHECK(bounds(max(min(Cast::make(Int(32), v * (1.0f / p)), Cast::make(Int(32), 1.0f / p)), 0)) ==
          "[0, max(int32((1.000000f / p)), 0)]");
    CHECK(bounds(Cast::make(Int(32), max(min(v, Cast::make(Float(32), Expr(255))), Cast::make(Float(32), Expr(0))))) ==
          "[0, 255]");
    // ... but not a load, or a variable with a range.
    CHECK(bounds(Cast::make(Int(32), 1.0f / Cast::make(Float(32), x))) == "[-inf, +inf]");
    CHECK(bounds(x < y) == "[false, true]");
    CHECK(bounds(Ramp::make(x, 2, 4)) == "[0, 16]");
    CHECK(bounds(Ramp::make(x, -1, 4)) == "[-3, 10]");
    CHECK(bounds(Broadcast::make(y, 4)) == "[-3, 5]");

    Expr in8 = Load::make(UInt(8), "in", x);
    CHECK(bounds(in8) == "[(uint8)0, (uint8)255]");
    CHECK(bounds(Cast::make(Int(32), in8)) == "[0, 255]");
    CHECK(bounds(Cast::make(Int(32), in8) * 2 - 1) == "[-1, 509]");
    CHECK(bounds(Cast::make(UInt(16), in8) + Cast::make(UInt(16), in8)) == "[(uint16)0, (uint16)510]");
    CHECK(bounds(Load::make(Int(16), "in", x)) == "[(int16)-32768, (int16)32767]");
    CHECK(bounds(Load::make(Float(32), "in", x)) == "[-inf, +inf]");
    CHECK(bounds(Load::make(Int(32), "in", x)) == "[-inf, +inf]");
    CHECK(bounds(call("f", {x})) == "[-inf, +inf]");
    CHECK(bounds(Call::make(UInt(8), "f", {x}, Call::Func)) == "[(uint8)0, (uint8)255]");

    // Widening casts keep the interval; narrowing ones keep constant ends
    // the new type holds, and give the type's range otherwise.
    CHECK(bounds(Cast::make(Int(64), x)) == "[(int64)0, (int64)10]");
    CHECK(bounds(Cast::make(UInt(8), x)) == "[(uint8)0, (uint8)10]");
    CHECK(bounds(Cast::make(Int(16), x)) == "[(int16)0, (int16)10]");
    CHECK(bounds(Cast::make(UInt(8), x * 100)) == "[(uint8)0, (uint8)255]");
    CHECK(bounds(Cast::make(Float(32), x)) == "[-inf, +inf]");  // int32 -> float32 rounds
    CHECK(bounds(Cast::make(Float(32), Cast::make(Int(16), y))) == "[-3.000000f, 5.000000f]");
    CHECK(bounds(Cast::make(Float(32), Cast::make(Int(16), y * 100000))) == "[-32768.000000f, 32767.000000f]");
    CHECK(bounds(Cast::make(Int(32), var("f", Float(32)))) == "[int32(f), int32(f)]");
}

// Regression test (was a bug, now fixed): interval arithmetic on narrow unsigned types ignores wrap-around. The
// endpoints are folded in uint8, so 0 - 255 wraps to 1 and 255 + 255 to 254,
// giving intervals that exclude reachable values (a - a == 0, 255 + 0 == 255)
// or are inverted ([4, 3]). Halide returns the type's range when the
// operation may overflow in a narrow type.
TEST_CASE("Bounds: uint8 arithmetic that may wrap", "[bounds][regression]") {
    Expr a = Load::make(UInt(8), "in", x);
    auto contains = [](const Interval &i, int64_t v) {
        const int64_t *lo = as_const_int(i.min), *hi = as_const_int(i.max);
        return lo && hi && *lo <= v && v <= *hi;
    };
    CHECK(contains(bounds_of_expr_in_scope(Sub::make(a, a), Scope()), 0));    // got [1, 255]
    CHECK(contains(bounds_of_expr_in_scope(Add::make(a, a), Scope()), 255));  // got [0, 254]
    CHECK(contains(bounds_of_expr_in_scope(Sub::make(UIntImm::make(UInt(8), 3), a), Scope()), 3));  // got [4, 3]
}

TEST_CASE("box_touched: reads and writes of a loop nest", "[bounds][box]") {
    // for (y, 0, 4) { g(y) = f(y - 1) + f(y + 1) }   (Bounds.h's example)
    Stmt s = loop("y", 0, 4, Provide::make("g", call("f", {y - 1}) + call("f", {y + 1}), {y}));
    CHECK(str(box_touched(s, "f", true, false)) == "[-1, 4]");
    CHECK(str(box_touched(s, "g", false, true)) == "[0, 3]");
    bool found = true;
    CHECK(box_touched(s, "g", true, false, &found).empty());  // g is never read
    CHECK_FALSE(found);
    box_touched(s, "f", false, true, &found);  // nor f written
    CHECK_FALSE(found);
    box_touched(s, "f", true, true, &found);
    CHECK(found);

    SECTION("a loop guarded on both sides: its ends, or one point when it is outside") {
        // A compute_with member in the fused loop yc (lowering, ComputeWith):
        //   for (yc, lo, e) { if (yc >= lo && yc <= hi) { g(yc) = ... } }
        // Ranged over the loop, the rows written start at lo itself, as
        // sliding_window must prove to slide g (camera_pipe's g_r and g_b);
        // kept as the point clamp(yc, lo, hi), they started at min(lo, hi).
        Expr yc = var("yc"), lo = var("lo"), hi = var("hi");
        Stmt body = IfThenElse::make(And::make(GE::make(yc, lo), LE::make(yc, hi)),
                                     Provide::make("g", call("f", {yc}), {yc}));
        CHECK(str(box_touched(loop("yc", lo, var("e"), body), "g", false, true)) ==
              "[lo, min(((e + lo) - 1), hi)]");
        // The loop outside the statement: one point (a Func computed inside it is one row).
        CHECK(str(box_touched(body, "f", true, false)) == "[min(max(yc, lo), hi), min(max(yc, lo), hi)]");
    }
    SECTION("two dimensions, symbolic loop bounds, clamped coordinates") {
        Expr i = var("i"), j = var("j");
        Stmt t = loop("j", 0, 3,
                      loop("i", var("a"), var("e"), Provide::make("g", call("f", {i * 2, clamp(i + j, 0, 5)}), {i, j})));
        CHECK(str(box_touched(t, "f", true, false)) ==
              "[(a * 2), (((a * 2) + (e * 2)) - 2)][max(min(a, 5), 0), max(min(((a + e) + 1), 5), 0)]");
        CHECK(str(box_touched(t, "g", false, true)) == "[a, ((a + e) - 1)][0, 2]");
    }
    SECTION("let statements are ranged over their values") {
        // for (yo, 0, 3) for (yi, 0, 4) { let yy = yo*4 + yi; g(yy) = f(yy, x) }
        Expr yo = var("yo"), yi = var("yi"), yy = var("yy");
        Stmt t = loop("yo", 0, 3,
                      loop("yi", 0, 4, LetStmt::make("yy", yo * 4 + yi, Provide::make("g", call("f", {yy, x}), {yy}))));
        CHECK(str(box_touched(t, "f", true, false)) == "[0, 11][x, x]");
    }
    SECTION("an outer scope ranges the free variables") {
        Scope outer;
        outer.push("y0", Interval(10, 20));
        Stmt t = loop("i", var("y0"), 2, Evaluate::make(call("f", {var("i")})));
        CHECK(str(box_touched(t, "f", true, false, nullptr, outer)) == "[10, 21]");
        CHECK(str(box_touched(t, "f", true, false)) == "[y0, (y0 + 1)]");
    }
    SECTION("a data-dependent coordinate is unbounded and described") {
        Stmt t = loop("i", 0, 10, Evaluate::make(call("f", {Load::make(Int(32), "idx", var("i"))})));
        CHECK(str(box_touched(t, "f", true, false)) == "[-inf, +inf]");
        CHECK(describe_unbounded_access(t, "f") == "f(idx[i]) (argument 0: idx[i])");
        CHECK(describe_unbounded_access(s, "f").empty());
    }
}

TEST_CASE("box_touched: an if guard narrows the box", "[bounds][box]") {
    Expr yo = var("yo"), yi = var("yi"), yy = var("yy");
    SECTION("a GuardWithIf tail: if (yy <= 9) in a loop nest covering [0, 11]") {
        Stmt t = loop("yo", 0, 3,
                      loop("yi", 0, 4,
                           LetStmt::make("yy", yo * 4 + yi,
                                         IfThenElse::make(yy <= 9, Provide::make("g", call("f", {yy + 1}), {yy})))));
        CHECK(str(box_touched(t, "g", false, true)) == "[0, 9]");
        CHECK(str(box_touched(t, "f", true, false)) == "[1, 10]");
    }
    SECTION("lower and upper bounds from a conjunction; the else branch is not narrowed") {
        Expr i = var("i");
        Stmt t = loop("i", 0, 10,
                      IfThenElse::make(i < 4 && i > 1, Evaluate::make(call("f", {i})),
                                       Evaluate::make(call("f", {i + 100}))));
        CHECK(str(box_touched(t, "f", true, false)) == "[2, 109]");
        Stmt then_only = loop("i", 0, 10, IfThenElse::make(i >= 7, Evaluate::make(call("f", {i}))));
        CHECK(str(box_touched(then_only, "f", true, false)) == "[7, 9]");
    }
    SECTION("a symbolic guard narrows a symbolic loop") {
        Expr i = var("i");
        Stmt t = loop("i", 0, var("e"), IfThenElse::make(i <= var("m"), Evaluate::make(call("f", {i}))));
        CHECK(str(box_touched(t, "f", true, false)) == "[0, min((e - 1), m)]");
    }
}

TEST_CASE("box_touched: a let whose lets cancel is one value, not their ranges' difference", "[bounds][box][regression]") {
    // A wrapper computed per panel xo of 32 columns (shifted inwards at the
    // right edge n), its loop split by 16 with the last vector shifted in:
    //   for (xo, 0, 4) { let w.min = min(xo*32, n - 32); let w.max = min(xo*32, n - 32) + 31
    //     let w.ext = w.max - w.min + 1
    //     for (u, 0, (w.ext + 15)/16) for (v, 0, 16) { let i = min(u*16, w.ext - 16) + v + w.min; g(i) = f(i) } }
    // w.ext is 32 for every xo; ranged as [w.max.min - w.min.max + 1, ...]
    // it reached n - 64 below w.min, and f's box with it (the GEMM's packed B
    // read over [-464, 511] for n = 512).
    Expr xo = var("xo"), u = var("u"), v = var("v"), n = var("n");
    Expr wmin = var("w.min"), wmax = var("w.max"), wext = var("w.ext"), i = var("i");
    Stmt body = LetStmt::make("i", min(u * 16, wext - 16) + v + wmin, Provide::make("g", call("f", {i}), {i}));
    Stmt t = loop("u", 0, (wext + 15) / 16, loop("v", 0, 16, body));
    t = LetStmt::make("w.ext", wmax - wmin + 1, t);
    t = LetStmt::make("w.max", min(xo * 32, n - 32) + 31, t);
    t = LetStmt::make("w.min", min(xo * 32, n - 32), t);
    t = loop("xo", 0, 4, t);
    CHECK(str(box_touched(t, "f", true, false)) == "[min((n - 32), 0), (min((n - 32), 96) + 31)]");
}

// A tile loop whose last tile is short (GuardWithIf-like ends), computing
// a producer over each tile rounded up to pairs (a RoundUp split): the
// box's end is the last tile's, not the last tile's start plus the first
// (whole) tile's rounded extent.
TEST_CASE("box_touched: an end that moves with the loop is taken at the loop's last iteration", "[bounds][box]") {
    Expr t = var("t"), k = var("k"), j = var("j"), lo = var("lo"), ext = var("ext"), i = var("i");
    Stmt body = LetStmt::make("i", lo + k * 2 + j, Provide::make("g", call("f", {i}), {i}));
    Stmt s = loop("k", 0, (ext + 1) / 2, loop("j", 0, 2, body));
    s = LetStmt::make("ext", min(t * 8 + 7, 9) - lo + 1, s);
    s = LetStmt::make("lo", t * 8, s);
    s = loop("t", 0, 2, s);  // tiles [0, 7] and [8, 9]
    CHECK(str(box_touched(s, "f", true, false)) == "[0, 9]");
    CHECK(str(box_touched(s, "g", false, true)) == "[0, 9]");
}

// A stage split with RoundUp computes past its region (f.s0.x.min..max);
// with its variable `required`, what it reads there is left out.
TEST_CASE("box_touched: a required stage variable is taken over its region only", "[bounds][box]") {
    Expr xo = var("f.s0.x.xo"), xi = var("f.s0.x.xi"), fx = var("f.s0.x");
    Stmt s = LetStmt::make("f.s0.x", xo * 8 + xi, Provide::make("f", call("g", {fx + 1}), {fx}));
    s = loop("f.s0.x.xo", 0, 2, loop("f.s0.x.xi", 0, 8, s));
    s = LetStmt::make("f.s0.x.max", 9, LetStmt::make("f.s0.x.min", 0, s));
    CHECK(str(box_touched(s, "g", true, false)) == "[1, 16]");
    const std::set<std::string> required{"f.s0.x"};
    CHECK(str(box_touched(s, "g", true, false, nullptr, Scope(), nullptr, &required)) == "[1, 10]");
    CHECK(str(box_touched(s, "f", false, true, nullptr, Scope(), nullptr, &required)) == "[0, 9]");
}

// box_touched ranges only the lets that the accesses, the loops' bounds
// and the conditions name, directly or through other lets; each of those
// paths must still reach the box, and a let nothing names must not.
TEST_CASE("box_touched: lets reach the box through arguments, loop bounds and conditions", "[bounds][box]") {
    Expr x = var("x"), a = var("a"), b = var("b"), c = var("c"), d = var("d");
    auto read = [](const Expr &e) { return Evaluate::make(call("f", {e})); };
    // An argument naming a let whose value names another.
    Stmt s = loop("x", 0, 8, LetStmt::make("a", b + x, read(a)));
    CHECK(str(box_touched(LetStmt::make("b", 5, s), "f", true, false)) == "[5, 12]");
    // A loop bound naming a let.
    s = LetStmt::make("c", 10, loop("x", 0, c, read(x)));
    CHECK(str(box_touched(s, "f", true, false)) == "[0, 9]");
    // A condition naming a let.
    s = LetStmt::make("d", 4, loop("x", 0, 16, IfThenElse::make(x < d, read(x))));
    CHECK(str(box_touched(s, "f", true, false)) == "[0, 3]");
    // A let nothing names: unbounded, and no part of the box.
    s = LetStmt::make("u", var("unknown") * 3, loop("x", 0, 8, read(x + 1)));
    CHECK(str(box_touched(s, "f", true, false)) == "[1, 8]");
}

TEST_CASE("Bounds: names ranged to single points are put in and simplified once", "[bounds]") {
    // t is its own point (a loop variable kept as a symbol), a the point x + 1.
    Scope s;
    s.push("t", Interval::point(var("t")));
    s.push("a", Interval::point(x + 1));
    CHECK(str(bounds_of_expr_in_scope(min(var("a") - 1, var("t")), s)) == "[min(x, t), min(x, t)]");
    // One value, so a select of it stays one value (ranging its sides
    // apart gave the union of both).
    CHECK(str(bounds_of_expr_in_scope(select(var("t") > 0, var("t"), 0), s)) ==
          "[select((t > 0), t, 0), select((t > 0), t, 0)]");
    SECTION("a ranged name, a load or a known sum takes the general way") {
        s.push("r", Interval(0, 3));
        CHECK(str(bounds_of_expr_in_scope(var("a") + var("r"), s)) == "[(x + 1), (x + 4)]");
        CHECK(str(bounds_of_expr_in_scope(Load::make(Int(32), "idx", var("t")), s)) == "[-inf, +inf]");
        Scope sums;
        sums.push_sum(var("t") + var("u"), Interval(Expr(), 9));
        CHECK(str(bounds_of_expr_in_scope(var("t") + var("u"), sums)) == "[(t + u), min((t + u), 9)]");
    }
}

TEST_CASE("box_touched: a repeated access counts under each scope it appears in", "[bounds][box]") {
    // The same access text under two loops, two branches of a guard and
    // two lets of one name: each occurrence adds its own range.
    Expr i = var("i"), k = var("k");
    Stmt loops = Block::make(loop("i", 0, 10, Evaluate::make(call("f", {i}) + call("f", {i}))),
                             loop("i", 20, 10, Evaluate::make(call("f", {i}))));
    CHECK(str(box_touched(loops, "f", true, false)) == "[0, 29]");
    Stmt branches = loop("i", 0, 10,
                         IfThenElse::make(i < 4, Evaluate::make(call("f", {i * 2})),
                                          Evaluate::make(call("f", {i * 2}) + call("f", {i * 2 + 1}))));
    CHECK(str(box_touched(branches, "f", true, false)) == "[0, 19]");
    Stmt lets = Block::make(LetStmt::make("k", Expr(3), Evaluate::make(call("f", {k}))),
                            LetStmt::make("k", Expr(8), Evaluate::make(call("f", {k}))));
    CHECK(str(box_touched(lets, "f", true, false)) == "[3, 8]");
    // Taps sharing one dimension's interval: the box is the same as from
    // each tap once.
    Stmt taps = loop("i", 0, 10, Evaluate::make(call("f", {i - 1, k}) + call("f", {i + 1, k}) +
                                                call("f", {i - 1, k + 1}) + call("f", {i + 1, k + 1})));
    CHECK(str(box_touched(taps, "f", true, false)) == "[-1, 10][k, (k + 1)]");
}

TEST_CASE("monotonic: the direction of an expression in a variable", "[bounds][monotonic]") {
    Expr x = var("x"), n = var("n");
    CHECK(monotonic(x * 8 + n, "x") == Monotonic::Increasing);
    CHECK(monotonic(n - x * 3, "x") == Monotonic::Decreasing);
    CHECK(monotonic(min(x * 8 + 7, n) / 2, "x") == Monotonic::Increasing);
    CHECK(monotonic((n - x) / -2, "x") == Monotonic::Increasing);  // Euclidean division by a negative constant
    CHECK(monotonic(max(x, n) - min(n, 0 - x), "x") == Monotonic::Increasing);
    CHECK(monotonic(n * 5, "x") == Monotonic::Constant);
    CHECK(monotonic(x * 8 - min(x * 8, n), "x") == Monotonic::Unknown);
    CHECK(monotonic(x * n, "x") == Monotonic::Unknown);
    CHECK(monotonic(x % 4, "x") == Monotonic::Unknown);
    CHECK(monotonic(select(x < 3, x, 0), "x") == Monotonic::Unknown);
    CHECK(monotonic(select(n < 3, x, x * 2), "x") == Monotonic::Increasing);
}

namespace {

// Bounds of random expressions over x in [-4, 4], y in [0, 7], z in [1, 3]
// must be constants containing the value at every sampled point; returns the
// number of violations, reporting the first few.
int check_random_bounds(kiln_test::RandomExprs::Divisors divisors, uint32_t seed, int count) {
    const std::map<std::string, std::pair<int, int>> ranges{{"x", {-4, 4}}, {"y", {0, 7}}, {"z", {1, 3}}};
    Scope scope;
    for (const auto &r : ranges) scope.push(r.first, Interval(r.second.first, r.second.second));
    kiln_test::RandomExprs gen(seed, {"x", "y", "z"}, divisors);
    int violations = 0, bounded_sides = 0;
    for (int k = 0; k < count && violations < 5; k++) {
        Expr e = gen.gen_int(gen.pick(1, 4));
        Interval iv = bounds_of_expr_in_scope(e, scope);
        const int64_t *lo = iv.has_lower() ? as_const_int(simplify(iv.min)) : nullptr;
        const int64_t *hi = iv.has_upper() ? as_const_int(simplify(iv.max)) : nullptr;
        if (iv.has_lower() && !lo) FAIL_CHECK("non-constant lower bound " << iv.min << " of " << e);
        if (iv.has_upper() && !hi) FAIL_CHECK("non-constant upper bound " << iv.max << " of " << e);
        bounded_sides += (lo != nullptr) + (hi != nullptr);
        for (int p = 0; p < 16; p++) {
            kiln_test::Interpreter in;
            for (const auto &r : ranges) in.env[r.first] = gen.pick(r.second.first, r.second.second);
            int64_t v = in.eval(e);
            if (in.overflow) continue;
            if ((lo && v < *lo) || (hi && v > *hi)) {
                violations++;
                FAIL_CHECK(e << " == " << v << " at x=" << in.env["x"] << " y=" << in.env["y"] << " z="
                             << in.env["z"] << ", outside its bounds " << str(iv));
                break;
            }
        }
    }
    if (violations == 0) CHECK(bounded_sides > count);  // most expressions get bounds
    return violations;
}

}  // namespace

TEST_CASE("Bounds: random expressions lie inside their constant bounds", "[bounds][random]") {
    CHECK(check_random_bounds(kiln_test::RandomExprs::NonNegativeConstOrPositive, 4242u, 2000) == 0);
}

// Regression test (was a bug, now fixed): with negative divisors the endpoints are folded by the simplifier's
// floor division (see the Euclidean bug in test_simplify.cpp), e.g. x in
// [1, 10]: x / -2 gets [-5, -1] although 1 / -2 == 0.
TEST_CASE("Bounds: random expressions with negative divisors", "[bounds][random][regression]") {
    CHECK(check_random_bounds(kiln_test::RandomExprs::AnyExpr, 99u, 2000) == 0);
}

TEST_CASE("Bounds: constant ends past int32 give no bound, not a wrapped one", "[bounds][regression]") {
    // Found by tests/fuzz (seed 3746): the untaken side of a select reaches
    // past int32; folding its ends wrapped them into [0, -2147483642], which
    // excluded the value 0 the expression always has.
    Scope s;
    s.push("x", Interval(-1073741827, -1073741823));
    s.push("y", Interval(18, 23));
    Expr e = Select::make(LT::make(var("y"), Expr(3)), Mul::make(var("x"), Expr(-2)), Expr(0));
    Interval b = bounds_of_expr_in_scope(e, s);
    CHECK(!b.has_upper());
    CHECK(str(b) == "[-inf, +inf]");
    // In range, the same product keeps its exact bounds.
    Scope t;
    t.push("x", Interval(-1000, -10));
    CHECK(str(bounds_of_expr_in_scope(Mul::make(var("x"), Expr(-2)), t)) == "[20, 2000]");
}

// Found by the sanitizer run (UBSan in a kernel of correctness "abs of a
// signed int"): abs(int32) negated in int32, which overflows for INT32_MIN
// although the uint32 result holds 2^31. It now negates in the unsigned
// type; the bounds still see that abs is never negative.
TEST_CASE("Bounds: abs of a signed value, negated in the unsigned type", "[bounds][regression]") {
    CHECK(to_string(abs(y)) == "select((y < 0), ((uint32)0 - uint32(y)), uint32(y))");
    CHECK(bounds(abs(y)) == "[(uint32)0, (uint32)5]");
    CHECK(bounds(abs(n)) == "[uint32(max(max(a, (0 - b)), 0)), uint32(max((0 - a), b))]");
    CHECK(bounds(cast<int>(abs(y - 7))) == "[2, 10]");
}
