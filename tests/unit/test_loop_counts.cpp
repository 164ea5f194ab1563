// LoopCounts (analysis/LoopCounts.h): the counts of hand-built loop nests
// equal those of stepping through every iteration, where loops are
// multiplied out, compared at their ends, or split into ranges.
#include <catch2/catch.hpp>

#include "analysis/ConcreteSizes.h"
#include "analysis/LoopCounts.h"
#include "autoschedule/CostModel.h"
#include "kiln/kiln.h"
#include "lower/Lower.h"
#include "kiln/IROperator.h"
#include "unit/ir_helpers.h"

using namespace kiln_test;
using kiln::internal::count_loop_nest;
using kiln::internal::IfThenElse;
using kiln::internal::LetStmt;
using kiln::internal::Provide;

namespace {

Stmt store(const std::string &f) { return Provide::make(f, f32(1), {var("x"), var("y")}); }

// The loop nest of output u (of `extent`) as the search lowers and counts it.
struct Counted {
    kiln::internal::Environment env;
    kiln::internal::LoopCounts counts;
};
Counted count_pipeline(const kiln::Func &u, const std::vector<int> &extent) {
    using namespace kiln::internal;
    std::vector<std::shared_ptr<FunctionContents>> outs = {u.contents()};
    ConcreteSizes cs = concrete_sizes(outs, {{u.name(), extent}}, "test");
    LowerOptions o;
    o.stop = LowerStop::LoopNest;
    Counted c;
    c.env = find_environment(outs);
    c.counts = count_loop_nest(lower(outs, "", {}, kiln::Target::host(), o).body, cs.values, cs.float_values,
                               innermost_storage_dims(c.env));
    return c;
}

}  // namespace

TEST_CASE("loop counts: guards at a loop's ends and inside it count as stepping through would",
          "[loop_counts]") {
    // f is stored where 1 <= x < 15 and y is not the last row, g elsewhere:
    // the outer loop's last iteration and the inner loop's first and last
    // differ from the others.
    for (int64_t n : {1, 2, 5, 7, 8, 9, 13, 100}) {
        Expr x = var("x"), y = var("y"), last = var("n") - 1;
        Stmt body = IfThenElse::make(x >= 1 && x < 15 && y < last, store("f"), store("g"));
        Stmt nest = loop("y", 0, var("n"), loop("x", 0, 16, body));
        auto c = count_loop_nest(nest, {{"n", n}});
        INFO("n = " << n);
        CHECK(c.exact);
        CHECK(c.funcs["f"].stores == 14 * (n - 1));
        CHECK(c.funcs["g"].stores == 16 * n - 14 * (n - 1));
    }
}

TEST_CASE("loop counts: inner extents that move with the loop, directly or through a let", "[loop_counts]") {
    // A triangle: row y has y + 1 points, its extent given by a let.
    for (int64_t n : {3, 6, 10, 33}) {
        Stmt row = LetStmt::make("w", var("y") + 1, loop("x", 0, var("w"), store("t")));
        auto c = count_loop_nest(loop("y", 0, var("n"), row), {{"n", n}});
        INFO("n = " << n);
        CHECK(c.funcs["t"].stores == n * (n + 1) / 2);
    }
    // A middle range: rows 10 to 39 store h, the rest nothing. (A band the
    // probes all miss, rows 10 to 19 of 64, would count as none: the
    // ranges are found by sampling, see LoopCounts.h.)
    Expr y = var("y");
    Stmt band = loop("y", 0, 64, loop("x", 0, 8, IfThenElse::make(y >= 10 && y < 40, store("h"))));
    CHECK(count_loop_nest(band, {}).funcs["h"].stores == 240);
}

TEST_CASE("loop counts: a loop whose body evaluates nothing that moves with it is multiplied", "[loop_counts]") {
    // The guard and the inner loop depend on c only: every iteration of y
    // counts the same.
    Stmt inner = loop("x", 0, var("c") + 4, IfThenElse::make(var("c") > 0, store("k")));
    Stmt nest = loop("c", 0, 3, loop("y", 0, 1000, inner));
    auto c = count_loop_nest(nest, {});
    CHECK(c.funcs["k"].stores == 1000 * (5 + 6));
}

