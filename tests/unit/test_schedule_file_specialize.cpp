// Specializations in schedule files: "f.specialize(COND):" and
// "f.update(N).specialize(COND):" stanzas parse, print canonically, apply as
// the same Stage::specialize calls in C++ (lowered statements compared), and
// their mistakes are CompileErrors at the stanza. Also the lowering pass
// that decides a specialization nested in one with the same condition
// (lower/DecideSpecializations.h).
#include <kiln/kiln.h>

#include <catch2/catch.hpp>

#include "unit/sched_helpers.h"
#include <functional>

#include <vector>

#include "ir/IRVisitor.h"
#include "lower/DecideSpecializations.h"

using namespace kiln;
using namespace sched_test;

namespace {

// out(x, y) = in(x, y) * k; a matrix-like producer p computed per row of out.
struct Scale {
    ImageParam in{Float(32), 2, "in"};
    Param<int> k{"k"};
    Var x{"x"}, y{"y"}, xo{"xo"}, xi{"xi"};
    Func p{"p"}, out{"out"};
    Scale() {
        p(x, y) = in(x, y) * 2.0f;
        p(x, y) += in(x, y);
        out(x, y) = p(x, y) * cast<float>(k);
    }
};

}  // namespace

TEST_CASE("sched: specialize stanzas parse and print canonically", "[sched][specialize]") {
    const std::string text =
        "out.specialize(in.width>=natural_vector_size*2  &&  in.height > 4):\n"
        "    split(x, xo, xi, 16) vectorize(xi, 8)\n"
        "out: parallel(y)\n"
        "p.update(0).specialize(k == 1): vectorize(x, 8)\n"
        "out.specialize(in.width >= natural_vector_size*2 && in.height > 4): parallel(y)\n";
    ScheduleFile f = ScheduleFile::parse(text, "t.sched");
    REQUIRE(f.stanzas().size() == 3);  // the repeated header joins the first stanza
    CHECK(f.stanzas()[0].func == "out");
    CHECK(f.stanzas()[0].stage == -1);
    CHECK(f.stanzas()[0].condition == "in.width >= natural_vector_size*2 && in.height > 4");
    CHECK(f.stanzas()[0].directives.size() == 3);
    CHECK(f.stanzas()[1].condition.empty());
    CHECK(f.stanzas()[2].stage == 0);
    CHECK(f.stanzas()[2].condition == "k == 1");
    CHECK(f.to_string() ==
          "out.specialize(in.width >= natural_vector_size*2 && in.height > 4): split(x, xo, xi, 16) "
          "vectorize(xi, 8) parallel(y)\n"
          "out: parallel(y)\n"
          "p.update(0).specialize(k == 1): vectorize(x, 8)\n");
    CHECK(ScheduleFile::parse(f.to_string(), "t.sched") == f);
    for (const char *op : {">=", ">", "<=", "<", "==", "!="})
        CHECK(ScheduleFile::parse(std::string("out.specialize(k ") + op + " 3): parallel(y)\n").stanzas()[0].condition ==
              std::string("k ") + op + " 3");
}

TEST_CASE("sched: a stanza after a specialization of its stage stays after it", "[sched][specialize]") {
    // The specialization copies the stage's schedule when it is made: out's
    // first stanza (compute_root-like, no loops) before it, the split after
    // it, so the specialization starts from the default loops and splits x
    // itself. Joining the second "out:" into the first would split x before
    // the copy ("x has already been split").
    const std::string text = "out: parallel(y)\n"
                             "out.specialize(in.width >= 16): split(x, xo, xi, 16) vectorize(xi, 8)\n"
                             "out: split(x, xo, xi, 8, GuardWithIf)\n";
    ScheduleFile f = ScheduleFile::parse(text, "t.sched");
    REQUIRE(f.stanzas().size() == 3);
    CHECK(f.stanzas()[2].condition.empty());
    CHECK(f.to_string() == text);
    CHECK(ScheduleFile::parse(f.to_string(), "t.sched") == f);
    Scale a;
    f.apply(Pipeline(a.out), avx2());
    Scale b;
    b.out.parallel(b.y);
    b.out.specialize(b.in.width() >= 16).split(b.x, b.xo, b.xi, 16).vectorize(b.xi, 8);
    b.out.split(b.x, b.xo, b.xi, 8, TailStrategy::GuardWithIf);
    CHECK(Pipeline(a.out).lowered_stmt(avx2()) == Pipeline(b.out).lowered_stmt(avx2()));
}

TEST_CASE("sched: specialize syntax errors", "[sched][specialize]") {
    auto parse_error = [](const std::string &text) {
        return error_of([&] { ScheduleFile::parse(text, "t.sched"); });
    };
    CHECK(parse_error("out.specialize(k): parallel(y)\n") ==
          "t.sched:1:17: expected a comparison (>=, >, <=, <, ==, !=) in comparison 1 of out.specialize(...), found "
          "')'");
    CHECK(parse_error("out.specialize(k > 1 && in.width): parallel(y)\n") ==
          "t.sched:1:33: expected a comparison (>=, >, <=, <, ==, !=) in comparison 2 of out.specialize(...), found "
          "')'");
    CHECK(parse_error("out.specialize(k > 1 in.width): parallel(y)\n") ==
          "t.sched:1:22: expected ')' or '&&' after comparison 1 of out.specialize(...), found 'in'");
    CHECK(parse_error("out.specialize(k > 1): compute_root()\n") ==
          "t.sched:1:24: compute_root schedules the whole Func out, not one specialization of it; move it to the "
          "'out:' stanza");
    CHECK(parse_error("out.specialize(k = 1): parallel(y)\n") ==
          "t.sched:1:18: unexpected character '='; a .sched file has stanzas 'FUNC: directive(arg, ...) ...' and # "
          "comments");
}

