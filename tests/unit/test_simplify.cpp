// The simplifier (ir/Simplify.h): each rule with the exact printed result,
// then a randomized check that simplification preserves the value of int32
// expressions under IR.h's semantics.
#include <catch2/catch.hpp>

#include "ir/IR.h"
#include "ir/IRPrinter.h"
#include "ir/Simplify.h"
#include "ir/SimplifyMemo.h"
#include "ir/Substitute.h"
#include "unit/ir_helpers.h"

using namespace kiln;
using namespace kiln::internal;
using kiln_test::f32;
using kiln_test::u8;
using kiln_test::var;

namespace {

std::string simp(const Expr &e) { return to_string(simplify(e)); }
std::string simp(const Stmt &s) { return to_string(simplify(s)); }
std::string simp(const Expr &e, const std::map<std::string, std::pair<int64_t, int64_t>> &ranges) {
    return to_string(simplify(e, ranges));
}

const Expr x = var("x"), y = var("y"), z = var("z");

}  // namespace

TEST_CASE("Simplify: int32 constant folding of every arithmetic op", "[simplify]") {
    CHECK(simp(Add::make(Expr(7), Expr(-9))) == "-2");
    CHECK(simp(Sub::make(Expr(7), Expr(-9))) == "16");
    CHECK(simp(Mul::make(Expr(-7), Expr(6))) == "-42");
    CHECK(simp(Min::make(Expr(-7), Expr(6))) == "-7");
    CHECK(simp(Max::make(Expr(-7), Expr(6))) == "6");
    // Division rounds toward negative infinity for positive divisors; the
    // remainder is never negative.
    CHECK(simp(Div::make(Expr(7), Expr(2))) == "3");
    CHECK(simp(Mod::make(Expr(7), Expr(2))) == "1");
    CHECK(simp(Div::make(Expr(-7), Expr(2))) == "-4");
    CHECK(simp(Mod::make(Expr(-7), Expr(2))) == "1");
    CHECK(simp(Div::make(Expr(-8), Expr(2))) == "-4");
    CHECK(simp(Mod::make(Expr(-8), Expr(2))) == "0");
    // Division by zero is zero.
    CHECK(simp(Div::make(Expr(7), Expr(0))) == "0");
    CHECK(simp(Mod::make(Expr(7), Expr(0))) == "0");
    CHECK(simp(x / 0) == "0");
    CHECK(simp(x % 0) == "0");
    CHECK(simp(x / 1) == "x");
    CHECK(simp(x % 1) == "0");
    // Overflow wraps (two's complement).
    CHECK(simp(Add::make(Expr(INT32_MAX), Expr(1))) == "-2147483648");
    CHECK(simp(Mul::make(Expr(65536), Expr(65536))) == "0");
    // Nested constant expressions fold completely.
    CHECK(simp((Expr(3) + 4) * 2 - Div::make(Expr(9), Expr(2))) == "10");
}

// Regression test (was a bug, now fixed): the simplifier folds Div and Mod with a negative divisor with floor
// semantics (the remainder takes the divisor's sign), but IR.h defines the
// Euclidean remainder 0 <= a % b < |b| -- and the runtime (kiln_div/kiln_mod)
// computes it. So a constant-folded 7 / -2 differs from the same expression
// evaluated at run time.
TEST_CASE("Simplify: Euclidean division by a negative constant", "[simplify][regression]") {
    CHECK(simp(Div::make(Expr(7), Expr(-2))) == "-3");   // got -4
    CHECK(simp(Mod::make(Expr(7), Expr(-2))) == "1");    // got -1
    CHECK(simp(Div::make(Expr(-7), Expr(-2))) == "4");   // got 3
    CHECK(simp(Mod::make(Expr(-7), Expr(-2))) == "1");   // got -1
}

TEST_CASE("Simplify: uint8 constant folding wraps modulo 256", "[simplify]") {
    CHECK(simp(Add::make(u8(200), u8(100))) == "(uint8)44");
    CHECK(simp(Sub::make(u8(3), u8(5))) == "(uint8)254");
    CHECK(simp(Mul::make(u8(20), u8(20))) == "(uint8)144");
    CHECK(simp(Div::make(u8(200), u8(7))) == "(uint8)28");
    CHECK(simp(Mod::make(u8(200), u8(7))) == "(uint8)4");
    CHECK(simp(Min::make(u8(200), u8(7))) == "(uint8)7");
    CHECK(simp(Max::make(u8(200), u8(7))) == "(uint8)200");
    CHECK(simp(Div::make(u8(5), u8(0))) == "(uint8)0");
    CHECK(simp(Mod::make(u8(5), u8(0))) == "(uint8)0");
    // Comparisons of unsigned constants are unsigned.
    CHECK(simp(GT::make(u8(200), u8(100))) == "true");
    CHECK(simp(LT::make(UIntImm::make(UInt(32), 0xFFFFFFFFu), UIntImm::make(UInt(32), 1))) == "false");
}

