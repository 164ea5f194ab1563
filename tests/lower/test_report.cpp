// The fusion report's counts on the 3x3 blur under four schedules, checked
// against numbers worked out by hand for a 64x48 output.
#include <catch2/catch.hpp>

#include "blur_fixture.h"
#include "kiln/kiln.h"

using namespace kiln;

namespace {

// blur_x over rows [y-1, y+1] of a 64-wide image; blur_y the output.
PipelineReport blur_report(int schedule, int64_t cache_bytes) {
    BlurFixture b;
    Var &x = b.x, &y = b.y, &xi = b.xi, &yi = b.yi;
    Func &blur_x = b.blur_x, &blur_y = b.blur_y;
    switch (schedule) {
    case 0: blur_x.compute_root(); break;
    case 1: blur_x.compute_at(blur_y, y); break;
    case 2: blur_x.store_root().compute_at(blur_y, y); break;
    default:
        blur_y.tile(x, y, xi, yi, 32, 16);
        blur_x.compute_at(blur_y, x);
    }
    return Pipeline(blur_y).report({{"blur_y", {64, 48}}}, Target::host(), cache_bytes);
}

const FuncReport &find(const PipelineReport &r, const std::string &name) {
    for (const auto &f : r.funcs)
        if (f.name == name) return f;
    FAIL("no report for " << name);
    return r.funcs[0];
}

}  // namespace

TEST_CASE("report: compute_root is the baseline", "[lower][report]") {
    PipelineReport r = blur_report(0, 1024);
    const FuncReport &bx = find(r, "blur_x");
    CHECK(bx.allocation == std::vector<int64_t>{64, 50});
    CHECK(bx.realizations == 1);
    CHECK(bx.points_computed == 64 * 50);
    CHECK(bx.points_computed_unfused == 64 * 50);
    CHECK(bx.recompute == Approx(1.0));
    CHECK(bx.reads == 3 * 64 * 48);
    CHECK(bx.in_memory);  // 12800 bytes > 1 KiB
    CHECK(bx.memory_bytes == 2 * 64 * 50 * 4);
    CHECK(r.bytes_saved() == 0);
    CHECK(r.exact);
}

TEST_CASE("report: compute_at a row recomputes blur_x three times", "[lower][report]") {
    PipelineReport r = blur_report(1, 1024);
    const FuncReport &bx = find(r, "blur_x");
    CHECK(bx.compute_level == "blur_y.y");
    CHECK(bx.allocation == std::vector<int64_t>{64, 3});
    CHECK(bx.realizations == 48);
    CHECK(bx.points_computed == 48 * 64 * 3);
    CHECK(bx.recompute == Approx(48.0 * 3 / 50));
    CHECK_FALSE(bx.in_memory);  // 768 bytes stay in cache
    CHECK(bx.memory_bytes == 0);
    CHECK(r.bytes_saved() == 2 * 64 * 50 * 4);
}

TEST_CASE("report: sliding window computes each row once in a folded buffer", "[lower][report]") {
    PipelineReport r = blur_report(2, 1024);
    const FuncReport &bx = find(r, "blur_x");
    CHECK(bx.store_level == "root");
    CHECK(bx.allocation == std::vector<int64_t>{64, 4});  // folded to 4 rows
    CHECK(bx.realizations == 1);
    CHECK(bx.points_computed == 64 * 50);
    CHECK(bx.recompute == Approx(1.0));
    CHECK(bx.memory_bytes == 0);
}

TEST_CASE("report: tiles recompute their halo rows", "[lower][report]") {
    PipelineReport r = blur_report(3, 1024);
    const FuncReport &bx = find(r, "blur_x");
    CHECK(bx.allocation == std::vector<int64_t>{32, 18});
    CHECK(bx.realizations == 2 * 3);
    CHECK(bx.points_computed == 6 * 32 * 18);
    CHECK(bx.recompute == Approx(6.0 * 32 * 18 / (64 * 50)));
    std::string text = r.to_text(), json = r.to_json();
    CHECK(text.find("blur_x") != std::string::npos);
    CHECK(json.find("\"points_computed\": 3456") != std::string::npos);
}