TEST_CASE("loop counts: a bound computed from a float scalar, in float32 as the kernel computes it",
          "[loop_counts]") {
    // extent = int(1 / r) + 2 with r = 0.1f: 1.0f / 0.1f rounds to 10.0f in
    // float32 (in double it is 9.99999985, which would truncate to 9).
    Expr r = var("r", kiln::Float(32));
    Expr extent = kiln::cast(kiln::Int(32), f32(1) / r) + 2;
    Stmt nest = loop("z", 0, extent, loop("x", 0, 4, store("grid")));
    auto known = count_loop_nest(nest, {}, {{"r", f32(0.1)}});
    CHECK(known.exact);
    CHECK(known.funcs["grid"].stores == 12 * 4);
    // A guard comparing floats, and a float scalar not given: not exact.
    Stmt guarded = loop("x", 0, 10, IfThenElse::make(kiln::cast(kiln::Float(32), var("x")) * r < f32(0.55), store("g")));
    CHECK(count_loop_nest(guarded, {}, {{"r", f32(0.1)}}).funcs["g"].stores == 6);
    CHECK_FALSE(count_loop_nest(nest, {}).exact);
}

TEST_CASE("loop counts: a value loaded once for an unrolled block's iterations counts once", "[loop_counts]") {
    // c(x, y) = a(y) * b(x) with y unrolled by 4 inside x: b(x) is loaded
    // once for the 4 rows (a register block's shared operand), a(y) per row.
    using kiln::internal::Call;
    Expr x = var("x"), y = var("y");
    Expr a = Call::make(kiln::Float(32), "a", {y}, Call::Image), b = Call::make(kiln::Float(32), "b", {x}, Call::Image);
    Stmt body = Provide::make("c", a * b, {x, y});
    Stmt nest = loop("x", 0, 100, loop("y", 0, 4, body, kiln::ForType::Unrolled));
    auto c = count_loop_nest(nest, {});
    CHECK(c.funcs["a"].loads == 400);
    CHECK(c.funcs["b"].loads == 400);
    CHECK(c.funcs["a"].values_loaded == 400);
    CHECK(c.funcs["b"].values_loaded == 100);
}

TEST_CASE("loop counts: a subexpression a store computes twice is work once, its reads still twice",
          "[loop_counts]") {
    // d(x) = s * s + s with s = a(x) * a(x + 1) + exp(a(x)): as harris's
    // output names its inlined box sums twice. The CSE pass (lower/CSE.h)
    // makes s a let and a(x) one load, so the work is one s (1 multiply,
    // 1 add, 1 exp), then s * s + s (2), and the memory reads are a(x) and
    // a(x + 1); the report's reads of a stay every occurrence (9).
    using kiln::internal::Call;
    Expr x = var("x");
    Expr ax = Call::make(kiln::Float(32), "a", {x}, Call::Image);
    Expr ax1 = Call::make(kiln::Float(32), "a", {x + 1}, Call::Image);
    auto s = [&] { return ax * ax1 + Call::make(kiln::Float(32), "exp", {ax}, Call::PureExtern); };
    Stmt nest = loop("x", 0, 100, Provide::make("d", s() * s() + s(), {x}));
    auto c = count_loop_nest(nest, {});
    CHECK(c.funcs["d"].arith == 100 * 4);
    CHECK(c.funcs["d"].transcendentals == 100);
    CHECK(c.funcs["d"].memory_reads == 100 * 2);
    CHECK(c.funcs["a"].values_loaded == 100 * 2);
    CHECK(c.funcs["a"].loads == 100 * 9);
    // An index's arithmetic is not the value's: a(x + 1) and the value
    // x + 1 are counted apart (the index's add not at all, the value's once).
    Stmt mixed = loop("x", 0, 10, Provide::make("e", ax1 + kiln::cast(kiln::Float(32), x + 1), {x}));
    CHECK(count_loop_nest(mixed, {}).funcs["e"].arith == 10 * 3);
}

