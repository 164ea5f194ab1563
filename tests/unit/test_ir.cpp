// The IR: how every node kind prints, the invariants each make() asserts,
// the type coercion of the Expr operators (IROperator.h), and
// substitute / expr_uses_var / equal (Substitute.h), bound_names (BoundNames.h).
#include <catch2/catch.hpp>
#include <cmath>

#include <kiln/kiln.h>

#include <memory>

#include "ir/BoundNames.h"
#include "ir/Function.h"
#include "ir/IR.h"
#include "ir/IRPrinter.h"
#include "ir/Substitute.h"
#include "unit/ir_helpers.h"

using namespace kiln;
using namespace kiln::internal;
using kiln_test::f32;
using kiln_test::u8;
using kiln_test::var;

namespace {

Stmt eval(Expr e) { return Evaluate::make(std::move(e)); }

// CompileError whose message contains `part`.
template<typename Fn>
void check_user_error(Fn fn, const std::string &part) {
    try {
        fn();
        FAIL("expected a CompileError containing: " << part);
    } catch (const CompileError &e) {
        CHECK_THAT(e.what(), Catch::Contains(part));
    }
}

}  // namespace

TEST_CASE("IR: every expression node prints", "[ir]") {
    Expr x = var("x"), y = var("y");
    CHECK(to_string(IntImm::make(Int(32), 7)) == "7");
    CHECK(to_string(IntImm::make(Int(32), -7)) == "-7");
    CHECK(to_string(IntImm::make(Int(64), 5)) == "(int64)5");
    CHECK(to_string(IntImm::make(Int(8), -3)) == "(int8)-3");
    CHECK(to_string(UIntImm::make(UInt(8), 200)) == "(uint8)200");
    CHECK(to_string(UIntImm::make(Bool(), 1)) == "true");
    CHECK(to_string(UIntImm::make(Bool(), 0)) == "false");
    CHECK(to_string(FloatImm::make(Float(32), 1.5)) == "1.500000f");
    CHECK(to_string(FloatImm::make(Float(64), 1.5)) == "1.500000");
    CHECK(to_string(FloatImm::make(Float(32), INFINITY)) == "inff");
    CHECK(to_string(FloatImm::make(Float(32), -INFINITY)) == "-inff");
    CHECK(to_string(FloatImm::make(Float(32), NAN)) == "nanf");
    CHECK(to_string(StringImm::make("hi")) == "\"hi\"");
    CHECK(to_string(Cast::make(UInt(8), x)) == "uint8(x)");
    CHECK(to_string(Cast::make(Float(32, 4), Ramp::make(x, 1, 4))) == "float32x4(ramp(x, 1, 4))");
    CHECK(to_string(x) == "x");
    CHECK(to_string(Add::make(x, y)) == "(x + y)");
    CHECK(to_string(Sub::make(x, y)) == "(x - y)");
    CHECK(to_string(Mul::make(x, y)) == "(x * y)");
    CHECK(to_string(Div::make(x, y)) == "(x / y)");
    CHECK(to_string(Mod::make(x, y)) == "(x % y)");
    CHECK(to_string(Min::make(x, y)) == "min(x, y)");
    CHECK(to_string(Max::make(x, y)) == "max(x, y)");
    CHECK(to_string(EQ::make(x, y)) == "(x == y)");
    CHECK(to_string(NE::make(x, y)) == "(x != y)");
    CHECK(to_string(LT::make(x, y)) == "(x < y)");
    CHECK(to_string(LE::make(x, y)) == "(x <= y)");
    CHECK(to_string(GT::make(x, y)) == "(x > y)");
    CHECK(to_string(GE::make(x, y)) == "(x >= y)");
    Expr c = LT::make(x, y), d = GT::make(x, y);
    CHECK(to_string(And::make(c, d)) == "((x < y) && (x > y))");
    CHECK(to_string(Or::make(c, d)) == "((x < y) || (x > y))");
    CHECK(to_string(Not::make(c)) == "!(x < y)");
    CHECK(to_string(Select::make(c, x, y)) == "select((x < y), x, y)");
    CHECK(to_string(Load::make(Float(32), "buf", x)) == "buf[x]");
    CHECK(to_string(Ramp::make(x, 2, 4)) == "ramp(x, 2, 4)");
    CHECK(to_string(Broadcast::make(x, 8)) == "x8(x)");
    CHECK(to_string(Call::make(Int(32), "g", {x, y}, Call::Func)) == "g(x, y)");
    CHECK(to_string(Call::make(Float(32), "sqrt", {f32(2)}, Call::PureExtern)) == "sqrt(2.000000f)");
    CHECK(to_string(Let::make("t", x + 1, var("t") * 2)) == "(let t = (x + 1) in (t * 2))");
    CHECK(to_string(Expr()) == "(undefined)");
}