TEST_CASE("Simplify: float32 constant folding in float precision", "[simplify]") {
    CHECK(simp(Add::make(f32(1.5), f32(2.25))) == "3.750000f");
    CHECK(simp(Sub::make(f32(1.5), f32(2.25))) == "-0.750000f");
    CHECK(simp(Mul::make(f32(1.5), f32(2))) == "3.000000f");
    CHECK(simp(Div::make(f32(1), f32(4))) == "0.250000f");
    CHECK(simp(Mod::make(f32(-7), f32(2))) == "1.000000f");  // a - b*floor(a/b)
    CHECK(simp(Min::make(f32(-7), f32(2))) == "-7.000000f");
    CHECK(simp(Max::make(f32(-7), f32(2))) == "2.000000f");
    CHECK(simp(Div::make(f32(1), f32(0))) == "inff");
    // 1/3 is computed in float, not double.
    Expr third = simplify(Div::make(f32(1), f32(3)));
    REQUIRE(as_const_float(third));
    CHECK(*as_const_float(third) == (double)(1.0f / 3.0f));
    CHECK(simp(LT::make(f32(1.5), f32(2))) == "true");
    CHECK(simp(EQ::make(f32(1.5), f32(2))) == "false");
    CHECK(simp(Call::make(Float(32), "floor", {f32(2.5)}, Call::PureExtern)) == "2.000000f");
    CHECK(simp(Call::make(Float(32), "ceil", {f32(2.5)}, Call::PureExtern)) == "3.000000f");
    CHECK(simp(Call::make(Float(32), "sqrt", {f32(16)}, Call::PureExtern)) == "4.000000f");
}

TEST_CASE("Simplify: float arithmetic is never reassociated", "[simplify]") {
    Expr f = var("f", Float(32)), g = var("g", Float(32));
    CHECK(simp((f + 1.0f) - f) == "((f + 1.000000f) - f)");
    CHECK(simp(f + 0.0f) == "(f + 0.000000f)");  // -0.0f + 0.0f is +0.0f
    CHECK(simp(f * 1.0f) == "(f * 1.000000f)");
    CHECK(simp(f / g) == "(f / g)");
    CHECK(simp(EQ::make(f, f)) == "(f == f)");  // false for NaN
}

TEST_CASE("Simplify: float division by a constant is multiplication by its reciprocal", "[simplify]") {
    Expr f = var("f", Float(32));
    CHECK(simp(f / 4.0f) == "(f * 0.250000f)");
    CHECK(simp(f / 3.0f) == "(f * 0.333333f)");
    Expr r = simplify(f / 3.0f);
    REQUIRE(r.as<Mul>());
    CHECK(*as_const_float(r.as<Mul>()->b) == (double)(1.0f / 3.0f));
    CHECK(simp((f + 1.0f) / 2.0f) == "((f + 1.000000f) * 0.500000f)");
}

TEST_CASE("Simplify: int sums are put in canonical linear form", "[simplify]") {
    CHECK(simp((x + 3) - (x - 1)) == "4");
    CHECK(simp(x * 2 + x) == "(x * 3)");
    CHECK(simp(x + y - x) == "y");
    CHECK(simp((x + 1) * 4 - x * 4) == "4");
    CHECK(simp(x - x) == "0");
    CHECK(simp(3 + x + 2) == "(x + 5)");
    CHECK(simp(y + x) == "(x + y)");  // terms sorted
    CHECK(simp(x * 2 + y * 3 - x * 2) == "(y * 3)");
    CHECK(simp(x - y * 2) == "(x - (y * 2))");
    CHECK(simp(0 - x) == "(0 - x)");
    CHECK(simp(1 - x) == "((0 - x) + 1)");
    CHECK(simp((x + y) * 2 - y) == "((x * 2) + y)");
    CHECK(simp(x * 0) == "0");
    CHECK(simp(0 * x) == "0");
    CHECK(simp(1 * x) == "x");
    // A non-constant product is an atom of the sum.
    CHECK(simp(x * y + 1 - y * x) == "(((x * y) - (y * x)) + 1)");
    CHECK(simp(x * y + 1 - x * y) == "1");
}

TEST_CASE("Simplify: narrow int types are not reassociated", "[simplify]") {
    // Only signed types of 32 bits or more assume no overflow.
    Expr a = var("a", UInt(8));
    CHECK(simp(Add::make(Add::make(a, u8(3)), u8(4))) == "((a + (uint8)3) + (uint8)4)");
    CHECK(simp(Add::make(a, u8(0))) == "a");
    CHECK(simp(Sub::make(a, a)) == "(uint8)0");
}

