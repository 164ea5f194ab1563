// max_filter: the largest value inside a disc of radius `radius` around each
// pixel of a float image, per channel (the algorithm of Halide 14's
// apps/max_filter): O(radius) work a pixel instead of O(radius^2).
//
//   vert_log(x, y, c, t)  the max of the 2^t values from (x, y) down the
//                         column (t = 0: the input; each slice the max of
//                         two of the slice before, 2^(t-1) rows apart)
//   slice_for_radius(t)   floor(log2(2t + 1)): the slice two of whose
//                         windows cover 2t + 1 rows
//   vert(x, y, c, t)      the max over rows y - t .. y + t, two overlapping
//                         windows of that slice
//   filter_height(x)      the half-height of the disc at column offset x
//   output(x, y, c)       the max over column offsets dx of vert at the
//                         disc's height there (an inline maximum())
//
// The image's edges repeat. radius is fixed when the kernel is generated.
#include <kiln/Generator.h>
#include <kiln/kiln.h>

#include <cmath>

using namespace kiln;

class MaxFilter : public Generator<MaxFilter> {
public:
    GeneratorParam<int> radius{"radius", 26, 1, 128};
    Input<Buffer<float, 3>> input{"input"};
    Output<Buffer<float, 3>> output{"output"};

    void generate() {
        Var x("x"), y("y"), c("c"), t("t");
        const int R = radius;
        const int slices = (int)std::ceil(std::log2((double)R)) + 1;
        Func clamped = BoundaryConditions::repeat_edge(input);

        Func vert_log("vert_log");
        vert_log(x, y, c, t) = clamped(x, y, c);
        RDom r(-R, input.height() + R, 1, slices - 1, "r");
        Expr step = clamp(Expr(1) << (r.y - 1), 0, 2 * R);
        vert_log(x, r.x, c, r.y) = max(vert_log(x, r.x, c, r.y - 1), vert_log(x, r.x + step, c, r.y - 1));

        Func slice_for_radius("slice_for_radius");
        slice_for_radius(t) = cast<int>(floor(log(cast<float>(2 * t + 1)) / std::log(2.0f)));

        Func vert("vert");
        Expr slice = clamp(slice_for_radius(t), 0, slices);
        Expr top = vert_log(x, y - t, c, slice);
        Expr bottom = vert_log(x, y + t + 1 - clamp(Expr(1) << slice, 0, 2 * R), c, slice);
        vert(x, y, c, t) = max(top, bottom);

        Func filter_height("filter_height");
        RDom dy(0, R + 1, "dy");
        const float edge = (R + 0.25f) * (R + 0.25f);
        filter_height(x) = sum(select(cast<float>(x * x + dy * dy) < edge, 1, 0));

        RDom dx(-R, 2 * R + 1, "dx");
        output(x, y, c) = maximum(vert(x + dx, y, c, clamp(filter_height(dx), 0, R + 1)));
    }
};

KILN_REGISTER_GENERATOR(MaxFilter, max_filter)
