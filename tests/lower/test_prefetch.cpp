// inject_prefetches: the prefetch at the top of loop `at`, for the box the
// iteration uses with loop `from` advanced (before storage flattening: a
// call of the box's first point and its extents), guarded, clamped or left
// alone; and after flattening, an address and (extent, stride) pairs.
#include <catch2/catch.hpp>

#include "before_licm.h"
#include "ir/IRPrinter.h"
#include "kiln/kiln.h"
#include "lower/Lower.h"

using namespace kiln;
using namespace kiln::internal;
using Catch::Contains;

namespace {

const Target no_asserts = Target("x86-64-linux").with(Target::NoAsserts);

struct Pair {
    ImageParam in{Int(32), 2, "in"};
    Var x{"x"}, y{"y"};
    Func f{"f"}, g{"g"};
    Pair() {
        f(x, y) = in(x, y) * 2;
        g(x, y) = f(x, y) + f(x + 1, y);
        f.compute_root();
    }
    std::string until(const char *pass) {
        LowerOptions o;
        o.stop_after = pass;
        return to_string(lower({g.contents()}, "g", {}, no_asserts, o).body);
    }
};

}  // namespace

TEST_CASE("inject_prefetches: the box one iteration of x uses, two rows of y ahead", "[lower][prefetch]") {
    Pair before;
    CHECK_THAT(before.until("inject prefetches"), !Contains("prefetch"));
    Pair p;
    p.g.prefetch(p.f, p.x, p.y, 2, PrefetchBoundStrategy::NonFaulting);
    const std::string s = p.until("inject prefetches");
    // At the top of each iteration of x, before g's value.
    const size_t at = s.find("for (g.s0.x, g.min.0, g.s0.x.loop_extent) {"),
                 pf = s.find("prefetch(f(g.s0.x, (g.s0.y + 2)), 2, 1)"), value = s.find("g(g.s0.x, g.s0.y) = ");
    CHECK(at < pf);
    CHECK(pf < value);
    CHECK(value != std::string::npos);
}

TEST_CASE("inject_prefetches: GuardWithIf and Clamp against the buffer", "[lower][prefetch]") {
    Pair g;
    g.g.prefetch(g.f, g.y, g.y, 2);  // GuardWithIf, the default
    CHECK_THAT(g.until("inject prefetches"), Contains("if (") && Contains("prefetch(f(g.min.0, (g.s0.y + 2))"));
    Pair c;
    c.f.prefetch(c.in, c.y, c.y, 3, PrefetchBoundStrategy::Clamp);  // in f's loop over y
    const std::string s = c.until("inject prefetches");
    CHECK_THAT(s, Contains("prefetch(in(max(g.min.0, in.min.0), max((f.s0.y + 3), in.min.1))"));
    CHECK_THAT(s, Contains("in.extent.1"));
}

TEST_CASE("inject_prefetches: flattened to an address and (extent, stride) pairs", "[lower][prefetch]") {
    Pair p;
    p.g.prefetch(p.f, p.y, p.y, 2, PrefetchBoundStrategy::NonFaulting);
    const std::string s = stmt_before_licm(p.g, no_asserts);
    CHECK_THAT(s, Contains("prefetch(\"f\", (((g.s0.y - g.min.1) + 2) * f.extent.0), max((g.s0.x.loop_extent + 1), 0), "
                           "1, 1, f.extent.0)"));
}
