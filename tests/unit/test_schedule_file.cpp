// Schedule files (.sched): parsing, canonical printing (round trips), error
// positions and texts, and apply() on small pipelines compared with the same
// directives written in C++ (lowered statements, no JIT). Fixtures are in
// tests/unit/sched/.
#include <kiln/kiln.h>

#include <catch2/catch.hpp>

#include "unit/sched_helpers.h"
#include <functional>

using namespace kiln;
using namespace sched_test;

namespace {

std::string fixture(const std::string &name) {
    return std::string(KILN_SOURCE_DIR) + "/tests/unit/sched/" + name;
}

// A fixed target, so natural_vector_size is 8 for float32 and 32 for uint8.
// in -> blur_x -> blur_y, float32. Every call builds fresh Funcs.
struct Blur {
    ImageParam in{Float(32), 2, "in"};
    Var x{"x"}, y{"y"}, xo{"xo"}, yo{"yo"}, xi{"xi"}, yi{"yi"};
    Func blur_x{"blur_x"}, blur_y{"blur_y"};
    Blur() {
        blur_x(x, y) = (in(x - 1, y) + in(x, y) + in(x + 1, y)) / 3.0f;
        blur_y(x, y) = (blur_x(x, y - 1) + blur_x(x, y) + blur_x(x, y + 1)) / 3.0f;
    }
    Pipeline pipeline() const { return Pipeline(blur_y); }
};

// A histogram-like reduction: hist(x, y) = sum over r of in(x + r, y).
struct Hist {
    ImageParam in{Int(32), 2, "in"};
    Var x{"x"}, y{"y"};
    RDom r{0, 10, "r"};
    Func hist{"hist"}, out{"out"};
    Hist() {
        hist(x, y) = 0;
        hist(x, y) += in(x + r, y);
        out(x, y) = hist(x, y) * 2;
    }
};

// g has two updates over a 2-D RDom; f reads g.
struct TwoUpdates {
    Var x{"x"}, y{"y"};
    RDom r{0, 3, 0, 9, "r"};
    Func g{"g"}, f{"f"};
    TwoUpdates() {
        g(x, y) = x + y;
        g(x, y) += r.x;
        g(x, y) += r.y * 2;
        f(x, y) = g(x, y) + g(x + 1, y);
    }
};

}  // namespace

// ---- Parsing and printing ----

TEST_CASE("sched: stanzas, stages, directives and argument positions", "[sched]") {
    ScheduleFile s = ScheduleFile::parse("# c\nblur_y: split(x, xo, xi, 8)  vectorize(xi)\n"
                                         "hist.update(0): parallel(y, natural_vector_size * 2, RoundUp)\n",
                                         "a.sched");
    CHECK(s.filename() == "a.sched");
    REQUIRE(s.stanzas().size() == 2);
    const ScheduleStanza &b = s.stanzas()[0];
    CHECK(b.func == "blur_y");
    CHECK(b.stage == -1);
    CHECK((b.line == 2 && b.col == 1));
    REQUIRE(b.directives.size() == 2);
    CHECK(b.directives[0].name == "split");
    CHECK(b.directives[0].args == std::vector<std::string>{"x", "xo", "xi", "8"});
    CHECK((b.directives[0].line == 2 && b.directives[0].col == 9));
    CHECK(b.directives[0].arg_cols == std::vector<int>{15, 18, 22, 26});
    CHECK((b.directives[1].line == 2 && b.directives[1].col == 30));
    const ScheduleStanza &h = s.stanzas()[1];
    CHECK(h.func == "hist");
    CHECK(h.stage == 0);
    REQUIRE(h.directives.size() == 1);
    CHECK(h.directives[0].args == std::vector<std::string>{"y", "natural_vector_size*2", "RoundUp"});
}

