// hoist_loop_invariants (dsl/lower/HoistLoopInvariants.h): hand-built loops
// before and after, and pipelines whose lowered statement computes their
// invariant divisions once, with the values they had.
#include <catch2/catch.hpp>

#include "before_licm.h"
#include "ir/IRPrinter.h"
#include "kiln/kiln.h"
#include "lower/HoistLoopInvariants.h"
#include "unit/ir_helpers.h"

using namespace kiln;
using namespace kiln::internal;
using kiln_test::f32;
using kiln_test::loop;
using kiln_test::var;

namespace {

std::string text(const Stmt &s) { return to_string(s); }

Stmt store(const std::string &buf, Expr value, Expr index) { return Store::make(buf, std::move(value), std::move(index)); }

const Target no_asserts = Target::host().with(Target::NoAsserts);

// The text of the innermost loop named `name` in s (to its first "}").
std::string loop_body(const std::string &s, const std::string &name) {
    size_t at = s.find("for (" + name + ", ");
    if (at == std::string::npos) return "";
    return s.substr(at, s.find('}', at) - at);
}

}  // namespace

TEST_CASE("hoist_loop_invariants: a division of the outer loop's variable is computed once per outer iteration",
          "[lower][licm]") {
    Expr t = var("t"), e = var("e"), o = var("o"), x = var("x");
    // The max filter's fused loop: per x, the strip t / e and the output's min.
    Stmt inner = loop("x", 0, 32, store("f", f32(1), (x + ((t / e) * 256)) + o));
    Stmt s = loop("t", 0, var("n"), inner);
    CHECK(text(hoist_loop_invariants(s)) ==
          "for (t, 0, n) {\n"
          " let licm.0 = (((t / e) * 256) + o)\n"
          " for (x, 0, 32) {\n"
          "  f[(x + licm.0)] = 1.000000f\n"
          " }\n"
          "}\n");
}

TEST_CASE("hoist_loop_invariants: an invariant let moves out of every loop it does not depend on", "[lower][licm]") {
    Expr p = var("p"), q = var("q"), x = var("x"), y = var("y");
    Stmt body = LetStmt::make("a", p / q, store("f", Cast::make(Float(32), var("a") + x), x + y * 8));
    Stmt s = loop("y", 0, 4, loop("x", 0, 8, body));
    CHECK(text(hoist_loop_invariants(s)) ==
          "let a = (p / q)\n"
          "for (y, 0, 4) {\n"
          " for (x, 0, 8) {\n"
          "  f[(x + (y * 8))] = float32((a + x))\n"
          " }\n"
          "}\n");
}

TEST_CASE("hoist_loop_invariants: loads, lets of the body and operations of leaves stay", "[lower][licm]") {
    Expr p = var("p"), q = var("q"), x = var("x");
    // A load may read what the loop stores; b names a let of the body; the
    // C++ compiler hoists p * 8 itself.
    Expr load = Load::make(Int(32), "g", p / q);
    Stmt body = LetStmt::make("b", x * 2,
                              store("f", Cast::make(Float(32), (load + (var("b") / q)) + (p * 8)), (x + p) + q));
    Stmt s = loop("x", 0, 8, body);
    // The division inside the load's index is named, the load stays; so do
    // b / q and p * 8; x + p + q is x + (p + q), its invariant terms named.
    CHECK(text(hoist_loop_invariants(s)) ==
          "let licm.0 = (p / q)\n"
          "let licm.1 = (p + q)\n"
          "for (x, 0, 8) {\n"
          " let b = (x * 2)\n"
          " f[(x + licm.1)] = float32(((g[licm.0] + (b / q)) + (p * 8)))\n"
          "}\n");
}

TEST_CASE("hoist_loop_invariants: a parallel loop nested in a parallel loop stays directly inside it",
          "[lower][licm]") {
    // iir_blur's channels, then strips of rows: one OpenMP loop over both
    // (CodeGen_C's collapse(2)) only if nothing comes between them. What
    // varies with c alone goes back inside the inner loop; what varies with
    // neither moves before both.
    Expr c = var("c"), yo = var("yo"), x = var("x"), p = var("p"), q = var("q");
    Stmt body = loop("x", 0, 8, store("f", f32(1), (x + (yo * 8)) + ((c * q) + (p / q))));
    Stmt s = loop("c", 0, 3, loop("yo", 0, var("n"), body, ForType::Parallel), ForType::Parallel);
    CHECK(text(hoist_loop_invariants(s)) ==
          "let licm.2 = (p / q)\n"
          "parallel for (c, 0, 3) {\n"
          " parallel for (yo, 0, n) {\n"
          "  let licm.1 = ((c * q) + licm.2)\n"
          "  let licm.0 = ((yo * 8) + licm.1)\n"
          "  for (x, 0, 8) {\n"
          "   f[(x + licm.0)] = 1.000000f\n"
          "  }\n"
          " }\n"
          "}\n");
}

