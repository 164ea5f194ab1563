// Schedule files with the fusion vocabulary: wrapper and clone stanzas
// (f.in(g):, image.in():, f.clone_in(g):) and compute_with, parsed, printed
// and applied — the loops must equal those of the same C++ schedule.
#include <catch2/catch.hpp>

#include "row_sums_fixture.h"
#include "unit/sched_helpers.h"

#include "kiln/kiln.h"

using namespace kiln;
using namespace sched_test;

namespace {

// t = in * 2; z1 = t + 1; z2 = t(x, y + 1) - 1.
struct Twins {
    ImageParam in{Int(32), 2, "in"};
    Var x{"x"}, y{"y"};
    Func t{"t"}, z1{"z1"}, z2{"z2"};
    Twins() {
        t(x, y) = in(x, y) * 2;
        z1(x, y) = t(x, y) + 1;
        z2(x, y) = t(x, y + 1) - 1;
    }
    Pipeline pipeline() const { return Pipeline({z1, z2}); }
};

}  // namespace

TEST_CASE("sched: wrapper headers and compute_with print and parse back", "[sched][fusion]") {
    const char *text = "in.in(): compute_at(z1, y)\n"
                       "t.in(z1, z2): compute_at(z1, y) vectorize(x, 8)\n"
                       "z2: compute_with(z1, y, AlignStart)\n";
    ScheduleFile f = ScheduleFile::parse(text);
    REQUIRE(f.stanzas().size() == 3);
    CHECK(f.stanzas()[0].wrapper);
    CHECK(f.stanzas()[0].wrapper_of.empty());
    CHECK(f.stanzas()[1].wrapper_of == std::vector<std::string>{"z1", "z2"});
    CHECK(f.to_string() == "in.in(): compute_at(z1, y)\nt.in(z1, z2): compute_at(z1, y) vectorize(x, 8)\n"
                           "z2: compute_with(z1, y, AlignStart)\n");
    CHECK(ScheduleFile::parse(f.to_string()) == f);
    // Clone stanzas, and compute_with with loop/strategy pairs.
    const char *more = "t.clone_in(z2): compute_at(z2, y)\n"
                       "t_clone_in_z2.update(0): vectorize(x, 4)\n"
                       "z2: compute_with(z1, x, y, AlignEnd, x, AlignStart)\n";
    ScheduleFile m = ScheduleFile::parse(more);
    CHECK(m.stanzas()[0].clone);
    CHECK(m.to_string() == more);
    CHECK(ScheduleFile::parse(m.to_string()) == m);
}

TEST_CASE("sched: apply() of wrappers and compute_with equals the C++ schedule", "[sched][fusion]") {
    const char *text = "t: compute_at(z1, y)\n"
                       "z2: compute_with(z1, y)\n"
                       "in.in(t): compute_at(z1, y) vectorize(_0, 4, GuardWithIf)\n";
    Twins a;
    ScheduleFile::parse(text).apply(a.pipeline(), avx2());
    std::string from_file = a.pipeline().lowered_stmt(avx2());

    Twins b;
    b.t.compute_at(b.z1, b.y);
    b.z2.compute_with(b.z1, b.y);
    b.in.in(b.t).compute_at(b.z1, b.y).vectorize(Var("_0"), 4, TailStrategy::GuardWithIf);
    // The second wrapper made in this process gets a fresh name.
    std::string from_cpp = b.pipeline().lowered_stmt(avx2());
    for (size_t p; (p = from_cpp.find("in_in_t_1")) != std::string::npos;) from_cpp.replace(p, 9, "in_in_t");
    CHECK(from_file == from_cpp);
    CHECK(from_file.find("produce in_in_t") != std::string::npos);
    CHECK(from_file.find("for (z2.s0.y") == std::string::npos);  // fused into z1's loop over y
}

TEST_CASE("sched: later stanzas name a wrapper as written, however often the pipeline is built", "[sched][fusion]") {
    // Each Twins makes its Funcs anew; from the second on, the wrapper's own
    // name is numbered (t_in_1, ...), but the file still says t_in.
    const char *text = "t.in(): compute_root()\n"
                       "t: compute_at(t_in, y)\n"
                       "t_in: vectorize(x, 4)\n";
    std::string first;
    for (int build = 0; build < 3; build++) {
        Twins a;
        ScheduleFile::parse(text, "t.sched").apply(a.pipeline(), avx2());
        std::string stmt = a.pipeline().lowered_stmt(avx2());
        INFO(stmt);
        for (size_t p; (p = stmt.find("t_in_")) != std::string::npos;) stmt.replace(p, stmt.find_first_not_of("0123456789", p + 5) - p, "t_in");
        if (build == 0) first = stmt;
        CHECK(stmt == first);
    }
}

TEST_CASE("sched: apply() of clone_in and compute_with pairs equals the C++ schedule", "[sched][fusion][clone_in]") {
    // A clone and a wrapper for the same consumers are different stanzas.
    CHECK(ScheduleFile::parse("t.in(z2): compute_root()\nt.clone_in(z2): compute_root()\n").stanzas().size() == 2);

    Twins a;
    a.t(a.x, a.y) += 3;
    ScheduleFile::parse("t: compute_root()\nt.clone_in(z2): compute_at(z2, y)\nz2: compute_with(z1, y, y, AlignEnd)\n")
        .apply(a.pipeline(), avx2());
    std::string from_file = a.pipeline().lowered_stmt(avx2());
    Twins b;
    b.t(b.x, b.y) += 3;
    b.t.compute_root();
    b.t.clone_in(b.z2).compute_at(b.z2, b.y);
    b.z2.compute_with(b.z1, b.y, {{b.y, LoopAlignStrategy::AlignEnd}});
    CHECK(from_file == b.pipeline().lowered_stmt(avx2()));
    CHECK(from_file.find("produce t_clone_in_z2") != std::string::npos);
}

