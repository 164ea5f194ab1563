// realize_into_outputs (dsl/lower/RealizeIntoOutputs.h): an output that
// copies a Func computed at the root computes it in its own buffer when a
// test finds the Func's region is the buffer's, with the Func's producer
// emitted once; outputs that do more than copy are left alone.
#include <catch2/catch.hpp>
#include <cstdio>
#include <fstream>
#include <iterator>

#include "ir/IRPrinter.h"
#include "kiln/kiln.h"
#include "lower/Lower.h"

using namespace kiln;
using namespace kiln::internal;
using Catch::Contains;

namespace {

size_t count(const std::string &s, const std::string &what) {
    size_t n = 0;
    for (size_t at = s.find(what); at != std::string::npos; at = s.find(what, at + 1)) n++;
    return n;
}

const Target no_asserts = Target::host().with(Target::NoAsserts);

// lower() up to and including one pass, printed.
std::string until(const std::vector<Func> &outs, const char *pass) {
    LowerOptions o;
    o.stop_after = pass;
    std::vector<std::shared_ptr<FunctionContents>> c;
    for (const Func &f : outs) c.push_back(f.contents());
    return to_string(lower(c, outs[0].name(), {}, no_asserts, o).body);
}

}  // namespace

TEST_CASE("realize_into_outputs: an output copying a root Func with updates computes it in place",
          "[lower][realize_into_outputs]") {
    ImageParam in(Float(32), 1, "in");
    Var x("x");
    RDom r(0, 4, "r");
    Func f("f"), out("out");
    f(x) = in(x) * 2.0f;
    f(0) += in(r);
    out(x) = f(x);
    f.compute_root();
    // Before: f in an allocation of its own, then copied.
    std::string pre = until({out}, "inject prefetches");
    CHECK_THAT(pre, Contains("realize f(") && Contains("out(out.s0.x) = f(out.s0.x)"));
    // After: f's producer once, in a realization that is out's buffer when
    // f's region is out's; the copy only for the other case.
    std::string post = until({out}, "realize into outputs");
    INFO(post);
    CHECK_THAT(post, Contains("let f.in_place = ") && Contains("== out.min.0)") && Contains("== out.extent.0)"));
    CHECK_THAT(post, Contains(") in out if (f.in_place) {"));
    CHECK(count(post, "f(f.s0.x) = (in(f.s0.x) * 2.000000f)") == 1);
    CHECK(count(post, "f(0) = (f(0) + in(f.s1.r.x))") == 1);
    CHECK(count(post, "produce f {") == 1);
    size_t copy = post.find("if (!f.in_place) {");
    REQUIRE(copy != std::string::npos);
    CHECK(post.find("out(out.s0.x) = f(out.s0.x)") > copy);
    CHECK(post.find("} else {") == std::string::npos);  // no second copy of the producer
    // Flattened: f's row stride is out's when in place, and the allocation
    // says whose buffer it may be.
    std::string flat = until({out}, "storage flattening");
    INFO(flat);
    CHECK_THAT(flat, Contains("] in out if (f.in_place)") && Contains("allocate f["));
    CHECK(count(flat, "f[(f.s0.x - f.min.0)] = ") == 1);
}

TEST_CASE("realize_into_outputs: a 2-D Func takes the output's strides when in place", "[lower][realize_into_outputs]") {
    ImageParam in(Float(32), 2, "in");
    Var x("x"), y("y");
    Func f("f"), out("out");
    f(x, y) = in(x, y) + 1.0f;
    f(0, y) = f(0, y) * 3.0f;
    out(x, y) = f(x, y);
    f.compute_root();
    std::string flat = until({out}, "storage flattening");
    INFO(flat);
    CHECK_THAT(flat, Contains("let f.stride.1 = select(f.in_place, out.stride.1, (f.stride.0 * f.extent.0))"));
    CHECK_THAT(flat, Contains("] in out if (f.in_place)"));
    // C++: out's pointer when in place, else a heap block; the copy only
    // then.
    const std::string path = "realize_into_outputs_strides.cpp";
    out.compile_to_cpp(path, "rio_strides", no_asserts);
    std::ifstream file(path);
    std::string cpp((std::istreambuf_iterator<char>(file)), std::istreambuf_iterator<char>());
    std::remove(path.c_str());
    CHECK_THAT(cpp, Contains("f_in_place ? out : (float *)"));
    CHECK_THAT(cpp, Contains("if (!f_in_place && !"));
}

TEST_CASE("realize_into_outputs: outputs that do more than copy a root Func are left alone",
          "[lower][realize_into_outputs]") {
    ImageParam in(Float(32), 1, "in");
    Var x("x");
    auto root_f = [&] {
        Func f("f");
        f(x) = in(x) * 2.0f;
        f.compute_root();
        return f;
    };
    SECTION("a value computed from f") {
        Func f = root_f(), out("out");
        out(x) = f(x) + 1.0f;
        CHECK(until({out}, "realize into outputs") == until({out}, "inject prefetches"));
    }
    SECTION("f read at another point") {
        Func f = root_f(), out("out");
        out(x) = f(x + 1);
        CHECK(until({out}, "realize into outputs") == until({out}, "inject prefetches"));
    }
    SECTION("a cast of f") {
        Func f = root_f(), out("out");
        out(x) = cast<double>(f(x));
        CHECK(until({out}, "realize into outputs") == until({out}, "inject prefetches"));
    }
    SECTION("an output with an update of its own") {
        Func f = root_f(), out("out");
        out(x) = f(x);
        out(0) += 1.0f;
        CHECK(until({out}, "realize into outputs") == until({out}, "inject prefetches"));
    }
    SECTION("an update of every point of f, a sum per point") {
        // Kept in f's allocation, where promote_accumulators keeps the sum
        // in a register.
        Func f = root_f(), out("out");
        RDom r(0, 4, "r");
        f(x) += in(x + r);
        out(x) = f(x);
        CHECK(until({out}, "realize into outputs") == until({out}, "inject prefetches"));
    }
    SECTION("f stored with another dimension innermost") {
        ImageParam in2(Float(32), 2, "in2");
        Var y("y");
        Func g("g"), out("out");
        g(x, y) = in2(x, y) * 2.0f;
        g(0, y) = g(0, y) + 1.0f;
        g.compute_root().reorder_storage(y, x);
        out(x, y) = g(x, y);
        CHECK(until({out}, "realize into outputs") == until({out}, "inject prefetches"));
    }
    SECTION("f read by a second output too") {
        Func f = root_f(), out("out"), other("other");
        out(x) = f(x);
        other(x) = f(x) * 3.0f;
        CHECK(until({out, other}, "realize into outputs") == until({out, other}, "inject prefetches"));
    }
}
