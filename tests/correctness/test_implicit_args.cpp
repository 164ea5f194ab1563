// Implicit arguments: `_` in a call stands for the dimensions the other
// arguments leave (implicit Vars _0, _1, ...), and a pure definition gets
// the implicit Vars its right-hand side uses, as in Halide.
#include "check.h"

using namespace kiln;

namespace {

Buffer<int> cube(int w, int h, int c) {
    Buffer<int> b(w, h, c);
    for (int z = 0; z < c; z++)
        for (int y = 0; y < h; y++)
            for (int x = 0; x < w; x++) b(x, y, z) = kt::noise(x, y + 31 * z, -100, 100);
    return b;
}

}  // namespace

TEST_CASE("implicit args: f(_) = g(_) covers every dimension of g", "[implicit]") {
    ImageParam in(Int(32), 3, "in");
    Var x("x");
    Func g("g"), f("f"), h("h");
    g(_) = in(_) * 2;  // g(_0, _1, _2)
    f(_) = g(_) + 1;
    h(x, _) = f(x, _) - f(x + 1, _);  // h(x, _0, _1): f's last two dimensions
    REQUIRE(g.dimensions() == 3);
    REQUIRE(h.dimensions() == 3);
    CHECK(h.args()[0].name() == "x");
    CHECK(h.args()[1].name() == "_0");
    CHECK(h.args()[2].is_implicit());
    g.compute_root();
    Buffer<int> im = cube(21, 6, 3);
    in.set(im);
    Buffer<int> o(20, 6, 3);
    h.realize(o);
    for (int c = 0; c < 3; c++)
        for (int y = 0; y < 6; y++)
            for (int px = 0; px < 20; px++) REQUIRE(o(px, y, c) == (im(px, y, c) * 2 + 1) - (im(px + 1, y, c) * 2 + 1));
}

TEST_CASE("implicit args: implicit Vars on the right go to the end of the left-hand side", "[implicit]") {
    ImageParam in(Int(32), 3, "in");
    Var x("x"), y("y");
    Func first("first"), swapped("swapped"), sum("sum");
    first() = in(_) + 5;           // first(_0, _1, _2)
    swapped(x) = first(_, x) * 3;  // first(_0, _1, x): swapped(x, _0, _1)
    sum(_) = swapped(_) + _0;      // an implicit Var used as a value too
    REQUIRE(first.dimensions() == 3);
    REQUIRE(swapped.dimensions() == 3);
    CHECK(swapped.args()[0].name() == "x");
    Buffer<int> im = cube(4, 5, 6);
    in.set(im);
    Buffer<int> o(6, 4, 5);  // swapped(x, _0, _1) = first(_0, _1, x)
    sum.realize(o);
    for (int z = 0; z < 5; z++)
        for (int w = 0; w < 4; w++)
            for (int px = 0; px < 6; px++) REQUIRE(o(px, w, z) == (im(w, z, px) + 5) * 3 + px);
}

TEST_CASE("implicit args: an update over the implicit dimensions, and scheduling them", "[implicit]") {
    Var x("x");
    Func f("f"), out("out");
    f(x, _) = Func(Expr(0))() + x + _0 * 10 + _1 * 100;  // f(x, _0, _1)
    REQUIRE(f.dimensions() == 3);
    f(x, _) += 7;  // the update's _ is f's last two dimensions
    out(_) = f(_) * 2;
    f.compute_root().parallel(_1).vectorize(x, 4);
    Buffer<int> o(8, 3, 2);
    out.realize(o);
    for (int b = 0; b < 2; b++)
        for (int a = 0; a < 3; a++)
            for (int px = 0; px < 8; px++) REQUIRE(o(px, a, b) == (px + a * 10 + b * 100 + 7) * 2);
}