TEST_CASE("Simplify: min and max", "[simplify]") {
    SECTION("operands with a constant difference") {
        CHECK(simp(min(y + 1, y - 1)) == "(y - 1)");
        CHECK(simp(max(y + 1, y - 1)) == "(y + 1)");
        CHECK(simp(min(x + 2, x)) == "x");
        CHECK(simp(max(x, x + 2)) == "(x + 2)");
        CHECK(simp(min(x, x)) == "x");
        CHECK(simp(min(x * 2 + y, y + x + x + 1)) == "((x * 2) + y)");
    }
    SECTION("constants") {
        CHECK(simp(min(Expr(3), Expr(4))) == "3");
        CHECK(simp(min(3, x)) == "min(x, 3)");  // constant last
        CHECK(simp(min(min(x, 5), 3)) == "min(x, 3)");
        CHECK(simp(max(max(x, 5), 3)) == "max(x, 5)");
        CHECK(simp(min(x, y)) == "min(x, y)");
    }
    SECTION("absorption") {
        CHECK(simp(min(x, min(x, y))) == "min(x, y)");
        CHECK(simp(max(max(x, y), y)) == "max(x, y)");
        CHECK(simp(min(min(y, x), x)) == "min(y, x)");
    }
    SECTION("chains keep only the operands that can win") {
        // The union of the regions stencil taps read (bounds inference).
        CHECK(simp(min(min(z, y - 1), y)) == "min(z, (y - 1))");
        CHECK(simp(min(min(y, z), y - 1)) == "min(z, (y - 1))");
        CHECK(simp(max(max(y + 1, z), y)) == "max((y + 1), z)");
        CHECK(simp(max(y - 1, max(z, y + 1))) == "max(z, (y + 1))");
        CHECK(simp(min(min(min(z, y + 1), x), y - 1)) == "min(min(z, x), (y - 1))");
        // No constant bound between the operands: unchanged.
        CHECK(simp(min(min(z, y), x)) == "min(min(z, y), x)");
    }
    SECTION("clamps with a common bound merge") {
        CHECK(simp(min(max(x, 0), max(y, 0))) == "max(min(x, y), 0)");
        CHECK(simp(max(max(x, 0), max(y, 0))) == "max(max(x, y), 0)");
        CHECK(simp(max(min(x, 9), min(y, 9))) == "min(max(x, y), 9)");
        CHECK(simp(min(min(x, 9), min(y, 9))) == "min(min(x, y), 9)");
        CHECK(simp(min(clamp(x, 0, 9), clamp(y, 0, 9))) == "max(min(min(x, y), 9), 0)");
    }
    SECTION("decided by one end of the difference") {
        // A ShiftInwards stage's region clamped at its min (bounds inference).
        Expr m = var("m");
        CHECK(simp(max(min(y - 8, 0) + m, m)) == "m");
        CHECK(simp(min(min(y - 8, 0) + m, m)) == "(m + min((y - 8), 0))");
        CHECK(simp(min(m - max(y, 2), m)) == "(m - max(y, 2))");
        CHECK(simp(max(max(y, 0) * -2 + m, m + 1)) == "(m + 1)");
        // An end that does not decide it: unchanged.
        CHECK(simp(max(min(y - 8, 1) + m, m)) == "max((m + min((y - 8), 1)), m)");
        CHECK(simp(max(max(y, 0) + m, m)) == "(m + max(y, 0))");
        CHECK(simp(min(max(y - 8, 0) + m, m)) == "m");
    }
    SECTION("decided by variable ranges") {
        std::map<std::string, std::pair<int64_t, int64_t>> r{{"x", {0, 7}}};
        CHECK(simp(min(x, 10), r) == "x");
        CHECK(simp(max(x, -1), r) == "x");
        CHECK(simp(max(x, 3), r) == "max(x, 3)");
        CHECK(simp(clamp(x, 0, 7), r) == "x");
    }
    SECTION("floats only fold constants and equal operands") {
        Expr f = var("f", Float(32));
        CHECK(simp(min(f, f)) == "f");
        CHECK(simp(min(f + 1.0f, f)) == "min((f + 1.000000f), f)");
    }
}

TEST_CASE("Simplify: division and modulo by a positive constant", "[simplify]") {
    CHECK(simp((x * 8 + 3) / 8) == "x");
    CHECK(simp((x * 8 + 3) % 8) == "3");
    CHECK(simp((x * 8 - 1) / 8) == "(x - 1)");
    CHECK(simp((x * 8 - 1) % 8) == "7");
    CHECK(simp((x * 8 + y) / 8) == "((y / 8) + x)");
    CHECK(simp((x * 8 + y) % 8) == "(y % 8)");
    CHECK(simp((x * 6 + 4) / 2) == "((x * 3) + 2)");
    CHECK(simp((x + 16) % 8) == "(x % 8)");
    CHECK(simp(x * 4 % 2) == "0");
    CHECK(simp((x / 2) / 4) == "(x / 8)");
    CHECK(simp((x + 9) / 8) == "((x + 9) / 8)");
    SECTION("with ranges, the remainder is bounded") {
        std::map<std::string, std::pair<int64_t, int64_t>> r{{"x", {0, 7}}, {"y", {0, 3}}};
        CHECK(simp(x / 8, r) == "0");
        CHECK(simp(x % 8, r) == "x");
        CHECK(simp((y * 8 + x) / 8, r) == "y");
        CHECK(simp((y * 8 + x) % 8, r) == "x");
        CHECK(simp((x + 8) / 8, r) == "1");
        CHECK(simp(x % 4, r) == "(x % 4)");
    }
}

// A tile loop whose min is a let known even or odd (align_bounds(x, 2) of
// the output, then a stage starting one column before it) keeps that
// parity in every tile: the residues of lets flow through + - *, a
// division by a divisor of the modulus, min, max and select.
TEST_CASE("Simplify: modulo through the residues of lets", "[simplify]") {
    Expr a = var("a"), b = var("b"), i = var("i"), n = var("n");
    auto in_lets = [&](const Expr &e) {  // let a = (n / 2) * 2 - 1, let b = a + 64 * i: o[0] = e, the value stored
        std::string s = simp(LetStmt::make("a", (n / 2) * 2 - 1, LetStmt::make("b", a + i * 64, Store::make("o", e, 0))));
        return s.substr(s.find("o[0] = ") + 7);
    };
    CHECK(in_lets(b % 2) == "1\n");
    CHECK(in_lets((b + 1) % 2) == "0\n");
    CHECK(in_lets(select((b + 1) % 2 == 0, x, y)) == "x\n");
    CHECK(in_lets((min(b, a + 6) + y * 4) % 2) == "1\n");       // both sides odd
    CHECK(in_lets(max(b, a + 3) % 2) == "(max(b, (a + 3)) % 2)\n");  // odd or even: unknown
    CHECK(in_lets((b * 3 + 1) % 2) == "0\n");
    CHECK(in_lets(((b + 1) / 2) % 2) == "(((b + 1) / 2) % 2)\n");    // 2 | (b + 1) says nothing of its half
    CHECK(in_lets(((b + 1) / 2) % 32) == "(((b + 1) / 2) % 32)\n");
    CHECK(in_lets((((b + 1) * 4) / 2) % 4) == "0\n");            // 8 | (b + 1) * 4: its half is 0 mod 4
    CHECK(in_lets(b % 4) == "(b % 4)\n");                         // only the parity is known
    // The same in an expression let, and nothing known without a let.
    CHECK(simp(Let::make("a", (n / 4) * 4 + 2, (a + x * 2) % 2)) == "0");
    CHECK(simp(((n / 4) * 4 + 2 + x * 2) % 2) == "0");  // the linear rule alone
    CHECK(simp((a + x * 2) % 2) == "(a % 2)");
}