TEST_CASE("IR: every statement node prints", "[ir]") {
    Expr x = var("x"), y = var("y");
    CHECK(to_string(LetStmt::make("q", 3, eval(var("q")))) == "let q = 3\nq\n");
    CHECK(to_string(AssertStmt::make(x > 0, -3, {StringImm::make("bad x: "), x})) ==
          "assert((x > 0), -3, \"bad x: \", x)\n");
    CHECK(to_string(ProducerConsumer::make("g", true, Provide::make("g", x, {x, y}))) ==
          "produce g {\n g(x, y) = x\n}\n");
    CHECK(to_string(ProducerConsumer::make("g", false, eval(0))) == "consume g {\n 0\n}\n");
    // A Tuple: every element's value, and a call naming its element.
    Expr g1 = Call::make(Float(32), "g", {x}, Call::Func, nullptr, nullptr, 1);
    CHECK(to_string(Provide::make("g", {x, g1 + 1.0f}, {x})) == "g(x) = {x, (g(x)[1] + 1.000000f)}\n");
    CHECK(to_string(For::make("x", 0, 10, ForType::Serial, Store::make("out", x * 2, x))) ==
          "for (x, 0, 10) {\n out[x] = (x * 2)\n}\n");
    CHECK(to_string(For::make("x", 0, 8, ForType::Vectorized, eval(x))) == "vectorized for (x, 0, 8) {\n x\n}\n");
    CHECK(to_string(For::make("x", 0, 2, ForType::Unrolled, eval(x))) == "unrolled for (x, 0, 2) {\n x\n}\n");
    CHECK(to_string(For::make("y", 0, y, ForType::Parallel, eval(x))) == "parallel for (y, 0, y) {\n x\n}\n");
    CHECK(to_string(Allocate::make("t", Float(32), 16, Store::make("t", 1.0f, 0))) ==
          "allocate t[float32 * 16]\nt[0] = 1.000000f\nfree t\n");
    CHECK(to_string(Realize::make("g", Int(32), {{0, 10}, {y, 4}}, eval(0))) == "realize g([0, 10], [y, 4]) {\n 0\n}\n");
    CHECK(to_string(Realize::make("g", Int(32), {{0, 10}, {y, 4}}, eval(0), {Expr(), Expr(4)})) ==
          "realize g([0, 10], [y, 4] folded by 4) {\n 0\n}\n");
    CHECK(to_string(Block::make(eval(1), eval(2))) == "1\n2\n");
    CHECK(to_string(IfThenElse::make(x < 1, eval(1))) == "if ((x < 1)) {\n 1\n}\n");
    CHECK(to_string(IfThenElse::make(x < 1, eval(1), eval(2))) == "if ((x < 1)) {\n 1\n} else {\n 2\n}\n");
    CHECK(to_string(eval(x + 1)) == "(x + 1)\n");
    CHECK(to_string(Stmt()) == "(undefined)\n");

    // Nesting indents by one space per level.
    Stmt nest = For::make("y", 0, 2, ForType::Serial,
                          For::make("x", 0, 3, ForType::Serial, IfThenElse::make(x < y, Provide::make("f", x, {x, y}))));
    CHECK(to_string(nest) ==
          "for (y, 0, 2) {\n"
          " for (x, 0, 3) {\n"
          "  if ((x < y)) {\n"
          "   f(x, y) = x\n"
          "  }\n"
          " }\n"
          "}\n");
}