TEST_CASE("report: every output needs a size", "[lower][report]") {
    Var x("x");
    Func f("f");
    f(x) = x;
    CHECK_THROWS_WITH(Pipeline(f).report({}), Catch::Contains("give the size of output f"));
}

TEST_CASE("report: a reduction's updates modify its points in place", "[lower][report]") {
    // row_sum(y) = 0; row_sum(y) += in(r, y): 48 points defined, 48 * 65
    // stores in all, but only the 48 points go to memory and back.
    ImageParam in(Float(32), 2, "in");
    Var x("x"), y("y");
    RDom r(0, 64, "r");
    Func row_sum("row_sum"), out("out");
    row_sum(y) = 0.0f;
    row_sum(y) += in(r, y);
    out(x, y) = in(x, y) - row_sum(y);
    row_sum.compute_root();
    PipelineReport rep = Pipeline(out).report({{"out", {64, 48}}}, Target::host(), 16);
    const FuncReport &s = find(rep, "row_sum");
    CHECK(s.points_computed == 48 * 65);
    CHECK(s.in_memory);  // 192 bytes > 16
    CHECK(s.memory_bytes == 2 * 48 * 4);
    CHECK(rep.memory_bytes == 2 * 48 * 4 + 2 * 64 * 48 * 4);
}

TEST_CASE("report: sizes it assumes and Funcs a boundary condition made are marked", "[lower][report]") {
    // An RGB input with no size given: as large as the output, and 1 channel
    // where the output has no third dimension; the report says so.
    ImageParam rgb(Float(32), 3, "rgb");
    Var x("x"), y("y");
    Func edge = BoundaryConditions::repeat_edge(rgb);
    Func luma("luma");
    luma(x, y) = edge(x, y, 0) + edge(x, y, 1) + edge(x, y, 2);
    edge.compute_root();
    PipelineReport r = Pipeline(luma).report({{"luma", {64, 48}}});
    CHECK(r.assumed == std::vector<std::string>{"rgb"});
    CHECK_THAT(r.to_text(), Catch::Contains("rgb 64x48x1 (assumed, not given)"));
    CHECK_THAT(r.to_json(), Catch::Contains("\"assumed_sizes\": [\n    \"rgb\"\n  ]"));
    CHECK(find(r, edge.name()).boundary_condition == "repeat_edge");
    CHECK(find(r, "luma").boundary_condition.empty());
    // Given sizes are not marked.
    PipelineReport given = Pipeline(luma).report({{"luma", {64, 48}}, {"rgb", {64, 48, 3}}});
    CHECK(given.assumed.empty());
    CHECK_THAT(given.to_text(), !Catch::Contains("assumed"));
}

// Regression: in a chain of stages each store_root().compute_at(out, y),
// only the first slid; blur_x was computed 5x and gray 5x per point, in
// full-size buffers, and the "fused" schedule moved more bytes than unfused.
TEST_CASE("report: every stage of a slid chain is computed once, in a folded buffer", "[lower][report][regression]") {
    ImageParam input(Float(32), 3, "input");
    Var x("x"), y("y"), yo("yo"), yi("yi");
    for (int strips = 0; strips < 2; strips++) {
        INFO((strips ? "store_at(output, yo)" : "store_root"));
        Func clamped = BoundaryConditions::repeat_edge(input);
        Func gray("gray"), blur_x("blur_x"), blur_y("blur_y"), output("output");
        gray(x, y) = 0.299f * clamped(x, y, 0) + 0.587f * clamped(x, y, 1) + 0.114f * clamped(x, y, 2);
        blur_x(x, y) = (gray(x - 2, y) + gray(x - 1, y) + gray(x, y) + gray(x + 1, y) + gray(x + 2, y)) / 5;
        blur_y(x, y) = (blur_x(x, y - 2) + blur_x(x, y - 1) + blur_x(x, y) + blur_x(x, y + 1) + blur_x(x, y + 2)) / 5;
        output(x, y) = blur_y(x, y) * 2.0f;
        if (strips) output.split(y, yo, yi, 64).parallel(yo);
        for (Func *f : {&gray, &blur_x, &blur_y}) {
            if (strips) f->store_at(output, yo).compute_at(output, yi);
            else f->store_root().compute_at(output, y);
        }
        PipelineReport r = Pipeline(output).report({{"output", {1024, 1024}}, {"input", {1024, 1024, 3}}});
        for (const char *name : {"gray", "blur_x", "blur_y"}) {
            INFO(name);
            const FuncReport &f = find(r, name);
            // Strips recompute their 4 halo rows once per 64 (1.0625x).
            CHECK(f.recompute <= 1.07);
            CHECK(f.allocation.at(1) <= 8);  // a window of rows, folded
        }
        CHECK(r.bytes_saved() > 0);
    }
}