// (a / c) * c rounds a down to a multiple of c; with a's residue modulo c
// known it is a minus that residue. align_bounds(y, 4) of a Func computed
// per tile of an output aligned the same way: its region's start
// ((s - 1) / 4) * 4 and end folded, the extent a constant.
TEST_CASE("Simplify: rounding down to a multiple of c when the residue is known", "[simplify]") {
    Expr n = var("n"), m = var("m"), a = var("a");
    CHECK(simp(Let::make("a", (n / 4) * 4 + 2, ((a + 3) / 4) * 4 - a)) == "2");  // a + 3 is 1 mod 4
    CHECK(simp(Let::make("a", (n / 4) * 4 + 2, ((a + 1) / 2) * 2 - a)) == "0");
    CHECK(simp(((n / 8) * 8 + m * 4 + 1) / 2 * 2 - m * 4 - (n / 8) * 8) == "0");  // no let: a multiple plus 1
    CHECK(simp((x / 4) * 4) == "((x / 4) * 4)");  // unknown residue: unchanged
    CHECK(simp(((x * 2 + 1) / 4) * 4) == "((((x * 2) + 1) / 4) * 4)");  // only the parity is known
    // A tile's start s = min(y * 16, e - 16) with e a multiple of 4: s and s + 3 round down to s.
    Expr e = ((n + m + 3) / 4) * 4 - (m / 4) * 4;
    Expr s = min(y * 16, e - 16);
    CHECK(simp((s / 4) * 4 - ((s + 3) / 4) * 4 + 24) == "24");
    CHECK(simp(Let::make("a", s, ((a + 7) / 4) * 4 - a)) == "4");
}

// The region of an upsampled level reads its coarser level at x / 2 and
// (x + 1) / 2: both ends of the union collapse to one term.
TEST_CASE("Simplify: min and max of divisions or products by the same positive constant", "[simplify]") {
    CHECK(simp(min(x / 2, (x + 1) / 2)) == "(x / 2)");
    CHECK(simp(max(x / 2, (x + 1) / 2)) == "((x + 1) / 2)");
    CHECK(simp(min(x / 4, y / 4)) == "(min(x, y) / 4)");
    CHECK(simp(max(x * 3, (x - 2) * 3)) == "(x * 3)");
    CHECK(simp(min(x / -2, (x + 1) / -2)) == "min((x / -2), ((x + 1) / -2))");  // not monotonic that way
    CHECK(simp(min(x * -3, y * -3)) == "min((x * -3), (y * -3))");
    // The same values as the unsimplified expressions, rounding down included.
    for (int xv = -9; xv <= 9; xv++) {
        for (int yv = -9; yv <= 9; yv++) {
            std::map<std::string, Expr> at{{"x", Expr(xv)}, {"y", Expr(yv)}};
            for (const Expr &e : {min(x / 3, (y - 1) / 3), max(x / 3, y / 3), min(x * 5, y * 5), max(x * 2, (y + 4) * 2)}) {
                INFO(e << " at x = " << xv << ", y = " << yv);
                CHECK(simp(substitute(at, e)) == simp(substitute(at, simplify(e))));
            }
        }
    }
}

TEST_CASE("Simplify: comparisons decided by bounds", "[simplify]") {
    CHECK(simp(Expr(3) < Expr(4)) == "true");
    CHECK(simp(Expr(3) == Expr(4)) == "false");
    CHECK(simp(x < x + 1) == "true");
    CHECK(simp(x + 1 <= x) == "false");
    CHECK(simp(x == x) == "true");
    CHECK(simp(x != x + 2) == "true");
    CHECK(simp(x * 2 + 1 == x * 2) == "false");
    CHECK(simp(x < y) == "(x < y)");

    std::map<std::string, std::pair<int64_t, int64_t>> r{{"x", {0, 7}}, {"y", {0, 3}}};
    CHECK(simp(x < 8, r) == "true");
    CHECK(simp(x < 7, r) == "(x < 7)");
    CHECK(simp(x >= 0, r) == "true");
    CHECK(simp(x > 7, r) == "false");
    CHECK(simp(x == 9, r) == "false");
    CHECK(simp(x != -1, r) == "true");
    CHECK(simp(x + y <= 10, r) == "true");
    CHECK(simp(x + y <= 9, r) == "((x + y) <= 9)");  // undecided: stays
    CHECK(simp(x - y >= -3, r) == "true");
    CHECK(simp(x * 2 < 15, r) == "true");
    CHECK(simp(select(y < 4, x, 100) < 8, r) == "true");
    // uint8 values lie in [0, 255].
    Expr a = Load::make(UInt(8), "in", x);
    CHECK(simp(LE::make(a, u8(255))) == "true");
    CHECK(simp(GE::make(a, u8(0))) == "true");
    CHECK(can_prove(x + 1 > x));
    CHECK_FALSE(can_prove(x > y));
}