TEST_CASE("IR: Block::make drops undefined parts and builds right-nested lists", "[ir]") {
    Stmt a = eval(1), b = eval(2), c = eval(3);
    CHECK(Block::make(a, Stmt()).same_as(a));
    CHECK(Block::make(Stmt(), b).same_as(b));
    CHECK_FALSE(Block::make(Stmt(), Stmt()).defined());
    Stmt s = Block::make({a, Stmt(), b, c});
    const Block *blk = s.as<Block>();
    REQUIRE(blk);
    CHECK(blk->first.same_as(a));
    REQUIRE(blk->rest.as<Block>());
    CHECK(blk->rest.as<Block>()->first.same_as(b));
    CHECK(blk->rest.as<Block>()->rest.same_as(c));
    CHECK(to_string(s) == "1\n2\n3\n");
}

TEST_CASE("IR: Type is read through methods, as in Halide", "[ir]") {
    Type t = UInt(16, 8);
    CHECK(t.code() == TypeCode::UInt);
    CHECK(t.bits() == 16);
    CHECK(t.lanes() == 8);
    CHECK(t.bytes() == 2);
    CHECK(t.is_int_or_uint());
    CHECK_FALSE(Float(32).is_int_or_uint());
    CHECK(t.with_code(TypeCode::Int) == Int(16, 8));
    CHECK(t.with_bits(8).element_of() == UInt(8));
    CHECK(Bool().bits() == 1);
    // max() and min() are the type's extreme values, as Exprs.
    CHECK(*as_const_int(Int(8).max()) == 127);
    CHECK(*as_const_int(Int(16).min()) == -32768);
    CHECK(UInt(8).max().as<UIntImm>()->value == 255);
    CHECK(std::isinf(Float(32).max().as<FloatImm>()->value));
    Expr e = cast<uint8_t>(var("x")) + 1;
    CHECK(e.type().bits() == 8);
}

TEST_CASE("IR: immediates wrap to their width, comparisons are bool", "[ir]") {
    CHECK(IntImm::make(Int(8), 200).as<IntImm>()->value == -56);
    CHECK(IntImm::make(Int(16), 65537).as<IntImm>()->value == 1);
    CHECK(UIntImm::make(UInt(8), 300).as<UIntImm>()->value == 44);
    CHECK(UIntImm::make(Bool(), 2).as<UIntImm>()->value == 0);
    // float32 immediates are rounded to float precision.
    CHECK(FloatImm::make(Float(32), 0.1).as<FloatImm>()->value == (double)0.1f);
    CHECK(FloatImm::make(Float(64), 0.1).as<FloatImm>()->value == 0.1);

    Expr x = var("x");
    CHECK(LT::make(x, x).type() == Bool());
    Expr r = Ramp::make(x, 1, 4);
    CHECK(r.type() == Int(32, 4));
    CHECK(EQ::make(r, r).type() == Bool(4));
    CHECK(Broadcast::make(f32(1), 8).type() == Float(32, 8));
    CHECK(Let::make("t", f32(1), var("t", Float(32))).type() == Float(32));
    CHECK(Select::make(Broadcast::make(Expr(true), 4), r, r).type() == Int(32, 4));
}