TEST_CASE("sched: canonical text of a file with comments, continuations and a repeated header", "[sched]") {
    ScheduleFile s = ScheduleFile::load(fixture("messy.sched"));
    CHECK(s.to_string() == "f: split(x, xo, xi, natural_vector_size*2, RoundUp) reorder(xi, y, xo) "
                           "bound(x, -4, 128)\n"
                           "g.update(1): unroll(r.y, (8-2)/3)\n"
                           "g: store_root() compute_at(f, xo)\n");
    // The repeated "f:" header kept the position of the first one.
    CHECK((s.stanzas()[0].line == 4 && s.stanzas()[0].col == 1));
    CHECK(s.stanzas()[0].directives[2].line == 9);
}

TEST_CASE("sched: parse(print(parse(x))) == parse(x)", "[sched]") {
    std::vector<std::string> texts = {
        "",
        "# only a comment\n",
        "f:\n",
        "f: compute_root()\ng: compute_at(f, x) store_at(root)\n",
        "out: tile(x, y, xi, yi, 8, 4, GuardWithIf) fuse(x, y, t) parallel(t, 2)\n",
        "out: tile(x, y, xo, yo, xi, yi, natural_vector_size(uint8), -(-4)) serial(yo)\n",
        "h.update(3): split(r.x, a, b, natural_vector_size/2+1, ShiftInwards) vectorize(y, 4, Auto)\n"
        "h: bound(x, 0 - 1, 2*(3+4)) compute_inline()\n",
        "f: compute_root()\n[forward]\nf: compute_at(g, y)\ng: parallel(y)\n",
        "[forward]\nf: vectorize(x, 8)\n",
    };
    for (const auto &name : {"blur_tiled.sched", "hist.sched", "messy.sched"}) {
        ScheduleFile once = ScheduleFile::load(fixture(name));
        texts.push_back(once.to_string());
    }
    for (const auto &t : texts) {
        INFO(t);
        ScheduleFile once = ScheduleFile::parse(t);
        ScheduleFile twice = ScheduleFile::parse(once.to_string());
        CHECK(twice == once);
        CHECK(twice.to_string() == once.to_string());
    }
    CHECK(ScheduleFile::parse("f: vectorize(x)") != ScheduleFile::parse("f: vectorize(y)"));
    CHECK(ScheduleFile::parse("f: vectorize(x)") != ScheduleFile::parse("f.update(0): vectorize(x)"));
    CHECK(ScheduleFile::parse("f: vectorize(x)") != ScheduleFile::parse("[forward]\nf: vectorize(x)"));
}

// ---- Syntax and signature errors ----

// Each case: the text of t.sched and the whole message parse() throws.
struct ErrorCase {
    const char *text, *message;
};

void check_parse_errors(const std::vector<ErrorCase> &cases) {
    for (const auto &c : cases) {
        INFO(c.text);
        CHECK(parse_error(c.text) == c.message);
    }
}

TEST_CASE("sched: syntax errors say what was expected and what was found, at line:col", "[sched]") {
    check_parse_errors({
        {"blur_y: split(x, xo, xi, 8, RoundUp x)",
         "t.sched:1:37: expected ')' after the arguments of split, found 'x'"},
        {"blur_y: split(x, xo, xi, 8 x)", "t.sched:1:28: expected ',' or ')' after argument 4 of split, found 'x'"},
        {"f: split(x, xo\n", "t.sched:2:1: expected ',' or ')' after argument 2 of split, found end of file"},
        {"f: split(x,,xi, 8)", "t.sched:1:12: expected argument 2 of split (a name or an integer), found ','"},
        {"f compute_root()", "t.sched:1:3: expected ':' after the stanza name 'f', found 'compute_root'"},
        {"f: vectorize x", "t.sched:1:14: expected '(' after vectorize, found 'x'"},
        {"# schedule\n  vectorize(x)\n",
         "t.sched:2:3: directive vectorize appears before any stanza header; start with 'FUNC:' to say which Func it "
         "schedules"},
        {"f: compute_root() g: compute_root()",
         "t.sched:1:19: a stanza header must start a line; put 'g:' on a new line"},
        {"f.update(x): parallel(y)",
         "t.sched:1:10: expected the update index (an integer) after 'f.update(', found 'x'"},
        {"f: vectorize(x; 8)",
         "t.sched:1:15: unexpected character ';'; a .sched file has stanzas 'FUNC: directive(arg, ...) ...' and # "
         "comments"},
        {"f: vectorize(x, (8 * 2)",
         "t.sched:1:24: expected ',' or ')' after argument 2 of vectorize, found end of file"},
        {"f: vectorize(x, (8 * 2, 3)",
         "t.sched:1:23: expected ')' to close the '(' of argument 2 of vectorize, found ','"},
        {"f: vectorize(x, natural_vector_size(float8))",
         "t.sched:1:37: expected a type in natural_vector_size(...) (one of int8, int16, int32, int64, uint8, "
         "uint16, uint32, uint64, float16, bfloat16, float32, float64), found 'float8'"},
    });
}

