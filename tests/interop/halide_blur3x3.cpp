// The Halide side of the interop tier: generators/blur3x3.cpp written as a
// Halide 14 generator, scheduled as schedules/blur3x3/host_tiled.sched.
// tests/interop/CMakeLists.txt compiles it ahead of time with Halide's own
// add_halide_generator() / add_halide_library() into halide_blur3x3().
//
// The same semantics as the Kiln generator: repeat_edge over the input's
// own bounds, float sums divided by the constant 3 (a multiplication by its
// reciprocal in both compilers), sums left to right.
#include "Halide.h"

namespace {

class HalideBlur3x3 : public Halide::Generator<HalideBlur3x3> {
public:
    Input<Buffer<float>> input{"input", 2};
    Output<Buffer<float>> output{"output", 2};

    void generate() {
        Func clamped = Halide::BoundaryConditions::repeat_edge(input);
        blur_x(x, y) = (clamped(x - 1, y) + clamped(x, y) + clamped(x + 1, y)) / 3;
        output(x, y) = (blur_x(x, y - 1) + blur_x(x, y) + blur_x(x, y + 1)) / 3;
    }

    // host_tiled.sched:
    //   output: tile(x, y, xi, yi, 256, 32) vectorize(xi, natural_vector_size) parallel(y)
    //   blur_x: compute_at(output, x) vectorize(x, natural_vector_size)
    // (the four-variable tile keeps x and y as the names of the tile loops;
    // both compilers default to ShiftInwards for the splits of an output).
    void schedule() {
        const int n = natural_vector_size<float>();
        output.tile(x, y, xi, yi, 256, 32).vectorize(xi, n).parallel(y);
        blur_x.compute_at(output, x).vectorize(x, n);
    }

private:
    Var x{"x"}, y{"y"}, xi{"xi"}, yi{"yi"};
    Func blur_x{"blur_x"};
};

}  // namespace

HALIDE_REGISTER_GENERATOR(HalideBlur3x3, halide_blur3x3)
