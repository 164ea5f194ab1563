// bound_allocations (lower/BoundAllocations.h): a Func computed per tile of
// a GuardWithIf split, whose region is clamped at the end of its consumer's
// and so known only at run time, gets the constant size its bound proves
// (a stack array); one whose size grows with the output keeps its run-time
// size (a heap block). Before and after the pass on a hand-built statement,
// and through lower().
#include <catch2/catch.hpp>

#include "ir/IRPrinter.h"
#include "kiln/kiln.h"
#include "lower/BoundAllocations.h"
#include "lower/Lower.h"
#include "unit/ir_helpers.h"

using namespace kiln;
using namespace kiln::internal;
using Catch::Contains;
using kiln_test::var;

namespace {

const Target no_asserts = Target::host().with(Target::NoAsserts);

// for (g.y, 0, n) { let f.min = max(base, g.min); let f.max = min(base + 1, g.max)
//   let f.extent = f.max - f.min + 1; allocate f[int16 * (f.extent * width)] { f[0] = 0 } }
Stmt tile_of(const Expr &width) {
    Expr base = var("g.min") + var("g.y") * 2;
    Stmt body = Store::make("f", make_const(Int(16), (int64_t)0), 0);
    Stmt s = Allocate::make("f", Int(16), var("f.extent") * width, body);
    s = LetStmt::make("f.extent", (var("f.max") - var("f.min")) + 1, s);
    s = LetStmt::make("f.max", min(base + 1, var("g.max")), s);
    s = LetStmt::make("f.min", max(base, var("g.min")), s);
    return For::make("g.y", 0, var("n"), ForType::Parallel, s);
}

}  // namespace

TEST_CASE("bound_allocations: a clamped tile's run-time size gets its constant bound", "[lower][bound_allocations]") {
    Stmt before = tile_of(64);
    CHECK_THAT(to_string(before), Contains("allocate f[int16 * (f.extent * 64)]"));
    Stmt after = bound_allocations(before);
    CHECK_THAT(to_string(after), Contains("allocate f[int16 * 128]"));
    // Only the size changes: the extent the strides follow is still the run-time one.
    CHECK_THAT(to_string(after), Contains("let f.extent = ((f.max - f.min) + 1)"));
    Stmt s = after.as<For>()->body;
    while (const LetStmt *let = s.as<LetStmt>()) s = let->body;
    REQUIRE(s.as<Allocate>());
    CHECK(allocation_on_stack(s.as<Allocate>()));
}

TEST_CASE("bound_allocations: no constant bound, one past the stack's share, or no loop keeps the size",
          "[lower][bound_allocations]") {
    Stmt unbounded = tile_of(var("width"));  // rows of a run-time width
    CHECK(bound_allocations(unbounded).same_as(unbounded));
    Stmt large = tile_of(65536);  // 2 rows of 65536 int16: 256 KiB, a heap block of its exact size
    CHECK(bound_allocations(large).same_as(large));
    // Outside every loop (taken once a call) it is not worth the query.
    Stmt once = tile_of(64).as<For>()->body;
    CHECK(bound_allocations(once).same_as(once));
}

TEST_CASE("bound_allocations: a Func per tile of a GuardWithIf split goes on the stack", "[lower][bound_allocations]") {
    // A 2x downsample: g over [2x, 2x + 1] x [2y, 2y + 1] for each point of
    // an 8x8 tile of out, the tile clamped at out's edge.
    ImageParam in(Int(32), 2, "in");
    Var x("x"), y("y"), xi("xi"), yi("yi");
    Func g("g"), out("out");
    g(x, y) = in(x, y) + 1;
    out(x, y) = g(2 * x, 2 * y) - g(2 * x + 1, 2 * y + 1);
    out.tile(x, y, xi, yi, 8, 8, TailStrategy::GuardWithIf);
    g.compute_at(out, x);
    std::string s = out.lowered_stmt(no_asserts);
    CHECK_THAT(s, Contains("allocate g[int32 * 256]"));  // 16 x 16 at most
    CHECK_THAT(s, !Contains("allocate g[int32 * (g.extent"));

    // Computed per row of tiles, g's rows span the output's width: no bound.
    Func g2("g2"), out2("out2");
    g2(x, y) = in(x, y) + 1;
    out2(x, y) = g2(2 * x, 2 * y) - g2(2 * x + 1, 2 * y + 1);
    out2.tile(x, y, xi, yi, 8, 8, TailStrategy::GuardWithIf);
    g2.compute_at(out2, y);
    CHECK_THAT(out2.lowered_stmt(no_asserts), Contains("allocate g2[int32 * (g2.extent.0 * g2.extent.1)]"));
}
