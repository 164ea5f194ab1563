// out = max(A B, 0) with the product as an update over k: matmul(x, y) sums
// A(k, y) * B(x, k), A of rows of k floats, B of k rows. Used by the
// autoscheduler's tests of operand packing in the unit and correctness
// tiers; tests bind A and B or give their sizes as estimates.
#pragma once
#include "kiln/kiln.h"

struct ReluProductFixture {
    kiln::ImageParam A{kiln::Float(32), 2, "A"}, B{kiln::Float(32), 2, "B"};
    kiln::Var x{"x"}, y{"y"};
    kiln::Func matmul{"matmul"}, out{"out"};

    explicit ReluProductFixture(int k) {
        kiln::RDom r(0, k, "k");
        matmul(x, y) = 0.0f;
        matmul(x, y) += A(r, y) * B(x, r);
        out(x, y) = kiln::max(matmul(x, y), 0.0f);
    }
};