TEST_CASE("sched: unknown directives, argument counts and argument kinds", "[sched]") {
    check_parse_errors({
        {"f: vectorise(x)",
         "t.sched:1:4: unknown directive 'vectorise'; did you mean 'vectorize'? Directives: split, fuse, reorder, "
         "tile, vectorize, unroll, parallel, serial, compute_root, compute_at, compute_inline, store_root, "
         "store_at, fold_storage, reorder_storage, bound, align_bounds, rfactor, save, store_in, double_buffer, "
         "software_pipeline, compute_with, "
         "prefetch, npu_tile"},
        {"f: split(x, xo, xi)",
         "t.sched:1:4: split takes 4 or 5 arguments: split(old, outer, inner, factor[, tail]); found 3"},
        {"f: tile(x, y, xi)",
         "t.sched:1:4: tile takes 6, 7, 8 or 9 arguments: tile(x, y, xo, yo, xi, yi, xfactor, yfactor[, tail]) or "
         "tile(x, y, xi, yi, xfactor, yfactor[, tail]); found 3"},
        {"f: reorder(x)",
         "t.sched:1:4: reorder takes 2 or more arguments: reorder(innermost, ..., outermost); found 1"},
        {"f: compute_root(x)", "t.sched:1:4: compute_root takes no arguments: compute_root(); found 1"},
        {"f: split(x, 8, xi, 8)", "t.sched:1:13: argument 2 (outer) of split must be a name, found the integer '8'"},
        {"f: vectorize(x, y)",
         "t.sched:1:17: argument 2 (factor) of vectorize must be an integer (a number, natural_vector_size, or "
         "arithmetic on them), found the name 'y'"},
        {"f: split(x, xo, xi, 8, GuardWithIff)",
         "t.sched:1:24: argument 5 (tail) of split must be a TailStrategy (Auto, GuardWithIf, ShiftInwards, "
         "RoundUp), found the name 'GuardWithIff'; did you mean 'GuardWithIf'?"},
        {"f: vectorize(x, x * 2)",
         "t.sched:1:17: 'x' is a name and cannot be used in arithmetic ('*'); only integers and natural_vector_size "
         "can"},
        {"f: compute_at(x)",
         "t.sched:1:15: compute_at with one argument takes 'root', found the name 'x'; use compute_at(func, var) or "
         "compute_at(root)"},
        {"f.update(0):\n  parallel(y) compute_root()",
         "t.sched:2:15: compute_root schedules the whole Func f, not one update stage; move it to the 'f:' stanza"},
        {"f: bound(x, 0, 99999999999)", "t.sched:1:16: integer 99999999999 is too large"},
    });
    std::string missing_colon = parse_error("f:\nblur_x compute_root()");
    CHECK(contains(missing_colon, "t.sched:2:1: unknown directive 'blur_x'"));
    CHECK(contains(missing_colon, "(a stanza header needs a ':', as in 'blur_x:')"));
}

TEST_CASE("sched: load() of a missing file", "[sched]") {
    CHECK(error_of([] { ScheduleFile::load("/nonexistent/x.sched"); }) ==
          "/nonexistent/x.sched: cannot open the schedule file for reading");
}

// ---- apply() ----

