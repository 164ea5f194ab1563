// Misuse of the fusion vocabulary: wrappers (in()), horizontal fusion
// (compute_with) and specializations, each message checked.
#include "expect_error.h"

using namespace kiln;

namespace {

// t = in * 2; z1 = t + 1; z2 = t - 1; out = z1 + z2.
struct Users {
    ImageParam in{Int(32), 2, "in"};
    Var x{"x"}, y{"y"}, xi{"xi"}, yi{"yi"};
    Func t{"t"}, z1{"z1"}, z2{"z2"}, out{"out"};
    Users() {
        t(x, y) = in(x, y) * 2;
        z1(x, y) = t(x, y) + 1;
        z2(x, y) = t(x, y) - 1;
        out(x, y) = z1(x, y) + z2(x, y);
    }
};

}  // namespace

TEST_CASE("error: in() of an undefined Func", "[error][wrappers]") {
    Func f("f"), g("g");
    REQUIRE_COMPILE_ERROR(f.in(g), Contains("Func f must be defined before in() makes a wrapper of it"));
}

TEST_CASE("error: a Func wrapping its own calls", "[error][wrappers]") {
    Users p;
    REQUIRE_COMPILE_ERROR(p.t.in(p.t), Contains("t.in(t): a Func cannot wrap its own calls"));
}

TEST_CASE("error: in() for a list where only some consumers have a wrapper", "[error][wrappers]") {
    Users p;
    p.t.in(p.z1);
    REQUIRE_COMPILE_ERROR(p.t.in({p.z1, p.z2}), Contains("some of the consumers already have their own wrapper (t_in_z1)"));
}