TEST_CASE("Simplify: constant bounds past int64 decide nothing", "[simplify][regression]") {
    // Found by UBSan in the fuzz tier: interval ends were added and
    // multiplied in int64 without a check, which is undefined behaviour and
    // in practice wraps into bounds that decide comparisons wrongly.
    const int64_t big = (int64_t)1 << 40;
    std::map<std::string, std::pair<int64_t, int64_t>> r{{"x", {big, big}}, {"y", {big, big}}, {"z", {big, big}}};
    CHECK(simp(x * y * z > 0, r) == "(((x * y) * z) > 0)");
    std::map<std::string, std::pair<int64_t, int64_t>> e{{"x", {INT64_MAX - 1, INT64_MAX}}, {"y", {1, 2}}};
    CHECK(simp(x + y > 0, e) == "((x + y) > 0)");
    CHECK(simp(0 - x - y < 0, e) == "(((0 - x) - y) < 0)");
}

TEST_CASE("Simplify: select, and, or, not", "[simplify]") {
    Expr c = x < y;
    CHECK(simp(select(Expr(true), x, y)) == "x");
    CHECK(simp(select(Expr(false), x, y)) == "y");
    CHECK(simp(select(x < x + 1, x, y)) == "x");
    CHECK(simp(select(c, z, z)) == "z");
    CHECK(simp(select(c, x + 0, y)) == "select((x < y), x, y)");
    CHECK(simp(Expr(true) && c) == "(x < y)");
    CHECK(simp(c && Expr(true)) == "(x < y)");
    CHECK(simp(c && Expr(false)) == "false");
    CHECK(simp(Expr(false) && c) == "false");
    CHECK(simp(c || Expr(true)) == "true");
    CHECK(simp(Expr(false) || c) == "(x < y)");
    CHECK(simp(c || Expr(false)) == "(x < y)");
    CHECK(simp(c && c) == "(x < y)");
    CHECK(simp(c || c) == "(x < y)");
    CHECK(simp(!Expr(true)) == "false");
    CHECK(simp(!Expr(false)) == "true");
    CHECK(simp(!!c) == "(x < y)");
    CHECK(simp(!c) == "!(x < y)");
    CHECK(simp(!(x < x + 1)) == "false");
    CHECK(simp((x < 3) && (x == x)) == "(x < 3)");
}

TEST_CASE("Simplify: casts of constants", "[simplify]") {
    CHECK(simp(Cast::make(Int(32), f32(2.7))) == "2");
    CHECK(simp(Cast::make(Int(32), f32(-2.7))) == "-2");  // truncation toward zero
    CHECK(simp(Cast::make(UInt(8), Expr(300))) == "(uint8)44");
    CHECK(simp(Cast::make(Int(8), Expr(200))) == "(int8)-56");
    CHECK(simp(Cast::make(Float(32), Expr(3))) == "3.000000f");
    CHECK(simp(Cast::make(Float(32), UIntImm::make(UInt(32), 0xFFFFFFFFu))) == "4294967296.000000f");
    CHECK(simp(Cast::make(Int(32), Cast::make(Int(64), x))) == "x");
    CHECK(simp(Cast::make(Int(32), x)) == "x");
    CHECK(simp(Cast::make(Int(16), Cast::make(Int(8), x))) == "int16(int8(x))");  // the inner cast wraps
}

TEST_CASE("Simplify: lets", "[simplify]") {
    Expr t = var("t");
    CHECK(simp(Let::make("t", 3, t * x)) == "(x * 3)");          // constants are substituted
    CHECK(simp(Let::make("t", y, t * 2)) == "(y * 2)");          // and variables
    CHECK(simp(Let::make("t", x + y, t * 2)) == "(let t = (x + y) in (t * 2))");
    CHECK(simp(Let::make("t", x + y, x)) == "x");                // unused lets vanish
    CHECK(simp(LetStmt::make("t", 4, Store::make("o", t, x))) == "o[x] = 4\n");
    // Non-trivial lets stay (their value is not substituted into the body).
    // Differences cancel through the let's value.
    CHECK(simp(LetStmt::make("t", x + 1, Store::make("o", t - x, t))) == "let t = (x + 1)\no[t] = 1\n");
    // A let that is a min (max) chain absorbs its operands named beside it.
    Expr m = var("m");
    CHECK(simp(LetStmt::make("m", min(x, y), Store::make("o", min(min(m, x), y), 0))) ==
          "let m = min(x, y)\no[0] = m\n");
    CHECK(simp(LetStmt::make("m", max(x, y), Store::make("o", max(y, m), 0))) == "let m = max(x, y)\no[0] = m\n");
    CHECK(simp(LetStmt::make("m", min(x, y), Store::make("o", min(min(m, x), z), 0))) ==
          "let m = min(x, y)\no[0] = min(m, z)\n");
    CHECK(simp(LetStmt::make("m", min(x, y), Store::make("o", max(m, x), 0))) ==
          "let m = min(x, y)\no[0] = max(m, x)\n");  // a max does not drop the min's operands
    // The range of a bounded let value is known in its body.
    Stmt s = For::make("i", 0, 8, ForType::Serial,
                       LetStmt::make("t", var("i") + 1, Store::make("o", select(t <= 8, x, y), t)));
    CHECK(simp(s) == "for (i, 0, 8) {\n let t = (i + 1)\n o[t] = x\n}\n");
}

