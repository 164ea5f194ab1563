// The buffer-constraints pass: each constrained field of an input or output
// buffer is asserted on entry (before the other entry checks) and replaced
// by its value below, so the loop nest sees known strides and bounds.
#include <catch2/catch.hpp>

#include "kiln/kiln.h"

using namespace kiln;
using Catch::Contains;

namespace {

struct Sum2 {
    ImageParam in{Int(32), 2, "in"};
    Var x{"x"}, y{"y"};
    Func out{"out"};
    Sum2() { out(x, y) = in(x, y) + in(x, y + 1); }
};

const Target plain = Target("x86-64-linux").with(Target::NoAsserts);

}  // namespace

TEST_CASE("buffer_constraints: known strides and bounds replace the buffer fields", "[lower][buffer_constraints]") {
    Sum2 before;
    const std::string b = before.out.lowered_stmt(plain);
    CHECK_THAT(b, Contains("for (out.s0.x, out.min.0, out.s0.x.loop_extent)"));
    CHECK_THAT(b, Contains("in.stride.1"));

    Sum2 after;
    after.in.dim(1).set_stride(64);
    after.out.output_buffer().dim(0).set_bounds(0, 64);
    const std::string a = after.out.lowered_stmt(plain);
    CHECK_THAT(a, Contains("for (out.s0.x, 0, 64)"));
    CHECK_THAT(a, !Contains("in.stride.1") && !Contains("out.min.0") && !Contains("out.extent.0"));
    CHECK_THAT(a, Contains("(out.s0.y * 64)"));
    CHECK_THAT(a, !Contains("assert"));  // no_asserts: substituted, not checked
}

TEST_CASE("buffer_constraints: the asserts come first, naming the call", "[lower][buffer_constraints]") {
    Sum2 p;
    p.in.dim(1).set_stride(64);
    p.out.output_buffer().dim(0).set_bounds(0, 64);
    const std::string s = p.out.lowered_stmt(Target("x86-64-linux"));
    const std::string stride = "assert((in.stride.1 == 64), -15, \"out: input 'in' has stride \", in.stride.1, \" in "
                               "dimension 1, but the pipeline requires \", 64, \" (in.dim(1).set_stride(64)); pass a "
                               "buffer with that stride\")";
    const std::string extent = "assert((out.extent.0 == 64), -15, \"out: output 'out' has extent \", out.extent.0";
    CHECK_THAT(s, Contains(stride) && Contains(extent) && Contains("assert((out.min.0 == 0), -15"));
    CHECK(s.find(stride) < s.find("is read over"));  // before the input's coverage check
}

TEST_CASE("buffer_constraints: an output buffer's fields in a split factor", "[lower][buffer_constraints]") {
    Sum2 p;
    Var xo("xo"), xi("xi");
    p.out.split(p.x, xo, xi, p.out.output_buffer().width() / 4, TailStrategy::GuardWithIf);
    CHECK_THAT(p.out.lowered_stmt(plain), Contains("out.extent.0 / 4"));
    p.out.output_buffer().dim(0).set_extent(256);  // now a constant split
    const std::string s = p.out.lowered_stmt(plain);
    CHECK_THAT(s, Contains("for (out.s0.x.xi, 0, 64)") && !Contains("out.extent.0"));
}