TEST_CASE("IR: make() asserts its invariants with InternalError", "[ir]") {
    Expr x = var("x"), f = var("f", Float(32)), b = LT::make(x, x), r = Ramp::make(x, 1, 4);
    Stmt s = eval(0);

    SECTION("binary operands of different types") {
        CHECK_THROWS_AS(Add::make(x, f), InternalError);
        CHECK_THROWS_WITH(Add::make(x, f), Catch::Contains("Add of mismatched types int32, float32"));
        CHECK_THROWS_AS(Sub::make(x, var("y", Int(64))), InternalError);
        CHECK_THROWS_AS(Mul::make(x, u8(1)), InternalError);
        CHECK_THROWS_AS(Div::make(f, x), InternalError);
        CHECK_THROWS_AS(Mod::make(x, f), InternalError);
        CHECK_THROWS_AS(Min::make(x, r), InternalError);
        CHECK_THROWS_AS(Max::make(u8(1), x), InternalError);
        CHECK_THROWS_AS(EQ::make(x, f), InternalError);
        CHECK_THROWS_AS(LT::make(x, Expr((int64_t)1)), InternalError);
        CHECK_THROWS_AS(GE::make(f, Expr(1)), InternalError);
        CHECK_THROWS_AS(Add::make(x, Expr()), InternalError);
    }
    SECTION("logical operators need bools of equal lanes") {
        CHECK_THROWS_AS(And::make(x, b), InternalError);
        CHECK_THROWS_AS(Or::make(b, x), InternalError);
        CHECK_THROWS_AS(And::make(b, EQ::make(r, r)), InternalError);
        CHECK_THROWS_AS(Not::make(x), InternalError);
    }
    SECTION("select") {
        CHECK_THROWS_AS(Select::make(x, x, x), InternalError);
        CHECK_THROWS_AS(Select::make(b, x, f), InternalError);
        CHECK_THROWS_AS(Select::make(EQ::make(r, r), Ramp::make(x, 1, 8), Ramp::make(x, 1, 8)), InternalError);
        CHECK_THROWS_AS(Select::make(Expr(), x, x), InternalError);
    }
    SECTION("vectors") {
        CHECK_THROWS_AS(Ramp::make(x, 1, 1), InternalError);
        CHECK_THROWS_AS(Ramp::make(x, Expr((int64_t)1), 4), InternalError);
        CHECK_THROWS_AS(Ramp::make(r, Broadcast::make(Expr(1), 4), 4), InternalError);
        CHECK_THROWS_AS(Broadcast::make(x, 1), InternalError);
        CHECK_THROWS_AS(Broadcast::make(r, 2), InternalError);
        CHECK_THROWS_AS(Cast::make(Float(32), r), InternalError);  // a Cast keeps the lane count
        CHECK_THROWS_AS(Load::make(Float(32), "b", Expr((int64_t)0)), InternalError);
        CHECK_THROWS_AS(Load::make(Float(32), "b", r), InternalError);  // lanes of result != index
        CHECK_THROWS_AS(Store::make("b", f32(1), r), InternalError);
    }
    SECTION("immediates of the wrong kind of type") {
        CHECK_THROWS_AS(IntImm::make(Float(32), 1), InternalError);
        CHECK_THROWS_AS(IntImm::make(UInt(8), 1), InternalError);
        CHECK_THROWS_AS(IntImm::make(Int(32, 4), 1), InternalError);
        CHECK_THROWS_AS(UIntImm::make(Int(32), 1), InternalError);
        CHECK_THROWS_AS(FloatImm::make(Int(32), 1.0), InternalError);
    }
    SECTION("statements") {
        CHECK_THROWS_AS(For::make("i", Expr((int64_t)0), 4, ForType::Serial, s), InternalError);
        CHECK_THROWS_AS(For::make("i", 0, u8(4), ForType::Serial, s), InternalError);
        CHECK_THROWS_WITH(For::make("i", 0, 4, ForType::Serial, Stmt()), Catch::Contains("For i of undefined"));
        CHECK_THROWS_AS(IfThenElse::make(x, s), InternalError);
        CHECK_THROWS_AS(IfThenElse::make(EQ::make(r, r), s), InternalError);
        CHECK_THROWS_AS(IfThenElse::make(b, Stmt()), InternalError);
        CHECK_THROWS_AS(AssertStmt::make(x, -1, {}), InternalError);
        CHECK_THROWS_AS(LetStmt::make("t", Expr(), s), InternalError);
        CHECK_THROWS_AS(LetStmt::make("t", x, Stmt()), InternalError);
        CHECK_THROWS_AS(Let::make("t", x, Expr()), InternalError);
        CHECK_THROWS_AS(ProducerConsumer::make("f", true, Stmt()), InternalError);
        CHECK_THROWS_AS(Allocate::make("f", Int(32), Expr(), s), InternalError);
        CHECK_THROWS_AS(Realize::make("f", Int(32), {}, Stmt()), InternalError);
        CHECK_THROWS_AS(Provide::make("f", Expr(), {x}), InternalError);
        CHECK_THROWS_AS(Evaluate::make(Expr()), InternalError);
        CHECK_THROWS_AS(Call::make(Int(32), "g", {x, Expr()}, Call::Func), InternalError);
    }
    SECTION("internal errors say where and which condition failed") {
        try {
            Not::make(x);
            FAIL("no exception");
        } catch (const InternalError &e) {
            CHECK_THAT(e.what(), Catch::StartsWith("Internal error at "));
            CHECK_THAT(e.what(), Catch::Contains("IR.cpp"));
            CHECK_THAT(e.what(), Catch::Contains("Not of non-bool"));
        }
    }
}