TEST_CASE("loop counts: vector loads and stores follow each Func's order in memory", "[loop_counts]") {
    // t(x, y) = a(x, y), x vectorized 16 wide. Stored x innermost (the
    // default) the store and the load are dense; with t's y innermost in
    // memory (reorder_storage(y, x): innermost_dims {t: 1}) every vector of
    // t is stored lane by lane, and a read of t along x is a gather.
    using kiln::internal::Call;
    Expr x = var("x"), y = var("y");
    Expr a = Call::make(kiln::Float(32), "a", {x, y}, Call::Image);
    Expr t = Call::make(kiln::Float(32), "t", {x, y}, Call::Func);
    Stmt produce = Provide::make("t", a, {x, y});
    Stmt consume = Provide::make("u", t, {x, y});
    auto nest = [&](const Stmt &body) {
        return loop("y", 0, 8, loop("x", 0, 16, body, kiln::ForType::Vectorized));
    };
    auto dense = count_loop_nest(nest(produce), {});
    CHECK(dense.funcs["t"].stores == 128);
    CHECK(dense.funcs["t"].scattered_stores == 0);
    CHECK(dense.funcs["t"].memory_reads == 128);  // one load per vector: counted per point, see LoopCounts.h
    auto by_columns = count_loop_nest(nest(produce), {}, {}, {{"t", 1}});
    CHECK(by_columns.funcs["t"].scattered_stores == 128 * 16);  // 16 stores per vector
    CHECK(by_columns.funcs["t"].memory_reads == 128);  // a, the input, is still read densely
    CHECK(count_loop_nest(nest(consume), {}).funcs["u"].gathers == 0);
    auto gathered = count_loop_nest(nest(consume), {}, {}, {{"t", 1}});
    CHECK(gathered.funcs["u"].gathers == 128);
    CHECK(gathered.funcs["u"].memory_reads == 128 * 16);
    // Vectorized along t's innermost dimension in memory, y: dense again.
    Stmt by_y = loop("x", 0, 16, loop("y", 0, 8, produce, kiln::ForType::Vectorized));
    CHECK(count_loop_nest(by_y, {}, {}, {{"t", 1}}).funcs["t"].scattered_stores == 0);
    CHECK(count_loop_nest(by_y, {}).funcs["t"].scattered_stores == 128 * 8);
}

TEST_CASE("cost model: a vector stored lane by lane costs a store per lane", "[loop_counts][autoschedule]") {
    // t computed at the root, 16 lanes along x, read by u along x. Stored y
    // innermost (reorder_storage(y, x)), each vector of t is a scatter and
    // each of u's reads a gather: 16 operations where a dense one is 1.
    using namespace kiln;
    using namespace kiln::internal;
    auto cost = [](bool by_columns) {
        ImageParam in(Float(32), 2, "in");
        Var x("x"), y("y");
        Func t("t"), u("u");
        t(x, y) = in(x, y) * 2.0f;
        u(x, y) = t(x, y) + 1.0f;
        t.compute_root().vectorize(x, 16);
        u.vectorize(x, 16);
        if (by_columns) t.reorder_storage(y, x);
        Counted c = count_pipeline(u, {256, 64});
        MachineModel m;
        m.vector_bytes = 64;  // 16 floats a register
        return predict_cost(c.counts, LoopCounts(), c.env, {"u"}, {}, m);
    };
    PipelineCost dense = cost(false), scattered = cost(true);
    CHECK(dense.funcs.at("t").scatters == 0);
    CHECK(scattered.funcs.at("t").scatters == 16);
    CHECK(dense.funcs.at("u").gathers == 0);
    CHECK(scattered.funcs.at("u").gathers == 1);
    // Per vector t gains 16 stores (the model counts a dense vector store
    // with the arithmetic, not as an operation of its own), on one core (no
    // parallel loop): 1024 vectors.
    const MachineModel m;
    CHECK(scattered.funcs.at("t").terms.compute - dense.funcs.at("t").terms.compute ==
          Approx(1024 * 16 / m.ops_per_cycle / m.ghz));
    CHECK(scattered.total.compute > dense.total.compute);
}