TEST_CASE("Simplify: a trivial let's name is put in where it is met, until bound again", "[simplify]") {
    Expr t = var("t");
    // Bound again by a let of another value: the inner t is that value.
    Stmt inner = LetStmt::make("t", x + y, Store::make("o", t, 1));
    CHECK(simp(LetStmt::make("t", 4, Block::make(Store::make("o", t, 0), inner))) ==
          "o[0] = 4\nlet t = (x + y)\no[1] = t\n");
    // ... and by a loop: the loop's variable, not the let's value.
    Stmt loop = For::make("t", 0, x, ForType::Serial, Store::make("o", t, t));
    CHECK(simp(LetStmt::make("t", y, Block::make(Store::make("o", t, 0), loop))) ==
          "o[0] = y\nfor (t, 0, x) {\n o[t] = t\n}\n");
    // A chain of trivial lets resolves to the first value, in an
    // assertion's message too (whose values are not simplified).
    Stmt check = AssertStmt::make(x < t, -1, {StringImm::make("t is "), var("u") + 0});
    CHECK(simp(LetStmt::make("t", 7, LetStmt::make("u", t, check))) ==
          "assert((x < 7), -1, \"t is \", (7 + 0))\n");
}

TEST_CASE("Simplify: statements", "[simplify]") {
    Expr i = var("i");
    SECTION("a loop of extent one becomes a let, then the let is substituted") {
        CHECK(simp(For::make("i", 5, 1, ForType::Serial, Store::make("o", i, i + x))) == "o[(x + 5)] = 5\n");
        Stmt s = simplify(For::make("i", y, 1, ForType::Serial, Store::make("o", i * i, i)));
        CHECK(to_string(s) == "o[y] = (y * y)\n");
        // A parallel loop of extent one stays a loop.
        CHECK(simp(For::make("i", 0, 1, ForType::Parallel, Store::make("o", i, i))) ==
              "parallel for (i, 0, 1) {\n o[i] = i\n}\n");
    }
    SECTION("empty loops vanish") {
        CHECK_FALSE(simplify(For::make("i", 0, 0, ForType::Serial, Store::make("o", i, i))).defined());
        CHECK_FALSE(simplify(For::make("i", 0, -3, ForType::Serial, Store::make("o", i, i))).defined());
    }
    SECTION("if on a constant condition") {
        Stmt a = Store::make("o", x, 0), b = Store::make("o", y, 0);
        CHECK(simp(IfThenElse::make(Expr(1) < Expr(2), a, b)) == "o[0] = x\n");
        CHECK(simp(IfThenElse::make(Expr(3) < Expr(2), a, b)) == "o[0] = y\n");
        CHECK_FALSE(simplify(IfThenElse::make(Expr(3) < Expr(2), a)).defined());
        CHECK(simp(IfThenElse::make(x < y, a, b)) == "if ((x < y)) {\n o[0] = x\n} else {\n o[0] = y\n}\n");
    }
    SECTION("conditions decided by the loop range") {
        Stmt s = For::make("i", 0, 8, ForType::Serial,
                           Block::make(IfThenElse::make(i < 8, Store::make("o", x, i)),
                                       IfThenElse::make(i >= 8, Store::make("p", x, i))));
        CHECK(simp(s) == "for (i, 0, 8) {\n o[i] = x\n}\n");
        Stmt t = For::make("i", 0, 8, ForType::Serial, IfThenElse::make(i < 4, Store::make("o", x, i)));
        CHECK(simp(t) == "for (i, 0, 8) {\n if ((i < 4)) {\n  o[i] = x\n }\n}\n");
    }
    SECTION("true asserts vanish, others stay") {
        CHECK_FALSE(simplify(AssertStmt::make(Expr(1) < Expr(2), -1, {})).defined());
        CHECK(simp(AssertStmt::make(x < 2, -1, {StringImm::make("x")})) == "assert((x < 2), -1, \"x\")\n");
    }
    SECTION("a producer or allocation with an empty body vanishes") {
        Stmt empty = For::make("i", 0, 0, ForType::Serial, Store::make("o", i, i));
        CHECK_FALSE(simplify(ProducerConsumer::make("f", true, empty)).defined());
        CHECK_FALSE(simplify(Allocate::make("f", Int(32), 4, empty)).defined());
    }
    SECTION("unchanged statements are returned as the same node") {
        Stmt s = For::make("i", 0, x, ForType::Serial, Store::make("o", i * y, i));
        CHECK(simplify(s).same_as(s));
    }
}

// Regression test (was a bug, now fixed): Simplifier::visit(const Realize *) calls IRMutator::visit, whose
// Realize::make asserts the body is defined, before it checks for an empty
// body; so a Realize whose body simplifies away throws InternalError
// ("Realize of undefined") instead of vanishing. Reached from the public API
// by f.compute_root(); out(x) = f(x) + 1; out.bound(x, 0, 0); out.lowered_stmt().
TEST_CASE("Simplify: a realization with an empty body vanishes", "[simplify][regression]") {
    Stmt empty = For::make("i", 0, 0, ForType::Serial, Store::make("o", var("i"), var("i")));
    Stmt s;
    CHECK_NOTHROW(s = simplify(Realize::make("f", Int(32), {{0, 4}}, empty)));
    CHECK_FALSE(s.defined());
}

