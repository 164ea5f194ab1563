// A max filter's structure (the max_filter generator): levels(x, y, t) holds
// the max of 2^t values down the column from (x, y), each level computed
// over the rows by an update from two values of the level below; out reads
// level 3 at rows above and below and at the neighbouring columns. Per
// strip of out's rows, levels would be computed down all its rows again
// (FuncInfo::rows_reduced); per strip of out's columns, only the band of
// columns the strip reads. Used by the autoscheduler's tests of strips of
// columns, in the unit and correctness tiers; tests bind `in` or give its
// size as an estimate.
#pragma once
#include "kiln/kiln.h"

struct ColumnMaxFixture {
    kiln::ImageParam in{kiln::Float(32), 2, "in"};
    kiln::Var x{"x"}, y{"y"}, t{"t"};
    kiln::Func levels{"levels"}, out{"out"};

    ColumnMaxFixture() {
        kiln::Func clamped = kiln::BoundaryConditions::repeat_edge(in);
        levels(x, y, t) = clamped(x, y);
        kiln::RDom r(-8, in.height() + 16, 1, 3, "r");
        kiln::Expr step = kiln::clamp(kiln::Expr(1) << (r.y - 1), 0, 4);
        levels(x, r.x, r.y) = kiln::max(levels(x, r.x, r.y - 1), levels(x, r.x + step, r.y - 1));
        out(x, y) = kiln::max(levels(x - 1, y - 4, 3), levels(x + 1, y + 1, 3));
    }
};