TEST_CASE("loop counts: a clamped index loads lanes as the unclamped one does", "[loop_counts]") {
    // u(x) = a(clamp(x - 1, 0, 99)), x vectorized 16 wide (repeat_edge's
    // access): partition_loops leaves the clamp to the loop's ends, so the
    // vectors load densely, one load each. A lookup through another load's
    // value stays a gather.
    using kiln::internal::Call;
    Expr x = var("x");
    Expr clamped = kiln::min(kiln::max(x - 1, 0), 99);
    Expr a = Call::make(kiln::Float(32), "a", {clamped}, Call::Image);
    Stmt nest = loop("x", 0, 128, Provide::make("u", a, {x}), kiln::ForType::Vectorized);
    auto c = count_loop_nest(nest, {});
    CHECK(c.funcs["u"].gathers == 0);
    CHECK(c.funcs["u"].memory_reads == 128);
    Expr index = Call::make(kiln::Int(32), "idx", {x}, Call::Image);
    Expr looked_up = Call::make(kiln::Float(32), "a", {kiln::min(kiln::max(index, 0), 99)}, Call::Image);
    auto g = count_loop_nest(loop("x", 0, 128, Provide::make("v", looked_up, {x}), kiln::ForType::Vectorized), {});
    CHECK(g.funcs["v"].gathers == 128);
}

TEST_CASE("loop counts: a vector access's stride through lets that name lets, one shadowing another",
          "[loop_counts]") {
    // let s = 1; for y { let s = s * 2; for x vectorized { let i = x * s; let j = x + 1;
    //   u(x, y) = a(i + y, y) + b(y, j) } }
    // a's index, with the lets put in innermost first, is x * (1 * 2) + y:
    // stride 2, two dense loads a vector. b's dimension 1 moves with x
    // through j: a load per lane.
    using kiln::internal::Call;
    Expr x = var("x"), y = var("y"), s = var("s");
    Expr by_i = Call::make(kiln::Float(32), "a", {var("i") + y, y}, Call::Image);
    Expr by_j = Call::make(kiln::Float(32), "b", {y, var("j")}, Call::Image);
    Stmt body = LetStmt::make("i", x * s, LetStmt::make("j", x + 1, Provide::make("u", by_i + by_j, {x, y})));
    Stmt inner = LetStmt::make("s", s * 2, loop("x", 0, 16, body, kiln::ForType::Vectorized));
    auto c = count_loop_nest(LetStmt::make("s", 1, loop("y", 0, 8, inner)), {});
    CHECK(c.funcs["u"].stores == 128);
    CHECK(c.funcs["u"].memory_reads == 128 * (2 + 16));
    CHECK(c.funcs["u"].gathers == 128 * 2);  // both count: neither is one load a vector
    // Without the inner let, a's stride is 1.
    Stmt unshadowed = loop("y", 0, 8, loop("x", 0, 16, body, kiln::ForType::Vectorized));
    CHECK(count_loop_nest(LetStmt::make("s", 1, unshadowed), {}).funcs["u"].memory_reads == 128 * (1 + 16));
}

