// The directive table (schedule/Directives.h): every row is parsed, printed
// and documented, and reorder_storage, added through it, works from a
// .sched file like its C++ call, with errors at the argument's position.
#include <catch2/catch.hpp>

#include <fstream>
#include <sstream>

#include "ir/Function.h"
#include "ir/Substitute.h"
#include "sched_helpers.h"
#include "schedule/Directives.h"

using namespace kiln;
using namespace kiln::internal::sched;
using namespace sched_test;

namespace {

std::string read(const std::string &path) {
    std::ifstream in(path);
    std::ostringstream s;
    s << in.rdbuf();
    return s.str();
}

struct Transpose {
    ImageParam in{Int(32), 2, "in"};
    Var x{"x"}, y{"y"};
    Func t{"t"}, out{"out"};
    Transpose() {
        t(x, y) = in(y, x);
        out(x, y) = t(y, x) + 1;
    }
};

}  // namespace

TEST_CASE("directives: each row has a usage, forms and a section in the reference", "[sched][directives]") {
    const std::string reference = read(KILN_SOURCE_DIR "/docs/scheduling.md");
    REQUIRE_FALSE(reference.empty());
    for (const Directive &d : directives()) {
        INFO(d.name);
        CHECK(std::string(d.usage).find(std::string(d.name) + "(") == 0);
        CHECK(std::string(d.doc).size() > 10);
        CHECK(d.apply != nullptr);
        // In a section heading, or quoted as code.
        bool documented = reference.find("`" + std::string(d.name)) != std::string::npos;
        std::istringstream lines(reference);
        for (std::string l; std::getline(lines, l);)
            documented |= l.rfind("### ", 0) == 0 && l.find(std::string(d.name) + "(") != std::string::npos;
        CHECK(documented);
        std::vector<Parameter> params;
        for (const Form &f : d.forms)
            for (size_t n = f.required; n <= f.params.size(); n++) CHECK(params_for(d, n, &params));
        CHECK(find_directive(d.name) == &d);
    }
    CHECK(find_directive("reorder_storag") == nullptr);
}

TEST_CASE("directives: reorder_storage from a .sched file", "[sched][directives][reorder_storage]") {
    ScheduleFile s = ScheduleFile::parse("t: compute_root()\n   reorder_storage(y, x)\n", "t.sched");
    CHECK(s.to_string() == "t: compute_root() reorder_storage(y, x)\n");
    CHECK(ScheduleFile::parse(s.to_string(), "t.sched").stanzas() == s.stanzas());
    Transpose p;
    s.apply(Pipeline(p.out), avx2());
    CHECK(p.t.contents()->schedule.storage_dims == std::vector<std::string>{"y", "x"});

    // Naming the dimensions in their own order gives the default layout back.
    Transpose q;
    q.t.reorder_storage(q.y, q.x).reorder_storage(q.x, q.y);
    CHECK(q.t.contents()->schedule.storage_dims.empty());
}

TEST_CASE("directives: save from a .sched file", "[sched][directives][residuals]") {
    ScheduleFile s = ScheduleFile::parse("t: save(bits)\n", "t.sched");
    CHECK(s.to_string() == "t: save(bits)\n");
    Transpose p;
    s.apply(Pipeline(p.out), avx2());
    CHECK(p.t.contents()->schedule.residual == Residual::Bits);
    CHECK(p.t.saved_buffer().name() == "t_bits");
    CHECK(p.t.saved_buffer().type() == UInt(8));
    ScheduleFile::parse("t: save()\n", "t.sched").apply(Pipeline(p.out), avx2());
    CHECK(p.t.contents()->schedule.residual == Residual::Whole);
    CHECK(p.t.saved_buffer().name() == "t");
    ScheduleFile::parse("t: save(none)\n", "t.sched").apply(Pipeline(p.out), avx2());
    CHECK(p.t.contents()->schedule.residual == Residual::None);
    // A 16-bit copy of a float Func.
    ImageParam in(Float(32), 2, "in");
    Var x("x"), y("y");
    Func f("f"), out("out");
    f(x, y) = in(x, y) * 2.0f;
    out(x, y) = f(x, y) + 1.0f;
    ScheduleFile::parse("f: save(float16)\n", "f.sched").apply(Pipeline(out), avx2());
    CHECK(f.contents()->schedule.residual == Residual::Float16);
    CHECK(f.saved_buffer().name() == "f_float16");
    CHECK(f.saved_buffer().type() == Float(16));
    ScheduleFile b16 = ScheduleFile::parse("f: save(bfloat16)\n", "f.sched");
    CHECK(b16.to_string() == "f: save(bfloat16)\n");
    b16.apply(Pipeline(out), avx2());
    CHECK(f.saved_buffer().type() == BFloat(16));
    CHECK_THROWS_WITH(ScheduleFile::parse("t: save(half)\n", "t.sched"),
                      Catch::Contains("whole, bits, float16, bfloat16 or none"));
}