TEST_CASE("Expr operators: a literal takes the other operand's type", "[ir][coercion]") {
    Expr x = var("x"), a = var("a", UInt(8)), b = var("b", Int(16)), f = var("f", Float(32));
    Expr d = var("d", Float(64));
    CHECK(to_string(x + 1) == "(x + 1)");
    CHECK(to_string(1 + x) == "(1 + x)");
    CHECK((a + 1).type() == UInt(8));
    CHECK(to_string(a + 1) == "(a + (uint8)1)");
    CHECK(to_string(a * 255) == "(a * (uint8)255)");
    CHECK((b - 3).type() == Int(16));
    CHECK(to_string(3 - b) == "((int16)3 - b)");
    CHECK(to_string(f * 2) == "(f * 2.000000f)");
    CHECK((d + 1).type() == Float(64));
    CHECK((d + 0.5f).type() == Float(64));
    CHECK(to_string(f + 0.5) == "(f + 0.500000f)");
    // Comparisons with a literal also take the Expr's type.
    CHECK(to_string(a < 3) == "(a < (uint8)3)");
    CHECK(to_string(f >= 0) == "(f >= 0.000000f)");
    CHECK((x == 2).type() == Bool());
}

TEST_CASE("Expr operators: mixed types are coerced like Halide", "[ir][coercion]") {
    Expr x = var("x"), f = var("f", Float(32)), d = var("d", Float(64));
    Expr a8 = var("a", UInt(8)), b16 = var("b", Int(16)), c16 = var("c", UInt(16));
    Expr i8 = var("i", Int(8)), u32 = var("u", UInt(32)), i64 = var("l", Int(64));

    SECTION("int op float: the int becomes float") {
        CHECK(to_string(x + f) == "(float32(x) + f)");
        CHECK(to_string(f * x) == "(f * float32(x))");
        CHECK(to_string(x + 1.5f) == "(float32(x) + 1.500000f)");
        CHECK(to_string(2.5f * x) == "(2.500000f * float32(x))");
        CHECK(to_string(a8 / 2.0f) == "(float32(a) / 2.000000f)");
        CHECK((x + d).type() == Float(64));
    }
    SECTION("two floats: the wider") {
        CHECK(to_string(f + d) == "(float64(f) + d)");
    }
    SECTION("two ints of one signedness: the wider") {
        CHECK(to_string(i8 + b16) == "(int16(i) + b)");
        CHECK(to_string(x * i64) == "(int64(x) * l)");
        CHECK(to_string(a8 + c16) == "(uint16(a) + c)");
        CHECK(to_string(c16 - a8) == "(c - uint16(a))");
    }
    SECTION("mixed signedness: signed, of the larger width") {
        CHECK(to_string(a8 + b16) == "(int16(a) + b)");
        CHECK(to_string(a8 + x) == "(int32(a) + x)");
        CHECK(to_string(c16 + b16) == "(int16(c) + b)");
        CHECK(to_string(u32 + i8) == "(int32(u) + int32(i))");
        CHECK((a8 < b16).type() == Bool());
        CHECK(to_string(min(a8, i8)) == "min(int8(a), i)");
        CHECK(to_string(max(x, a8)) == "max(x, int32(a))");
    }
    SECTION("bools in arithmetic become int32") {
        CHECK(to_string((x < 1) + 1) == "(int32((x < 1)) + 1)");
        CHECK(to_string(select(x < 1, a8, b16)) == "select((x < 1), int16(a), b)");
    }
    SECTION("select: an integer constant takes the other value's type, as in Halide") {
        CHECK(select(x < 1, 0, a8).type() == UInt(8));
        CHECK(select(x < 1, a8, 255).type() == UInt(8));
        CHECK(select(x < 1, 0, select(x > 5, 255, a8)).type() == UInt(8));
        CHECK(select(x < 1, 2, f).type() == Float(32));
        CHECK(select(x < 1, 1, 2).type() == Int(32));
    }
    SECTION("logical operators compare non-bools with zero") {
        CHECK(to_string(x && (x < 2)) == "((x != 0) && (x < 2))");
        CHECK(to_string(!x) == "!(x != 0)");
        CHECK(to_string(cast(Bool(), a8)) == "(a != (uint8)0)");
    }
    SECTION("helpers") {
        CHECK(to_string(-x) == "(0 - x)");
        CHECK(to_string(-f) == "(0.000000f - f)");
        CHECK(to_string(clamp(x, 0, 10)) == "max(min(x, 10), 0)");
        CHECK(to_string(clamp(a8, 0, 10)) == "max(min(a, uint8(10)), uint8(0))");
        CHECK(to_string(abs(x)) == "select((x < 0), ((uint32)0 - uint32(x)), uint32(x))");  // negated unsigned: no int32 overflow
        CHECK(abs(f).type() == Float(32));
        CHECK(to_string(sqrt(x)) == "sqrt(float32(x))");
        CHECK(to_string(pow(f, d)) == "pow(float64(f), d)");
        CHECK(cast(Float(32), x).type() == Float(32));
        CHECK(cast(Int(32), x).same_as(x));
        CHECK(to_string(select(x < 0, 1, x > 5, 2, 3)) == "select((x < 0), 1, select((x > 5), 2, 3))");
        Expr acc = x;
        acc += 2;
        acc *= 3;
        CHECK(to_string(acc) == "((x + 2) * 3)");
    }
}

