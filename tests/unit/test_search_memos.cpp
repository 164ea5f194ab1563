// The autoscheduler's memos across the candidates it lowers and counts:
// boxes of the statements a Func is read or written in (BoxMemo,
// analysis/Bounds.h) and the counts of the groups at the root (CountMemo,
// analysis/LoopCounts.h). Lowering and counting a sequence of schedules of
// one pipeline with them gives what lowering and counting each afresh does.
#include <catch2/catch.hpp>

#include "analysis/Bounds.h"
#include "analysis/ConcreteSizes.h"
#include "analysis/LoopCounts.h"
#include "autoschedule/CostModel.h"
#include "ir/SimplifyMemo.h"
#include "kiln/kiln.h"
#include "lower/Lower.h"

using namespace kiln;
using namespace kiln::internal;

namespace {

// A blur sharpened and read at offsets, scheduled one of four ways (the
// first two differ in the output's loop only, not in any Func's region); every
// Func named, so that equal schedules lower to equal text.
struct Sharpened {
    ImageParam in{Float(32), 2, "in"};
    Var x{"x"}, y{"y"}, yo{"yo"}, yi{"yi"};
    Func blur_x{"blur_x"}, blur_y{"blur_y"}, sharp{"sharp"}, out{"out"};
    explicit Sharpened(int schedule) {
        Expr w = in.width() - 1, h = in.height() - 1;
        auto at = [&](Expr a, Expr b) { return in(clamp(a, 0, w), clamp(b, 0, h)); };
        blur_x(x, y) = (at(x - 1, y) + at(x, y) + at(x + 1, y)) / 3;
        blur_y(x, y) = (blur_x(x, y - 1) + blur_x(x, y) + blur_x(x, y + 1)) / 3;
        sharp(x, y) = 2.0f * blur_y(x, y) - blur_x(x, y);
        out(x, y) = sharp(x - 1, y) + sharp(x + 1, y + 1) + at(x, y + 2);
        blur_x.compute_root().vectorize(x, 8);
        switch (schedule) {
        case 0: blur_y.compute_root(); sharp.compute_root(); break;
        case 1: blur_y.compute_root(); sharp.compute_root(); out.parallel(y); break;  // the same regions
        case 2:
            blur_y.compute_root().parallel(y);
            sharp.compute_at(out, yo).store_at(out, yo);
            out.split(y, yo, yi, 16).parallel(yo);
            break;
        case 3: blur_y.compute_at(out, yo); sharp.compute_at(out, yi); out.split(y, yo, yi, 8).vectorize(x, 8); break;
        default:  // 3 with the strips in parallel: the same loads
            blur_y.compute_at(out, yo);
            sharp.compute_at(out, yi);
            out.split(y, yo, yi, 8).vectorize(x, 8).parallel(yo);
        }
    }
};

struct Lowered {
    std::string text;
    LoopCounts counts;
    PipelineCost cost;
};

// Schedule s lowered to its loop nest as the search lowers a candidate,
// counted and costed at 700x500; under the memos if given.
Lowered lower_schedule(int s, BoxMemo *boxes, CountMemo *counts) {
    Sharpened p(s);
    std::vector<std::shared_ptr<FunctionContents>> outs = {p.out.contents()};
    ConcreteSizes cs = concrete_sizes(outs, {{"out", {700, 500}}}, "test");
    LowerOptions o;
    o.stop = LowerStop::LoopNest;
    Lowered r;
    Stmt body;
    if (boxes) {
        BoxMemo::Use use(*boxes);
        body = lower(outs, "", {}, Target("x86-64-linux-avx2-fma"), o).body;
    } else {
        body = lower(outs, "", {}, Target("x86-64-linux-avx2-fma"), o).body;
    }
    r.text = to_string(body);
    Environment env = find_environment(outs);
    r.counts = count_loop_nest(body, cs.values, cs.float_values, innermost_storage_dims(env), counts);
    r.cost = predict_cost(r.counts, LoopCounts(), env, {"out"}, {{"in", 700 * 500 * 4}}, MachineModel());
    return r;
}

void check_same(const LoopCounts &a, const LoopCounts &b) {
    CHECK(a.parallel_loops == b.parallel_loops);
    CHECK(a.exact == b.exact);
    CHECK(a.sampled == b.sampled);
    REQUIRE(a.funcs.size() == b.funcs.size());
    for (const auto &[name, f] : a.funcs) {
        INFO("Func " << name);
        REQUIRE(b.funcs.count(name));
        const FuncCounts &g = b.funcs.at(name);
        CHECK(f.stores == g.stores);
        CHECK(f.stage_stores == g.stage_stores);
        CHECK(f.pure_stores == g.pure_stores);
        CHECK(f.loads == g.loads);
        CHECK(f.values_loaded == g.values_loaded);
        CHECK(f.realizations == g.realizations);
        CHECK(f.largest == g.largest);
        CHECK(f.largest_points == g.largest_points);
        CHECK(f.arith == g.arith);
        CHECK(f.divs == g.divs);
        CHECK(f.transcendentals == g.transcendentals);
        CHECK(f.reads == g.reads);
        CHECK(f.memory_reads == g.memory_reads);
        CHECK(f.gathers == g.gathers);
        CHECK(f.scattered_stores == g.scattered_stores);
        CHECK(f.vector_stores == g.vector_stores);
        CHECK(f.serial_reduction_stores == g.serial_reduction_stores);
        CHECK(f.scalar_call_stores == g.scalar_call_stores);
        CHECK(f.vector_lanes == g.vector_lanes);
        CHECK(f.parallel_stores == g.parallel_stores);
        CHECK(f.parallel_tasks == g.parallel_tasks);
    }
}

}  // namespace

