// Misuse in schedule files, end to end through ScheduleFile::load() and
// apply(): every rejection is a CompileError whose message starts with
// file:line:col and says what was expected or which name is unknown (with the
// nearest known name). The parser's message table is checked in the unit tier
// (tests/unit/test_schedule_file.cpp); these cases pin the user's path.
#include <kiln/ScheduleFile.h>


#include <filesystem>
#include <fstream>

#include "expect_error.h"

using namespace kiln;

namespace {

// A .sched file with this text in the process's scratch directory.
std::string sched_file(const std::string &name, const std::string &text) {
    std::string path = (scratch_directory() / name).string();
    std::ofstream(path) << text;
    return path;
}

// in -> blur_x -> blur_y.
struct Blur {
    ImageParam in{Float(32), 2, "in"};
    Var x{"x"}, y{"y"};
    Func blur_x{"blur_x"}, blur_y{"blur_y"};
    Blur() {
        blur_x(x, y) = in(x, y) + in(x + 1, y);
        blur_y(x, y) = blur_x(x, y) + blur_x(x, y + 1);
    }
    void apply(const std::string &path) { ScheduleFile::load(path).apply(Pipeline(blur_y)); }
};

}  // namespace

TEST_CASE("error: a schedule file with a syntax error", "[error][sched]") {
    std::string path = sched_file("syntax.sched", "blur_y: tile(x, y, xi, yi, 64, 8)\nblur_x: compute_at(blur_y x)\n");
    REQUIRE_COMPILE_ERROR(ScheduleFile::load(path),
                          Contains(path + ":2:27: expected ',' or ')' after argument 1 of compute_at, found 'x'"));
}

TEST_CASE("error: a schedule file with a misspelt directive", "[error][sched]") {
    std::string path = sched_file("directive.sched", "blur_y: paralel(y)\n");
    REQUIRE_COMPILE_ERROR(ScheduleFile::load(path), Contains(path + ":1:9: unknown directive 'paralel'") &&
                                                        Contains("did you mean 'parallel'?"));
}

TEST_CASE("error: a schedule file naming an unknown Func", "[error][sched]") {
    std::string path = sched_file("func.sched", "# blur\nblurx: compute_root()\n");
    REQUIRE_COMPILE_ERROR(Blur().apply(path), Contains(path + ":2:1: no Func named 'blurx' in the pipeline") &&
                                             Contains("did you mean 'blur_x'?") && Contains("(its Funcs: blur_x, blur_y)"));
}

TEST_CASE("error: a schedule file naming an unknown loop", "[error][sched]") {
    std::string path = sched_file("loop.sched", "blur_y: split(y, yo, yi, 8) vectorize(xx, 4)\n");
    REQUIRE_COMPILE_ERROR(Blur().apply(path), Contains(path + ":1:39: In schedule of blur_y: vectorize(xx, ...)") &&
                                             Contains("its loops (outermost first) are: yo, yi, x") &&
                                             Contains("did you mean 'x'?"));
}

TEST_CASE("error: a schedule file with compute_at an unknown loop and no near name", "[error][sched]") {
    std::string path = sched_file("site.sched", "blur_x: compute_at(blur_y, q)\n");
    REQUIRE_COMPILE_ERROR(Blur().apply(path), Contains(path + ":1:28: compute_at(blur_y, q): blur_y has no loop named q; its loops: y, x"));
}

TEST_CASE("error: a schedule file with an update stanza that does not exist", "[error][sched]") {
    std::string path = sched_file("update.sched", "blur_y.update(0): parallel(y)\n");
    REQUIRE_COMPILE_ERROR(Blur().apply(path), Contains(path + ":1:1: Func blur_y has 0 update definitions") &&
                                             Contains("there is no blur_y.update(0)"));
}

TEST_CASE("error: a schedule file that does not exist", "[error][sched]") {
    REQUIRE_COMPILE_ERROR(ScheduleFile::load("/nonexistent/blur.sched"),
                          Contains("/nonexistent/blur.sched: cannot open the schedule file for reading"));
}

