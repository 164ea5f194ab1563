// An input read past its edges (issue 14): the kernel's -6 message says which
// Funcs read the input there and what to do, a boundary condition first.
#include "bad_input.h"

using namespace rt;

TEST_CASE("runtime: an input read past its edge names the readers and suggests a boundary condition", "[runtime]") {
    ImageParam in(Float(32), 2, "in");
    Var x("x"), y("y");
    Func blur_x("blur_x"), sharp("sharp"), out("out");
    blur_x(x, y) = in(x - 1, y) + in(x + 1, y);  // computed at root: reads in itself
    sharp(x, y) = in(x, y) * 2.0f;                // inlined: read while computing out
    out(x, y) = blur_x(x, y) + sharp(x, y);
    blur_x.compute_root();
    Kernel k(Pipeline(out), "edge_kernel");
    Buffer<float> input(16, 4), output(16, 4);
    input.fill(1.0f);
    output.fill(-7.5f);
    k.set("in", input.raw_buffer());
    k.set("out", output.raw_buffer());
    expect_rejected(k, kiln_error_input_too_small,
                    {"input 'in' is read over [-1, 16] in dimension 0, but the buffer covers only [0, 15]; computing "
                     "Funcs blur_x, out read it there",
                     "Read the input through a boundary condition, e.g. Func in_edge = "
                     "BoundaryConditions::repeat_edge(in) (or constant_exterior(in, 0)), and call in_edge(...) where you "
                     "call in(...); or pass a larger input; or realize a smaller output"},
                    output, -7.5f);
}
