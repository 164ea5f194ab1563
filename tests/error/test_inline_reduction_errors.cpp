// Inline reductions over no RDom, or over two: a CompileError naming the
// reduction, its expression and the fix.
#include "expect_error.h"

using namespace kiln;

TEST_CASE("errors: an inline reduction runs over one RDom", "[error][inline_reduction]") {
    Var x("x");
    RDom r(0, 3, "r"), s(0, 4, "s");
    REQUIRE_COMPILE_ERROR(sum(Expr(x) * 2),
                          Contains("sum((x * 2)) uses no RDom; an inline reduction runs over the RDom its expression "
                                   "uses, e.g. RDom r(0, 3); sum(in(x + r))"));
    REQUIRE_COMPILE_ERROR(maximum(Expr(r) + s),
                          Contains("maximum((r.x + s.x)) uses 2 RDoms; an inline reduction runs over one"));
    REQUIRE_COMPILE_ERROR(argmin(Expr()), Contains("argmin(): the expression is undefined"));
}