TEST_CASE("sched: apply() of a tiled blur gives the loops of the same C++ schedule", "[sched]") {
    Blur a;
    ScheduleFile::load(fixture("blur_tiled.sched")).apply(a.pipeline(), avx2());
    std::string from_file = a.pipeline().lowered_stmt(avx2());

    Blur b;
    int n = avx2().natural_vector_size(Float(32));
    b.blur_y.tile(b.x, b.y, b.xo, b.yo, b.xi, b.yi, 64, 8).vectorize(b.xi, n).parallel(b.yo);
    b.blur_x.compute_at(b.blur_y, b.xo).vectorize(b.x, n);
    CHECK(from_file == b.pipeline().lowered_stmt(avx2()));

    CHECK(contains(from_file, "parallel for (blur_y.s0.y.yo"));
    CHECK(contains(from_file, "blur_y.s0.x.xi"));
    CHECK(contains(from_file, "produce blur_x"));
    CHECK(from_file.find("produce blur_x") > from_file.find("for (blur_y.s0.x.xo"));
}

TEST_CASE("sched: apply() of update stanzas: RVars by name, tails, unroll", "[sched]") {
    Hist a;
    ScheduleFile::load(fixture("hist.sched")).apply(Pipeline(a.out), avx2());
    std::string from_file = a.out.lowered_stmt(avx2());

    Hist b;
    b.hist.compute_root();
    RVar rxo("rxo"), rxi("rxi");
    b.hist.update(0).split(b.r.x, rxo, rxi, 4, TailStrategy::GuardWithIf).unroll(rxi).parallel(b.y);
    CHECK(from_file == b.out.lowered_stmt(avx2()));
    CHECK(contains(from_file, "parallel for (hist.s1.y"));
    CHECK(contains(from_file, "hist.s1.r.x.rxo"));

    // A 1-D RDom may be named by itself, as in C++ (r converts to r.x).
    Hist c;
    ScheduleFile::parse("hist: compute_root()\nhist.update(0): split(r, rxo, rxi, 4, GuardWithIf) unroll(rxi) "
                        "parallel(y)")
        .apply(Pipeline(c.out), avx2());
    CHECK(c.out.lowered_stmt(avx2()) == from_file);
}

TEST_CASE("sched: apply() of symbolic factors, bounds and store levels", "[sched]") {
    TwoUpdates a;
    ScheduleFile::load(fixture("messy.sched")).apply(Pipeline(a.f), avx2());
    std::string from_file = a.f.lowered_stmt(avx2());

    TwoUpdates b;
    int n = avx2().natural_vector_size(Int(32));
    b.f.split(b.x, Var("xo"), Var("xi"), n * 2, TailStrategy::RoundUp).reorder(Var("xi"), b.y, Var("xo"));
    b.f.bound(b.x, -4, 128);
    b.g.update(1).unroll(b.r.y, 2);
    b.g.store_root().compute_at(b.f, Var("xo"));
    CHECK(from_file == b.f.lowered_stmt(avx2()));

    // natural_vector_size(uint8) is 32 on avx2, whatever the Func's type.
    Blur c, d;
    ScheduleFile::parse("blur_y: vectorize(x, natural_vector_size(uint8) / 4)").apply(c.pipeline(), avx2());
    d.blur_y.vectorize(d.x, 8);
    CHECK(c.pipeline().lowered_stmt(avx2()) == d.pipeline().lowered_stmt(avx2()));
}

TEST_CASE("sched: align_bounds from a file is the C++ call", "[sched]") {
    Blur a, b;
    ScheduleFile::parse("blur_y: align_bounds(x, 2) align_bounds(y, 4, 1) vectorize(x, 8)\n"
                        "blur_x: compute_at(blur_y, y) align_bounds(x, natural_vector_size(int8) / 16)")
        .apply(a.pipeline(), avx2());
    b.blur_y.align_bounds(b.x, 2).align_bounds(b.y, 4, 1).vectorize(b.x, 8);
    b.blur_x.compute_at(b.blur_y, b.y).align_bounds(b.x, 2);
    CHECK(a.pipeline().lowered_stmt(avx2()) == b.pipeline().lowered_stmt(avx2()));
    Blur c;
    CHECK(apply_error("blur_y: align_bounds(x, 2, 2)", c.pipeline()) ==
          "t.sched:1:9: Func blur_y: align_bounds(x, 2, 2): the remainder must be an integer constant in [0, 2)");
    Blur d;
    CHECK(apply_error("blur_y: align_bounds(xx, 2)", d.pipeline()) ==
          "t.sched:1:22: Func blur_y: align_bounds(xx, 2, 0): xx is not a dimension of blur_y (dimensions: x, y); "
          "did you mean 'x'?");
}

