// The IR the bitwise operators, shifts, absd, mux and saturating_cast
// build: constant shift amounts and low-bit masks become the multiply,
// divide and modulo that bounds inference and the vectorizer know; other
// operands the intrinsic calls codegen prints as C operators or prologue
// helpers.
#include <catch2/catch.hpp>

#include "ir/IRPrinter.h"
#include "kiln/kiln.h"

using namespace kiln;

TEST_CASE("bitwise IR: constant shifts and masks are arithmetic", "[ir][bitwise]") {
    Var x("x"), y("y");
    CHECK(to_string(Expr(x) >> 3) == "(x / 8)");
    CHECK(to_string(Expr(x) << 2) == "(x * 4)");
    CHECK(to_string(Expr(x) & 15) == "(x % 16)");
    CHECK(to_string(Expr(x) & 5) == "bitwise_and(x, 5)");
    CHECK(to_string(Expr(x) >> y) == "shift_right(x, y)");
    CHECK(to_string(Expr(x) << 40) == "shift_left(x, 40)");  // past the width: every bit out
    CHECK(to_string(~Expr(x)) == "bitwise_not(x)");
    Expr b = Expr(x) > 0, c = Expr(y) > 0;
    CHECK(to_string(b & c) == "((x > 0) && (y > 0))");
    CHECK(to_string(b ^ c) == "((x > 0) != (y > 0))");
    // A uint8 value shifted by an int32 amount stays uint8.
    CHECK((cast<uint8_t>(x) << y).type() == UInt(8));
    CHECK((cast<uint8_t>(x) | 0x80).type() == UInt(8));
}

TEST_CASE("bitwise IR: absd, mux, saturating_cast, min and max of several", "[ir][bitwise]") {
    Var x("x"), y("y");
    CHECK(absd(Expr(x), Expr(y)).type() == UInt(32));
    CHECK(absd(cast<float>(x), 1.0f).type() == Float(32));
    CHECK(to_string(mux(x, {Expr(1), Expr(2), Expr(3)})) == "select((x <= 0), 1, select((x == 1), 2, 3))");
    CHECK(mux(x, {Expr(1), cast<int16_t>(y)}).type() == Int(32));
    CHECK(to_string(saturating_cast<uint8_t>(Expr(x))) == "uint8(max(min(x, 255), 0))");
    CHECK(to_string(saturating_cast<int32_t>(cast<uint8_t>(x))) == "int32(uint8(x))");
    CHECK(to_string(max(Expr(x), Expr(y), 3)) == "max(max(x, y), 3)");
}

TEST_CASE("bitwise IR: the NPU target names what it cannot select", "[ir][bitwise][npu]") {
    ImageParam in(Int(32), 2, "in");
    Var x("x"), y("y");
    Func out("out");
    Var xo("xo"), yo("yo"), xi("xi"), yi("yi");
    out(x, y) = in(x, y) ^ in(x + 1, y);
    out.tile(x, y, xo, yo, xi, yi, 64, 16);
    std::string what;
    try {
        Pipeline(out).compile_to_cpp_source("k", Target("npu"));
    } catch (const CompileError &e) {
        what = e.what();
    }
    INFO(what);
    CHECK(what.find("bitwise_xor") != std::string::npos);
}
