// reorder_storage through storage flattening: the strides of a reordered
// Func follow its storage order (stride 1 on the dimension named first), the
// indexing multiplies every other dimension by its stride, and a Func left
// in its own order is flattened as before.
#include <catch2/catch.hpp>

#include "before_licm.h"
#include "ir/IRPrinter.h"
#include "kiln/kiln.h"

using namespace kiln;
using Catch::Contains;

namespace {

struct Transpose {
    ImageParam in{Int(32), 2, "in"};
    Var x{"x"}, y{"y"}, c{"c"};
    Func t{"t"}, out{"out"}, f3{"f3"};
    Transpose() {
        t(x, y) = in(y, x);
        out(x, y) = t(y, x) + 1;
        t.compute_root();
    }
};

const Target plain = Target("x86-64-linux").with(Target::NoAsserts);

}  // namespace

TEST_CASE("storage_flattening: reorder_storage(y, x) makes y the unit-stride dimension",
          "[lower][reorder_storage]") {
    Transpose a;
    a.t.reorder_storage(a.y, a.x);
    const std::string s = stmt_before_licm(a.out, plain);
    CHECK_THAT(s, Contains("allocate t[int32 * (t.extent.1 * t.extent.0)]"));
    CHECK_THAT(s, Contains("t[((((t.s0.x - out.min.1) * t.extent.1) + t.s0.y) - out.min.0)] = "));
    CHECK_THAT(s, Contains("(t[((((out.s0.y - out.min.1) * t.extent.1) + out.s0.x) - out.min.0)] + 1)"));

    Transpose b;  // the default: x innermost
    const std::string d = stmt_before_licm(b.out, plain);
    CHECK_THAT(d, Contains("allocate t[int32 * (t.extent.0 * t.extent.1)]"));
    CHECK_THAT(d, Contains("t[((((t.s0.y - out.min.0) * t.extent.0) + t.s0.x) - out.min.1)] = "));
}

TEST_CASE("storage_flattening: a 3-D Func stored c, x, y", "[lower][reorder_storage]") {
    ImageParam in{Float(32), 2, "in"};
    Var x{"x"}, y{"y"}, c{"c"};
    Func f{"f"}, out{"out"};
    f(x, y, c) = in(x, y) * c;
    out(x, y) = f(x, y, 0) + f(x, y, 2);
    f.compute_root().reorder_storage(c, x, y).bound(c, 0, 3);
    const std::string s = stmt_before_licm(out, plain);
    // c has stride 1, x stride 3 (c's extent), y stride 3 times x's extent.
    CHECK_THAT(s, Contains("let f.stride.1 = (f.extent.0 * 3)"));
    CHECK_THAT(s, Contains("f[(((((f.s0.y - out.min.1) * f.stride.1) + f.s0.c) + (f.s0.x * 3)) - (out.min.0 * 3))] = "));
}
