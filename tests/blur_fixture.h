// The 3x3 blur used by several tiers' tests: `input` (float32, 2-D) through
// repeat_edge, blur_x, then blur_y (the output). Tests add their schedule.
#pragma once
#include "kiln/kiln.h"

struct BlurFixture {
    kiln::ImageParam input{kiln::Float(32), 2, "input"};
    kiln::Var x{"x"}, y{"y"}, xi{"xi"}, yi{"yi"};
    kiln::Func blur_x{"blur_x"}, blur_y{"blur_y"};

    BlurFixture() {
        kiln::Func clamped = kiln::BoundaryConditions::repeat_edge(input);
        blur_x(x, y) = (clamped(x - 1, y) + clamped(x, y) + clamped(x + 1, y)) / 3;
        blur_y(x, y) = (blur_x(x, y - 1) + blur_x(x, y) + blur_x(x, y + 1)) / 3;
    }
};