TEST_CASE("hoist_loop_invariants: an edge loop's and the steady loop's offsets named alike become one let",
          "[lower][licm]") {
    // A loop's edges and steady state (partition_loops) index with their
    // invariant terms associated differently: each loop's offset is a let of
    // its own before the two, until the outer loop's naming regroups both
    // as (y * 8) + licm.N. Then the second goes.
    Expr x = var("x"), y = var("y"), p = var("p"), q = var("q");
    Stmt edge = loop("x", 0, 8, store("f", f32(1), (x + ((y * 8) + p)) - q));
    Stmt steady = loop("x", 8, 8, store("f", f32(2), (x + (p + (y * 8))) - q));
    Stmt s = loop("y", 0, 4, Block::make(edge, steady));
    CHECK(text(hoist_loop_invariants(s)) ==
          "let licm.2 = (p - q)\n"
          "for (y, 0, 4) {\n"
          " let licm.0 = ((y * 8) + licm.2)\n"
          " for (x, 0, 8) {\n"
          "  f[(x + licm.0)] = 1.000000f\n"
          " }\n"
          " for (x, 8, 8) {\n"
          "  f[(x + licm.0)] = 2.000000f\n"
          " }\n"
          "}\n");
}

TEST_CASE("hoist_loop_invariants: a vector's scalar parts are named, not the vector", "[lower][licm]") {
    Expr p = var("p"), q = var("q"), x = var("x");
    Expr v = Broadcast::make(Cast::make(Float(32), p / q), 8) + Load::make(Float(32, 8), "g", Ramp::make(x * 8, 1, 8));
    Stmt s = loop("x", 0, 4, store("f", v, Ramp::make(x * 8, 1, 8)));
    CHECK(text(hoist_loop_invariants(s)) ==
          "let licm.0 = float32((p / q))\n"
          "for (x, 0, 4) {\n"
          " f[ramp((x * 8), 1, 8)] = (x8(licm.0) + g[ramp((x * 8), 1, 8)])\n"
          "}\n");
}

TEST_CASE("hoist_loop_invariants: nothing invariant, nothing changes", "[lower][licm]") {
    Expr x = var("x"), y = var("y");
    Stmt s = loop("y", 0, 4, loop("x", 0, 8, store("f", Cast::make(Float(32), (x / y) + y), (x + (y * 8)) + 3)));
    CHECK(hoist_loop_invariants(s).same_as(s));
}

TEST_CASE("hoist_loop_invariants: a fused parallel loop divides once per task, with the values it had",
          "[lower][licm]") {
    // The max filter's schedule of its output: strips of 16 columns, the
    // strip and the channel fused into one parallel loop t, so that the
    // strip is t / channels and the channel t % channels.
    ImageParam in(Float(32), 3, "lin");
    Var x("x"), y("y"), c("c"), tx("tx"), t("t");
    Func out("lout");
    out(x, y, c) = in(x, y, c) * 2.0f + cast<float>(x + c);
    out.split(x, tx, x, 16).reorder(x, y, c, tx).fuse(c, tx, t).parallel(t).vectorize(x, 8);
    std::string s = out.lowered_stmt(no_asserts);
    INFO(s);
    // Divided per vector before, once per t, before the y loop, after.
    std::string before = stmt_before_licm(out, no_asserts);
    CHECK(before.substr(before.find("for (lout.s0.y, ")).find(" / ") != std::string::npos);
    std::string y_loop = s.substr(s.find("for (lout.s0.y, "));
    CHECK(y_loop.find(" / ") == std::string::npos);
    CHECK(y_loop.find(" % ") == std::string::npos);
    CHECK(s.find("let licm.") != std::string::npos);

    Buffer<float> im(40, 5, 3);
    im.for_each_element([&](int xx, int yy, int cc) { im(xx, yy, cc) = (float)((xx * 7 + yy * 13 + cc * 5) % 17); });
    in.set(im);
    Buffer<float> o(40, 5, 3);
    out.realize(o);
    o.for_each_element([&](int xx, int yy, int cc) { CHECK(o(xx, yy, cc) == im(xx, yy, cc) * 2.0f + (float)(xx + cc)); });
}

TEST_CASE("hoist_loop_invariants: a division by zero named before a loop is zero, as in the loop", "[lower][licm]") {
    // y / d is invariant in the x loop and computed before it; d = 0 gives
    // 0 (IR.h), whether or not the x loop runs.
    ImageParam in(Int(32), 2, "zin");
    Param<int> d("zd");
    Var x("x"), y("y");
    Func out("zout");
    out(x, y) = in(x, y) + ((y + 7) / d) * 3 + (y * y) % d;
    std::string s = out.lowered_stmt(no_asserts);
    INFO(s);
    CHECK(loop_body(stmt_before_licm(out, no_asserts), "zout.s0.x").find(" / ") != std::string::npos);
    CHECK(loop_body(s, "zout.s0.x").find(" / ") == std::string::npos);
    CHECK(loop_body(s, "zout.s0.x").find(" % ") == std::string::npos);

    Buffer<int> im(6, 4);
    im.for_each_element([&](int xx, int yy) { im(xx, yy) = xx - 3 * yy; });
    in.set(im);
    for (int dv : {0, 3, -2}) {
        d.set(dv);
        Buffer<int> o(6, 4);
        out.realize(o);
        o.for_each_element([&](int xx, int yy) {
            int64_t expect = im(xx, yy) + kiln_test::euclid_div(yy + 7, dv) * 3 + kiln_test::euclid_mod(yy * yy, dv);
            CHECK(o(xx, yy) == expect);
        });
    }
}
