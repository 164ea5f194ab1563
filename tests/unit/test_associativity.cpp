// analysis/Associativity: which update definitions find_associative_op()
// recognizes (the operator over placeholders, the incoming term, the
// identity), and the reason it gives for those it does not. The updates are
// written with the public API and read back from the Func's definition.
#include <kiln/kiln.h>

#include <catch2/catch.hpp>
#include <functional>

#include "analysis/Associativity.h"
#include "ir/Function.h"
#include "ir/IRPrinter.h"

using namespace kiln;
using namespace kiln::internal;

namespace {

AssociativeOp op_of(const Func &f, int update = 0) {
    const Definition &d = f.contents()->updates.at(update);
    return find_associative_op(f.name(), d.args, d.values);
}

std::string text(const Expr &e) { return to_string(e); }

}  // namespace

TEST_CASE("associativity: +, -, *, min, max, && and || with their identities", "[associativity]") {
    ImageParam in(Int(32), 1, "in");
    ImageParam fin(Float(32), 1, "fin");
    Var x("x");
    RDom r(0, 10, "r");
    struct Case {
        std::function<void(Func &)> define;
        std::string op, value, incoming, identity;
    };
    std::vector<Case> cases = {
        {[&](Func &f) { f(x) = 0; f(x) += in(r); }, "+", "(rfactor.x0 + rfactor.y0)", "in(r.x)", "0"},
        {[&](Func &f) { f(x) = 0; f(x) = in(r) + f(x); }, "+", "(rfactor.x0 + rfactor.y0)", "in(r.x)", "0"},
        {[&](Func &f) { f(x) = 0; f(x) -= in(r); }, "+", "(rfactor.x0 + rfactor.y0)", "(0 - in(r.x))", "0"},
        {[&](Func &f) { f(x) = 1; f(x) *= in(r); }, "*", "(rfactor.x0 * rfactor.y0)", "in(r.x)", "1"},
        {[&](Func &f) { f(x) = 0; f(x) = min(f(x), in(r)); }, "min", "min(rfactor.x0, rfactor.y0)", "in(r.x)",
         "2147483647"},
        {[&](Func &f) { f(x) = 0.0f; f(x) = max(fin(r), f(x)); }, "max", "max(rfactor.x0, rfactor.y0)", "fin(r.x)",
         "-inff"},
        {[&](Func &f) { f(x) = cast(Bool(), 1); f(x) = f(x) && in(r) > 0; }, "&&", "(rfactor.x0 && rfactor.y0)",
         "(in(r.x) > 0)", "true"},
        {[&](Func &f) { f(x) = cast(Bool(), 0); f(x) = f(x) || in(r) > 0; }, "||", "(rfactor.x0 || rfactor.y0)",
         "(in(r.x) > 0)", "false"},
    };
    for (auto &c : cases) {
        Func f("f");
        c.define(f);
        AssociativeOp op = op_of(f);
        INFO(c.op);
        REQUIRE(op.found);
        CHECK(op.description == c.op);
        CHECK(op.commutative);
        REQUIRE(op.values.size() == 1);
        CHECK(text(op.values[0]) == c.value);
        CHECK(text(op.incoming[0]) == c.incoming);
        CHECK(text(op.identities[0]) == c.identity);
    }
}

TEST_CASE("associativity: a Tuple is recognized element by element", "[associativity][tuple]") {
    ImageParam in(Float(32), 1, "in");
    Var x("x");
    RDom r(0, 10, "r");
    Func f("f");
    f(x) = Tuple(0.0f, 0.0f);
    f(x) = Tuple(f(x)[0] + in(r), max(f(x)[1], in(r)));
    AssociativeOp op = op_of(f);
    REQUIRE(op.found);
    CHECK(op.description == "+, max");
    CHECK(text(op.values[1]) == "max(rfactor.x1, rfactor.y1)");
    CHECK(text(op.identities[1]) == "-inff");
}