TEST_CASE("Simplify: vector arithmetic keeps ramps and broadcasts", "[simplify]") {
    Expr r = Ramp::make(x, 1, 4), b2 = Broadcast::make(Expr(2), 4);
    CHECK(simp(Add::make(r, b2)) == "ramp((x + 2), 1, 4)");
    CHECK(simp(Sub::make(r, b2)) == "ramp((x - 2), 1, 4)");
    CHECK(simp(Add::make(b2, r)) == "ramp((x + 2), 1, 4)");
    CHECK(simp(Mul::make(r, b2)) == "ramp((x * 2), 2, 4)");
    CHECK(simp(Add::make(r, Ramp::make(y, 3, 4))) == "ramp((x + y), 4, 4)");
    CHECK(simp(Add::make(Broadcast::make(x, 4), b2)) == "x4((x + 2))");
    CHECK(simp(Ramp::make(x, 0, 4)) == "x4(x)");
    CHECK(simp(Add::make(b2, Broadcast::make(Expr(3), 4))) == "x4(5)");
    CHECK(simp(Cast::make(Float(32, 4), b2)) == "x4(2.000000f)");
}

TEST_CASE("Simplify: a ramp whose stride the divisor divides, divided or modulo", "[simplify]") {
    // floor((x + 2i) / 2) == x / 2 + i and (x + 2i) % 2 == x % 2, for x of
    // any sign: what deinterleaving a select on x % 2 leaves.
    Expr b2 = Broadcast::make(Expr(2), 4), b0 = Broadcast::make(Expr(0), 4);
    CHECK(simp(Div::make(Ramp::make(x, 2, 4), b2)) == "ramp((x / 2), 1, 4)");
    CHECK(simp(Div::make(Ramp::make(x, 6, 4), b2)) == "ramp((x / 2), 3, 4)");
    CHECK(simp(Mod::make(Ramp::make(x, 2, 4), b2)) == "x4((x % 2))");
    CHECK(simp(EQ::make(Mod::make(Ramp::make(x + 1, 4, 4), b2), b0)) == "x4((((x + 1) % 2) == 0))");
    // A stride the divisor does not divide, or a negative divisor, stays.
    CHECK(simp(Div::make(Ramp::make(x, 1, 4), b2)) == "(ramp(x, 1, 4) / x4(2))");
    CHECK(simp(Mod::make(Ramp::make(x, 3, 4), b2)) == "(ramp(x, 3, 4) % x4(2))");
    Expr bm2 = Broadcast::make(Expr(-2), 4);
    CHECK(simp(Div::make(Ramp::make(x, 2, 4), bm2)) == "(ramp(x, 2, 4) / x4(-2))");
}

namespace {

// Simplify `count` random expressions (plain and with the variables' ranges)
// and compare values at random points inside the ranges; returns the number
// of mismatches, reporting the first few.
int check_random_simplification(kiln_test::RandomExprs::Divisors divisors, uint32_t seed, int count) {
    const std::map<std::string, std::pair<int64_t, int64_t>> ranges{{"x", {-4, 4}}, {"y", {0, 7}}, {"z", {1, 3}}};
    kiln_test::RandomExprs gen(seed, {"x", "y", "z"}, divisors);
    int mismatches = 0, compared = 0;
    for (int n = 0; n < count && mismatches < 5; n++) {
        Expr e = gen.gen_int(gen.pick(1, 4));
        Expr simplified[2] = {simplify(e), simplify(e, ranges)};
        for (int k = 0; k < 8; k++) {
            kiln_test::Interpreter in;
            for (const auto &r : ranges) in.env[r.first] = gen.pick((int)r.second.first, (int)r.second.second);
            int64_t expected = in.eval(e);
            if (in.overflow) continue;  // outside the simplifier's no-overflow assumption
            for (const Expr &s : simplified) {
                kiln_test::Interpreter out;
                out.env = in.env;
                int64_t got = out.eval(s);
                compared++;
                if (got != expected) {
                    mismatches++;
                    FAIL_CHECK("simplify changed the value at x=" << in.env["x"] << " y=" << in.env["y"] << " z="
                                                                  << in.env["z"] << ": " << e << " == " << expected
                                                                  << " but " << s << " == " << got);
                    break;
                }
            }
        }
    }
    if (mismatches == 0) CHECK(compared > count * 8);  // most points are inside the no-overflow range
    return mismatches;
}

}  // namespace

TEST_CASE("Simplify: random int32 expressions keep their value", "[simplify][random]") {
    // Divisors are constants in [0, 6] or max(e, 1): no negative divisors.
    CHECK(check_random_simplification(kiln_test::RandomExprs::NonNegativeConstOrPositive, 12345u, 2000) == 0);
}

// Regression test (was a bug, now fixed): with negative divisors the random check finds the Euclidean folding
// bug above (e.g. (7 / (1 - 3)) simplifies to -4 instead of -3).
TEST_CASE("Simplify: random expressions with negative divisors keep their value", "[simplify][random][regression]") {
    CHECK(check_random_simplification(kiln_test::RandomExprs::AnyExpr, 777u, 2000) == 0);
}

