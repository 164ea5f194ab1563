// Schedule files with fold_storage(var, factor[, fold_forward]): parsed,
// printed and applied (the lowered statement equals that of the same C++
// schedule), its argument errors at their position, and a fold lowering
// rejects pointing at the directive.
#include <catch2/catch.hpp>

#include "unit/sched_helpers.h"
#include <functional>

#include "kiln/kiln.h"

using namespace kiln;
using namespace sched_test;
using Catch::Contains;

namespace {

// g = in * 3; out reads g over rows [y - 1, y + 1].
struct Stencil {
    ImageParam in{Int(32), 2, "in"};
    Var x{"x"}, y{"y"};
    Func g{"g"}, out{"out"};
    Stencil() {
        g(x, y) = in(x, y) * 3;
        out(x, y) = g(x, y - 1) + g(x, y) + g(x, y + 1);
    }
};

}  // namespace

TEST_CASE("sched: fold_storage parses, prints and parses back", "[sched][fold]") {
    ScheduleFile s = ScheduleFile::parse("g: store_root() compute_at(out, y)\n"
                                         "   fold_storage(y, 2 + 1)  # the 3 rows out reads\n"
                                         "h: fold_storage(y, 4, false)\n",
                                         "f.sched");
    REQUIRE(s.stanzas().size() == 2);
    const ScheduleDirective &d = s.stanzas()[0].directives[2];
    CHECK(d.name == "fold_storage");
    CHECK(d.args == std::vector<std::string>{"y", "2+1"});
    CHECK((d.line == 2 && d.col == 4));
    CHECK(s.stanzas()[1].directives[0].args == std::vector<std::string>{"y", "4", "false"});
    CHECK(s.to_string() == "g: store_root() compute_at(out, y) fold_storage(y, 2+1)\n"
                           "h: fold_storage(y, 4, false)\n");
    CHECK(ScheduleFile::parse(s.to_string()) == s);
    CHECK(ScheduleFile::parse("g: fold_storage(y, 4)") != ScheduleFile::parse("g: fold_storage(y, 4, false)"));
}

TEST_CASE("sched: fold_storage argument errors", "[sched][fold]") {
    CHECK(parse_error("g: fold_storage(y)") ==
          "t.sched:1:4: fold_storage takes 2 or 3 arguments: fold_storage(var, factor[, fold_forward]); found 1");
    CHECK(parse_error("g: fold_storage(y, x)") ==
          "t.sched:1:20: argument 2 (factor) of fold_storage must be an integer (a number, natural_vector_size, or "
          "arithmetic on them), found the name 'x'");
    CHECK(parse_error("g: fold_storage(3, 4)") ==
          "t.sched:1:17: argument 1 (var) of fold_storage must be a name, found the integer '3'");
    CHECK(parse_error("g.update(0): fold_storage(y, 4)") ==
          "t.sched:1:14: fold_storage schedules the whole Func g, not one update stage; move it to the 'g:' stanza");

    Stencil a;
    CHECK(apply_error("g: fold_storage(yy, 4)", a.out) ==
          "t.sched:1:17: Func g: fold_storage(yy, 4): yy is not a dimension of g (dimensions: x, y); did you mean "
          "'y'?");
    Stencil b;
    CHECK(apply_error("g: fold_storage(y, 4, backward)", b.out) ==
          "t.sched:1:23: argument 3 (fold_forward) of fold_storage must be true or false, found the name 'backward'");
    Stencil c;
    CHECK(apply_error("g: fold_storage(y, 0)", c.out) ==
          "t.sched:1:4: Func g: fold_storage(y, 0): the factor is the number of rows kept, at least 1");
}

TEST_CASE("sched: apply() of fold_storage gives the lowering of the same C++ schedule", "[sched][fold]") {
    Stencil a;
    ScheduleFile::parse("g: store_root() compute_at(out, y) fold_storage(y, 3)").apply(Pipeline(a.out), avx2());
    std::string from_file = a.out.lowered_stmt(avx2());
    Stencil b;
    b.g.store_root().compute_at(b.out, b.y).fold_storage(b.y, 3);
    CHECK(from_file == b.out.lowered_stmt(avx2()));
    CHECK_THAT(from_file, Contains("allocate g[int32 * (g.extent.0 * 3)]"));

    // fold_forward = true is the default, written or not.
    Stencil c;
    ScheduleFile::parse("g: store_root() compute_at(out, y) fold_storage(y, 3, true)").apply(Pipeline(c.out), avx2());
    CHECK(c.out.lowered_stmt(avx2()) == from_file);
}

TEST_CASE("sched: lowering errors of a fold_storage point at the directive", "[sched][fold]") {
    Stencil a;
    std::string e = apply_error("g: store_root() compute_at(out, y)\n   fold_storage(y, 2)", a.out);
    CHECK(e == "(no error)");  // checked when lowered
    e = error_of([&] { a.out.lowered_stmt(avx2()); });
    CHECK(e == "t.sched:2:4: Func g is scheduled fold_storage(y, 2), but its consumers need 3 rows of y at once (in "
               "each iteration of out.y), more than the 2 it keeps; use fold_storage(y, 3) or more, or remove the "
               "fold_storage");
    // The same fold given again in C++ afterwards is no longer the file's.
    a.g.fold_storage(a.y, 1);
    CHECK_THAT(error_of([&] { a.out.lowered_stmt(avx2()); }), Catch::StartsWith("Func g is scheduled fold_storage(y, 1)"));
}
