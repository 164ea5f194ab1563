// Row reductions whose row is split into chunks on the NPU (issue 20,
// "rows longer than UB"): split(r.x, ro, ri, C) with ro the loop directly
// around the reduction's tile runs one instruction per chunk that continues
// from the chunks before it (TROWSUM_ACC, or TROWMAX then TMAX), so the
// sums add in the host's order and the outputs are the host's bit for bit;
// softmax's online form (a Tuple state) rescales its sum per chunk, so it
// is held to a stated tolerance instead; the forms the NPU cannot honour
// are refused with the fix.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include <kiln/kiln.h>
#include <nlohmann/json.hpp>

#include "error/expect_error.h"
#include "npu_pipelines.h"

using namespace kiln;
using nlohmann::json;
using namespace npu_pipelines;

namespace {

constexpr int kChunk = 256, kChunks = W / kChunk, kRows = 8;

// output in kRows x kChunk tiles (the chunks inside the rows), the row
// statistics per row tile, their reductions chunk by chunk: the form of
// schedules/softmax/npu_long.sched at a size the tests run quickly.
void chunked(Softmax &s, bool double_buffer, int sum_chunk = kChunk) {
    Var xo("xo"), xi("xi");
    RVar ro("ro"), ri("ri");
    s.output.bound(s.x, 0, W).tile(s.x, s.y, xo, s.yo, xi, s.yi, kChunk, kRows);
    s.exps.compute_inline();
    for (Func *f : {&s.row_max, &s.row_sum}) {
        f->compute_at(s.output, s.yo);
        f->update().split(s.r.x, ro, ri, f == &s.row_sum ? sum_chunk : kChunk).reorder(ri, s.y, ro);
        if (double_buffer) f->double_buffer();
    }
    if (double_buffer) s.output.double_buffer();
}

// softmax's online form (generators/softmax.cpp, algorithm=online): the
// row's running maximum m and sum l rescaled to it, one Tuple state.
struct OnlineSoftmax {
    ImageParam input{Float(32), 2, "input"};
    Var x{"x"}, y{"y"};
    RDom r{0, W, "r"};
    Func stats{"stats"}, output{"output"};
    OnlineSoftmax() {
        stats(y) = Tuple(type_min(Float(32)), 0.0f);
        Expr m = stats(y)[0], l = stats(y)[1], v = input(r, y), m2 = max(m, v);
        stats(y) = Tuple(m2, l * exp(m - m2) + exp(v - m2));
        output(x, y) = exp(input(x, y) - stats(y)[0]) / stats(y)[1];
    }
};

void chunked(LayerNorm &l, bool double_buffer) {
    Var xo("xo"), xi("xi");
    RVar ro("ro"), ri("ri");
    l.output.bound(l.x, 0, W).tile(l.x, l.y, xo, l.yo, xi, l.yi, kChunk, kRows);
    for (Func *f : {&l.sum, &l.mean, &l.sum_sq, &l.inv_std}) {
        f->compute_at(l.output, l.yo);
        if (double_buffer) f->double_buffer();
    }
    for (Func *f : {&l.sum, &l.sum_sq}) f->update().split(l.r.x, ro, ri, kChunk).reorder(ri, l.y, ro);
    if (double_buffer) l.output.double_buffer();
}

}  // namespace

TEST_CASE("softmax over rows split into chunks: one instruction per chunk, equal to the host bit for bit",
          "[npu][codegen][reduce][chunks]") {
    Buffer<float, 2> in = make_input(), host(W, H), npu(W, H);
    const uint64_t bytes = (uint64_t)W * H * 4;
    const int tiles = H / kRows;
    for (int db = 0; db < 2; db++) {
        Softmax s;
        s.input.set(in);
        s.output.realize(host);
        chunked(s, db == 1);
        json r = run_npu(Pipeline(s.output), in, npu, db ? "softmax_chunks_db" : "softmax_chunks_sb");
        check_same(host, npu);
        CHECK(r["race_count"] == 0);
        // Per tile and chunk: the max (TROWMAX into a temporary, TMAX into
        // row_max) and the sum continuing from the chunks before (TROWSUM_ACC).
        CHECK(r["instructions_by_op"]["TROWMAX"] == tiles * kChunks);
        CHECK(r["instructions_by_op"]["TMAX"] == tiles * kChunks);
        CHECK(r["instructions_by_op"]["TROWSUM_ACC"] == tiles * kChunks);
        CHECK(r["instructions_by_op"].value("TROWSUM", 0) == 0);
        // The row is read three times (max, sum, output: exps is recomputed), written once.
        CHECK(r["gm_read_bytes"] == 3 * bytes);
        CHECK(r["gm_write_bytes"] == bytes);
        // UB holds chunks (8 x 256 floats, 8 KiB), never a whole row tile: five of them, ten double-buffered.
        CHECK(r["peak_bytes"]["UB"].get<int64_t>() <= (db ? 10 : 5) * kRows * kChunk * 4 + 1024);
    }
}

