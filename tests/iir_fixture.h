// Two passes of a first-order recursive filter down the columns, each
// transposing its result (the structure of the iir_blur generator): blur_a
// filters in's columns down and back up, trans_a(x, y) = blur_a(y, x),
// blur_b filters trans_a's columns, out(x, y) = blur_b(y, x). Used by the
// autoscheduler's tests of a Func placed at the root with its producer in
// its loops, in the unit and correctness tiers; tests bind `in` or give
// its size as an estimate.
#pragma once
#include "kiln/kiln.h"

struct IirFixture {
    kiln::ImageParam in{kiln::Float(32), 2, "in"};
    kiln::Var x{"x"}, y{"y"};
    kiln::Func blur_a{"blur_a"}, trans_a{"trans_a"}, blur_b{"blur_b"}, out{"out"};

    IirFixture() {
        kiln::Func first("first");
        first(x, y) = in(x, y);
        filter(first, in.height(), blur_a, trans_a);
        filter(trans_a, in.width(), blur_b, out);
    }

private:
    void filter(kiln::Func src, kiln::Expr height, kiln::Func blur, kiln::Func transposed) {
        blur(x, y) = kiln::undef<float>();
        blur(x, 0) = src(x, 0);
        kiln::RDom ry(1, height - 1, "ry");
        blur(x, ry) = 0.75f * blur(x, ry - 1) + 0.25f * src(x, ry);
        kiln::Expr up = height - ry - 1;
        blur(x, up) = 0.75f * blur(x, up + 1) + 0.25f * blur(x, up);
        transposed(x, y) = blur(y, x);
    }
};