TEST_CASE("Expr operators: literal and operand errors are user errors", "[ir][coercion]") {
    Expr a8 = var("a", UInt(8)), i8 = var("i", Int(8)), x = var("x");
    check_user_error([&] { (void)(a8 + (-1)); },
                     "Integer literal -1 used with an expression of unsigned type uint8; cast one side explicitly.");
    check_user_error([&] { (void)(i8 * 300); },
                     "Integer literal 300 does not fit in type int8 of the other operand of '*'");
    check_user_error([&] { (void)(a8 < 256); }, "does not fit in type uint8");
    check_user_error([&] { (void)(x + Expr()); },
                     "Operand of '+' is undefined: an Expr was used before it was given a value.");
    check_user_error([&] { (void)(Ramp::make(x, 1, 4) + Ramp::make(x, 1, 8)); },
                     "Operands of '+' have different lane counts");
    // In range: no error.
    CHECK_NOTHROW(a8 + 255);
    CHECK_NOTHROW(i8 + (-128));
}

TEST_CASE("Constants: make_const, type bounds and queries", "[ir]") {
    CHECK(to_string(make_const(Int(16), (int64_t)70000)) == "(int16)4464");
    CHECK(to_string(make_const(Float(32, 4), 2.0)) == "x4(2.000000f)");
    CHECK(to_string(make_const(UInt(8), 3.7)) == "(uint8)3");
    CHECK(to_string(type_max(Int(8))) == "(int8)127");
    CHECK(to_string(type_min(Int(8))) == "(int8)-128");
    CHECK(to_string(type_max(UInt(16))) == "(uint16)65535");
    CHECK(to_string(type_min(UInt(16))) == "(uint16)0");
    CHECK(to_string(type_max(Float(32))) == "inff");
    CHECK(to_string(make_bool(true, 4)) == "x4(true)");
    CHECK(is_zero(make_zero(Float(32))));
    CHECK(is_one(Broadcast::make(Expr(1), 4)));
    CHECK(is_const(Expr(3), 3));
    CHECK_FALSE(is_const(var("x")));
    REQUIRE(as_const_int(Expr(-4)));
    CHECK(*as_const_int(Expr(-4)) == -4);
    CHECK_FALSE(as_const_int(Expr(1.5f)));
    REQUIRE(as_const_float(Expr(1.5f)));
    CHECK(*as_const_float(Expr(1.5f)) == 1.5);
    CHECK(Type(Int(32)).to_string() == "int32");
    CHECK(Float(32, 8).to_string() == "float32x8");
    CHECK(Bool(4).to_string() == "boolx4");
    CHECK(Int(32).can_represent(UInt(16)));
    CHECK_FALSE(Int(32).can_represent(UInt(32)));
    CHECK_FALSE(UInt(32).can_represent(Int(8)));
    CHECK(Float(32).can_represent(Int(16)));
    CHECK_FALSE(Float(32).can_represent(Int(32)));
    CHECK(Float(64).can_represent(Int(32)));
}

