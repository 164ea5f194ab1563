// Before/after of emulate_float16 (lower/EmulateFloat16.h): arithmetic,
// comparisons, selects, math functions and casts of 16-bit floats, on a
// hand-built statement and on a pipeline taken through the passes before it.
#include <catch2/catch.hpp>

#include "ir/IRPrinter.h"
#include "kiln/kiln.h"
#include "lower/EmulateFloat16.h"
#include "lower/Lower.h"

using namespace kiln;
using namespace kiln::internal;

namespace {

std::string emulated(const Expr &value) { return to_string(emulate_float16(Store::make("f", value, 0))); }

}  // namespace

TEST_CASE("lowering: emulate_float16 rounds each 16-bit operation from float32", "[lower][float16]") {
    Expr a = Load::make(Float(16), "a", 0), b = Load::make(Float(16), "b", 0), c = Load::make(BFloat(16), "c", 0);
    Expr i = Variable::make(Int(32), "i"), v = Variable::make(Float(32), "v");
    CHECK(emulated(a * b + a) ==
          "f[0] = float16((float32(float16((float32(a[0]) * float32(b[0])))) + float32(a[0])))\n");
    // A comparison reads float32 values and stays bool; a select picks between them.
    CHECK(emulated(select(a < b, a, b)) ==
          "f[0] = float16(select((float32(a[0]) < float32(b[0])), float32(a[0]), float32(b[0])))\n");
    CHECK(emulated(sqrt(c)) == "f[0] = bfloat16(sqrt(float32(c[0])))\n");
    // Conversions: float32 <-> 16 bits stay; an int goes through float64, the
    // other 16-bit type and other floats through float32.
    CHECK(emulated(cast<float16_t>(v)) == "f[0] = float16(v)\n");
    CHECK(emulated(cast<float16_t>(i)) == "f[0] = float16(float64(i))\n");
    CHECK(emulated(cast<bfloat16_t>(a)) == "f[0] = bfloat16(float32(a[0]))\n");
    CHECK(emulated(cast<double>(a)) == "f[0] = float64(float32(a[0]))\n");
    CHECK(emulated(cast<int>(c)) == "f[0] = int32(float32(c[0]))\n");
    // Nothing of 16 bits: the same statement back.
    Stmt plain = Store::make("f", v * 2.0f, 0);
    CHECK(emulate_float16(plain).same_as(plain));
}

TEST_CASE("lowering: emulate_float16 runs on the scheduled pipeline, before any simplify", "[lower][float16]") {
    ImageParam in(Float(16), 1, "in");
    Var x("x");
    Func f("f");
    f(x) = in(x) * 0.1f + 1;
    LowerOptions o;
    o.stop_after = "emulate float16";
    Target t = Target::host().with(Target::NoAsserts);
    std::string s = to_string(lower({f.contents()}, "f", {}, t, o).body);
    // The constants were rounded to float16 where they were made.
    CHECK_THAT(s, Catch::Contains("f(f.s0.x) = float16((float32(float16((float32(in(f.s0.x)) * "
                                  "float32(float16(0.099976))))) + float32(float16(1.000000))))"));
}
