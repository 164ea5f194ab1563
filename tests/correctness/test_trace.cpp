// The fusion report is honest: kernels compiled with the `trace` feature
// count every value stored into each Func and every allocation of its
// storage, and those counts equal the report's points_computed and
// realizations, for fused, unfused, sliding-window and tiled schedules.
#include <catch2/catch.hpp>

#include "blur_fixture.h"
#include "kiln/kiln.h"
#include "kiln_runtime.h"

using namespace kiln;

namespace {

void check_schedule(int schedule) {
    BlurFixture b;
    Var &x = b.x, &y = b.y, &xi = b.xi, &yi = b.yi;
    Func &blur_x = b.blur_x, &blur_y = b.blur_y;
    switch (schedule) {
    case 0: blur_x.compute_root(); break;
    case 1: blur_x.compute_at(blur_y, y).vectorize(x, 8); break;
    case 2: blur_x.store_root().compute_at(blur_y, y); break;
    default:
        blur_y.tile(x, y, xi, yi, 16, 8).vectorize(xi, 8).parallel(y);
        blur_x.compute_at(blur_y, x).vectorize(x, 8);
    }
    const int w = 67, h = 45;
    Buffer<float> in(w, h), out(w, h);
    in.fill(1.0f);
    b.input.set(in);
    Target t = Target::host().with(Target::Trace);
    kiln_trace_reset();
    blur_y.realize(out, t);
    PipelineReport r = Pipeline(blur_y).report({{"blur_y", {w, h}}, {"input", {w, h}}}, t);
    for (const FuncReport &f : r.funcs) {
        if (f.inlined) continue;  // evaluated in place: nothing is stored
        INFO("schedule " << schedule << ", Func " << f.name);
        CHECK(kiln_trace_stores(f.name.c_str()) == f.points_computed);
        if (!f.is_output) CHECK(kiln_trace_realizations(f.name.c_str()) == f.realizations);
    }
    // Untiled schedules store each output point once; the 16x8 tiles shift
    // inwards at the edges and store 5*16 x 6*8 points (as the report says).
    CHECK(kiln_trace_stores("blur_y") == (schedule == 3 ? 80LL * 48 : (long long)w * h));
}

}  // namespace

TEST_CASE("trace: counted stores and allocations equal the fusion report", "[trace][report]") {
    for (int s = 0; s < 4; s++) check_schedule(s);
}
