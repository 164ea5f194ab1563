// expr_key (ir/ExprKey.h): the printed text, kept in each node, that the
// simplifier orders linear terms by and equal() compares. It must be exactly
// to_string(e), whichever subexpressions were printed before, and stay
// right however long the key is held.
#include <catch2/catch.hpp>

#include <thread>
#include <vector>

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

TEST_CASE("expr_key: a key outlives the expression it was taken from", "[expr_key]") {
    // The text is kept in its node and the key shares the node: dropping
    // every handle to the expression leaves the key right.
    ExprKey key;
    {
        Expr e = Min::make(Add::make(var("x"), Expr(-1)), var("y"));
        key = expr_key(e);
    }
    CHECK(*key == "min((x + -1), y)");
    // Many fresh nodes printed and dropped in between change nothing.
    for (int i = 0; i < 10000; i++) CHECK(*expr_key(Add::make(var("x"), Expr(i))) == "(x + " + std::to_string(i) + ")");
    CHECK(*key == "min((x + -1), y)");
}

TEST_CASE("expr_key: threads printing shared nodes agree", "[expr_key]") {
    // Nodes may be shared between threads (two pipelines lowered at once):
    // each thread's keys are the text, and a node printed by both keeps one.
    Expr e = var("x");
    std::vector<Expr> levels;
    for (int i = 0; i < 300; i++) {
        e = Max::make(Add::make(e, Expr(i)), Mul::make(var("y"), Expr(i)));
        levels.push_back(e);
    }
    std::vector<std::string> got(2);
    std::vector<std::thread> threads;
    for (int t = 0; t < 2; t++) {
        threads.emplace_back([&, t] {
            // Each thread walks the levels in its own order.
            for (int i = 0; i < 300; i++) expr_key(levels[t == 0 ? i : 299 - i]);
            got[t] = *expr_key(levels.back());
        });
    }
    for (auto &th : threads) th.join();
    CHECK(got[0] == to_string(levels.back()));
    CHECK(got[1] == got[0]);
    CHECK(expr_key(levels[17]).get() == expr_key(levels[17]).get());
}