TEST_CASE("search memos: boxes from the memo lower each schedule as lowering it afresh does", "[autoschedule]") {
    BoxMemo boxes;
    const std::vector<int> schedules = {0, 1, 2, 3, 1};  // the last again: every box from the memo
    for (size_t i = 0; i < schedules.size(); i++) {
        INFO("schedule " << schedules[i]);
        const int64_t misses = boxes.misses;
        Lowered with = lower_schedule(schedules[i], &boxes, nullptr);
        Lowered without = lower_schedule(schedules[i], nullptr, nullptr);
        CHECK(with.text == without.text);
        if (i == 1) CHECK(boxes.hits > 0);  // the boxes of blur_x, blur_y and sharp, as in schedule 0
        if (i + 1 == schedules.size()) CHECK(boxes.misses == misses);
    }
}

TEST_CASE("search memos: a group's counts from the memo cost what counting it afresh does", "[autoschedule]") {
    CountMemo counts;
    const std::vector<int> schedules = {0, 1, 2, 3, 4, 0};  // the last again: every group from the memo
    for (size_t i = 0; i < schedules.size(); i++) {
        INFO("schedule " << schedules[i]);
        const int64_t misses = counts.misses;
        Lowered with = lower_schedule(schedules[i], nullptr, &counts);
        Lowered without = lower_schedule(schedules[i], nullptr, nullptr);
        check_same(with.counts, without.counts);
        CHECK(with.cost.total.compute == without.cost.total.compute);
        CHECK(with.cost.total.memory == without.cost.total.memory);
        CHECK(with.cost.total.overhead == without.cost.total.overhead);
        if (i == 1) CHECK(counts.hits >= 3);  // the groups of blur_x, blur_y and sharp, as in schedule 0
        // out's group, counted again (in parallel now), loads as it did:
        // its vector accesses' strides from the memo.
        if (schedules[i] == 4) CHECK(counts.stride_hits > 0);
        if (i + 1 == schedules.size()) CHECK(counts.misses == misses);
    }
}

TEST_CASE("search memos: a group is counted again where the budget of loop visits would run out", "[autoschedule]") {
    // Group f's loops need iterating (its inner extent moves with the outer
    // loop, its first and last iterations count differently), g's do not.
    auto v = [](const char *n) { return Variable::make(Int(32), n); };
    Expr x = v("x"), y = v("y");
    auto store = [&](const std::string &f) { return Provide::make(f, Expr(1.0f), {x, y}); };
    auto group = [&](const std::string &f, Expr n) {
        return ProducerConsumer::make(f, true, For::make("y", 0, n, ForType::Serial,
                                                         For::make("x", 0, y + 1, ForType::Serial, store(f))));
    };
    Stmt g = ProducerConsumer::make("g", true, For::make("y", 0, 64, ForType::Serial, store("g")));
    Stmt nest = Block::make(g, group("f", v("n")));
    CountMemo memo;
    LoopCounts first = count_loop_nest(nest, {{"n", 50}}, {}, {}, &memo);
    CHECK(memo.misses == 2);
    LoopCounts again = count_loop_nest(nest, {{"n", 50}}, {}, {}, &memo);
    CHECK(memo.hits == 2);
    check_same(first, again);
    CHECK(again.funcs["f"].stores == 50 * 51 / 2);
    // After a group h that spends the whole budget, g and f are counted
    // again (f's loops from their first iteration), not taken from the memo.
    Stmt spent = Block::make(group("h", v("m")), nest);
    const std::map<std::string, int64_t> values = {{"n", 50}, {"m", kiln_count_loop_visits}};
    LoopCounts after = count_loop_nest(spent, values, {}, {}, &memo);
    CHECK(after.sampled);
    CHECK(memo.hits == 2);
    check_same(after, count_loop_nest(spent, values));
}