TEST_CASE("sched: apply() of specialize stanzas is the C++ specialize()", "[sched][specialize]") {
    const std::string text =
        "out.specialize(in.width >= natural_vector_size*2 && k != 0):\n"
        "    split(x, xo, xi, natural_vector_size*2) vectorize(xi, natural_vector_size)\n"
        "out: split(x, xo, xi, natural_vector_size*2, GuardWithIf)\n"
        "p: compute_at(out, xo)\n"
        "p.update(0): reorder(y, x)\n"
        "p.update(0).specialize(in.width >= natural_vector_size*2 && k != 0): vectorize(x, natural_vector_size)\n";
    Scale a;
    ScheduleFile::parse(text, "t.sched").apply(Pipeline(a.out), avx2());
    std::string from_file = Pipeline(a.out).lowered_stmt(avx2());

    Scale b;
    Expr c = b.in.width() >= 16 && b.k != 0;
    b.out.specialize(c).split(b.x, b.xo, b.xi, 16).vectorize(b.xi, 8);
    b.out.split(b.x, b.xo, b.xi, 16, TailStrategy::GuardWithIf);
    b.p.compute_at(b.out, b.xo);
    b.p.update(0).reorder(b.y, b.x);
    b.p.update(0).specialize(c).vectorize(b.x, 8);
    CHECK(from_file == Pipeline(b.out).lowered_stmt(avx2()));
    CHECK(contains(from_file, "(in.extent.0 >= 16)"));
    CHECK(contains(from_file, "(k != 0)"));
}

TEST_CASE("sched: apply() errors of specialize stanzas", "[sched][specialize]") {
    auto apply_error = [](const std::string &text) {
        Scale s;
        return error_of([&] { ScheduleFile::parse(text, "t.sched").apply(Pipeline(s.out), avx2()); });
    };
    CHECK(apply_error("out.specialize(in.widht >= 16): parallel(y)\n") ==
          "t.sched:1:1: out.specialize(in.widht >= 16): 'in.widht' is neither an input's width, height or channels "
          "nor a scalar Param; did you mean 'in.width'? A specialization is chosen once per run, from: in.width, "
          "in.height, k");
    // A loop the specialization lacks, at its position in the file.
    const std::string no_loop = apply_error("out.specialize(k > 0): split(x, xo, xi, 8) vectorize(xj)\n");
    CHECK(no_loop.rfind("t.sched:1:54: ", 0) == 0);
    CHECK(contains(no_loop, "xj"));
    CHECK(apply_error("out.specialize(k > 0): parallel(y)\nout: specialize_nothing(y)\n").find("unknown directive") !=
          std::string::npos);
}

namespace {

// The constants stored (Store values) and the constant conditions of selects
// in a statement, in order.
struct Collect : internal::IRVisitor {
    std::vector<int> stored;
    std::vector<bool> select_conditions;
    using internal::IRVisitor::visit;
    void visit(const internal::Store *op) override {
        if (const internal::IntImm *v = op->value.as<internal::IntImm>()) stored.push_back((int)v->value);
        internal::IRVisitor::visit(op);
    }
    void visit(const internal::Select *op) override {
        if (const internal::UIntImm *c = op->condition.as<internal::UIntImm>()) select_conditions.push_back(c->value != 0);
        internal::IRVisitor::visit(op);
    }
};

}  // namespace

TEST_CASE("lower: decide_specializations decides a nested condition and its selects", "[lower][specialize]") {
    using namespace internal;
    Expr n = Variable::make(Int(32), "n"), m = Variable::make(Int(32), "m");
    Expr big = n >= 16 && m >= 12;
    auto store = [](int v) { return Store::make("out", Expr(v), Expr(0)); };
    // if (big) { if (big) 1 else 2; out[select(big, 3, 4)] = 8 }
    // else     { if (big) 5 else 6; if (n >= 16) 7 }
    Stmt inner_then = Block::make(IfThenElse::make(big, store(1), store(2)),
                                  Store::make("out", Expr(8), Select::make(big, Expr(3), Expr(4))));
    Stmt inner_else = Block::make(IfThenElse::make(big, store(5), store(6)), IfThenElse::make(n >= 16, store(7)));
    Stmt s = decide_specializations(IfThenElse::make(big, inner_then, inner_else));
    const IfThenElse *top = s.as<IfThenElse>();
    REQUIRE(top);
    Collect then_part, else_part;
    then_part.include(top->then_case);
    else_part.include(top->else_case);
    // In the then-branch big is true (the nested if keeps its then-branch,
    // the select's condition is the constant true); in the else-branch big
    // is false, but not each of its conjuncts: `if (n >= 16)` stays.
    CHECK(then_part.stored == std::vector<int>{1, 8});
    CHECK(then_part.select_conditions == std::vector<bool>{true});
    CHECK(else_part.stored == std::vector<int>{6, 7});
    CHECK(contains(to_string(top->else_case), "n >= 16"));
    // Nothing to decide: the same statement back.
    Stmt plain = IfThenElse::make(n >= 16, store(1), store(2));
    CHECK(decide_specializations(plain).same_as(plain));
}