TEST_CASE("sched: apply() errors name the Func or loop and suggest the nearest", "[sched]") {
    Blur b;
    Pipeline p = b.pipeline();
    CHECK(apply_error("blurx: compute_root()", p) ==
          "t.sched:1:1: no Func named 'blurx' in the pipeline; did you mean 'blur_x'? (its Funcs: blur_x, blur_y)");
    CHECK(apply_error("blur_x: compute_at(blury, x)", p) ==
          "t.sched:1:20: compute_at: no Func named 'blury' in the pipeline; did you mean 'blur_y'? (its Funcs: "
          "blur_x, blur_y)");
    CHECK(apply_error("blur_y.update(0): parallel(y)", p) ==
          "t.sched:1:1: Func blur_y has 0 update definitions, so there is no blur_y.update(0)");

    Blur c;
    CHECK(apply_error("blur_y:\n  split(x, xo, xi, 8)\n  vectorize(xii, 4)", c.pipeline()) ==
          "t.sched:3:13: In schedule of blur_y: vectorize(xii, ...): xii is not a loop of this stage; its loops "
          "(outermost first) are: y, xo, xi; did you mean 'xi'?");
    Blur d;
    CHECK(apply_error("blur_y: split(x, xo, xi, 8) unroll(x, 2)", d.pipeline()) ==
          "t.sched:1:36: In schedule of blur_y: split(x, ...): x has already been split or fused into other loops; "
          "use one of the current loops instead: y, xo, xi");
    Blur e;
    CHECK(apply_error("blur_y: bound(xx, 0, 64)", e.pipeline()) ==
          "t.sched:1:15: Func blur_y: bound(xx, ...): xx is not a dimension of blur_y (dimensions: x, y); did you "
          "mean 'x'?");

    // compute_at loops are looked up after the whole file, so a later stanza may create them.
    Blur f;
    CHECK(apply_error("blur_x: compute_at(blur_y, xo)\nblur_y: split(x, xo, xi, 8)", f.pipeline()) == "(no error)");
    Blur g;
    CHECK(apply_error("blur_x: compute_at(blur_y, xq)\nblur_y: split(y, yo, yi, 8)", g.pipeline()) ==
          "t.sched:1:28: compute_at(blur_y, xq): blur_y has no loop named xq; did you mean 'x'? Its loops: yo, yi, x");

    Hist h;
    CHECK(apply_error("hist: compute_root()\nhist.update(0): parallel(r.x)", Pipeline(h.out)) ==
          "t.sched:2:17: In schedule of hist.update(0): parallel(r.x): r.x is a reduction variable; running its "
          "iterations at once would race on the values being accumulated. Parallelize or vectorize a pure Var "
          "instead (hist.update(0) has x, y). Or, as hist.update(0) is an associative reduction (+), rfactor() it "
          "into partial results computed at once, then combined: RVar rxo(\"rxo\"), rxi(\"rxi\"); "
          "hist.update(0).split(r.x, rxo, rxi, 256); Var u(\"u\"); Func intm = hist.update(0).rfactor(rxo, u); "
          "intm.compute_root().update(0).parallel(u);");
    Hist k;
    CHECK(apply_error("hist.update(1): parallel(y)", Pipeline(k.out)) ==
          "t.sched:1:1: Func hist has 1 update definition, so there is no hist.update(1); use update(0)");
    Hist m;
    CHECK(apply_error("hist.update(0): vectorize(y, 8 / (4 - 4))", Pipeline(m.out)) ==
          "t.sched:1:30: division by zero in 8/(4-4)");
}

// ---- The [forward] section ----

