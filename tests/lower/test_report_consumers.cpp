// The fusion report on a producer with two consumers, t = a * b used by
// z1 = t + 1 and z2 = t - 1 (two 64x48 outputs), under recompute (inlined,
// or one wrapper per consumer) and materialize-once (root, or one row shared
// through compute_with): evaluations, recompute factor and bytes worked out
// by hand.
#include <catch2/catch.hpp>

#include "kiln/kiln.h"

using namespace kiln;

namespace {

struct Users {
    ImageParam a{Float(32), 2, "a"}, b{Float(32), 2, "b"};
    Var x{"x"}, y{"y"};
    Func t{"t"}, z1{"z1"}, z2{"z2"};
    Users() {
        t(x, y) = a(x, y) * b(x, y);
        z1(x, y) = t(x, y) + 1.0f;
        z2(x, y) = t(x, y) - 1.0f;
    }
    PipelineReport report() {
        return Pipeline({z1, z2}).report({{"z1", {64, 48}}, {"z2", {64, 48}}}, Target::host(), 1024);
    }
};

const FuncReport &find(const PipelineReport &r, const std::string &name) {
    for (const auto &f : r.funcs)
        if (f.name == name) return f;
    FAIL("no report for " << name);
    return r.funcs[0];
}

const int64_t points = 64 * 48;

}  // namespace

TEST_CASE("report: an inlined producer is computed once per consumer", "[lower][report]") {
    Users u;
    PipelineReport r = u.report();
    const FuncReport &t = find(r, "t");
    CHECK(t.inlined);
    CHECK(t.compute_level == "inline");
    CHECK(t.points_computed == 2 * points);  // one evaluation in z1, one in z2, per point
    CHECK(t.points_computed_unfused == points);
    CHECK(t.recompute == Approx(2.0));
    CHECK(t.memory_bytes == 0);
    CHECK(r.to_text().find("(inlined)") != std::string::npos);
    CHECK(r.to_json().find("\"inlined\": true") != std::string::npos);
}

TEST_CASE("report: compute_root materializes the producer once, through memory", "[lower][report]") {
    Users u;
    u.t.compute_root();
    PipelineReport r = u.report();
    const FuncReport &t = find(r, "t");
    CHECK_FALSE(t.inlined);
    CHECK(t.points_computed == points);
    CHECK(t.recompute == Approx(1.0));
    CHECK(t.reads == 2 * points);
    CHECK(t.memory_bytes == 2 * points * 4);  // 12 KiB > 1 KiB: written and read back
}

TEST_CASE("report: compute_with shares one row of the producer between the consumers", "[lower][report]") {
    Users u;
    u.t.compute_at(u.z1, u.y);
    u.z2.compute_with(u.z1, u.y);
    PipelineReport r = u.report();
    const FuncReport &t = find(r, "t");
    CHECK(t.realizations == 48);
    CHECK(t.allocation == std::vector<int64_t>{64, 1});
    CHECK(t.points_computed == points);
    CHECK(t.recompute == Approx(1.0));
    CHECK(t.memory_bytes == 0);  // a 256-byte row stays in cache
    CHECK(r.bytes_saved() == 2 * points * 4);  // the baseline computes t at the root
}

TEST_CASE("report: one wrapper per consumer recomputes the inlined producer in each", "[lower][report]") {
    Users u;
    u.t.in(u.z1).compute_at(u.z1, u.y);
    u.t.in(u.z2).compute_at(u.z2, u.y);
    PipelineReport r = u.report();
    const FuncReport &t = find(r, "t");
    CHECK(t.inlined);
    CHECK(t.points_computed == 2 * points);  // once into each wrapper's rows
    CHECK(t.recompute == Approx(2.0));
    CHECK(find(r, "t_in_z1").points_computed == points);
    CHECK(find(r, "t_in_z2").realizations == 48);
}
