// Funcs and images of three dimensions on the NPU (issue 20, "tiles beyond
// 2-D"): a tile spans dimensions 0 and 1, the further ones are loops around
// it, and a read's channel picks the plane of its GM window. harris on an
// RGB image against the host, a 3-D output and a 3-D Func in UB with their
// channel loop outside the tiles, and the schedules that cannot be honoured.
#include <catch2/catch.hpp>

#include <string>

#include <kiln/kiln.h>
#include <nlohmann/json.hpp>

#include "error/expect_error.h"
#include "npu_pipelines.h"

using namespace kiln;
using nlohmann::json;
using npu_pipelines::roofline;
using npu_pipelines::run_npu_args;

namespace {

Buffer<float, 3> rgb(int w, int h) {
    Buffer<float, 3> in(w, h, 3);
    for (int c = 0; c < 3; c++)
        for (int j = 0; j < h; j++)
            for (int i = 0; i < w; i++) in(i, j, c) = std::sin(0.05f * i + c) * std::cos(0.07f * j - c) + 0.1f * c;
    return in;
}

// The Harris corner response of generators/harris.cpp: gray from the three
// planes of an RGB image (x, y, c), Sobel gradients, their products summed
// over 3 x 3 boxes; edges repeated in x and y.
struct Harris {
    ImageParam input{Float(32), 3, "input"};
    Var x{"x"}, y{"y"}, xo{"xo"}, yo{"yo"}, xi{"xi"}, yi{"yi"};
    Func gray{"gray"}, Ix{"Ix"}, Iy{"Iy"}, Ixx{"Ixx"}, Iyy{"Iyy"}, Ixy{"Ixy"}, Sxx{"Sxx"}, Syy{"Syy"}, Sxy{"Sxy"},
        output{"output"};
    static Expr box3x3(const Func &f, const Var &x, const Var &y) {
        Expr sum;
        for (int dy = -1; dy <= 1; dy++)
            for (int dx = -1; dx <= 1; dx++) sum = sum.defined() ? sum + f(x + dx, y + dy) : f(x + dx, y + dy);
        return sum;
    }
    Harris() {
        Func clamped = BoundaryConditions::repeat_edge(
            input, {{input.dim(0).min(), input.width()}, {input.dim(1).min(), input.height()}, {Expr(), Expr()}});
        gray(x, y) = 0.299f * clamped(x, y, 0) + 0.587f * clamped(x, y, 1) + 0.114f * clamped(x, y, 2);
        Ix(x, y) = (-1.0f / 12) * gray(x - 1, y - 1) + (1.0f / 12) * gray(x + 1, y - 1) +
                   (-2.0f / 12) * gray(x - 1, y) + (2.0f / 12) * gray(x + 1, y) +
                   (-1.0f / 12) * gray(x - 1, y + 1) + (1.0f / 12) * gray(x + 1, y + 1);
        Iy(x, y) = (-1.0f / 12) * gray(x - 1, y - 1) + (1.0f / 12) * gray(x - 1, y + 1) +
                   (-2.0f / 12) * gray(x, y - 1) + (2.0f / 12) * gray(x, y + 1) +
                   (-1.0f / 12) * gray(x + 1, y - 1) + (1.0f / 12) * gray(x + 1, y + 1);
        Ixx(x, y) = Ix(x, y) * Ix(x, y);
        Iyy(x, y) = Iy(x, y) * Iy(x, y);
        Ixy(x, y) = Ix(x, y) * Iy(x, y);
        Sxx(x, y) = box3x3(Ixx, x, y);
        Syy(x, y) = box3x3(Iyy, x, y);
        Sxy(x, y) = box3x3(Ixy, x, y);
        Expr det = Sxx(x, y) * Syy(x, y) - Sxy(x, y) * Sxy(x, y);
        Expr trace = Sxx(x, y) + Syy(x, y);
        output(x, y) = det - 0.04f * trace * trace;
    }
    // schedules/harris/npu.sched: tw x th tiles of output, every stage per tile in UB.
    void npu(int tw, int th, bool double_buffer) {
        output.tile(x, y, xo, yo, xi, yi, tw, th);
        for (Func *f : {&gray, &Ix, &Iy, &Ixx, &Iyy, &Ixy, &Sxx, &Syy, &Sxy}) {
            f->compute_at(output, xo);
            if (double_buffer) f->double_buffer();
        }
        if (double_buffer) output.double_buffer();
    }
};

int differ(const Buffer<float, 2> &a, const Buffer<float, 2> &b) {
    int n = 0;
    for (int j = 0; j < a.height(); j++)
        for (int i = 0; i < a.width(); i++) n += a(i, j) != b(i, j);
    return n;
}

}  // namespace

