// Inline reductions build an ordinary Func: named after the reduction (or
// as given), of the expression's free Vars in first-use order, with the
// identity as its pure definition and one update over the RDom; a .sched
// file schedules it by that name.
#include <catch2/catch.hpp>

#include "ir/Function.h"
#include "ir/IRPrinter.h"
#include "kiln/kiln.h"
#include "sched_helpers.h"

using namespace kiln;

TEST_CASE("inline reductions: the Func they make", "[inline_reduction]") {
    ImageParam in(Float(32), 2, "in");
    Var x("x"), y("y");
    RDom r(0, 5, "r");
    Func out("out");
    out(x, y) = maximum(in(y, x + r), "widest") + sum(in(x, r));
    Pipeline p(out);
    const auto funcs = p.functions();
    REQUIRE(funcs.count("widest"));
    const internal::FunctionContents &w = *funcs.at("widest").contents();
    CHECK(w.args == std::vector<std::string>{"y", "x"});  // first use order
    CHECK(to_string(w.init.values[0]) == to_string(type_min(Float(32))));
    REQUIRE(w.updates.size() == 1);
    CHECK(to_string(w.updates[0].values[0]) == "max(widest(y, x), in(y, (x + r.x)))");
    // A sum's Func is named "sum" or "sum_<n>"; it has one Var, x.
    bool found = false;
    for (const auto &kv : funcs)
        if (kv.first.rfind("sum", 0) == 0) {
            found = true;
            CHECK(kv.second.contents()->args == std::vector<std::string>{"x"});
        }
    CHECK(found);

    ScheduleFile::parse("widest: compute_root() vectorize(y, 8)\nwidest.update(0): vectorize(y, 8)\n", "t.sched")
        .apply(p, sched_test::avx2());
    CHECK(w.schedule.compute_level.is_root());
}

TEST_CASE("lambda: a Func defined inline", "[inline_reduction][lambda]") {
    Var x("x"), y("y");
    Func t = lambda(x, y, Expr(x) * 10 + y);
    CHECK(t.name().rfind("lambda", 0) == 0);
    CHECK(t.args().size() == 2);
    Buffer<int> out = t.realize({4, 3});
    CHECK(out(3, 2) == 32);
    Func u = lambda(x, t(x, 1) + 1);
    Buffer<int> one = u.realize({3});
    CHECK(one(2) == 22);
    CHECK(u.name() != t.name());
}