TEST_CASE("directives: reorder_storage errors", "[sched][directives][reorder_storage]") {
    CHECK(parse_error("t: reorder_storage(x)") ==
          "t.sched:1:4: reorder_storage takes 2 or more arguments: reorder_storage(innermost, ..., outermost); found 1");
    CHECK(parse_error("t.update(0): reorder_storage(y, x)") ==
          "t.sched:1:14: reorder_storage schedules the whole Func t, not one update stage; move it to the 't:' stanza");
    CHECK(parse_error("t: reorder_storage(y, 2)") ==
          "t.sched:1:23: argument 2 (var) of reorder_storage must be a name, found the integer '2'");
    Transpose a;
    CHECK(apply_error("t: reorder_storage(y, xx)", a.out) ==
          "t.sched:1:23: Func t: reorder_storage(y, xx): xx is not a dimension of t (dimensions: x, y); did you mean "
          "'x'?");
    Transpose b;
    CHECK(apply_error("t: reorder_storage(y, y)", b.out) ==
          "t.sched:1:4: Func t: reorder_storage(y, y): y is named twice");
}

TEST_CASE("directives: storage directives the NPU target would ignore are errors there", "[directives][npu]") {
    Transpose a;
    a.t.compute_root().reorder_storage(a.y, a.x);
    CHECK(error_of([&] { Pipeline(a.out).compile_to_cpp_source("k", Target("npu")); }) ==
          "NPU target: Func t is scheduled with reorder_storage, which the NPU target does not honour (it lays out "
          "and sizes its buffers itself); remove it from the NPU schedule");
    Transpose b;
    b.t.store_root().compute_at(b.out, b.y).fold_storage(b.y, 2);
    CHECK(error_of([&] { Pipeline(b.out).compile_to_cpp_source("k", Target("npu")); }).find(
              "Func t is scheduled with fold_storage") != std::string::npos);
    Transpose c;
    c.t.compute_root();
    c.out.prefetch(c.t, c.y, c.y, 2);
    CHECK(error_of([&] { Pipeline(c.out).compile_to_cpp_source("k", Target("npu")); }) ==
          "NPU target: Func out is scheduled with prefetch, which the NPU target does not honour (it stages every "
          "load into on-chip memory with its own DMA, overlapped with compute by double_buffer()); remove it from "
          "the NPU schedule");
}

TEST_CASE("directives: prefetch from a .sched file", "[sched][directives][prefetch]") {
    ScheduleFile s = ScheduleFile::parse("t: compute_root() prefetch(in, x, y, 2, NonFaulting)\n"
                                         "out: prefetch(t, x, y)\n",
                                         "t.sched");
    CHECK(ScheduleFile::parse(s.to_string(), "t.sched").stanzas() == s.stanzas());
    Transpose p;
    s.apply(Pipeline(p.out), avx2());
    const auto &tp = p.t.contents()->init.schedule.prefetches;
    REQUIRE(tp.size() == 1);
    CHECK(tp[0].name == "in");
    CHECK(tp[0].is_image);
    CHECK(tp[0].at == "x");
    CHECK(tp[0].from == "y");
    CHECK(internal::equal(tp[0].offset, Expr(2)));
    CHECK(tp[0].strategy == PrefetchBoundStrategy::NonFaulting);
    const auto &op = p.out.contents()->init.schedule.prefetches;
    REQUIRE(op.size() == 1);
    CHECK(op[0].name == "t");
    CHECK(!op[0].is_image);
    CHECK(internal::equal(op[0].offset, Expr(1)));
    CHECK(op[0].strategy == PrefetchBoundStrategy::GuardWithIf);
}

TEST_CASE("directives: prefetch errors", "[sched][directives][prefetch]") {
    CHECK(parse_error("t: prefetch(in, x)") ==
          "t.sched:1:4: prefetch takes 3, 4 or 5 arguments: prefetch(func, at, from[, offset[, strategy]]); found 2");
    CHECK(parse_error("t: prefetch(in, x, y, 1, Clmp)") ==
          "t.sched:1:26: argument 5 (strategy) of prefetch must be a PrefetchBoundStrategy (Clamp, GuardWithIf, "
          "NonFaulting), found the name 'Clmp'; did you mean 'Clamp'?");
    Transpose a;
    CHECK(apply_error("out: prefetch(tt, x, y)", a.out) ==
          "t.sched:1:15: prefetch: no input image and no Func named 'tt' in the pipeline; did you mean 't'? (its "
          "Funcs: out, t)");
    Transpose b;
    CHECK(apply_error("out: prefetch(t, xx, y)", b.out).find("t.sched:1:18:") == 0);
}