TEST_CASE("associativity: argmax and argmin Tuples are associative, not commutative", "[associativity][tuple]") {
    ImageParam in(Int(32), 1, "in");
    Var x("x");
    RDom r(0, 10, "r");
    Func am("am"), an("an");
    am(x) = Tuple(0, 0);
    am(x) = select(in(r) > am(x)[0], Tuple(in(r), r), Tuple(am(x)));
    AssociativeOp op = op_of(am);
    REQUIRE(op.found);
    CHECK(op.description == "argmax");
    CHECK_FALSE(op.commutative);
    CHECK(text(op.values[0]) == "select((rfactor.y0 > rfactor.x0), rfactor.y0, rfactor.x0)");
    CHECK(text(op.values[1]) == "select((rfactor.y0 > rfactor.x0), rfactor.y1, rfactor.x1)");
    CHECK(text(op.identities[0]) == "-2147483648");
    CHECK(text(op.incoming[1]) == "r.x");
    // The current value on the left of the comparison, keeping it on ties: an argmin.
    an(x) = Tuple(0, 0);
    an(x) = select(an(x)[0] <= in(r), Tuple(an(x)), Tuple(in(r), r));
    op = op_of(an);
    REQUIRE(op.found);
    CHECK(op.description == "argmin");
    CHECK(text(op.identities[0]) == "2147483647");
    // Halide's spelling: max for the value, a select for the index.
    Func hm("hm");
    hm(x) = Tuple(0, 0);
    hm(x) = Tuple(max(hm(x)[0], in(r)), select(hm(x)[0] < in(r), r, hm(x)[1]));
    op = op_of(hm);
    REQUIRE(op.found);
    CHECK(op.description == "argmax");
    CHECK(text(op.values[0]) == "select((rfactor.x0 < rfactor.y0), rfactor.y0, rfactor.x0)");
    // A min over a select that picks the larger value is not an argmin.
    Func bad("bad");
    bad(x) = Tuple(0, 0);
    bad(x) = Tuple(min(bad(x)[0], in(r)), select(bad(x)[0] < in(r), r, bad(x)[1]));
    CHECK_FALSE(op_of(bad).found);
}

TEST_CASE("associativity: what is not recognized, and why", "[associativity]") {
    ImageParam in(Float(32), 1, "in");
    Var x("x");
    RDom r(0, 10, "r");
    auto why = [&](std::function<void(Func &)> define) {
        Func f("f");
        define(f);
        AssociativeOp op = op_of(f);
        CHECK_FALSE(op.found);
        return op.why;
    };
    CHECK(why([&](Func &f) { f(x) = 0.0f; f(x) = f(x) * 2.0f + in(r); }) ==
          "in ((f(x) * 2.000000f) + in(r.x)), f's current value is not an operand of the outer +");
    CHECK(why([&](Func &f) { f(x) = 0.0f; f(x) = f(x - 1) + in(r); }) ==
          "it reads f((x - 1)), at other coordinates than it writes");
    CHECK(why([&](Func &f) { f(x) = 0.0f; f(x) = in(r) - f(x); }) ==
          "in (in(r.x) - f(x)), f's current value is not an operand of the outer -");
    CHECK(why([&](Func &f) { f(x) = 0.0f; f(x) = f(x) / in(r); }) ==
          "its value (f(x) / in(r.x)) is not +, -, *, min, max, && or || of f's current value");
    CHECK(why([&](Func &f) { f(x) = 0.0f; f(x) = f(x) + f(x) * in(r); }) ==
          "the term (f(x) * in(r.x)) combined with f's value also reads f");
    // The online softmax pair is associative, but not in a form the analysis knows.
    std::string online = why([&](Func &f) {
        f(x) = Tuple(-1e30f, 0.0f);
        Expr m = f(x)[0], l = f(x)[1], m2 = max(m, in(r));
        f(x) = Tuple(m2, l * exp(m - m2) + exp(in(r) - m2));
    });
    CHECK_THAT(online, Catch::StartsWith("element 1 of its Tuple: "));
}