// Found by the sanitizer run (UBSan in the fuzz tier): the 64-bit reference
// interpreter multiplied values that had already left int32 until they left
// int64, which is undefined; such points are now flagged (and skipped).
TEST_CASE("reference interpreter: values past int64 are flagged, not undefined", "[simplify][regression]") {
    kiln_test::Interpreter in;
    in.env["x"] = 1073741845;
    Expr x = var("x");
    Expr e = x * x * x * 16;
    in.eval(e);
    CHECK(in.overflow);
    kiln_test::Interpreter small;
    small.env["x"] = 3;
    CHECK(small.eval(e) == 432);
    CHECK(!small.overflow);
}

// A rounded extent is within a block of the extent: ((e + 15) / 16) * 16 is
// in [e, e + 15], so a vectorized loop shifted inwards, whose region is
// min(((e + 15) / 16) * 16 - 16, e - 16) + ..., names e once; in a chain of
// such stages the region would otherwise double at every stage.
TEST_CASE("Simplify: min and max of a rounded-up extent and the extent", "[simplify]") {
    Expr e = Variable::make(Int(32), "e");
    Expr up = ((e + 15) / 16) * 16;
    CHECK(simp(min(up - 16, e - 16)) == "(e - 16)");
    CHECK(simp(max(up - 16, e - 16)) == "((((e + 15) / 16) * 16) - 16)");
    CHECK(simp(min(up, e + 15)) == "(((e + 15) / 16) * 16)");  // up <= e + 15
    CHECK(simp(min(up, e + 14)) == "min((((e + 15) / 16) * 16), (e + 14))");  // not decided
    CHECK(simp(max(up, e)) == "(((e + 15) / 16) * 16)");
    // Rounded down: (e / 8) * 8 is in [e - 7, e].
    CHECK(simp(min((e / 8) * 8, e)) == "((e / 8) * 8)");
    CHECK(simp(max((e / 8) * 8, e - 7)) == "((e / 8) * 8)");
}

// A fused loop's extent, max(f.loop_max, g.loop_max), clamped to g's own.
TEST_CASE("Simplify: min of a max and one of its operands is that operand", "[simplify]") {
    Expr a = Variable::make(Int(32), "a"), b = Variable::make(Int(32), "b"), c = Variable::make(Int(32), "c");
    CHECK(simp(min(max(a, b), b)) == "b");
    CHECK(simp(min(a, max(b, a))) == "a");
    CHECK(simp(max(min(a, b + 1), b + 1)) == "(b + 1)");
    CHECK(simp(max(a, min(a, c))) == "a");
    CHECK(simp(min(max(a, b), c)) == "min(max(a, b), c)");  // no shared operand: kept
}

TEST_CASE("Simplify: a clamp of a value clamped at the same top is one clamp", "[simplify]") {
    // Bounds inference's point of a loop variable guarded on both sides,
    // clamp(y, lo, hi), clamped again when its scope is resolved.
    Expr lo = var("lo"), hi = var("hi");
    Expr once = min(max(y, lo), hi);
    CHECK(simp(min(max(once, lo), hi)) == "min(max(y, lo), hi)");
    CHECK(simp(min(max(min(x, hi), lo), hi)) == "min(max(x, lo), hi)");
    CHECK(simp(min(max(min(x, hi), lo), z)) == "min(max(min(x, hi), lo), z)");  // another top: kept
    // Both sides are hi where x > hi and where lo > hi.
    for (int xv : {-5, 0, 3, 9})
        for (int lv : {-2, 4, 12})
            for (int hv : {-3, 5, 10}) {
                std::map<std::string, Expr> at{{"x", xv}, {"lo", lv}, {"hi", hv}};
                Expr before = min(max(min(x, hi), lo), hi), after = simplify(before);
                CHECK(equal(simplify(substitute(at, before)), simplify(substitute(at, after))));
            }
}

TEST_CASE("SimplifyMemo: a memo returns what simplify returns, for expressions of one type and text", "[simplify]") {
    const Expr e = min(x + 3, x - 1) + (y * 2 - y);
    const Expr g = (z + 8) / 8 * 8 - z;
    const std::string plain = simp(e), plain_g = simp(g);
    SimplifyMemo memo;
    {
        SimplifyMemo::Use use(memo);
        CHECK(simp(e) == plain);
        CHECK(memo.misses == 1);
        CHECK(simp(min(x + 3, x - 1) + (y * 2 - y)) == plain);  // another tree of the same text
        CHECK(memo.hits == 1);
        CHECK(simp(g) == plain_g);
        CHECK(memo.misses == 2);
        // The same text in another type is simplified on its own.
        const Expr narrow = min(x, y) + (y - y);
        const Expr wide = min(var("x", Int(64)), var("y", Int(64))) + (var("y", Int(64)) - var("y", Int(64)));
        REQUIRE(to_string(narrow) == to_string(wide));
        CHECK(simplify(narrow).type() == Int(32));
        CHECK(simplify(wide).type() == Int(64));
        CHECK(simplify(narrow).type() == Int(32));
        CHECK(memo.hits == 2);    // narrow again
        CHECK(memo.misses == 4);  // narrow, then wide (not kept)
        // Float constants print to 6 decimals: expressions showing one are not kept.
        const Expr a = cast(Int(32), var("p", Float(32)) * f32(0.1)) + (x * 2 - x);
        const Expr b = cast(Int(32), var("p", Float(32)) * f32(0.1000001)) + (x * 2 - x);
        REQUIRE(to_string(a) == to_string(b));
        simplify(a);
        CHECK(equal(simplify(b), simplify(b)));
        CHECK(memo.hits == 2);
        CHECK(memo.misses == 4);
    }
    simp(e);  // no memo once the Use is gone
    CHECK(memo.hits == 2);
}