TEST_CASE("substitute replaces free variables", "[ir][substitute]") {
    Expr x = var("x"), y = var("y"), z = var("z");
    CHECK(to_string(substitute("x", y + 1, x * x + z)) == "(((y + 1) * (y + 1)) + z)");
    CHECK(to_string(substitute({{"x", y}, {"y", x}}, x - y)) == "(y - x)");  // simultaneous, not sequential
    CHECK(to_string(substitute(std::map<std::string, Expr>{}, x)) == "x");

    SECTION("an unchanged tree is returned as the same node") {
        Expr e = y * 2 + z;
        CHECK(substitute("x", Expr(7), e).same_as(e));
        Stmt s = For::make("i", 0, 4, ForType::Serial, Store::make("o", e, var("i")));
        CHECK(substitute("x", Expr(7), s).same_as(s));
    }
    SECTION("a Let rebinding the name shadows it in its body only") {
        Expr e = Let::make("x", x + 1, x * 2) + x;
        CHECK(to_string(substitute("x", Expr(5), e)) == "((let x = (5 + 1) in (x * 2)) + 5)");
    }
    SECTION("LetStmt and For shadow the name in their bodies") {
        Stmt s = Block::make(LetStmt::make("x", x + 1, eval(x)), For::make("x", x, x, ForType::Serial, eval(x + y)));
        CHECK(to_string(substitute("x", Expr(9), s)) == "let x = (9 + 1)\nx\nfor (x, 9, 9) {\n (x + y)\n}\n");
    }
    SECTION("a replacement of another type is cast to the variable's type") {
        CHECK(to_string(substitute("x", var("l", Int(64)), x + 1)) == "(int32(l) + 1)");
    }
    SECTION("statements") {
        Stmt s = IfThenElse::make(x < 3, Provide::make("f", x, {x, y}), Store::make("g", y, x));
        CHECK(to_string(substitute("x", z * 2, s)) ==
              "if (((z * 2) < 3)) {\n f((z * 2), y) = (z * 2)\n} else {\n g[(z * 2)] = y\n}\n");
    }
}

