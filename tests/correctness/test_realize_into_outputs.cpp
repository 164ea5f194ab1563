// An output that copies a Func computed at the root (out(x) = f(x)) gets
// f's values whether f's region is the output's (f computed in the
// output's buffer, dsl/lower/RealizeIntoOutputs.h) or larger (f's update
// writes outside it: f is computed apart and copied).
#include <catch2/catch.hpp>

#include "kiln/kiln.h"

using namespace kiln;

TEST_CASE("realize_into_outputs: a copied root Func with updates, in place and not", "[correctness][realize_into_outputs]") {
    ImageParam in(Float(32), 2, "in");
    Var x("x"), y("y");
    RDom r(0, 5, "r");
    Func f("f"), out("out");
    f(x, y) = in(x, y) * 2.0f;
    f(0, y) += in(r, y);   // writes column 0 of f whatever the output's region
    f(x, 1) = f(x, 1) - 1.0f;
    out(x, y) = f(x, y);
    f.compute_root().vectorize(x, 4).parallel(y);
    Buffer<float> image(12, 6);
    for (int j = 0; j < 6; j++)
        for (int i = 0; i < 12; i++) image(i, j) = (float)(i * 7 + j * 3 % 5) * 0.25f;
    in.set(image);
    auto want = [&](int i, int j) {
        float v = image(i, j) * 2.0f;
        if (i == 0)
            for (int k = 0; k < 5; k++) v += image(k, j);
        if (j == 1) v -= 1.0f;
        return v;
    };
    SECTION("the output covers f's region: f is computed in the output") {
        Buffer<float> o(12, 6);
        out.realize(o);
        for (int j = 0; j < 6; j++)
            for (int i = 0; i < 12; i++) REQUIRE(o(i, j) == want(i, j));
    }
    SECTION("in place in a cropped view of a larger buffer: the output's strides") {
        // f's stores take the view's row stride (16), not f's extent (12).
        Buffer<float> big(16, 9);
        big.fill(-7.0f);
        Buffer<float> o = big.cropped(0, 2, 12).cropped(1, 1, 6);
        o.set_min(0, 0);
        out.realize(o);
        for (int j = 0; j < 6; j++)
            for (int i = 0; i < 12; i++) REQUIRE(o(i, j) == want(i, j));
        for (int i = 0; i < 16; i++) REQUIRE(big(i, 0) == -7.0f);  // untouched around the view
        for (int j = 1; j < 7; j++) REQUIRE((big(0, j) == -7.0f && big(1, j) == -7.0f && big(14, j) == -7.0f));
    }
    SECTION("f's update writes outside the output: f is copied") {
        Buffer<float> o(7, 4);
        o.set_min(3, 1);
        out.realize(o);
        for (int j = 1; j < 5; j++)
            for (int i = 3; i < 10; i++) REQUIRE(o(i, j) == want(i, j));
    }
}