TEST_CASE("error: a schedule file with an integer too large", "[error][sched]") {
    std::string path = sched_file("big.sched", "blur_y: vectorize(x, 4294967296)\n");
    REQUIRE_COMPILE_ERROR(ScheduleFile::load(path), Contains(path + ":1:22: integer 4294967296 is too large"));
}

// Errors that lowering finds in levels a schedule file set point at the
// directive responsible (schedule/ScheduleOrigin.h).
namespace {

// in -> a -> b -> c.
struct Chain {
    ImageParam in{Float(32), 2, "in"};
    Var x{"x"}, y{"y"};
    Func a{"a"}, b{"b"}, c{"c"};
    Chain() {
        a(x, y) = in(x, y) * 2;
        b(x, y) = a(x, y) + a(x + 1, y);
        c(x, y) = b(x, y) + 1;
    }
};

}  // namespace

TEST_CASE("error: a schedule file's compute_at that lowering rejects points at the directive", "[error][sched]") {
    Chain p;
    std::string path = sched_file("late_site.sched", "b: compute_root()\na: compute_at(c, y)\n");
    ScheduleFile::load(path).apply(Pipeline(p.c));
    REQUIRE_COMPILE_ERROR(Pipeline(p.c).lowered_stmt(),
                          Contains(path + ":2:4: Func a is scheduled compute_at(c, y), but c does not use a"));
}

TEST_CASE("error: a schedule file's store_root outside a parallel loop points at the directive", "[error][sched]") {
    Blur blur;
    std::string path = sched_file("late_parallel.sched", "blur_y: parallel(y)\nblur_x: store_root() compute_at(blur_y, x)\n");
    ScheduleFile::load(path).apply(Pipeline(blur.blur_y));
    REQUIRE_COMPILE_ERROR(Pipeline(blur.blur_y).lowered_stmt(),
                          Contains(path + ":2:9: Func blur_x is stored at root but computed inside the parallel loop "
                                          "over y of blur_y"));
}

TEST_CASE("error: a schedule file's store_root of an inlined Func points at the directive", "[error][sched]") {
    Blur blur;
    std::string path = sched_file("late_inline.sched", "blur_y: vectorize(x, 4)\nblur_x: store_root()\n");
    ScheduleFile::load(path).apply(Pipeline(blur.blur_y));
    REQUIRE_COMPILE_ERROR(Pipeline(blur.blur_y).lowered_stmt(),
                          Contains(path + ":2:9: Func blur_x is scheduled store_at(root) but is inlined"));
}

TEST_CASE("error: a level changed from C++ after the schedule file has no file position", "[error][sched]") {
    Chain p;
    std::string path = sched_file("late_cxx.sched", "b: compute_root()\na: compute_root()\n");
    ScheduleFile::load(path).apply(Pipeline(p.c));
    p.a.compute_at(p.c, p.y);  // the file's compute_root() no longer holds
    REQUIRE_COMPILE_ERROR(Pipeline(p.c).lowered_stmt(),
                          Catch::StartsWith("Func a is scheduled compute_at(c, y), but c does not use a"));
}

TEST_CASE("error: a schedule file's vectorize or unroll of a non-constant extent points at the directive",
          "[error][sched]") {
    Blur blur;
    std::string path = sched_file("late_vectorize.sched", "blur_x: compute_root()\nblur_y: vectorize(x)\n");
    ScheduleFile::load(path).apply(Pipeline(blur.blur_y));
    REQUIRE_COMPILE_ERROR(Pipeline(blur.blur_y).lowered_stmt(),
                          Contains(path + ":2:9: Loop blur_y.s0.x is scheduled vectorize(), but its extent") &&
                              Contains("is not a constant; split off a constant-size loop with vectorize(x, 8) "
                                       "on blur_y") &&
                              Contains("bound(x, 0, N) on blur_y"));
    Blur unrolled;
    path = sched_file("late_unroll.sched", "blur_x: compute_root() unroll(y)\n");
    ScheduleFile::load(path).apply(Pipeline(unrolled.blur_y));
    REQUIRE_COMPILE_ERROR(Pipeline(unrolled.blur_y).lowered_stmt(),
                          Contains(path + ":1:24: Loop blur_x.s0.y is scheduled unroll(), but its extent") &&
                              Contains("with unroll(y, 4) on blur_x"));
}