TEST_CASE("expr_uses_var, stmt_uses_var and equal", "[ir][substitute]") {
    Expr x = var("x"), y = var("y");
    CHECK(expr_uses_var(x + 1, "x"));
    CHECK_FALSE(expr_uses_var(y + 1, "x"));
    CHECK(expr_uses_var(Select::make(y < 1, Load::make(Int(32), "b", x), y), "x"));
    CHECK(expr_uses_var(Call::make(Int(32), "f", {y, x * 2}, Call::Func), "x"));
    CHECK(expr_uses_var(Ramp::make(y, x, 4), "x"));
    CHECK_FALSE(expr_uses_var(Call::make(Int(32), "x", {y}, Call::Func), "x"));  // a call named x is no use
    CHECK_FALSE(expr_uses_var(Expr(), "x"));
    CHECK(stmt_uses_var(For::make("i", 0, x, ForType::Serial, eval(0)), "x"));
    CHECK(stmt_uses_var(LetStmt::make("t", 1, Store::make("o", y, x)), "x"));
    CHECK(stmt_uses_var(IfThenElse::make(y < 1, eval(0), eval(x)), "x"));
    CHECK_FALSE(stmt_uses_var(Allocate::make("x", Int(32), 4, eval(y)), "x"));

    // The walk stops at the first use: the simplifier asks it of every let's
    // body. Names are asked about in the order they are met.
    std::vector<std::string> asked;
    auto is_x = [&](const std::string &n) {
        asked.push_back(n);
        return n == "x";
    };
    CHECK(expr_uses_var_if((x + y) * (y - x), is_x));
    CHECK(asked == std::vector<std::string>{"x"});
    asked.clear();
    CHECK_FALSE(expr_uses_var_if((y + 1) * var("z"), is_x));
    CHECK(asked == std::vector<std::string>{"y", "z"});

    CHECK(equal(x + 1, var("x") + 1));
    CHECK_FALSE(equal(x + 1, 1 + x));
    CHECK_FALSE(equal(x, var("x", Int(64))));  // same text, other type
    CHECK_FALSE(equal(Expr(1), Expr((int64_t)1)));
    CHECK(equal(Expr(), Expr()));
    CHECK_FALSE(equal(x, Expr()));
}

TEST_CASE("bound_names lists lets, loops and allocations in visiting order", "[ir]") {
    Expr x = var("x"), t = var("t");
    // for (x, 0, 8) { let t = x * 2; allocate f[4] { f[0] = (let u = t in u + 1) } ; o[x] = t }
    Stmt inner = Allocate::make("f", Int(32), 4, Store::make("f", Let::make("u", t, var("u") + 1), 0));
    Stmt body = LetStmt::make("t", x * 2, Block::make(inner, Store::make("o", t, x)));
    Stmt loop = For::make("x", 0, 8, ForType::Serial, body);
    CHECK(bound_names(loop) == std::vector<std::string>{"x", "t", "f", "u"});
    // Uses bind nothing: a store, a load and a free variable.
    CHECK(bound_names(Store::make("o", Load::make(Int(32), "b", x), x)).empty());
    // Two blocks: the first statement's names before the second's.
    Stmt two = Block::make(LetStmt::make("a", 1, eval(0)), For::make("b", 0, 2, ForType::Serial, eval(0)));
    CHECK(bound_names(two) == std::vector<std::string>{"a", "b"});
}

// Found by the sanitizer run (LeakSanitizer): a where() predicate, or the
// predicate rfactor() gives the intermediate's RDom, referred to that RDom's
// own RVars through owning pointers, so the RDom (and all it held) was never
// freed.
TEST_CASE("RDom predicates keep no owning pointer to their own RDom", "[ir][regression]") {
    std::weak_ptr<ReductionDomainContents> where_dom, rfactor_dom;
    {
        RDom r(0, 10, "r");
        r.where(r.x < 5);
        r.where(r.x != 2);
        where_dom = r.get();
        CHECK(to_string(r.get()->predicate) == "((r.x < 5) && (r.x != 2))");
    }
    CHECK(where_dom.expired());
    {
        ImageParam in(Float(32), 1, "in");
        RDom r(0, in.width(), "r");
        Func sum("sum");
        Var u("u");
        RVar ro("ro"), ri("ri");
        sum() = 0.0f;
        sum() += in(r);
        sum.update(0).split(r, ro, ri, 8);  // the extent is not a multiple of 8: a guard on ro and ri
        Func lanes = sum.update(0).rfactor(ri, u);
        rfactor_dom = lanes.contents()->stage(1).rdom;
        REQUIRE(rfactor_dom.lock()->predicate.defined());
    }
    CHECK(rfactor_dom.expired());
}