TEST_CASE("layernorm over rows split into chunks: its two sums chunk by chunk, equal to the host bit for bit",
          "[npu][codegen][reduce][chunks]") {
    Buffer<float, 2> in = make_input(), host(W, H), npu(W, H);
    Buffer<float, 1> gamma = make_row(0.5f, 1.0f), beta = make_row(0.25f, -0.5f);
    const uint64_t bytes = (uint64_t)W * H * 4;
    const int tiles = H / kRows;
    json r[2];
    for (int db = 0; db < 2; db++) {
        LayerNorm l;
        l.input.set(in);
        l.gamma.set(gamma);
        l.beta.set(beta);
        l.output.realize(host);
        chunked(l, db == 1);
        r[db] = run_npu_args(Pipeline(l.output), {{"input", in}, {"gamma", gamma}, {"beta", beta}, {"output", npu}},
                             db ? "layernorm_chunks_db" : "layernorm_chunks_sb");
        check_same(host, npu);
        CHECK(r[db]["race_count"] == 0);
        CHECK(r[db]["instructions_by_op"]["TROWSUM_ACC"] == 2 * tiles * kChunks);
        // The input three times (sum, sum_sq, output), gamma and beta per chunk of each row tile.
        CHECK(r[db]["gm_read_bytes"] == 3 * bytes + (uint64_t)tiles * 2 * W * 4);
        CHECK(r[db]["gm_write_bytes"] == bytes);
    }
    CHECK(r[1]["cycles"] < r[0]["cycles"]);  // the next chunk loads while this one is reduced
}

TEST_CASE("a sum from a value other than 0 continues from it (TROWSUM_ACC), equal to the host",
          "[npu][codegen][reduce][chunks]") {
    // Before TROWSUM_ACC this was a CompileError without fast_math: TROWSUM
    // adds from 0, and adding the pure value after the row is another order.
    Buffer<float, 2> in = make_input(), host(W, H), npu(W, H);
    Softmax s(1.0f);
    s.input.set(in);
    s.output.realize(host);
    s.fused(2, false);
    json r = run_npu(Pipeline(s.output), in, npu, "softmax_sum_from_1");
    check_same(host, npu);
    CHECK(r["race_count"] == 0);
    CHECK(r["instructions_by_op"]["TROWSUM_ACC"] == H / 2);
}

TEST_CASE("a column sum over rows split into chunks: TCOLSUM_ACC per chunk, equal to the host",
          "[npu][codegen][reduce][chunks]") {
    // colsum(x) = sum over all H rows of input(x, r), in tiles of 64
    // columns, the rows in chunks of 16 (the loop over chunks directly
    // around the tile (r.ri, x)).
    ImageParam input{Float(32), 2, "input"};
    Var x("x"), y("y"), xo("xo"), xi("xi");
    RVar ro("ro"), ri("ri");
    RDom r(0, H, "r");
    Func colsum("colsum"), out("out");
    colsum(x) = 0.0f;
    colsum(x) += input(x, r);
    out(x, y) = input(x, y) - colsum(x);
    Buffer<float, 2> in = make_input(), host(W, H), npu(W, H);
    input.set(in);
    out.realize(host);
    out.bound(x, 0, W).bound(y, 0, H).tile(x, y, xo, Var("yo"), xi, Var("yi"), 64, H);
    colsum.compute_at(out, xo);
    colsum.update().split(r.x, ro, ri, 16).reorder(x, ri, ro);
    json rep = run_npu(Pipeline(out), in, npu, "colsum_chunks");
    check_same(host, npu);
    CHECK(rep["race_count"] == 0);
    CHECK(rep["instructions_by_op"]["TCOLSUM_ACC"] == (W / 64) * (H / 16));
}