TEST_CASE("loop counts: a let that does not move with the vectorized loop strides by its value there",
          "[loop_counts]") {
    // let l = min(w, 1); for x vectorized { u(x) = a(x * l) }, w = 5: l is 1
    // where the store runs, so a's lanes are adjacent, one load a vector
    // (min(w, 1) itself is no constant: put in, it left a gather).
    using kiln::internal::Call;
    Expr x = var("x"), w = var("w");
    Expr scaled = Call::make(kiln::Float(32), "a", {x * var("l")}, Call::Image);
    Stmt nest = LetStmt::make("l", kiln::min(w, 1), loop("x", 0, 64, Provide::make("u", scaled, {x}),
                                                          kiln::ForType::Vectorized));
    auto c = count_loop_nest(nest, {{"w", 5}});
    CHECK(c.funcs["u"].gathers == 0);
    CHECK(c.funcs["u"].memory_reads == 64);
    // A chain of lets, each naming the one before three times (as a
    // pyramid's regions name the level before): put in whole, the index
    // would be 3^40 terms; by value it is x + w.
    Stmt body = Provide::make("v", Call::make(kiln::Float(32), "a", {x + var("c40")}, Call::Image), {x});
    body = loop("x", 0, 64, body, kiln::ForType::Vectorized);
    for (int i = 40; i >= 1; i--) {
        Expr prev = var("c" + std::to_string(i - 1));
        body = LetStmt::make("c" + std::to_string(i), prev + prev - prev, body);
    }
    auto chained = count_loop_nest(LetStmt::make("c0", w, body), {{"w", 5}});
    CHECK(chained.funcs["v"].gathers == 0);
    CHECK(chained.funcs["v"].memory_reads == 64);
}

TEST_CASE("loop counts: a select the same in every lane counts one branch's work and loads, one that is not both",
          "[loop_counts]") {
    // for c { for x vectorized 16 { u(x, c) = select(cond, a(x) + 1, (b(x) * 2 + 3) * 4) } }
    // With cond = (c == 0) the kernel evaluates one branch (a C
    // conditional): the comparison, the select and the dearer branch's 3
    // operations, and the loads of the branch with more (one vector of a
    // or of b). With cond = (x % 2 == 0) the lanes differ and both branches
    // are computed and blended: 1 + 1 + 1 + 3 operations, both loads. The
    // report's reads count both branches' either way.
    using kiln::internal::Call;
    using kiln::internal::Select;
    Expr x = var("x"), c = var("c");
    Expr a = Call::make(kiln::Float(32), "a", {x}, Call::Image), b = Call::make(kiln::Float(32), "b", {x}, Call::Image);
    auto count = [&](const Expr &cond, kiln::ForType inner) {
        Stmt store = Provide::make("u", Select::make(cond, a + f32(1), (b * f32(2) + f32(3)) * f32(4)), {x, c});
        return count_loop_nest(loop("c", 0, 3, loop("x", 0, 16, store, inner)), {});
    };
    auto uniform = count(c == 0, kiln::ForType::Vectorized);
    CHECK(uniform.funcs["u"].stores == 48);
    CHECK(uniform.funcs["u"].arith == 48 * 5);
    CHECK(uniform.funcs["u"].reads == 48 * 2);
    CHECK(uniform.funcs["u"].memory_reads == 48);
    auto blended = count(x % 2 == 0, kiln::ForType::Vectorized);
    CHECK(blended.funcs["u"].arith == 48 * 6);
    CHECK(blended.funcs["u"].memory_reads == 48 * 2);
    CHECK(blended.funcs["u"].divs == 48);
    CHECK(blended.funcs["u"].reads == 48 * 2);
    // Without a vectorized loop every condition is one value at a time.
    CHECK(count(x % 2 == 0, kiln::ForType::Serial).funcs["u"].arith == 48 * 5);
}

