// A bilateral grid's splat (as generators/bilateral_grid.cpp) for several
// tiers' tests: each 8 x 8 block of `input` (float32, 2-D, values clamped to
// [0, 1]) adds its values and a count into the cells of `histogram(x, y, z,
// c)` that the values select (z = value * 10, rounded; c = 0 the value, 1
// the count). `out` divides the two at one cell per block: a consumer that
// reads the histogram, as the grid's blurs do.
#pragma once
#include "kiln/kiln.h"

struct GridFixture {
    kiln::ImageParam input{kiln::Float(32), 2, "input"};
    kiln::Var x{"x"}, y{"y"}, z{"z"}, c{"c"};
    kiln::Func histogram{"histogram"}, out{"out"};

    GridFixture() {
        using namespace kiln;
        Func clamped = BoundaryConditions::repeat_edge(input);
        RDom r(0, 8, 0, 8, "r");
        Expr v = clamp(clamped(x * 8 + r.x, y * 8 + r.y), 0.0f, 1.0f);
        histogram(x, y, z, c) = 0.0f;
        histogram(x, y, cast<int>(v * 10.0f + 0.5f), c) += mux(c, {v, 1.0f});
        out(x, y) = (histogram(x, y, 3, 0) + histogram(x, y, 4, 0)) / max(histogram(x, y, 3, 1) + histogram(x, y, 4, 1), 1.0f);
    }
};
