// Schedule files with rfactor: the directive in an update stanza names the
// intermediate Func, which later stanzas schedule; apply() must give the
// loops of the same C++ calls. Misplaced or misnamed rfactors fail at the
// position of the mistake.
#include <catch2/catch.hpp>

#include "unit/sched_helpers.h"

#include "kiln/kiln.h"

using namespace kiln;
using namespace sched_test;

namespace {

// Row sums: rows(y) = sum over x of in(x, y).
struct Rows {
    ImageParam in{Float(32), 2, "in"};
    Var y{"y"};
    RDom r{0, in.width(), "r"};
    Func rows{"rows"};
    Rows() {
        rows(y) = 0.0f;
        rows(y) += in(r, y);
    }
    Pipeline pipeline() const { return Pipeline(rows); }
};

std::string apply_error(const std::string &text) {
    Rows p;
    try {
        ScheduleFile::parse(text, "t.sched").apply(p.pipeline(), avx2());
    } catch (const CompileError &e) {
        return e.what();
    }
    return "(no error)";
}

}  // namespace

TEST_CASE("sched: rfactor prints and parses back", "[sched][rfactor]") {
    const char *text = "rows.update(0): split(r, ro, ri, 8) rfactor(ri, u, rows_lanes)\n"
                       "rows_lanes: compute_at(rows, y) vectorize(u)\n"
                       "rows_lanes.update(0): vectorize(u)\n";
    ScheduleFile f = ScheduleFile::parse(text);
    CHECK(f.to_string() == text);
    CHECK(ScheduleFile::parse(f.to_string()) == f);
}

TEST_CASE("sched: apply() of rfactor equals the C++ schedule", "[sched][rfactor]") {
    const char *text = "rows: parallel(y)\n"
                       "rows.update(0): split(r, ro, ri, 8) rfactor(ri, u, rows_lanes) parallel(y)\n"
                       "rows_lanes: compute_at(rows, y) vectorize(u)\n"
                       "rows_lanes.update(0): vectorize(u)\n";
    Rows a;
    ScheduleFile::parse(text).apply(a.pipeline(), avx2());
    std::string from_file = a.pipeline().lowered_stmt(avx2());

    Rows b;
    Var u("u");
    RVar ro("ro"), ri("ri");
    b.rows.parallel(b.y);
    b.rows.update(0).split(b.r, ro, ri, 8);
    Func lanes = b.rows.update(0).rfactor(ri, u, "rows_lanes");
    b.rows.update(0).parallel(b.y);
    lanes.compute_at(b.rows, b.y).vectorize(u);
    lanes.update(0).vectorize(u);
    CHECK(from_file == b.pipeline().lowered_stmt(avx2()));
    CHECK_THAT(from_file, Catch::Contains("rows_lanes"));
}

TEST_CASE("sched: rfactor misuse in schedule files", "[sched][rfactor]") {
    CHECK(apply_error("rows: rfactor(r, u, part)\n") ==
          "t.sched:1:7: rfactor splits an update definition; put it in the 'rows.update(N):' stanza of the "
          "reduction");
    CHECK(apply_error("rows.update(0): rfactor(r, u, rows)\n") ==
          "t.sched:1:31: In schedule of rows.update(0): rfactor: the intermediate needs a new Func name without dots; "
          "'rows' is already a Func of the pipeline; name it e.g. rows_intm");
    CHECK(apply_error("rows.update(0): rfactor(rx, u, part)\n") ==
          "t.sched:1:25: In schedule of rows.update(0): rfactor(rx, u): rx is not an RVar loop of the stage; its "
          "RVar loops (outermost first) are: r.x; did you mean 'r.x'?");
    CHECK(apply_error("rows.update(0): rfactor(r, y, part)\n") ==
          "t.sched:1:17: In schedule of rows.update(0): rfactor(r.x, y): the Var y is already a dimension of rows "
          "or named twice; give each factored RVar a new Var");
}