TEST_CASE("error: a loop type changed from C++ after the schedule file has no file position", "[error][sched]") {
    Blur blur;
    std::string path = sched_file("late_cxx_vectorize.sched", "blur_y: vectorize(x)\n");
    ScheduleFile::load(path).apply(Pipeline(blur.blur_y));
    blur.blur_y.unroll(blur.x);  // the file's vectorize() no longer holds
    REQUIRE_COMPILE_ERROR(Pipeline(blur.blur_y).lowered_stmt(),
                          Catch::StartsWith("Loop blur_y.s0.x is scheduled unroll(), but its extent"));
}

// Two Funcs given the name "blur" are blur and blur$1 in the pipeline
// (lower/UniqueNames.h); a schedule file must say which.
TEST_CASE("error: a schedule file naming a Func name two Funcs were given", "[error][sched]") {
    ImageParam in(Float(32), 1, "in");
    Var x("x");
    Func a("blur"), b("blur"), out("out");
    a(x) = in(x) + in(x + 1);
    b(x) = a(x) + a(x + 1);
    out(x) = b(x) * 2;
    std::string path = sched_file("ambiguous.sched", "out: parallel(x)\nblur: compute_root()\n");
    REQUIRE_COMPILE_ERROR(ScheduleFile::load(path).apply(Pipeline(out)),
                          Contains(path + ":2:1: 'blur' is ambiguous: 2 Funcs of the pipeline were given that name") &&
                              Contains("are now blur$0 (shown as blur) and blur$1, in the order they were made"));
    std::string level = sched_file("level.sched", "blur$0: compute_at(blur, x)\n");
    REQUIRE_COMPILE_ERROR(ScheduleFile::load(level).apply(Pipeline(out)),
                          Contains(level + ":1:20: compute_at: 'blur' is ambiguous"));
    std::string fine = sched_file("fine.sched", "blur$0: compute_at(blur$1, x)\nblur$1: compute_root()\n");
    REQUIRE_NOTHROW(ScheduleFile::load(fine).apply(Pipeline(out)));
    // Without a second Func of the name there is no blur$0.
    Blur p;
    std::string none = sched_file("none.sched", "blur_x$0: compute_root()\n");
    REQUIRE_COMPILE_ERROR(p.apply(none), Contains(none + ":1:1: no Func named 'blur_x$0' in the pipeline"));
}

TEST_CASE("error: a wrapper for a consumer whose name two Funcs were given", "[error][sched]") {
    Var x("x");
    Func f("f"), g1("g"), g2("g"), out("out");
    f(x) = x;
    g1(x) = f(x) + 1;
    g2(x) = f(x) * 2;
    out(x) = g1(x) + g2(x);
    f.compute_root();
    f.in(g1).compute_root();
    REQUIRE_COMPILE_ERROR(out.lowered_stmt(), Contains("Func f has a wrapper f_in_g made by f.in(g), but 2 Funcs of "
                                                       "the pipeline are named g") &&
                                                  Contains("give those Funcs distinct names"));
}

TEST_CASE("error: an image wrapper or a clone for a consumer whose name two Funcs were given", "[error][sched]") {
    Var x("x");
    for (int clone = 0; clone < 2; clone++) {
        ImageParam in(Int(32), 1, "in");
        Func f("f"), g1("g"), g2("g"), out("out");
        f(x) = in(x) * 3;
        g1(x) = f(x) + in(x);
        g2(x) = f(x) * 2;
        out(x) = g1(x) + g2(x);
        f.compute_root();
        if (clone) f.clone_in(g1);
        else in.in(g1).compute_root();
        REQUIRE_COMPILE_ERROR(out.lowered_stmt(),
                              Contains(clone ? "Func f has a wrapper f_clone_in_g made by f.clone_in(g), but 2 Funcs"
                                             : "Input image in has a wrapper in_in_g made by in.in(g), but 2 Funcs") &&
                                  Contains("give those Funcs distinct names"));
    }
}