TEST_CASE("harris on an RGB image on the NPU: one halo TLOAD per channel plane and tile, output equals the host's",
          "[npu][codegen][3d]") {
    const int W = 256, H = 64, tw = 64, th = 32;
    Buffer<float, 3> in = rgb(W, H);
    Buffer<float, 2> host(W, H), npu(W, H);
    Harris ref;
    ref.input.set(in);
    ref.output.realize(host);
    Harris h;
    h.npu(tw, th, false);
    json r = run_npu_args(Pipeline(h.output), {{"input", in}, {"output", npu}}, "harris_npu3");
    INFO(r.dump(1));
    CHECK(differ(host, npu) == 0);
    CHECK(r["race_count"] == 0);
    // Per tile, each channel's (th + 4) x (tw + 4) window once (gray's halo: two rows and columns on each side,
    // rows of 68 floats moved as 72, whole 32-byte blocks); the output written once.
    const int tiles = (W / tw) * (H / th);
    const uint64_t row_bytes = ((tw + 4) * 4 + 31) / 32 * 32;
    CHECK(r["instructions_by_op"]["TLOAD"] == 3 * tiles);
    CHECK(r["gm_read_bytes"] == (uint64_t)tiles * 3 * (th + 4) * row_bytes);
    CHECK(r["gm_write_bytes"] == (uint64_t)W * H * 4);
    // The gradients read gray, and the box sums the products, at column offsets in UB: TEXTRACT of the
    // shifted sub-tiles (Ix and Iy share gray's five; each box sum takes six of its product's).
    CHECK(r["instructions_by_op"]["TEXTRACT"] == (5 + 3 * 6) * tiles);
    // Within 1.3x of max(GM bytes / 64, the vector pipe's busy cycles) single-buffered: vector-bound.
    CHECK(r["cycles"].get<double>() <= 1.3 * roofline(r));
    CHECK(r["pipes"]["V"]["busy_cycles"].get<double>() > r["gm_read_bytes"].get<double>() / 64);

    // Edges: a one-tile image is all edge.
    Buffer<float, 3> small = rgb(tw, th);
    Buffer<float, 2> hs(tw, th), ns(tw, th);
    ref.input.set(small);
    ref.output.realize(hs);
    run_npu_args(Pipeline(h.output), {{"input", small}, {"output", ns}}, "harris_npu3_small");
    CHECK(differ(hs, ns) == 0);
}

TEST_CASE("harris double-buffered on the NPU: fewer cycles, the same bytes and output", "[npu][codegen][3d]") {
    const int W = 256, H = 64;
    Buffer<float, 3> in = rgb(W, H);
    Buffer<float, 2> host(W, H), npu(W, H);
    Harris ref;
    ref.input.set(in);
    ref.output.realize(host);
    json r[2];
    for (int db = 0; db < 2; db++) {
        Harris h;
        h.npu(64, 32, db == 1);  // schedules/harris/npu.sched when double-buffered
        r[db] = run_npu_args(Pipeline(h.output), {{"input", in}, {"output", npu}}, db ? "harris_db" : "harris_sb");
        CHECK(differ(host, npu) == 0);
        CHECK(r[db]["race_count"] == 0);
    }
    INFO("single-buffered: " << r[0].dump(1) << "\ndouble-buffered: " << r[1].dump(1));
    CHECK(r[1]["gm_read_bytes"] == r[0]["gm_read_bytes"]);
    CHECK(r[1]["cycles"] < r[0]["cycles"]);
    // The next tile's three channel loads run under this tile's vector work.
    CHECK(r[1]["cycles"].get<double>() <= 1.1 * roofline(r[1]));
}