TEST_CASE("loop counts: a store calling exp outside a vectorized loop runs one lane at a time",
          "[loop_counts][autoschedule]") {
    // g++ vectorizes a plain loop the schedule left serial, but not one
    // through Kiln's math routines: the model divides the first by the
    // host's width, the second not at all.
    using namespace kiln;
    using namespace kiln::internal;
    auto cost = [](bool with_exp, bool vectorized) {
        ImageParam in(Float(32), 2, "in");
        Var x("x"), y("y");
        Func u("u");
        u(x, y) = with_exp ? exp(in(x, y)) : in(x, y) * 2.0f;
        if (vectorized) u.vectorize(x, 16);
        Counted c = count_pipeline(u, {256, 64});
        CHECK(c.counts.funcs.at("u").scalar_call_stores == (with_exp && !vectorized ? 256 * 64 : 0));
        MachineModel m;
        m.unvectorized_lanes = 16;
        m.vector_bytes = 64;
        return predict_cost(c.counts, LoopCounts(), c.env, {"u"}, {}, m).funcs.at("u").terms.compute;
    };
    MachineModel m;
    const double per_op = 1 / m.ops_per_cycle / m.ghz, points = 256 * 64;
    // 1 multiply + 1 load a point, 16 lanes at a time either way.
    CHECK(cost(false, false) == Approx(points * 2 * per_op / 16));
    CHECK(cost(false, true) == Approx(points * 2 * per_op / 16));
    // 1 load and 1 exp a point: a lane at a time unless vectorized.
    const double with_exp = points * (per_op + m.transcendental_cycles / m.ghz);
    CHECK(cost(true, false) == Approx(with_exp));
    CHECK(cost(true, true) == Approx(with_exp / 16));
}

TEST_CASE("cost model: a vector of a narrow type computing floats takes a register per float vector",
          "[loop_counts][autoschedule]") {
    // A uint8 store vectorized 32 lanes wide (AVX2's natural width for
    // uint8) whose value is float arithmetic computes 4 registers of 8
    // floats a vector; a float store of 8 lanes, one. Until session 56 the
    // model divided either's operations by its lanes alone, so a uint8
    // output cost a quarter of the float arithmetic it does.
    using namespace kiln;
    using namespace kiln::internal;
    auto compute = [](Type t, int lanes, int64_t vector_bytes) {
        ImageParam in(Float(32), 2, "in");
        Var x("x"), y("y");
        Func u("u");
        u(x, y) = cast(t, in(x, y) * 2.0f + 1.0f);
        u.vectorize(x, lanes);
        Counted c = count_pipeline(u, {256, 64});
        CHECK(c.counts.funcs.at("u").vector_value_bytes == 4);
        MachineModel m;
        m.vector_bytes = vector_bytes;
        return predict_cost(c.counts, LoopCounts(), c.env, {"u"}, {}, m).funcs.at("u").terms.compute;
    };
    // 32 uint8 lanes: 8 floats a register of 32 bytes, 32 of 128.
    CHECK(compute(UInt(8), 32, 32) == Approx(4 * compute(UInt(8), 32, 128)));
    // 8 float lanes fit a register of 32 bytes: no wider register helps.
    CHECK(compute(Float(32), 8, 32) == Approx(compute(Float(32), 8, 128)));
}

TEST_CASE("cost model: outputs written where their size fits, pages only of blocks the runtime frees",
          "[loop_counts][autoschedule]") {
    // An output of 256 KiB is written at L3's bandwidth (as an input of its
    // size is read), one larger than L3 at DRAM's; an intermediate within
    // kiln_heap_large_keep pays no page faults (the runtime keeps its block
    // for the next call).
    using namespace kiln;
    using namespace kiln::internal;
    ImageParam in(Float(32), 2, "in");
    Var x("x"), y("y");
    Func t("t"), u("u");
    t(x, y) = in(x, y) * 2.0f;
    u(x, y) = t(x, y) + 1.0f;
    t.compute_root();
    Counted c = count_pipeline(u, {256, 256});
    MachineModel m;
    m.dram_bytes_per_ns = m.dram_total_bytes_per_ns = 1;  // far from L3's
    PipelineCost fits = predict_cost(c.counts, LoopCounts(), c.env, {"u"}, {}, m);
    CHECK(fits.funcs.at("u").terms.memory == Approx(256 * 256 * 4 / m.l3_bytes_per_ns));
    CHECK(fits.funcs.at("t").terms.overhead == Approx(m.allocation_ns));  // one allocation, no pages
    m.l3_bytes = 64 << 10;
    PipelineCost beyond = predict_cost(c.counts, LoopCounts(), c.env, {"u"}, {}, m);
    CHECK(beyond.funcs.at("u").terms.memory == Approx(256 * 256 * 4 / m.dram_bytes_per_ns));
}