// "[forward]": the stanzas after it schedule a backward generator's forward
// pass (its own copies of the Funcs); a header repeated across the section
// line is two stanzas, one per kernel.
TEST_CASE("sched: a [forward] section", "[sched][forward]") {
    ScheduleFile s = ScheduleFile::parse("f: compute_root()\ng: parallel(y)\n# the forward pass\n[forward]\n"
                                         "f: compute_at(g, y)\n  vectorize(x, 8)\ng: parallel(y)\n");
    REQUIRE(s.stanzas().size() == 4);
    CHECK(s.stanzas()[0].kernel.empty());
    CHECK(s.stanzas()[2].kernel == "forward");
    CHECK(s.stanzas()[2].directives.size() == 2);
    CHECK(s.has_forward_section());
    CHECK(!ScheduleFile::parse("f: compute_root()\n").has_forward_section());
    CHECK(s.to_string() == "f: compute_root()\ng: parallel(y)\n[forward]\nf: compute_at(g, y) vectorize(x, 8)\n"
                           "g: parallel(y)\n");
    check_parse_errors({
        {"f: compute_root()\n[backward]\n",
         "t.sched:2:2: expected 'forward' in a section header '[forward]' (the only section: the stanzas after it "
         "schedule the forward pass of a backward generator that saves Funcs), found 'backward'"},
        {"f: compute_root() [forward]\n", "t.sched:1:19: a section '[forward]' must start a line"},
        {"[forward\nf: compute_root()\n", "t.sched:2:1: expected ']' after '[forward', found 'f'"},
        {"[forward] f: compute_root()\n",
         "t.sched:1:11: '[forward]' stands on a line of its own; put the stanza on the next line"},
        {"[forward]\nf: compute_root()\n[forward]\n",
         "t.sched:3:1: a second '[forward]' section; the first one lasts to the end of the file, so put every stanza "
         "of the forward pass after it"},
    });
}

// apply() leaves the section out; schedule_forward() applies it to copies,
// which start from the schedule apply() gave and leave the originals alone.
TEST_CASE("sched: schedule_forward() schedules copies of the forward Funcs", "[sched][forward]") {
    Blur b;
    ScheduleFile s = ScheduleFile::parse("blur_x: compute_root()\n[forward]\nblur_x: compute_at(blur_y, y)\n"
                                         "blur_y: parallel(y)\n");
    s.apply(b.pipeline());
    const std::string shared = b.pipeline().lowered_stmt();
    Pipeline fwd = s.schedule_forward(b.pipeline());
    CHECK(fwd.outputs()[0].contents() != b.blur_y.contents());  // copies
    CHECK(b.pipeline().lowered_stmt() == shared);          // the originals as apply() left them
    Blur c;  // the same schedule in C++
    c.blur_x.compute_at(c.blur_y, c.y);
    c.blur_y.parallel(c.y);
    CHECK(fwd.lowered_stmt() == c.pipeline().lowered_stmt());
    // A stage the section names starts over (vectorize(x, 8) again is no
    // clash of loop names); one it does not name keeps the shared schedule.
    Blur e;
    ScheduleFile again = ScheduleFile::parse("blur_x: compute_root() vectorize(x, 8)\nblur_y: vectorize(x, 8)\n"
                                             "[forward]\nblur_y: vectorize(x, 8) parallel(y)\n");
    again.apply(e.pipeline());
    Pipeline efwd = again.schedule_forward(e.pipeline());
    Blur g;
    g.blur_x.compute_root().vectorize(g.x, 8);
    g.blur_y.vectorize(g.x, 8).parallel(g.y);
    CHECK(efwd.lowered_stmt() == g.pipeline().lowered_stmt());
    Blur d;
    Pipeline same = ScheduleFile::parse("blur_x: compute_root()\n").schedule_forward(d.pipeline());
    CHECK(same.outputs()[0].contents() == d.blur_y.contents());  // no section: the pipeline itself
    // The section's names are the forward pass's, with the usual errors.
    ScheduleFile bad = ScheduleFile::parse("[forward]\nblur_z: compute_root()\n", "f.sched");
    REQUIRE_THROWS_WITH(bad.schedule_forward(Blur().pipeline()), Catch::Contains("f.sched:2:1:") &&
                                                                     Catch::Contains("blur_z"));
}
