// ExprEvaluator (analysis/EvaluateExpr.h): the numbers LoopCounts' walk
// gives loop bounds, guards and realization bounds.
#include <catch2/catch.hpp>

#include "analysis/EvaluateExpr.h"
#include "ir/IR.h"
#include "kiln/IROperator.h"

using namespace kiln;
using namespace kiln::internal;

namespace {

Expr var(const char *name, Type t = Int(32)) { return Variable::make(t, name); }

}  // namespace

TEST_CASE("ExprEvaluator: integers as Kiln computes them", "[unit][evaluate]") {
    std::unordered_map<std::string, int64_t> values = {{"n", 100}, {"neg", -7}};
    std::map<std::string, Expr> floats;
    ExprEvaluator ev(values, floats);
    Expr n = var("n"), neg = var("neg");
    int64_t r = 0;
    CHECK(ev.eval((n + 7) / 8 * 8, r));
    CHECK(r == 104);
    // Division and modulo round toward negative infinity.
    CHECK(ev.eval(neg / 2, r));
    CHECK(r == -4);
    CHECK(ev.eval(neg % 2, r));
    CHECK(r == 1);
    CHECK(ev.eval(select(n > 64, Expr(1), Expr(2)), r));
    CHECK(r == 1);
    CHECK(ev.eval(min(n, neg) + max(n, neg), r));
    CHECK(r == 93);
    CHECK(ev.eval(n >= 100 && !(neg > 0), r));
    CHECK(r == 1);
    // A variable without a value: not evaluated.
    r = 12345;
    CHECK_FALSE(ev.eval(n * var("m"), r));
}

TEST_CASE("ExprEvaluator: floats in their type's precision", "[unit][evaluate]") {
    std::unordered_map<std::string, int64_t> values = {{"n", 3}};
    std::map<std::string, Expr> floats = {{"s", FloatImm::make(Float(32), 0.1f)}};
    ExprEvaluator ev(values, floats);
    Expr s = var("s", Float(32));
    double d = 0;
    // float32 rounds each operation: 0.1f * 3 in float is not 0.3 in double.
    CHECK(ev.eval_float(s * cast(Float(32), var("n")), d));
    CHECK(d == (double)(0.1f * 3.0f));
    CHECK(ev.eval_float(sqrt(s * s), d));
    CHECK(d == (double)std::sqrt((float)(0.1f * 0.1f)));
    // A float cast to an integer truncates toward zero, as C converts.
    int64_t r = 0;
    CHECK(ev.eval(cast(Int(32), s * -25.0f), r));
    CHECK(r == -2);
    CHECK(ev.eval(s < 0.2f, r));
    CHECK(r == 1);
    // 16-bit floats are not evaluated; nor is an unknown float.
    CHECK_FALSE(ev.eval_float(cast(Float(16), s), d));
    CHECK_FALSE(ev.eval_float(var("t", Float(32)) + 1.0f, d));
}
