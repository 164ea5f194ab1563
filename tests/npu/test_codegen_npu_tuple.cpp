// A Tuple state of 2-D tiles on the NPU (issue 20, the first piece of flash
// attention's online form): the running state (m, l, acc) of
// generators/attention.cpp's algorithm=online, one UB tile per value,
// merged block by block from per-block statistics. Each update computes
// every value as a tile from the old values (m' first, into a temporary,
// since l and acc read the old m; l and acc in place), so it is the host's
// arithmetic in the host's order and the output is the host's bit for bit.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

#include <kiln/kiln.h>
#include <nlohmann/json.hpp>

#include "error/expect_error.h"
#include "npu_pipelines.h"

using namespace kiln;
using nlohmann::json;
using namespace npu_pipelines;

namespace {

constexpr int D = 64, N = 32, KB = 4, R = 8;  // features, query rows, key blocks, rows per tile

// The merge of attention's online form (generators/attention.cpp), with the
// blocks' statistics given as inputs indexed (c, i, kb): each block's row
// maximum, its row sum of exp(s - block maximum) and its P V, merged into
// the running state (α = 1: the scale is folded into the statistics).
struct FlashMerge {
    ImageParam bmax{Float(32), 3, "bmax"}, bsum{Float(32), 3, "bsum"}, bpv{Float(32), 3, "bpv"};
    Var c{"c"}, i{"i"}, io{"io"}, ii{"ii"};
    RDom rb{0, KB, "rb"};
    Func state{"state"}, output{"output"};
    FlashMerge() {
        state(c, i) = Tuple(std::numeric_limits<float>::lowest(), 0.0f, 0.0f);
        Expr m = state(c, i)[0], l = state(c, i)[1], acc = state(c, i)[2], bm = bmax(c, i, rb);
        Expr m2 = max(m, bm), a = exp(m - m2), b = exp(bm - m2);
        state(c, i) = Tuple(m2, l * a + bsum(c, i, rb) * b, acc * a + bpv(c, i, rb) * b);
        output(c, i) = state(c, i)[2] / state(c, i)[1];
    }
    // Tiles of R query rows x D features; the state per tile, updated once
    // per key block (the RDom's loop around the tile).
    void npu(bool double_buffer) {
        output.bound(c, 0, D).split(i, io, ii, R);
        state.compute_at(output, io);
        state.update().reorder(c, i, rb);
        if (double_buffer) {
            output.double_buffer();
            state.double_buffer();
        }
    }
};

Buffer<float, 3> stats(int which) {
    Buffer<float, 3> b(D, N, KB);
    for (int kb = 0; kb < KB; kb++)
        for (int i = 0; i < N; i++)
            for (int c = 0; c < D; c++) {
                // The block maximum rises and falls from block to block (so the state is rescaled both
                // ways); the sums lie in [1, 33), as a block of 32 keys gives.
                const float bm = 3.0f * std::sin(0.7f * i + 1.3f * kb), bs = 17.0f + 16.0f * std::cos(0.3f * i + kb);
                b(c, i, kb) = which == 0 ? bm : which == 1 ? bs : bs * std::sin(0.1f * c + 0.2f * i + kb);
            }
    return b;
}

}  // namespace

TEST_CASE("flash attention's running state as a Tuple of 2-D tiles: merged per block, equal to the host bit for bit",
          "[npu][codegen][tuple][online]") {
    Buffer<float, 3> bmax = stats(0), bsum = stats(1), bpv = stats(2);
    Buffer<float, 2> host(D, N);
    {
        FlashMerge f;
        f.bmax.set(bmax);
        f.bsum.set(bsum);
        f.bpv.set(bpv);
        f.output.realize(host);
    }
    // A float64 reference: acc / l with both taken against the overall maximum; the host (and so
    // the NPU) within 1e-6 of it, relative to max(1, |output|) (measured: 1.5e-7).
    double worst = 0;
    for (int i = 0; i < N; i++)
        for (int c = 0; c < D; c++) {
            double m = -INFINITY, l = 0, acc = 0;
            for (int kb = 0; kb < KB; kb++) m = std::max(m, (double)bmax(c, i, kb));
            for (int kb = 0; kb < KB; kb++) {
                l += bsum(c, i, kb) * std::exp((double)bmax(c, i, kb) - m);
                acc += bpv(c, i, kb) * std::exp((double)bmax(c, i, kb) - m);
            }
            // Relative to the output's scale (|acc / l| up to about 33; relative to an output near 0 the
            // error of the sums' cancellation would dominate).
            worst = std::max(worst, std::abs(host(c, i) - acc / l) / std::max(1.0, std::abs(acc / l)));
        }
    INFO("host against float64: " << worst);
    CHECK(worst < 1e-6);
    const int tiles = N / R;
    for (bool db : {false, true}) {
        FlashMerge f;
        f.npu(db);
        Buffer<float, 2> npu(D, N);
        json r = run_npu_args(Pipeline(f.output), {{"bmax", bmax}, {"bsum", bsum}, {"bpv", bpv}, {"output", npu}},
                              db ? "flash_merge_db" : "flash_merge_sb");
        CHECK(r["race_count"] == 0);
        int bad = 0;
        for (int i = 0; i < N; i++)
            for (int c = 0; c < D; c++) bad += npu(c, i) != host(c, i);
        CHECK(bad == 0);
        // Per tile and block: m' = max(m, bm) once (the later values read it from m's temporary),
        // exp(m - m') and exp(bm - m') once each, m' copied into m after l and acc are updated in place.
        CHECK(r["instructions_by_op"]["TMAX"] == tiles * KB);
        CHECK(r["instructions_by_op"]["TEXP"] == 2 * tiles * KB);
        CHECK(r["instructions_by_op"]["TCOPY"] == tiles * KB);
        CHECK(r["instructions_by_op"]["TDIV"] == tiles);
        // Each block's three statistics read once, the output written once.
        CHECK(r["gm_read_bytes"] == 3 * (uint64_t)D * N * KB * 4);
        CHECK(r["gm_write_bytes"] == (uint64_t)D * N * 4);
    }
}

TEST_CASE("a Tuple of 2-D tiles whose RDom loop is inside its tile is refused with the fix",
          "[npu][codegen][tuple][errors]") {
    FlashMerge f;
    f.output.bound(f.c, 0, D).split(f.i, f.io, f.ii, R);
    f.state.compute_at(f.output, f.io);
    f.state.update().reorder(f.rb, f.c, f.i);  // rb innermost: the tile would be (c, rb)
    REQUIRE_COMPILE_ERROR(Pipeline(f.output).compile_to_cpp_source("flash_merge_bad", Target("npu")),
                          Contains("NPU target: Func state returns a Tuple of 3 values and its update's loop "
                                   "state.s1.rb.x over the RDom variable rb.x is a loop of its tile") &&
                              Contains("reorder the update's loops to put the RDom's outside the tile: "
                                       "reorder(c, i, rb.x)"));
    // The same schedule runs on the host: the error is the NPU's alone.
    REQUIRE_NOTHROW(Pipeline(f.output).compile_to_cpp_source("flash_merge_host", Target("host")));
}
