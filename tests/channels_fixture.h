// An image's three channels computed from values they share (the structure
// of the hist_equalize generator's output): luma(x, y) and two chroma
// differences from in's three channels, and out(x, y, c) each channel's
// mix of them, a select over c. With c the outermost loop every channel
// computes the shared values again (and, vectorized, every arm of the
// select); with c innermost and unrolled, per vector, once. Used by the
// autoscheduler's tests of channels computed together, in the unit and
// correctness tiers; tests bind `in` or give its size as an estimate.
#pragma once
#include "kiln/kiln.h"

struct ChannelsFixture {
    kiln::ImageParam in{kiln::Float(32), 3, "in"};
    kiln::Var x{"x"}, y{"y"}, c{"c"};
    kiln::Func luma{"luma"}, cr{"cr"}, cb{"cb"}, out{"out"};

    ChannelsFixture() {
        kiln::Expr r = in(x, y, 0), g = in(x, y, 1), b = in(x, y, 2);
        luma(x, y) = 0.299f * r + 0.587f * g + 0.114f * b;
        cr(x, y) = (r - luma(x, y)) * 0.713f;
        cb(x, y) = (b - luma(x, y)) * 0.564f;
        kiln::Expr l = kiln::sqrt(luma(x, y)) * 16.0f;
        out(x, y, c) = kiln::select(c == 0, l + 1.4f * cr(x, y), c == 1, l - 0.343f * cb(x, y) - 0.711f * cr(x, y),
                                    l + 1.765f * cb(x, y));
    }
};
