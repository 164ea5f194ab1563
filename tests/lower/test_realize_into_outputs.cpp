// realize_into_outputs (dsl/lower/RealizeIntoOutputs.h): an output that
// copies a Func computed at the root computes it in its own buffer, behind
// a test that the Func's region is the buffer's; outputs that do more than
// copy are left alone.
#include <catch2/catch.hpp>

#include "ir/IRPrinter.h"
#include "kiln/kiln.h"
#include "lower/Lower.h"

using namespace kiln;
using namespace kiln::internal;
using Catch::Contains;

namespace {

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
    // After: f's stages store into out when f's region is out's buffer;
    // the copy remains for the other case.
    std::string post = until({out}, "realize into outputs");
    INFO(post);
    size_t branch = post.find("if (");
    REQUIRE(branch != std::string::npos);
    CHECK(post.find("realize f(") > branch);
    CHECK_THAT(post, Contains("== out.min.0)") && Contains("== out.extent.0)"));
    std::string then_case = post.substr(branch, post.find("} else {") - branch);
    CHECK_THAT(then_case, Contains("produce out {") && Contains("out(f.s0.x) = (in(f.s0.x) * 2.000000f)") &&
                              Contains("out(0) = (out(0) + in(f.s1.r.x))"));
    CHECK(then_case.find("f(") == std::string::npos);  // no store or read of f's own storage
    std::string else_case = post.substr(post.find("} else {"));
    CHECK_THAT(else_case, Contains("realize f(") && Contains("out(out.s0.x) = f(out.s0.x)"));
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
    SECTION("f read by a second output too") {
        Func f = root_f(), out("out"), other("other");
        out(x) = f(x);
        other(x) = f(x) * 3.0f;
        CHECK(until({out, other}, "realize into outputs") == until({out, other}, "inject prefetches"));
    }
}
