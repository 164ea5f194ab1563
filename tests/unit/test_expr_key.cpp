// expr_key (ir/ExprKey.h): the memoized printed text the simplifier orders
// linear terms by and equal() compares. It must be exactly to_string(e),
// whichever subexpressions were printed (and cached) before, and however
// often the cache's generations turned in between.
#include <catch2/catch.hpp>

#include "ir/ExprKey.h"
#include "ir/IR.h"
#include "ir/IRPrinter.h"
#include "ir/Substitute.h"
#include "unit/ir_helpers.h"

using namespace kiln;
using namespace kiln::internal;
using kiln_test::f32;
using kiln_test::var;

TEST_CASE("expr_key: equals to_string for trees that share cached operands", "[expr_key]") {
    const Expr x = var("x"), y = var("y"), z = var("z");
    Expr a = Max::make(Add::make(x, Expr(1)), y);
    CHECK(*expr_key(a) == to_string(a));
    // New parents of the cached a, several levels deep.
    Expr b = Min::make(a, Sub::make(z, a));
    Expr c = Select::make(LT::make(b, a), Mul::make(b, Expr(3)), Let::make("t", a, Add::make(var("t"), b)));
    CHECK(*expr_key(b) == to_string(b));
    CHECK(*expr_key(c) == to_string(c));
    Expr v = Broadcast::make(Cast::make(Float(32), c), 8);
    CHECK(*expr_key(v) == to_string(v));
    CHECK(*expr_key(f32(0.5)) == to_string(f32(0.5)));
    // Printed again: the same shared text.
    CHECK(expr_key(c) == expr_key(c));
}

TEST_CASE("expr_key: a deep chain of fresh nodes and equal() on structurally equal trees", "[expr_key]") {
    // Bounds inference builds min/max chains like this one; every level is a
    // new node whose operand is cached.
    Expr e = var("x"), f = var("x");
    for (int i = 0; i < 2000; i++) {
        e = Max::make(Add::make(e, Expr(i)), var("y"));
        f = Max::make(Add::make(f, Expr(i)), var("y"));
    }
    CHECK(*expr_key(e) == to_string(e));
    CHECK(equal(e, f));
    CHECK_FALSE(equal(e, Max::make(Add::make(f, Expr(1)), var("y"))));
}

TEST_CASE("expr_key: keys stay right across cache clears", "[expr_key]") {
    // Many more distinct nodes than the cache holds, keys taken before they
    // were dropped stay valid (they are shared), later keys are printed afresh.
    const Expr x = var("x");
    auto first = expr_key(Add::make(x, Expr(-1)));
    std::vector<Expr> keep;
    for (int i = 0; i < 70000; i++) keep.push_back(Add::make(x, Expr(i)));
    for (const Expr &k : keep) expr_key(k);
    CHECK(*first == "(x + -1)");
    CHECK(*expr_key(keep[5]) == "(x + 5)");
    CHECK(*expr_key(keep.back()) == to_string(keep.back()));
}

TEST_CASE("expr_key: a key in use survives the generations", "[expr_key]") {
    // A node printed again within a generation of its last use keeps its
    // cached text (the same shared string), however many other nodes pass
    // through the cache in between; the others' keys stay right.
    const Expr x = var("x"), y = var("y");
    const Expr hot = Min::make(Max::make(x, y), Expr(7));
    const ExprKey first = expr_key(hot);
    for (int i = 0; i < 70000; i++) {
        Expr e = Mul::make(Add::make(x, Expr(i)), y);
        if (i % 4096 == 0) CHECK(*expr_key(e) == to_string(e));
        else expr_key(e);
        if (i % 64 == 0) REQUIRE(expr_key(hot) == first);
    }
    CHECK(*first == to_string(hot));
}