TEST_CASE("report: on the NPU each tile reads its halo, rows in 32-byte blocks", "[lower][report][npu]") {
    // 64 x 32 tiles of a 256 x 64 output, blur_x per tile over 34 rows of
    // 64: each of the 8 tiles loads the input's 34 x 66 window (edges
    // replicated by the DMA, so no smaller at the image's edges), a row of
    // 264 bytes moved as 288; the host model reads the input once.
    BlurFixture b;
    b.blur_y.tile(b.x, b.y, b.xi, b.yi, 64, 32);
    b.blur_x.compute_at(b.blur_y, b.x);
    PipelineReport r = Pipeline(b.blur_y).report({{"blur_y", {256, 64}}}, Target("npu"));
    CHECK(r.npu_read_bytes == 8 * 34 * 288);
    CHECK(r.npu_write_bytes == 256 * 64 * 4);
    CHECK(r.npu_exact);
    CHECK(r.input_bytes == 256 * 64 * 4);
    CHECK_THAT(r.to_text(), Catch::Contains("NPU GM traffic (each tile's box, rows in 32-byte blocks, no cache): read "
                                            "78336 bytes, written 65536"));
    // The host target has no NPU model.
    CHECK(Pipeline(b.blur_y).report({{"blur_y", {256, 64}}}, Target::host()).npu_read_bytes == -1);
}

TEST_CASE("report: a root Func an output copies is counted in the output's buffer", "[lower][report][realize_into_outputs]") {
    // As host code computes it (realize_into_outputs): f's stages store into
    // out's buffer when f's region is out's, so there is no allocation of f
    // and no copy; where the regions differ, f is allocated and copied.
    ImageParam in(Float(32), 1, "in");
    Var x("x");
    RDom r(0, 4, "r");
    Func f("f"), out("out");
    f(x) = in(x) * 2.0f;
    f(5) += in(r);
    out(x) = f(x);
    f.compute_root();
    {
        PipelineReport rep = Pipeline(out).report({{"out", {1 << 20}}, {"in", {1 << 20}}}, Target::host(), 1024);
        const FuncReport &fr = find(rep, "f");
        CHECK(fr.store_level == "out's buffer");
        CHECK(fr.realizations == 0);
        CHECK(fr.allocation.empty());
        CHECK(fr.points_computed == (1 << 20) + 4);  // the pure definition, then the update of f(5)
        CHECK(fr.memory_bytes == 0);
        CHECK(find(rep, "out").points_computed == 0);  // no copy
        CHECK(rep.memory_bytes == 2 * 4 * (1 << 20));  // read in, write out
    }
    {
        // f's update writes f(5), outside out's two points: f's region is
        // larger than out's buffer, so f is allocated and copied.
        PipelineReport rep = Pipeline(out).report({{"out", {2}}, {"in", {8}}}, Target::host(), 0);
        const FuncReport &fr = find(rep, "f");
        CHECK(fr.store_level == "root");
        CHECK(fr.realizations == 1);
        CHECK(find(rep, "out").points_computed == 2);
    }
}