TEST_CASE("sched: errors of wrapper stanzas and compute_with", "[sched][fusion]") {
    Twins a;
    CHECK(apply_error("t.in(zz): compute_root()", a.pipeline()) ==
          "t.sched:1:1: t.in(...): no Func named 'zz' in the pipeline; did you mean 'z1'? (its Funcs: t, z1, z2)");
    CHECK(apply_error("z2: compute_with(z1, w)", a.pipeline()).find(
              "compute_with(z1, w): z1 has no loop named w") != std::string::npos);
    CHECK(apply_error("z2: compute_with(z1, y, Sideways)", a.pipeline()) ==
          "t.sched:1:25: argument 3 (align) of compute_with must be AlignStart, AlignEnd, NoAlign or Auto, found the name "
          "'Sideways'");
    std::string e;
    try {
        ScheduleFile::parse("t.in(z1).update(0): parallel(y)");
    } catch (const CompileError &err) {
        e = err.what();
    }
    CHECK(e.find("a wrapper stanza 'FUNC.in(...):' schedules the wrapper's pure definition") != std::string::npos);
    const std::vector<std::pair<std::string, std::string>> bad = {
        {"t.clone_in(z1).update(0): parallel(y)",
         "schedule its updates in a stanza named after the clone ('t_clone_in_z1.update(0):')"},
        {"t.clone_in(): compute_root()", "'t.clone_in():' names no consumer; a clone is for the consumers named, e.g. "
                                         "'t.clone_in(g):'"},
        {"t.in().specialize(x > 0): parallel(y)",
         "a wrapper stanza 'FUNC.in(...):' takes no specialize(); make the wrapper with this stanza, then specialize "
         "it in a stanza named after it, before its own schedule: 't_in.specialize(COND): ...', then 't_in: ...'"}};
    for (const auto &[text, message] : bad) CHECK(contains(parse_error(text), message));
    CHECK(apply_error("in.clone_in(t): compute_root()", a.pipeline()) ==
          "t.sched:1:1: in is an input image, which has no clone_in(); stage it with 'in.in(t):' instead");
    CHECK(contains(apply_error("z2: compute_with(z1, y, y, AlignEnd, w, AlignStart)", a.pipeline()),
                   "t.sched:1:38: In schedule of z2: compute_with(w, ...): w is not a loop of this stage; its loops "
                   "(outermost first) are: y, x"));
}

namespace {

// s2's update may run in s1's update loop over the row
// (compute_with(s1.update(0), r)).
using RowSums = RowSumsFixture;

}  // namespace

TEST_CASE("sched: compute_with an update stage parses, prints and applies as the C++ schedule", "[sched][fusion]") {
    const char *text = "s1: compute_at(out, y)\n"
                       "s2: compute_at(out, y)\n"
                       "s2.update(0): compute_with(s1.update(0), r.x)\n";
    ScheduleFile f = ScheduleFile::parse(text);
    CHECK(f.to_string() == text);
    CHECK(ScheduleFile::parse(f.to_string()) == f);
    RowSums a;
    f.apply(Pipeline(a.out), avx2());
    std::string from_file = Pipeline(a.out).lowered_stmt(avx2());
    RowSums b;
    b.compute_per_row();
    b.s2.update(0).compute_with(b.s1.update(0), b.r.x);
    CHECK(from_file == Pipeline(b.out).lowered_stmt(avx2()));
    CHECK(from_file.find("for (s2.s1.r") == std::string::npos);  // in s1's loop over r
    CHECK(from_file.find("for (s1.s1.r") != std::string::npos);
}

TEST_CASE("sched: a stage where a Func is required, or a stage the Func does not have", "[sched][fusion]") {
    RowSums a;
    Pipeline p(a.out);
    CHECK(apply_error("s2: compute_at(s1.update(0), y)", p) ==
          "t.sched:1:16: argument 1 (func) of compute_at must be a Func, found the update stage 's1.update(0)'; "
          "only compute_with's first argument may name a stage (s1.update(N)); name the Func s1");
    CHECK(apply_error("s2.update(0): compute_with(s1.update(1), r.x)", p) ==
          "t.sched:1:28: compute_with: Func s1 has 1 update definition, so there is no stage s1.update(1); use s1 "
          "(its pure definition) or s1.update(0)");
    CHECK(apply_error("s2.update(0): compute_with(out.update(0), y)", p) ==
          "t.sched:1:28: compute_with: Func out has 0 update definitions, so there is no stage out.update(0); name "
          "the Func out (its pure definition)");
    CHECK(parse_error("s2.update(0): compute_with(s1.update(r), r.x)") ==
          "t.sched:1:38: expected the update index (an integer) after 's1.update(', found 'r'");
}

TEST_CASE("sched: compute_with an update stage at a loop it does not have names the stage", "[sched][fusion]") {
    RowSums a;
    CHECK(apply_error("s1: compute_at(out, y)\ns2: compute_at(out, y)\ns2.update(0): compute_with(s1.update(0), rx)",
                      Pipeline(a.out)) ==
          "t.sched:3:42: compute_with(s1.update(0), rx): s1 has no loop named rx; did you mean 'r.x'? Its loops: y, "
          "r.x");
}