TEST_CASE("loop counts: a nest that would take more than the budget of loop visits is sampled",
          "[loop_counts]") {
    // The innermost extent changes irregularly with both outer variables,
    // so no range of either outer loop counts the same throughout: counting
    // visits the innermost loop once per (y, x), n * n times in all.
    Expr x = var("x"), y = var("y"), k = var("k");
    auto nest = [&](Expr n) {
        Expr extent = ((x * y + x) % 7) + 1;
        return loop("y", 0, n, loop("x", 0, n, loop("k", 0, extent, Provide::make("f", f32(1), {x, y, k}))));
    };
    // Below the budget: exact, equal to stepping through.
    int64_t small = 60, want = 0;
    for (int64_t yy = 0; yy < small; yy++)
        for (int64_t xx = 0; xx < small; xx++) want += ((xx * yy + xx) % 7) + 1;
    auto c = count_loop_nest(nest(var("n")), {{"n", small}});
    CHECK(c.exact);
    CHECK_FALSE(c.sampled);
    CHECK(c.funcs["f"].stores == want);
    // Past it (900 * 900 > kiln_count_loop_visits): the loops left are
    // counted from their first iteration, and the counts say so.
    REQUIRE(900 * 900 > kiln::internal::kiln_count_loop_visits);
    auto big = count_loop_nest(nest(var("n")), {{"n", 900}});
    CHECK(big.sampled);
    CHECK(big.funcs["f"].stores >= 900 * 900);      // every (y, x) at least once
    CHECK(big.funcs["f"].stores <= 900 * 900 * 7);  // and at most the widest extent
}

TEST_CASE("concrete sizes: a bound is constant through the values and the lets it names", "[loop_counts]") {
    using kiln::internal::constant_value;
    std::map<std::string, Expr> values = {{"out.extent.0", Expr(512)}, {"out.min.0", Expr(0)}};
    // Through the values alone.
    CHECK(constant_value(var("out.min.0") + var("out.extent.0") - 1, values) == 511);
    // Through a chain of lets, each in terms of the next.
    std::map<std::string, Expr> lets = {{"f.s0.x.max", var("f.s0.x.min") + var("out.extent.0") - 1},
                                        {"f.s0.x.min", var("out.min.0") - 2}};
    CHECK(constant_value(var("f.s0.x.max") - var("f.s0.x.min") + 1, values, lets) == 512);
    CHECK(constant_value(var("f.s0.x.max"), values, lets) == 509);
    // A value nothing gives stays unknown, with or without lets.
    CHECK_FALSE(constant_value(var("in.extent.1"), values).has_value());
    CHECK_FALSE(constant_value(var("f.s0.x.max") + var("n"), values, lets).has_value());
}

namespace {

// out = A B in register blocks of 2 vectors of 8 x 4 rows, columns of
// blocks outermost; B (256 floats a row: 1 KiB) optionally packed per
// column panel. K = 64.
kiln::Func blocked_product(bool packed) {
    using namespace kiln;
    ImageParam A(Float(32), 2, "A"), B(Float(32), 2, "B");
    Var x("x"), y("y"), xo("xo"), xi("xi"), yo("yo"), yi("yi");
    RDom k(0, 64, "k");
    Func matmul("matmul"), out("out");
    matmul(x, y) = 0.0f;
    matmul(x, y) += A(k, y) * B(x, k);
    out(x, y) = matmul(x, y);
    out.split(x, xo, xi, 16).split(y, yo, yi, 4).reorder(xi, yi, yo, xo).vectorize(xi, 8).unroll(xi).unroll(yi);
    matmul.compute_at(out, yo).vectorize(x, 8).unroll(x).unroll(y);
    matmul.update(0).reorder(x, y, k).vectorize(x, 8).unroll(x).unroll(y);
    if (packed) B.in(matmul).compute_at(out, xo).vectorize(Var("_0"), 8);
    return out;
}

}  // namespace