// A 3-D output and a 3-D Func in UB, both tiled over x and y with the
// channel loop outside the tiles: each plane's window at its own offset.
struct Planes {
    ImageParam input{Float(32), 3, "input"};
    Var x{"x"}, y{"y"}, c{"c"}, xo{"xo"}, yo{"yo"}, xi{"xi"}, yi{"yi"};
    Func sq{"sq"}, output{"output"};
    Planes() {
        sq(x, y, c) = input(x, y, c) * input(x, y, c);
        output(x, y, c) = sq(x, y, c) - 0.5f * input(x, y, 0);  // every plane against the first
    }
};

TEST_CASE("a 3-D output and a 3-D Func in UB: tiles over x and y, the channel loop around them", "[npu][codegen][3d]") {
    const int W = 128, H = 64, C = 3;
    Buffer<float, 3> in = rgb(W, H), host(W, H, C), npu(W, H, C);
    Planes ref;
    ref.input.set(in);
    ref.output.realize(host);
    Planes p;
    p.output.tile(p.x, p.y, p.xo, p.yo, p.xi, p.yi, 64, 32).reorder(p.xi, p.yi, p.xo, p.yo, p.c);
    p.sq.compute_at(p.output, p.xo);
    json r = run_npu_args(Pipeline(p.output), {{"input", in}, {"output", npu}}, "planes_npu");
    INFO(r.dump(1));
    int bad = 0;
    for (int k = 0; k < C; k++)
        for (int j = 0; j < H; j++)
            for (int i = 0; i < W; i++) bad += host(i, j, k) != npu(i, j, k);
    CHECK(bad == 0);
    CHECK(r["race_count"] == 0);
    // Per tile and channel: the channel's window and channel 0's (two TLOADs: the same bytes when c = 0,
    // named apart), one TSTORE into the channel's plane of the output.
    const int tiles = (W / 64) * (H / 32) * C;
    CHECK(r["instructions_by_op"]["TLOAD"] == 2 * tiles);
    CHECK(r["instructions_by_op"]["TSTORE"] == tiles);
    CHECK(r["gm_read_bytes"] == 2 * (uint64_t)W * H * C * 4);
    CHECK(r["gm_write_bytes"] == (uint64_t)W * H * C * 4);
}

TEST_CASE("3-D schedules the NPU cannot honour name the Func, the directive and the fix", "[npu][codegen][3d][errors]") {
    auto npu_source = [](Func f) { return Pipeline(f).compile_to_cpp_source("f", Target("npu")); };
    {  // sq computed per tile of x and y but over every channel: its UB buffer would hold three planes
        Planes p;
        p.output.tile(p.x, p.y, p.xo, p.yo, p.xi, p.yi, 64, 32).reorder(p.xi, p.yi, p.c, p.xo, p.yo);
        p.sq.compute_at(p.output, p.xo);
        REQUIRE_COMPILE_ERROR(npu_source(p.output),
                              Contains("NPU target: Func sq has 3 dimensions and is stored in UB (computed at "
                                       "output.xo) over") &&
                                  Contains("values of dimension 2") &&
                                  Contains("make its dimensions from 2 on loops around its consumer's tile") &&
                                  Contains("compute_at sq inside them"));
    }
    {  // the channel moves with the tile's x loop
        ImageParam in(Float(32), 3, "input");
        Var x("x"), y("y"), xo("xo"), yo("yo"), xi("xi"), yi("yi");
        Func out("out");
        out(x, y) = in(x, y, x % 3);
        out.tile(x, y, xo, yo, xi, yi, 64, 8);
        REQUIRE_COMPILE_ERROR(npu_source(out), Contains("NPU target: Func out reads input(") &&
                                                   Contains("whose coordinate 2 moves with the loop") &&
                                                   Contains("its further dimensions (channels, batches) are loops "
                                                            "around the tile"));
    }
}
