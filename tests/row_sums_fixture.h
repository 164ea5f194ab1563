// Two sums over each row of `a`, s1 and s2 (s2 reading s1 when `chained`),
// and an output that reads both per row. Used by the compute_with tests of
// several tiers; tests add their schedule (compute_per_row() is the usual
// start: both sums computed per row of the output).
#pragma once
#include "kiln/kiln.h"

struct RowSumsFixture {
    kiln::ImageParam a{kiln::Float(32), 2, "a"};
    kiln::Var x{"x"}, y{"y"};
    kiln::RDom r{0, 64, "r"};
    kiln::Func s1{"s1"}, s2{"s2"}, out{"out"};

    explicit RowSumsFixture(bool chained = false) {
        s1(y) = 0.0f;
        s1(y) += a(r, y) * 2.0f;
        s2(y) = 0.0f;
        s2(y) += a(r, y) + (chained ? kiln::Expr(s1(y)) : kiln::Expr(0.0f));
        out(x, y) = a(x, y) * s1(y) + s2(y);
    }

    void compute_per_row() {
        s1.compute_at(out, y);
        s2.compute_at(out, y);
    }
};
