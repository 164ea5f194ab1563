// HeldNames (analysis/HeldNames.h): which Funcs a statement produces or
// realizes and which of some loop and let names it defines, answered by
// node, also for a statement rebuilt around nodes already asked about.
#include <catch2/catch.hpp>

#include "analysis/HeldNames.h"
#include "ir/Error.h"
#include "unit/ir_helpers.h"

using namespace kiln;
using namespace kiln::internal;
using kiln_test::loop;
using kiln_test::var;

namespace {

Expr call(const std::string &f, Expr arg) { return Call::make(Int(32), f, {std::move(arg)}, Call::Func); }

// realize f { produce f { for f.x: f(f.x) = 1 }
//             consume f { for g.xo: let g.x = g.xo * 2  g(g.x) = f(g.x) } }
struct Pipeline {
    Stmt produce_f = ProducerConsumer::make("f", true, loop("f.x", 0, 8, Provide::make("f", Expr(1), {var("f.x")})));
    Stmt g_let = LetStmt::make("g.x", var("g.xo") * 2, Provide::make("g", call("f", var("g.x")), {var("g.x")}));
    Stmt consume_f = ProducerConsumer::make("f", false, loop("g.xo", 0, 4, g_let));
    Stmt realize_f = Realize::make("f", Int(32), {{0, 8}}, Block::make(produce_f, consume_f));
};

}  // namespace

TEST_CASE("held names: the Funcs a statement produces or realizes", "[held_names]") {
    Pipeline p;
    HeldNames held({"f", "g"}, {});
    CHECK(held.produces(p.realize_f, "f"));
    CHECK(held.produces(p.produce_f, "f"));
    CHECK(held.produces(p.consume_f, "f"));  // a consume names f too
    CHECK_FALSE(held.produces(p.g_let, "f"));  // reads f only
    // g is written here but neither produced nor realized.
    CHECK_FALSE(held.produces(p.realize_f, "g"));
    CHECK_FALSE(held.produces(Stmt(), "f"));
    CHECK_THROWS_AS(held.produces(p.realize_f, "h"), InternalError);  // not asked about
}

TEST_CASE("held names: the loops and lets a statement defines", "[held_names]") {
    Pipeline p;
    HeldNames held({"f"}, {"f.x", "g.xo", "g.x", "h.x"});
    HeldNames::Defined d = held.defines(p.realize_f, {"g.xo", "g.x", "h.x"});
    CHECK(d.any == std::set<std::string>{"g.x", "g.xo"});
    CHECK(d.lets == std::set<std::string>{"g.x"});
    d = held.defines(p.consume_f);  // every name asked about
    CHECK(d.any == std::set<std::string>{"g.x", "g.xo"});
    d = held.defines(p.produce_f);
    CHECK(d.any == std::set<std::string>{"f.x"});
    CHECK(d.lets.empty());
    CHECK(held.defines(p.g_let, {}).any.empty());
    CHECK_THROWS_AS(held.defines(p.realize_f, {"other"}), InternalError);
}

TEST_CASE("held names: a statement rebuilt around nodes asked about", "[held_names]") {
    Pipeline p;
    HeldNames held({"f", "k"}, {"g.x", "k.x"});
    CHECK(held.produces(p.consume_f, "f"));
    CHECK_FALSE(held.produces(p.consume_f, "k"));
    // A producer of k put inside f's consumer, as a pass that injects a
    // Func computed at a loop makes it: the new nodes answer for what they
    // hold, the old ones as before.
    Stmt k = ProducerConsumer::make("k", true, LetStmt::make("k.x", 0, Provide::make("k", Expr(0), {var("k.x")})));
    Stmt consume = ProducerConsumer::make("f", false, loop("g.xo", 0, 4, Block::make(k, p.g_let)));
    Stmt top = Realize::make("f", Int(32), {{0, 8}}, Block::make(p.produce_f, consume));
    CHECK(held.produces(top, "k"));
    CHECK(held.produces(consume, "k"));
    CHECK(held.defines(top).lets == std::set<std::string>{"g.x", "k.x"});
    CHECK_FALSE(held.produces(p.consume_f, "k"));
    CHECK_FALSE(held.produces(p.realize_f, "k"));
    CHECK(held.defines(p.realize_f).lets == std::set<std::string>{"g.x"});
}