TEST_CASE("split row reductions the NPU cannot honour are refused, saying what to change",
          "[npu][codegen][reduce][chunks][error]") {
    auto source = [](Func f) { return Pipeline(f).compile_to_cpp_source("bad", Target("npu")); };
    RVar ro("ro"), ri("ri");
    {
        Softmax s;  // chunks of 300 do not divide the row: the last would reach past it
        chunked(s, false, 300);
        REQUIRE_COMPILE_ERROR(source(s.output),
                              Contains("NPU target: Func row_sum: its update's RDom variable r.x of extent 1024 "
                                       "is split by a factor that does not divide it, which leaves a tail guarded "
                                       "by (") &&
                                  Contains("a reduction's parts must cover it exactly (a shifted or rounded-up last "
                                           "part would add elements twice or read past the row), so split r.x by a "
                                           "constant that divides its extent"));
    }
    {
        Softmax s;  // the chunk loop outside the rows' loop is not around the tile: refused with the fix
        s.fused(2, false);
        s.row_sum.update().split(s.r.x, ro, ri, W / 2);
        REQUIRE_COMPILE_ERROR(source(s.output),
                              Contains("NPU target: Func row_sum: the row reduction's reduction loop "
                                       "row_sum.s1.r.x.ri has extent 512 but its RDom variable r.x has extent 1024 "
                                       "(the reduction is split)") &&
                                  Contains("split it with the chunk loop directly around the reduction's tile: "
                                           "split(r.x, ro, ri, 2048) reorder(ri, y, ro)"));
    }
    {
        Softmax s;  // the chunk loop inside the rows' loop: the tile would be (chunks, elements), not (rows, elements)
        chunked(s, false);
        s.row_sum.update().reorder(ri, ro, s.y);
        REQUIRE_COMPILE_ERROR(source(s.output),
                              Contains("NPU target: Func row_sum: the row reduction's reduction loop "
                                       "row_sum.s1.r.x.ri has extent 256 but its RDom variable r.x has extent 1024") &&
                                  Contains("reorder(ri, y, ro)"));
    }
    {
        // A Tuple update other than the running maximum and rescaled sum (here a maximum and a plain sum):
        // no NPU instruction sequence, refused with the fixes.
        ImageParam input{Float(32), 2, "input"};
        Var x("x"), y("y"), xo("xo"), xi("xi"), yo("yo"), yi("yi");
        RDom r(0, W, "r");
        Func stats("stats"), output("output");
        stats(y) = Tuple(type_min(Float(32)), 0.0f);
        stats(y) = Tuple(max(stats(y)[0], input(r, y)), stats(y)[1] + input(r, y));
        output(x, y) = (input(x, y) - stats(y)[0]) / stats(y)[1];
        output.bound(x, 0, W).tile(x, y, xo, yo, xi, yi, kChunk, kRows);
        stats.compute_at(output, yo).update().split(r.x, ro, ri, kChunk).reorder(ri, y, ro);
        REQUIRE_COMPILE_ERROR(
            source(output),
            Contains("NPU target: Func stats returns a Tuple of 2 values (computed at output.yo) whose update the "
                     "NPU has no instruction sequence for: a Tuple update over a row tile must be the online "
                     "softmax's running maximum and rescaled sum") &&
                Contains("write the state as reductions the NPU runs one after another (a max, then a sum of "
                         "exp(v - max): the two-pass form, which reads the input once more, split into chunks for "
                         "rows longer than UB), or compute stats on the host"));
        // The same schedule runs on the host: the error is the NPU's alone.
        REQUIRE_NOTHROW(Pipeline(output).compile_to_cpp_source("tuple_host", Target("host")));
    }
}