TEST_CASE("loop counts: loads a multiple of 1 KiB apart per iteration of the innermost serial loop are kept",
          "[loop_counts]") {
    // B(x, k) in the blocks: a row of B (1 KiB) apart per k, 2 vectors of 8
    // floats per k, loaded once per block (not per row of it).
    using namespace kiln::internal;
    Counted c = count_pipeline(blocked_product(false), {256, 64});
    const auto &aliased = c.counts.funcs.at("matmul").aliased;
    REQUIRE(aliased.size() == 1);
    const auto &[a, loads] = *aliased.begin();
    CHECK(a.read == "B");
    CHECK(a.loop == "matmul.s1.k.x");
    CHECK(a.stride == 1024);
    CHECK(a.access_bytes == 32);
    CHECK(a.per_iteration == 2);
    CHECK(a.iterations == 64);
    CHECK(loads == 256 / 16 * 64 / 4 * 64 * 2);  // blocks x k x 2 vectors
    // Packed per column panel, the blocks read B_in_matmul 16 floats apart
    // per k, and the packing reads B along its vectorized rows.
    Counted p = count_pipeline(blocked_product(true), {256, 64});
    for (const auto &[f, fc] : p.counts.funcs) {
        INFO(f);
        CHECK(fc.aliased.empty());
    }
}

TEST_CASE("cost model: aliased loads come from the level that holds a pass of their loop at that stride",
          "[loop_counts][autoschedule]") {
    // One pass of k: 64 iterations of one line (2 vectors of 32 bytes) =
    // 4 KiB, which a 32 KiB L1 holds by size; 1 KiB apart, its 8 ways of
    // 4 KiB reach 4 sets of 64 per line of an iteration: 2 KiB. So the
    // lines touched again (all but one per line of B) come from L2.
    using namespace kiln;
    using namespace kiln::internal;
    Counted c = count_pipeline(blocked_product(false), {256, 64});
    MachineModel m;
    m.threads = 1;
    const int64_t b_bytes = 256 * 64 * 4;
    PipelineCost cost = predict_cost(c.counts, LoopCounts(), c.env, {"out"}, {{"B", b_bytes}, {"A", 64 * 64 * 4}}, m);
    const FuncCost &mm = cost.funcs.at("matmul");
    REQUIRE(mm.aliased.size() == 1);
    const AliasedCost &a = mm.aliased[0];
    CHECK(a.pass_bytes == 4096);
    CHECK(a.held_bytes == 2048);
    CHECK(a.fits == "L1");
    CHECK(a.from == "L2");
    const double touched = 256 / 16 * 64 / 4 * 64;  // blocks x k, a line each
    CHECK(a.ns == Approx((touched - b_bytes / 64.0) * 64 / m.l2_bytes_per_ns));
    CHECK(mm.terms.aliasing == Approx(a.ns));
    CHECK(cost.total.aliasing == Approx(a.ns));
    CHECK(a.to_string() == "B 1.0 KiB apart per k.x: 4.0 KiB a pass, L1 holds 2.0 KiB of it at that stride: from L2, +" +
                               ms(a.ns));
    CHECK(cost.total.to_string().find(", aliasing ") != std::string::npos);
    // An L1 of twice the size holds the pass at that stride: no term.
    m.l1_bytes = 64 << 10;
    PipelineCost fits = predict_cost(c.counts, LoopCounts(), c.env, {"out"}, {{"B", b_bytes}}, m);
    CHECK(fits.funcs.at("matmul").aliased.empty());
    CHECK(fits.total.aliasing == 0);
    CHECK(fits.total.to_string().find("aliasing") == std::string::npos);
    // Packed, nothing is loaded at an aliasing stride.
    Counted p = count_pipeline(blocked_product(true), {256, 64});
    m.l1_bytes = 32 << 10;
    CHECK(predict_cost(p.counts, LoopCounts(), p.env, {"out"}, {{"B", b_bytes}}, m).total.aliasing == 0);
}