TEST_CASE("softmax's online form (a Tuple state), in chunks and whole: one read of the input fewer, within tolerance",
          "[npu][codegen][reduce][chunks][online]") {
    // Per row tile and chunk: TROWMAX, TMAX into the new maximum m', the
    // rescale factor exp(m - m') (TSUB, TEXP), TMUL of the sum by it, then
    // TROWEXPANDSUB, TEXP and TROWSUM_ACC of the chunk against m'. The host
    // rescales the sum per element, the NPU per chunk: the maximum is the
    // same, the sum rounds differently. Tolerance, per output element, of
    // both against a float64 reference and against each other: a relative
    // error of 2e-6 (float32's epsilon is 1.19e-7; the measured largest is
    // about 5e-7).
    constexpr double kTol = 2e-6;
    Buffer<float, 2> in = make_input(), host(W, H), npu(W, H), two_pass(W, H);
    std::vector<double> ref((size_t)W * H);
    for (int j = 0; j < H; j++) {
        double m = -INFINITY, l = 0;
        for (int i = 0; i < W; i++) m = std::max(m, (double)in(i, j));
        for (int i = 0; i < W; i++) l += std::exp((double)in(i, j) - m);
        for (int i = 0; i < W; i++) ref[(size_t)j * W + i] = std::exp((double)in(i, j) - m) / l;
    }
    auto worst = [&](const Buffer<float, 2> &a, const Buffer<float, 2> &b, bool against_ref) {
        double e = 0;
        for (int j = 0; j < H; j++)
            for (int i = 0; i < W; i++) {
                double want = against_ref ? ref[(size_t)j * W + i] : (double)b(i, j);
                e = std::max(e, std::abs((double)a(i, j) - want) / std::abs(want));
            }
        return e;
    };
    const uint64_t bytes = (uint64_t)W * H * 4;
    const int tiles = H / kRows;
    double two_pass_cycles = 0;
    {
        Softmax s;  // the two-pass form in the same chunks, for the GM bytes
        chunked(s, true);
        json r = run_npu(Pipeline(s.output), in, two_pass, "softmax_two_pass_ref");
        CHECK(r["gm_read_bytes"] == 3 * bytes);
        two_pass_cycles = r["cycles"].get<double>();
    }
    for (bool in_chunks : {true, false}) {
        OnlineSoftmax s;
        s.input.set(in);
        s.output.realize(host);
        Var xo("xo"), xi("xi"), yo("yo"), yi("yi");
        RVar ro("ro"), ri("ri");
        if (in_chunks) {
            s.output.bound(s.x, 0, W).tile(s.x, s.y, xo, yo, xi, yi, kChunk, kRows).double_buffer();
            s.stats.update().split(s.r.x, ro, ri, kChunk).reorder(ri, s.y, ro);
            s.stats.double_buffer();
        } else {
            s.output.bound(s.x, 0, W).split(s.y, yo, yi, kRows);
        }
        s.stats.compute_at(s.output, yo);
        json r = run_npu(Pipeline(s.output), in, npu, in_chunks ? "softmax_online_chunks" : "softmax_online_rows");
        CHECK(r["race_count"] == 0);
        const int chunks = in_chunks ? kChunks : 1;
        CHECK(r["instructions_by_op"]["TROWMAX"] == tiles * chunks);
        CHECK(r["instructions_by_op"]["TMAX"] == tiles * chunks);
        CHECK(r["instructions_by_op"]["TMUL"] == tiles * chunks);
        CHECK(r["instructions_by_op"]["TROWSUM_ACC"] == tiles * chunks);
        // exp(m - m') on a column and exp(v - m') on the chunk, then exp once more for the output.
        CHECK(r["instructions_by_op"]["TEXP"] == 3 * tiles * chunks);
        // In chunks the input is read twice (the state, the output), once fewer than the two-pass form; over
        // whole rows once, the output reusing the state's load of the row tile.
        CHECK(r["gm_read_bytes"] == (in_chunks ? 2 : 1) * bytes);
        CHECK(r["gm_write_bytes"] == bytes);
        if (in_chunks) CHECK(r["cycles"].get<double>() < two_pass_cycles);  // both double-buffered
        double to_ref = worst(npu, host, true), to_host = worst(npu, host, false), host_ref = worst(host, npu, true);
        INFO("online NPU vs float64 " << to_ref << ", vs host " << to_host << ", host vs float64 " << host_ref);
        CHECK(to_ref < kTol);
        CHECK(to_host < kTol);
        CHECK(host_ref < kTol);
        CHECK(to_host > 0);  // per chunk, not per element: not the host's bit for bit
    }
}
