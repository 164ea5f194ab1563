// The NPU code generator against the host target on the same buffers, and
// the figures of issue 5: GM traffic of fused and unfused schedules, cycles
// against the roofline bound, double buffering, and the legality errors.
#include <catch2/catch.hpp>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <limits>
#include <regex>
#include <sstream>

#include <kiln/kiln.h>
#include <kiln_runtime.h>
#include <nlohmann/json.hpp>

#include "codegen/NpuSelect.h"
#include "driver/JIT.h"
#include "driver/NpuReport.h"
#include "ir/Function.h"
#include "error/expect_error.h"
#include "npu_pipelines.h"

using namespace kiln;
using nlohmann::json;

using namespace npu_pipelines;

TEST_CASE("fused elementwise chain: NPU output equals host output, GM traffic is ideal, cycles near the roofline",
          "[npu][codegen]") {
    Buffer<float, 2> in = make_input(), host(W, H), npu(W, H);
    json r[2];
    for (int db = 0; db < 2; db++) {
        Chain c;
        c.fused(128, 32, db == 1);
        c.input.set(in);
        c.output.realize(host);
        r[db] = run_npu(Pipeline(c.output), in, npu, db ? "chain_db" : "chain_sb");
        check_same(host, npu);
        const uint64_t bytes = (uint64_t)W * H * 4;
        CHECK(r[db]["gm_read_bytes"] == bytes);  // each input read once
        CHECK(r[db]["gm_write_bytes"] == bytes); // each output written once
        CHECK(r[db]["race_count"] == 0);
    }
    INFO("single-buffered: " << r[0].dump(1) << "\ndouble-buffered: " << r[1].dump(1));
    double bound = roofline(r[1]);
    CHECK(r[1]["cycles"].get<double>() <= 1.15 * bound);
    CHECK(r[1]["cycles"] < r[0]["cycles"]);
}

TEST_CASE("unfused elementwise chain moves every intermediate through GM twice", "[npu][codegen]") {
    Buffer<float, 2> in = make_input(), host(W, H), npu(W, H);
    Chain c;
    c.output.tile(c.x, c.y, c.xo, c.yo, c.xi, c.yi, 128, 32);
    for (Func *f : {&c.stage1, &c.stage2}) f->compute_root().tile(c.x, c.y, c.xo, c.yo, c.xi, c.yi, 128, 32);
    c.input.set(in);
    c.output.realize(host);
    json r = run_npu(Pipeline(c.output), in, npu, "chain_unfused");
    check_same(host, npu);
    const uint64_t bytes = (uint64_t)W * H * 4, intermediates = 2 * bytes;
    CHECK(r["gm_read_bytes"].get<uint64_t>() + r["gm_write_bytes"].get<uint64_t>() == 2 * bytes + 2 * intermediates);
    CHECK(r["race_count"] == 0);
}

TEST_CASE("double buffering overlaps MTE2 with V in the trace", "[npu][codegen]") {
    Buffer<float, 2> in = make_input(), npu(W, H);
    Chain c;
    c.fused(128, 32, true);
    std::string path = "npu_chain_trace.json";
    setenv("KILN_NPU_TRACE", path.c_str(), 1);
    run_npu(Pipeline(c.output), in, npu, "chain_trace");
    unsetenv("KILN_NPU_TRACE");
    std::ifstream f(path);
    json t = json::parse(f);
    std::remove(path.c_str());
    std::vector<std::pair<double, double>> loads, vec;
    for (const json &e : t["traceEvents"]) {
        if (e["ph"] != "X") continue;
        if (e["name"] == "TLOAD") loads.push_back({e["ts"], e["ts"].get<double>() + e["dur"].get<double>()});
        if (e["tid"] == 3 && e["name"] != "WAIT_FLAG" && e["name"] != "SET_FLAG")
            vec.push_back({e["ts"], e["ts"].get<double>() + e["dur"].get<double>()});
    }
    int overlapping = 0;
    for (auto &l : loads)
        for (auto &v : vec) overlapping += l.first < v.second && v.first < l.second;
    CHECK(loads.size() == (W / 128) * (H / 32));
    CHECK(overlapping > (int)loads.size() / 2);
}

TEST_CASE("softmax on the NPU: row max and row sum on TROWMAX/TROWSUM, output equals host output, GM traffic ideal",
          "[npu][codegen][reduce]") {
    Buffer<float, 2> in = make_input(), host(W, H), npu(W, H);
    const uint64_t bytes = (uint64_t)W * H * 4;
    json r[2];
    for (int db = 0; db < 2; db++) {
        Softmax s;
        s.fused(8, db == 1);  // schedules/softmax/npu.sched's tiles
        s.input.set(in);
        s.output.realize(host);
        r[db] = run_npu(Pipeline(s.output), in, npu, db ? "softmax_db" : "softmax_sb");
        check_same(host, npu);
        CHECK(r[db]["gm_read_bytes"] == bytes);
        CHECK(r[db]["gm_write_bytes"] == bytes);
        CHECK(r[db]["race_count"] == 0);
        CHECK(r[db]["instructions_by_op"]["TROWMAX"] == H / 8);  // one per tile of 8 rows
        CHECK(r[db]["instructions_by_op"]["TROWSUM"] == H / 8);
    }
    INFO("single-buffered: " << r[0].dump(1) << "\ndouble-buffered: " << r[1].dump(1));
    CHECK(r[1]["cycles"].get<double>() <= 1.15 * roofline(r[1]));
    CHECK(r[1]["cycles"] < r[0]["cycles"]);
    Softmax u;
    u.unfused(4);
    json ru = run_npu(Pipeline(u.output), in, npu, "softmax_unfused");
    check_same(host, npu);
    CHECK(ru["gm_read_bytes"].get<uint64_t>() + ru["gm_write_bytes"].get<uint64_t>() == 2 * bytes + 2 * bytes);
    CHECK(ru["race_count"] == 0);
}

TEST_CASE("softmax across cores: a parallel outer loop runs its tiles on the machine's cores, per-core figures",
          "[npu][codegen][cores]") {
    Buffer<float, 2> in = make_input(), host(W, H), npu(W, H);
    json one;
    {
        Softmax s;
        s.fused(2, true);
        s.input.set(in);
        s.output.realize(host);
        one = run_npu(Pipeline(s.output), in, npu, "softmax_one_core");
    }
    Softmax s;
    s.fused(2, true);
    s.output.parallel(s.yo);
    json r = run_npu(Pipeline(s.output), in, npu, "softmax_cores");
    check_same(host, npu);
    const int cores = r["cores"];
    CHECK(cores == 8);  // the default machine's
    REQUIRE(r["per_core"].size() == (size_t)cores);
    uint64_t read = 0, written = 0;
    for (const json &c : r["per_core"]) {
        read += c["gm_read_bytes"].get<uint64_t>();
        written += c["gm_write_bytes"].get<uint64_t>();
        CHECK(c["gm_read_bytes"] == (uint64_t)W * H * 4 / cores);  // 64 row pairs: 8 per core
        CHECK(c["cycles"].get<double>() <= r["cycles"].get<double>());
    }
    CHECK(read == (uint64_t)W * H * 4);
    CHECK(written == (uint64_t)W * H * 4);
    CHECK(r["race_count"] == 0);
    // The 8 cores share GM's 256 B/cycle, 32 each: they would move 2 x 64
    // B/cycle each, 4 x what GM gives, so the kernel is bound by its GM
    // bytes over the shared rate (4096 cycles); 5129 with the first loads'
    // latency and the last tile's vector work and store.
    const double gm_bound = (double)(read + written) / (double)npu::default_machine().gm_bytes_per_cycle;
    INFO("one core: " << one["cycles"] << ", " << cores << " cores: " << r["cycles"] << ", GM bound " << gm_bound);
    CHECK(r["cycles"].get<double>() >= gm_bound);
    CHECK(r["cycles"].get<double>() <= 1.3 * gm_bound);
    for (const json &c : r["per_core"]) {
        CHECK(c["gm_wait_cycles"].get<uint64_t>() > 0);
        CHECK(c["cycles"] == r["cycles"]);  // equal work, equal parts of GM
    }
    CHECK(r["cycles"].get<double>() * 3 <= one["cycles"].get<double>());
    {
        // Each core at its own pipes' rates, the kernel scales with the
        // cores but for the pipeline's fill and drain (8 tiles per core).
        UnsharedGmMachine unshared;
        Softmax u;
        u.fused(2, true);
        u.output.parallel(u.yo);
        json ru = run_npu(Pipeline(u.output), in, npu, "softmax_cores_unshared");
        check_same(host, npu);
        INFO("unshared GM, " << cores << " cores: " << ru["cycles"]);
        CHECK(ru["gm_wait_cycles"] == 0);
        for (const json &c : ru["per_core"]) CHECK(c["busy_ratio"]["V"].get<double>() > 0.65);
        CHECK(ru["cycles"].get<double>() * cores <= 1.3 * one["cycles"].get<double>());
    }
    // 127 rows: the last tile is shifted onto rows of its neighbour, on another core.
    Buffer<float, 2> odd(W, H - 1), odd_out(W, H - 1);
    Softmax t;
    t.fused(2, true);
    t.output.parallel(t.yo);
    CHECK_THROWS_WITH(run_npu(Pipeline(t.output), odd, odd_out, "softmax_cores_odd"),
                      Contains("race") && Contains("cores are not synchronized"));
}

TEST_CASE("layernorm on the NPU: row statistics on TROWSUM, gamma and beta loaded once, output equals host output",
          "[npu][codegen][reduce]") {
    Buffer<float, 2> in = make_input(), host(W, H), npu(W, H);
    Buffer<float, 1> gamma = make_row(0.5f, 1.0f), beta = make_row(0.25f, -0.5f);
    const uint64_t bytes = (uint64_t)W * H * 4, ideal_read = bytes + 2 * W * 4;
    json r[2];
    for (int db = 0; db < 2; db++) {
        LayerNorm l;
        l.fused(8, db == 1);  // schedules/layernorm/npu.sched's tiles
        l.input.set(in);
        l.gamma.set(gamma);
        l.beta.set(beta);
        l.output.realize(host);
        Pipeline p(l.output);
        r[db] = run_npu_args(p, {{"input", in}, {"gamma", gamma}, {"beta", beta}, {"output", npu}},
                             db ? "layernorm_db" : "layernorm_sb");
        check_same(host, npu);
        CHECK(r[db]["gm_read_bytes"] == ideal_read);
        CHECK(r[db]["gm_write_bytes"] == bytes);
        CHECK(r[db]["race_count"] == 0);
    }
    INFO("single-buffered: " << r[0].dump(1) << "\ndouble-buffered: " << r[1].dump(1));
    CHECK(r[1]["cycles"].get<double>() <= 1.15 * roofline(r[1]));
    CHECK(r[1]["cycles"] < r[0]["cycles"]);
    LayerNorm u;  // normalized through GM: written once, read once more
    u.unfused(2);
    json ru = run_npu_args(Pipeline(u.output), {{"input", in}, {"gamma", gamma}, {"beta", beta}, {"output", npu}},
                           "layernorm_unfused");
    check_same(host, npu);
    CHECK(ru["gm_read_bytes"] == ideal_read + bytes);
    CHECK(ru["gm_write_bytes"] == 2 * bytes);
    CHECK(ru["race_count"] == 0);
}

TEST_CASE("a 1-D Func read only by another 1-D Func's tile takes that tile's orientation", "[npu][codegen]") {
    // gamma is read only inside g's 1-D tile, and g only along x of out's
    // tile: both are rows (one value per column), found through g.
    Buffer<float, 2> in = make_input(), host(W, H), npu(W, H);
    Buffer<float, 1> gamma = make_row(0.5f, 1.0f);
    LayerNorm l;
    Func g("g"), h("h"), out("out");
    h(l.x) = l.gamma(l.x) + 1.0f;  // a chain of two: h through g
    g(l.x) = h(l.x) * 2.0f;
    out(l.x, l.y) = l.input(l.x, l.y) * g(l.x);
    out.bound(l.x, 0, W).split(l.y, l.yo, l.yi, 2);
    g.compute_at(out, l.yo);
    h.compute_at(out, l.yo);
    l.input.set(in);
    l.gamma.set(gamma);
    out.realize(host);
    json r = run_npu_args(Pipeline(out), {{"input", in}, {"gamma", gamma}, {"out", npu}}, "row_chain_1d");
    check_same(host, npu);
    CHECK(r["race_count"] == 0);
}

TEST_CASE("select and comparisons map onto TCMP and TSEL, the output equals the host output", "[npu][codegen][select]") {
    Buffer<float, 2> in = make_input(), host(W, H), npu(W, H);
    ImageParam input(Float(32), 2, "input");
    Var x("x"), y("y"), xo("xo"), yo("yo"), xi("xi"), yi("yi");
    Func relu("relu"), output("output");
    relu(x, y) = select(input(x, y) > 0.0f, input(x, y), 0.0f);  // ReLU as a select
    output(x, y) = select(relu(x, y) <= 0.5f, exp(relu(x, y)), select(input(x, y) == relu(x, y), relu(x, y) * 2.0f, -1.0f));
    output.tile(x, y, xo, yo, xi, yi, 128, 16);
    relu.compute_at(output, xo);
    input.set(in);
    output.realize(host);
    json r = run_npu(Pipeline(output), in, npu, "select_chain");
    check_same(host, npu);
    CHECK(r["instructions_by_op"]["TCMP"] == 3 * (W / 128) * (H / 16));
    CHECK(r["instructions_by_op"]["TSEL"] == 3 * (W / 128) * (H / 16));
    CHECK(r["race_count"] == 0);
    Func bad("bad");
    bad(x, y) = select(input(x, y) > 0.0f && input(x, y) < 1.0f, input(x, y), 0.0f);
    bad.tile(x, y, xo, yo, xi, yi, 128, 16);
    REQUIRE_COMPILE_ERROR(Pipeline(bad).compile_to_cpp_source("bad", Target("npu")),
                          Contains("NPU target: Func bad: the condition") &&
                              Contains("of a select has no NPU instruction; TCMP compares two float32 tiles") &&
                              Contains("nest selects instead of using && or ||"));
}

// GEMM + bias + ReLU of generators/gemm.cpp: C = relu(A B + bias), A M x K, B K x N.
struct Gemm {
    static constexpr int M = 1024, N = 128, K = 128;
    ImageParam A{Float(32), 2, "A"}, B{Float(32), 2, "B"}, bias{Float(32), 1, "bias"};
    Var x{"x"}, y{"y"}, yo{"yo"}, yi{"yi"};
    RDom k{0, K, "k"};
    Func matmul{"matmul"}, bias_add{"bias_add"}, output{"output"};
    explicit Gemm(float from = 0.0f) {
        matmul(x, y) = from;
        matmul(x, y) += A(k, y) * B(x, k);
        bias_add(x, y) = matmul(x, y) + bias(x);
        output(x, y) = max(bias_add(x, y), 0.0f);
    }
    // A (K x M), B (N x K) and the bias (N), the same values in every test.
    struct Operands {
        Buffer<float, 2> a{K, M}, b{N, K};
        Buffer<float, 1> bias{N};
        Operands() {
            for (int j = 0; j < M; j++)
                for (int i = 0; i < K; i++) a(i, j) = std::sin(0.37f * i + 0.11f * j);
            for (int j = 0; j < K; j++)
                for (int i = 0; i < N; i++) b(i, j) = std::cos(0.23f * i - 0.07f * j);
            for (int i = 0; i < N; i++) bias(i) = 0.01f * (i % 17) - 0.08f;
        }
    };
    void set(const Operands &o) {
        A.set(o.a);
        B.set(o.b);
        bias.set(o.bias);
    }
    // Points where two outputs differ.
    static int mismatches(const Buffer<float, 2> &p, const Buffer<float, 2> &q) {
        int bad = 0;
        for (int j = 0; j < M; j++)
            for (int i = 0; i < N; i++) bad += p(i, j) != q(i, j);
        return bad;
    }
    // Tiles of `rows` x N; the product of each in L0C, B loaded once.
    void npu(int rows, bool double_buffer) {
        output.bound(x, 0, N).split(y, yo, yi, rows);
        matmul.compute_at(output, yo).store_in(MemoryType::L0C);
        if (double_buffer) {
            matmul.double_buffer();
            output.double_buffer();
        }
    }
};

TEST_CASE("GEMM + bias + ReLU: the matrix update maps onto TMATMUL, the output equals the host output",
          "[npu][codegen][matmul]") {
    using G = Gemm;
    Gemm::Operands ops;
    Buffer<float, 2> &a = ops.a, &b = ops.b, host(G::N, G::M), npu(G::N, G::M);
    Buffer<float, 1> &bias = ops.bias;
    json r[2];
    for (int db = 0; db < 2; db++) {
        Gemm g;
        g.npu(32, db == 1);
        g.set(ops);
        g.output.realize(host);
        r[db] = run_npu_args(Pipeline(g.output), {{"A", a}, {"B", b}, {"bias", bias}, {"output", npu}},
                             db ? "gemm_db" : "gemm_sb");
        CHECK(Gemm::mismatches(host, npu) == 0);
        CHECK(r[db]["instructions_by_op"]["TMATMUL"] == G::M / 32);  // one per tile of 32 rows
        CHECK(r[db]["race_count"] == 0);
        // A and the output once, B and bias once (loaded before the loop).
        CHECK(r[db]["gm_read_bytes"] == 4 * (G::M * G::K + G::K * G::N + G::N));
        CHECK(r[db]["gm_write_bytes"] == 4 * G::M * G::N);
    }
    INFO("single-buffered: " << r[0].dump(1) << "\ndouble-buffered: " << r[1].dump(1));
    CHECK(r[1]["cycles"] < r[0]["cycles"]);
    CHECK(r[1]["pipes"]["M"]["busy_ratio"].get<double>() > 0.7);  // PTO publishes 54-87% for its double-buffered GEMM
}

TEST_CASE("blur3x3 on the NPU: the halo loaded once per tile, x offsets by TEXTRACT, y offsets as row offsets",
          "[npu][codegen][stencil]") {
    Buffer<float, 2> in = make_input(), host(W, H), npu(W, H);
    for (int j = 0; j < H; j++)
        for (int i = 0; i < W; i++) in(i, j) += 0.001f * ((i * 7 + j * 13) % 31);  // not separable in x and y
    const uint64_t bytes = (uint64_t)W * H * 4;
    const int tw[2] = {128, 64}, th = 32;
    json r[2];
    for (int db = 0; db < 2; db++) {
        Blur b;
        b.npu(tw[db], th, db == 1);
        b.input.set(in);
        b.output.realize(host);
        r[db] = run_npu(Pipeline(b.output), in, npu, db ? "blur_db" : "blur_sb");
        check_same(host, npu);
        CHECK(r[db]["race_count"] == 0);
        // Per tile: one load of the (th + 2) x (tw + 2) window (the tile and its halo; the DMA moves its rows
        // in whole 32-byte blocks), then the x offsets -1 (an aligned view of it) and 0, +1 (TEXTRACT);
        // the output written once.
        const int tiles = (W / tw[db]) * (H / th);
        const uint64_t row_bytes = ((tw[db] + 2) * 4 + 31) / 32 * 32;
        CHECK(r[db]["gm_read_bytes"] == (uint64_t)tiles * (th + 2) * row_bytes);
        CHECK(r[db]["dma_bytes"]["GM->UB"] == r[db]["gm_read_bytes"]);
        CHECK(r[db]["gm_write_bytes"] == bytes);
        CHECK(r[db]["instructions_by_op"]["TLOAD"] == tiles);
        CHECK(r[db]["instructions_by_op"]["TEXTRACT"] == 2 * tiles);
    }
    INFO("single-buffered: " << r[0].dump(1) << "\ndouble-buffered: " << r[1].dump(1));
    // Bound by the vector work (the extractions added to it); the flag that frees the halo tile for the
    // next-but-one load is set at the end of the body, after the output's vector work (docs/npu.md, §7).
    CHECK(r[1]["cycles"].get<double>() <= 1.2 * roofline(r[1]));
    // The tiles at the image's edges replicate them: a one-tile image is all edge.
    Buffer<float, 2> small(64, 32), hs(64, 32), ns(64, 32);
    for (int j = 0; j < 32; j++)
        for (int i = 0; i < 64; i++) small(i, j) = std::cos(0.3f * i) * (1 + j);
    Blur b;
    b.npu(64, 32, false);
    b.input.set(small);
    b.output.realize(hs);
    json rs = run_npu(Pipeline(b.output), small, ns, "blur_small");
    int bad = 0;
    for (int j = 0; j < 32; j++)
        for (int i = 0; i < 64; i++) bad += hs(i, j) != ns(i, j);
    CHECK(bad == 0);
}

TEST_CASE("constant_exterior on the NPU: one padded TLOAD of the tile and its halo, output equals host output",
          "[npu][codegen][stencil]") {
    // Tiles at every edge of a 200 x 77 image (tails shifted inwards), padded with 0.25 outside it.
    const int w = 200, h = 77, tw = 64, th = 32;
    Buffer<float, 2> in(w, h), host(w, h), npu(w, h);
    in.set_min(-3, 5), host.set_min(-3, 5), npu.set_min(-3, 5);
    for (int j = 0; j < h; j++)
        for (int i = 0; i < w; i++) in(i - 3, j + 5) = std::cos(0.3f * i) * (1 + 0.1f * j);
    Blur b(0.25f);
    b.npu(tw, th, true);
    b.input.set(in);
    b.output.realize(host);
    json r = run_npu(Pipeline(b.output), in, npu, "blur_padded");
    int bad = 0;
    host.for_each_element([&](int x, int y) { bad += host(x, y) != npu(x, y); });
    CHECK(bad == 0);
    CHECK(r["race_count"] == 0);
    const int tiles = ((w + tw - 1) / tw) * ((h + th - 1) / th);
    CHECK(r["instructions_by_op"]["TLOAD"] == tiles);  // the padded halo, once per tile
    CHECK(r["instructions_by_op"].value("TSEL", 0) == 0);
    // The padding is a property of the DMA: the kernel says so where it loads.
    auto src = Pipeline(b.output).compile_to_cpp_source("blur_padded", Pipeline(b.output).infer_arguments(), Target("npu"));
    CHECK(src.find(".padded(") != std::string::npos);
}

TEST_CASE("align_bounds on the NPU: an aligned output equals the host's, a misaligned one is refused, unwritten",
          "[npu][codegen][align_bounds]") {
    const int w = 192, h = 64;
    Buffer<float, 2> in(w + 2, h + 2), host(w, h), npu(w, h);
    in.set_min(-5, 5), host.set_min(-4, 6), npu.set_min(-4, 6);
    in.for_each_element([&](int x, int y) { in(x, y) = std::sin(0.05f * x) + 0.03f * y; });
    Blur b;
    b.npu(64, 16, true);
    b.output.align_bounds(b.x, 2).align_bounds(b.y, 2);
    b.input.set(in);
    b.output.realize(host);
    json r = run_npu(Pipeline(b.output), in, npu, "blur_aligned");
    int bad = 0;
    host.for_each_element([&](int x, int y) { bad += host(x, y) != npu(x, y); });
    CHECK(bad == 0);
    CHECK(r["race_count"] == 0);
    // A buffer starting at an odd x: the kernel would write x - 1; refused before anything is written.
    Buffer<float, 2> odd(w, h);
    odd.set_min(-3, 6);
    odd.fill(-7.0f);
    Target t("npu");
    Pipeline p(b.output);
    auto m = internal::JITModule::compile(p.compile_to_cpp_source("blur_aligned_odd", p.infer_arguments(), t),
                                          "blur_aligned_odd", t);
    void *argv[] = {in.raw_buffer(), odd.raw_buffer()};
    CHECK(m->run(argv) == kiln_error_constraint_violated);
    int written = 0;
    odd.for_each_element([&](int x, int y) { written += odd(x, y) != -7.0f; });
    CHECK(written == 0);
    // On a Func computed per tile: blur_x's rows widened to start at a multiple of 4. Its region's size
    // then depends on where each tile of output starts, unless the tiles are aligned too.
    Blur d;
    d.npu(64, 16, true);
    d.blur_x.align_bounds(d.y, 4);
    REQUIRE_COMPILE_ERROR(
        Pipeline(d.output).compile_to_cpp_source("blur_x_unaligned", Pipeline(d.output).infer_arguments(), t),
        Contains("Func blur_x is stored in UB over a region of 64 x") &&
            Contains("blur_x's align_bounds(y, 4, 0) rounds its region at each tile of output out to multiples of "
                     "4, a size that depends on where the tile starts: align the tiles too (align_bounds(y, 4) on "
                     "output, with tiles a multiple of 4 in y"));
    Blur c;
    c.npu(64, 16, true);
    c.blur_x.align_bounds(c.y, 4);
    c.output.align_bounds(c.y, 4);
    c.input.set(in);
    Buffer<float, 2> npu2(w, h - 8);  // rows 8 to 63: every tile of output starts at a multiple of 4 too
    npu2.set_min(-4, 8);
    json r2 = run_npu(Pipeline(c.output), in, npu2, "blur_x_aligned");
    bad = 0;
    npu2.for_each_element([&](int x, int y) { bad += host(x, y) != npu2(x, y); });
    CHECK(bad == 0);
    CHECK(r2["race_count"] == 0);
}

// The unsharp mask of generators/unsharp.cpp (float32, amount 1.5): a 5-tap
// blur in x then y, output = input + amount * (input - blur).
struct Unsharp {
    ImageParam input{Float(32), 2, "input"};
    Var x{"x"}, y{"y"}, xo{"xo"}, yo{"yo"}, xi{"xi"}, yi{"yi"};
    Func blur_x{"blur_x"}, output{"output"};
    Unsharp() {
        Func in = BoundaryConditions::repeat_edge(input);
        blur_x(x, y) = (in(x - 2, y) + 4 * in(x - 1, y) + 6 * in(x, y) + 4 * in(x + 1, y) + in(x + 2, y)) / 16;
        Expr blur = (blur_x(x, y - 2) + 4 * blur_x(x, y - 1) + 6 * blur_x(x, y) + 4 * blur_x(x, y + 1) +
                     blur_x(x, y + 2)) / 16;
        output(x, y) = in(x, y) + 1.5f * (in(x, y) - blur);
    }
};

TEST_CASE("unsharp on the NPU reads its input once per tile and halo: blur_x's halo serves the output too",
          "[npu][codegen][stencil]") {
    Buffer<float, 2> in = make_input(), host(W, H), npu(W, H);
    for (int j = 0; j < H; j++)
        for (int i = 0; i < W; i++) in(i, j) += 0.001f * ((i * 5 + j * 11) % 29);
    const uint64_t bytes = (uint64_t)W * H * 4;
    Unsharp u;
    u.output.tile(u.x, u.y, u.xo, u.yo, u.xi, u.yi, 64, 32).double_buffer();
    u.blur_x.compute_at(u.output, u.xo).double_buffer();
    u.input.set(in);
    u.output.realize(host);
    json r = run_npu(Pipeline(u.output), in, npu, "unsharp_db");
    INFO(r.dump(1));
    check_same(host, npu);
    CHECK(r["race_count"] == 0);
    const int tiles = (W / 64) * (H / 32);
    // One 36 x 68 window per tile (two halo rows and columns on each side; rows of 68 floats move as 72,
    // whole 32-byte blocks); the output's own read of the input is the halo's centre (TEXTRACT at (2, 2)),
    // so nothing else is loaded.
    CHECK(r["gm_read_bytes"] == (uint64_t)tiles * 36 * 72 * 4);
    CHECK(r["instructions_by_op"]["TLOAD"] == tiles);
    CHECK(r["instructions_by_op"]["TEXTRACT"] == 5 * tiles);  // x offsets 1..4 of blur_x, the output's centre
    CHECK(r["gm_write_bytes"] == bytes);
}

TEST_CASE("attention on the NPU: Q Kᵀ and P V on TMATMUL, the softmax in UB, output equals host output",
          "[npu][codegen][attention]") {
    using A = Attention;
    Buffer<float, 2> q(A::D, A::S), k(A::D, A::S), v(A::D, A::S), host(A::D, A::S), npu(A::D, A::S);
    A::fill(q, k, v);
    json r[2];
    const int rows = 16;
    for (int db = 0; db < 2; db++) {
        Attention a;
        a.npu(rows, db == 1);
        a.Q.set(q);
        a.K.set(k);
        a.V.set(v);
        a.output.realize(host);
        r[db] = run_npu_args(Pipeline(a.output), {{"Q", q}, {"K", k}, {"V", v}, {"output", npu}},
                             db ? "attention_db" : "attention_sb");
        int bad = 0;
        for (int t = 0; t < A::S; t++)
            for (int f = 0; f < A::D; f++) bad += host(f, t) != npu(f, t);
        CHECK(bad == 0);
        CHECK(r[db]["race_count"] == 0);
        CHECK(r[db]["instructions_by_op"]["TMATMUL"] == 2 * A::S / rows);  // S and O per tile of query rows
        // Q and the output once; K and V once (loaded before the loop): P never goes through GM.
        CHECK(r[db]["gm_read_bytes"] == 4 * 3 * A::D * A::S);
        CHECK(r[db]["gm_write_bytes"] == 4 * A::D * A::S);
        CHECK(r[db]["dma_bytes"]["UB->L1"] == 4 * A::S * A::S);  // P, UB -> L1 -> L0A
    }
    INFO("single-buffered: " << r[0].dump(1) << "\ndouble-buffered: " << r[1].dump(1));
    CHECK(r[1]["cycles"] < r[0]["cycles"]);
}

TEST_CASE("attention software-pipelined across cores: each core's tile loop rotated, the host's output",
          "[npu][codegen][attention][software_pipeline]") {
    using A = Attention;
    constexpr int queries = 25 * 16;  // 25 tiles of 16 rows on 8 cores: core 0 runs 4, the others 3
    Buffer<float, 2> q(A::D, queries), k(A::D, A::S), v(A::D, A::S), host(A::D, queries), npu(A::D, queries);
    A::fill(q, k, v);
    Attention a;
    a.npu(16, true, true);
    a.output.parallel(a.ib);
    a.Q.set(q);
    a.K.set(k);
    a.V.set(v);
    a.output.realize(host);
    Pipeline p(a.output);
    const std::string src = p.compile_to_cpp_source("attention_sp_cores", p.infer_arguments(), Target("npu"));
    // Core i's trips i, i + cores, ... and one more: its first runs tile i's S and softmax alone.
    CHECK_THAT(src, Catch::Contains("for (int32_t v_output_s0_i_ib_pipe = (int32_t)0 + core.index(); "
                                    "v_output_s0_i_ib_pipe < (int32_t)0 + ") &&
                        Catch::Contains("v_output_s0_i_ib_pipe += core.num_cores())") &&
                        Catch::Contains("if (v_output_s0_i_ib_pipe > (int32_t)0 + core.index()) "));
    json r = run_npu_args(p, {{"Q", q}, {"K", k}, {"V", v}, {"output", npu}}, "attention_sp_cores");
    CHECK(r["race_count"] == 0);
    CHECK(r["instructions_by_op"]["TMATMUL"] == 2 * queries / 16);
    int bad = 0;
    for (int t = 0; t < queries; t++)
        for (int f = 0; f < A::D; f++) bad += host(f, t) != npu(f, t);
    CHECK(bad == 0);
}

TEST_CASE("the fusion report's NPU figures from zero inputs equal those of the tests' inputs", "[npu][codegen][report]") {
    // The simulator's costs, DMA bytes, footprints and race check depend on
    // instruction shapes, addresses and flags, never on values, and the S
    // pipe's loops on sizes only: zero-filled buffers give the same figures.
    auto same = [](const json &zero, const json &run) {
        for (const char *k : {"cycles", "gm_read_bytes", "gm_write_bytes", "dma_bytes", "peak_bytes"}) {
            INFO(k);
            CHECK(zero[k] == run[k]);
        }
        for (auto &kv : run["pipes"].items()) CHECK(zero["busy_ratio"][kv.key()] == kv.value()["busy_ratio"]);
    };
    Buffer<float, 2> in = make_input(), out(W, H);
    {
        Softmax s;
        s.fused(2, true);
        Pipeline p(s.output);
        json z = json::parse(internal::npu_report_figures(p, "softmax_zero", p.infer_arguments(),
                                                          {{"input", {W, H}}, {"output", {W, H}}}, Target("npu"), 0)
                                 .json);
        same(z, run_npu(p, in, out, "softmax_values"));
    }
    {
        Blur b;
        b.npu(64, 32, true);
        Pipeline p(b.output);
        json z = json::parse(internal::npu_report_figures(p, "blur_zero", p.infer_arguments(),
                                                          {{"input", {W, H}}, {"output", {W, H}}}, Target("npu"), 0)
                                 .json);
        same(z, run_npu(p, in, out, "blur_values"));
    }
}

TEST_CASE("NPU legality errors", "[npu][codegen][error]") {
    auto source = [](Chain &c) { return Pipeline(c.output).compile_to_cpp_source("chain", Target("npu")); };
    {
        Chain c;
        c.fused(256, 128, true);
        REQUIRE_COMPILE_ERROR(source(c), Contains("need 393216 bytes of UB at once (buffers whose lifetimes do not "
                                                  "overlap share bytes; 917504 without sharing) but the machine has "
                                                  "196608 (over by 196608)"));
        REQUIRE_COMPILE_ERROR(source(c), Contains("output 262144 stage1 524288 stage2 131072"));
        REQUIRE_COMPILE_ERROR(source(c), Contains("Use smaller tiles"));
    }
    {
        Chain c;
        c.stage1.compute_at(c.output, c.y);
        REQUIRE_COMPILE_ERROR(source(c), Contains("Func stage1 is stored in UB over a region of") &&
                                             Contains("which is not constant; on-chip buffers are allocated statically"));
    }
    {
        Chain c;  // everything inlined into an untiled output
        REQUIRE_COMPILE_ERROR(source(c), Contains("Func output: loop output.s0.y of its tile has extent") &&
                                             Contains("a tile has a constant shape (its buffers are allocated before "
                                                      "the kernel runs), so bound(y, 0, W) on output"));
    }
    {
        Chain c;
        Func bad("bad");
        bad(c.x, c.y) = sin(c.output(c.x, c.y));
        bad.tile(c.x, c.y, c.xo, c.yo, c.xi, c.yi, 64, 8);
        c.output.compute_at(bad, c.xo);
        REQUIRE_COMPILE_ERROR(Pipeline(bad).compile_to_cpp_source("bad", Target("npu")),
                              Contains("calls sin, which has no NPU vector instruction"));
    }
    {
        Chain c;
        c.fused(64, 8, false);
        c.stage1.store_in(MemoryType::L1);
        REQUIRE_COMPILE_ERROR(source(c), Contains("Func stage1 is stored in L1, but it is computed and read by the vector pipe (V), which reaches only UB"));
    }
    {
        Chain c;
        c.fused(60, 8, false);  // 60 floats: rows padded to 64, the tile does not cover its buffer's rows
        CHECK_NOTHROW(source(c));
    }
}

TEST_CASE("NPU legality errors of reductions and matrix updates", "[npu][codegen][error]") {
    auto source = [](Func f) { return Pipeline(f).compile_to_cpp_source("f", Target("npu")); };
    {
        Softmax s;  // a product over the row has no row-reduction instruction
        Func prod("prod");
        prod(s.y) = 1.0f;
        prod(s.y) = prod(s.y) * s.input(s.r, s.y);
        Func out("out");
        out(s.x, s.y) = s.input(s.x, s.y) * prod(s.y);
        out.bound(s.x, 0, W).split(s.y, s.yo, s.yi, 2);
        prod.compute_at(out, s.yo);
        REQUIRE_COMPILE_ERROR(source(out), Contains("NPU target: Func prod is 1-D and computed over a 2-D loop nest") &&
                                               Contains("its update must be prod(y) = prod(y) + e or max(prod(y), e) "
                                                        "(TROWSUM, TROWMAX)"));
    }
    {
        Softmax s;  // one 1-D image read as a column and as a row
        ImageParam w(Float(32), 1, "w");
        Func out("out");
        out(s.x, s.y) = s.input(s.x, s.y) * w(s.x) + w(s.y);
        out.bound(s.x, 0, W).split(s.y, s.yo, s.yi, 2);
        REQUIRE_COMPILE_ERROR(source(out), Contains("NPU target: the 1-D Func w is read both along the rows and along "
                                                    "the columns of tiles"));
    }
    {
        Softmax s;
        s.fused(2, false);
        s.row_max.compute_root();
        REQUIRE_COMPILE_ERROR(source(s.output), Contains("NPU target: Func row_max is 1-D and stored in GM") &&
                                                    Contains("compute_at it inside the loop of its consumer's tiles"));
    }
    {
        Gemm g;  // the product in UB: a 3-D nest that is not a matrix update into L0C
        g.npu(32, false);
        g.matmul.store_in(MemoryType::UB);
        REQUIRE_COMPILE_ERROR(source(g.output), Contains("NPU target: Func matmul is computed over a 3-D loop nest") &&
                                                    Contains("with C stored in L0C (store_in(L0C))"));
    }
    {
        Gemm g(1.0f);  // L0C is written only by TMATMUL, which starts from 0
        g.npu(32, false);
        REQUIRE_COMPILE_ERROR(source(g.output), Contains("NPU target: Func matmul is stored in L0C, which only the "
                                                         "matrix unit writes, so its pure definition must be 0"));
    }
    {
        Gemm g;  // 128 rows of A, twice: 64 KiB of L0A per copy
        g.npu(128, true);
        REQUIRE_COMPILE_ERROR(source(g.output), Contains("need 131072 bytes of L0A at once (buffers whose lifetimes "
                                                         "do not overlap share bytes; 131072 without sharing) but the "
                                                         "machine has 65536 (over by 65536)") &&
                                                    Contains("matmul 131072"));
    }
}

TEST_CASE("NPU legality errors of types, memories, cores and windows", "[npu][codegen][error]") {
    auto source = [](Func f) { return Pipeline(f).compile_to_cpp_source("bad", Target("npu")); };
    {
        ImageParam in(Int(32), 2, "in");
        Var x("x"), y("y");
        Func f("f");
        f(x, y) = in(x, y) + 1;
        f.bound(x, 0, 64).bound(y, 0, 8);
        REQUIRE_COMPILE_ERROR(source(f), Contains("NPU target: Func f: (in(f.s0.x, f.s0.y) + 1) has type int32; the "
                                                  "vector instructions Kiln selects work on float32"));
    }
    {
        Chain c;
        c.fused(64, 8, false);
        c.stage1.store_in(MemoryType::GM);
        REQUIRE_COMPILE_ERROR(source(c.output), Contains("NPU target: Func stage1 is stored in GM but computed inside "
                                                         "a loop") &&
                                                    Contains("compute_root() it, or store_in(UB)"));
    }
    {
        Chain c;
        c.output.tile(c.x, c.y, c.xo, c.yo, c.xi, c.yi, 64, 8).parallel(c.xo);
        c.stage1.compute_at(c.output, c.xo);
        REQUIRE_COMPILE_ERROR(source(c.output), Contains("NPU target: loop output.s0.x.xo is parallel; a loop across "
                                                         "cores must be the outermost loop of the pipeline"));
    }
    {
        Chain c;  // a Func of int32 values in UB
        Func n("n"), out("out");
        n(c.x, c.y) = cast<int>(c.input(c.x, c.y));
        out(c.x, c.y) = cast<float>(n(c.x, c.y));
        out.tile(c.x, c.y, c.xo, c.yo, c.xi, c.yi, 64, 8);
        n.compute_at(out, c.xo);
        REQUIRE_COMPILE_ERROR(source(out), Contains("NPU target: Func n has type int32 and is stored in UB; the "
                                                    "vector unit computes float tiles"));
    }
    {
        Blur b;  // output reads blur_x one column to the right: a column offset inside UB, one TEXTRACT
        Func out("out");
        out(b.x, b.y) = b.blur_x(b.x, b.y) + b.blur_x(b.x + 1, b.y);
        out.tile(b.x, b.y, b.xo, b.yo, b.xi, b.yi, 64, 8);
        b.blur_x.compute_at(out, b.xo);
        CHECK_THAT(source(out), Contains("core.TEXTRACT("));
        // In a 16-bit Func it is still an error (TEXTRACT extracts from float32 buffers here).
        Func h("h"), out16("out16");
        h(b.x, b.y) = cast<kiln::float16_t>(b.input(b.x, b.y));
        out16(b.x, b.y) = cast<float>(h(b.x, b.y)) + cast<float>(h(b.x + 1, b.y));
        out16.tile(b.x, b.y, b.xo, b.yo, b.xi, b.yi, 64, 8);
        h.compute_at(out16, b.xo);
        REQUIRE_COMPILE_ERROR(source(out16), Contains("NPU target: Func out16 reads h at an offset of 1 elements "
                                                      "from the start of its UB buffer") &&
                                                 Contains("a column offset into a 16-bit Func (TEXTRACT extracts "
                                                          "from float32 buffers here; give the Func type float32)"));
    }
    {
        Chain c;  // s is computed per 8-row tile, out in 4-row halves of it: a row offset that moves with a loop
        Func s("s"), out("out");
        Var a("a"), yi2("yi2");
        s(c.x, c.y) = c.input(c.x, c.y) * 2.0f;
        out(c.x, c.y) = s(c.x, c.y) + 1.0f;
        out.tile(c.x, c.y, c.xo, c.yo, c.xi, c.yi, 64, 8).split(c.yi, a, yi2, 4);
        s.compute_at(out, c.xo);
        REQUIRE_COMPILE_ERROR(source(out), Contains("NPU target: Func out reads s at an offset of") &&
                                               Contains("an offset that changes from one iteration to the next of a "
                                                        "loop inside the one where it is computed") &&
                                               Contains("compute s over exactly the tile that reads it"));
    }
    {
        LayerNorm l;  // a row statistic read one row further down: an offset along a 1-D (column) buffer
        Func out("out");
        out(l.x, l.y) = l.input(l.x, l.y) * l.sum(l.y) + l.sum(l.y + 1);
        out.bound(l.x, 0, W).split(l.y, l.yo, l.yi, 2);
        l.sum.compute_at(out, l.yo);
        REQUIRE_COMPILE_ERROR(source(out), Contains("NPU target: Func out reads sum at an offset of 1 elements") &&
                                               Contains("an offset along a 1-D buffer (a row or column of values "
                                                        "is read whole, from its start)"));
    }
    {
        Chain c;  // a transposed read in a vector tile
        Func out("out");
        out(c.x, c.y) = c.input(c.y, c.x) * 2.0f;
        out.tile(c.x, c.y, c.xo, c.yo, c.xi, c.yi, 64, 8);
        REQUIRE_COMPILE_ERROR(source(out), Contains("NPU target: Func out reads input(") &&
                                               Contains("each coordinate must be the tile's own coordinate plus a "
                                                        "constant offset, or that clamped to fixed bounds"));
    }
    {
        Chain c;  // a 3-D Func inside the tile loop
        Func f3("f3"), out("out");
        Var z("z");
        f3(c.x, c.y, z) = c.input(c.x, c.y) * cast<float>(z);
        out(c.x, c.y) = f3(c.x, c.y, 0) + f3(c.x, c.y, 1);
        out.tile(c.x, c.y, c.xo, c.yo, c.xi, c.yi, 64, 8);
        f3.compute_at(out, c.xo);
        REQUIRE_COMPILE_ERROR(source(out), Contains("NPU target: Func f3 has 3 dimensions and is stored in UB "
                                                    "(computed at out.xo) over 2 values of dimension 2; tiles are "
                                                    "2-D, so the NPU code generator computes a 3-D or 4-D Func in "
                                                    "UB one plane (dimensions 0 and 1) at a time"));
    }
    {
        Chain c;  // a Tuple-valued Func in GM (a Tuple compiles as float32 values in UB, one buffer each)
        Func t("t"), out("out");
        t(c.x, c.y) = Tuple(c.input(c.x, c.y), c.input(c.x, c.y) * 2.0f);
        out(c.x, c.y) = t(c.x, c.y)[0] + t(c.x, c.y)[1];
        out.tile(c.x, c.y, c.xo, c.yo, c.xi, c.yi, 64, 8);
        t.compute_root();
        REQUIRE_COMPILE_ERROR(source(out), Contains("NPU target: Func t returns a Tuple of 2 values (computed at "
                                                    "root); the NPU code generator handles a Tuple only as float32 "
                                                    "values in UB, one buffer per value, compute_at inside the loop "
                                                    "of its consumer's tiles") &&
                                               Contains("give each value its own Func, or compute t on the host"));
    }
    {
        Chain c;  // stage1 computed in 8-row tiles into its 32-row buffer
        c.fused(64, 32, false);
        c.stage1.split(c.y, c.yo, c.yi, 8);
        REQUIRE_COMPILE_ERROR(source(c.output), Contains("NPU target: Func stage1 is computed in 8 x 64 tiles into a UB "
                                                         "buffer of 32 x 64; a Func in UB is computed as one tile "
                                                         "covering its buffer"));
    }
    {
        Gemm g;  // a loop of the matrix update made parallel
        g.npu(32, false);
        g.matmul.update().parallel(g.y);
        REQUIRE_COMPILE_ERROR(source(g.output), Contains("NPU target: Func matmul: loop matmul.s1.y") &&
                                                    Contains("forms a TMATMUL and must stay serial"));
    }
    {
        ImageParam in3(Float(32), 3, "in3");  // a 3-D image read inside a tile: the window of plane 1
        Var x("x"), y("y"), xo("xo"), yo("yo"), xi("xi"), yi("yi");
        Func out("out");
        out(x, y) = in3(x, y, 1) * 2.0f;
        out.tile(x, y, xo, yo, xi, yi, 64, 8);
        CHECK_THAT(source(out), Contains("(int64_t)((int32_t)1 - v_in3_min_2) * v_in3_stride_2, v_in3_stride_1)"));
    }
    {
        Softmax s;  // the fusion report's NPU figures: a size missing, and sizes the schedule does not fit
        s.fused(2, false);
        Pipeline p(s.output);
        REQUIRE_COMPILE_ERROR(internal::npu_report_figures(p, "sm", p.infer_arguments(), {{"output", {W, H}}},
                                                           Target("npu"), 0),
                              Contains("NPU report: no size for buffer input; give it with --estimate input=W[,H]"));
        REQUIRE_COMPILE_ERROR(internal::npu_report_figures(p, "sm", p.infer_arguments(),
                                                           {{"input", {64, 4}}, {"output", {64, 4}}}, Target("npu"), 0),
                              Contains("NPU report: the kernel did not run on the simulator with the report's sizes") &&
                                  Contains("give sizes the schedule fits with --estimate"));
    }
    // The error compiling a chain with $KILN_NPU_MACHINE set to `path`.
    auto with_machine = [&](const std::string &path) {
        Chain c;
        c.fused(64, 8, false);
        ::setenv("KILN_NPU_MACHINE", path.c_str(), 1);
        std::string message;
        try {
            source(c.output);
        } catch (const CompileError &e) {
            message = e.what();
        }
        ::unsetenv("KILN_NPU_MACHINE");
        return message;
    };
    // A machine file that does not load.
    CHECK_THAT(with_machine("/nonexistent/machine.json"), Contains("NPU target: KILN_NPU_MACHINE: "));
    // A split cube/vector machine, which the code generator does not target.
    const std::string path = "npu_split_machine.json";
    std::ofstream(path) << npu::split_machine_json();
    const std::string split = with_machine(path);
    std::remove(path.c_str());
    CHECK_THAT(split, Contains("machine 'kiln-npu-split' (npu_split_machine.json) has 2 kinds of core (cube, "
                               "vector...); the code generator targets a unified machine"));
}

TEST_CASE("npu_tile names the loops of a stage's tile, its legality errors", "[npu][codegen][error][npu_tile]") {
    auto source = [](Chain &c) { return Pipeline(c.output).compile_to_cpp_source("chain", Target("npu")); };
    {
        Chain c;
        c.fused(128, 32, false);
        c.output.npu_tile(c.xi, c.yi);
        c.stage1.npu_tile(c.x, c.y);
        CHECK_NOTHROW(source(c));
    }
    {
        Chain c;
        c.fused(128, 32, false);
        c.output.npu_tile(c.xo, c.yi);
        REQUIRE_COMPILE_ERROR(source(c), Contains("NPU target: Func output: npu_tile(xo, yi) names the loops of its "
                                                  "tile, but the innermost two loops of the stage are yi (rows) and "
                                                  "xi (columns, innermost); reorder(xo, yi, ...)"));
    }
    {
        Chain c;
        c.output.npu_tile(c.x, c.y);  // untiled: the extents are the image's
        REQUIRE_COMPILE_ERROR(source(c), Contains("NPU target: Func output: npu_tile(x, y): loop x has extent") &&
                                             Contains("which is not a constant; a tile has a constant shape"));
    }
    {
        Chain c;
        c.fused(60, 8, false);  // rows of 240 bytes: padded without npu_tile, an error with it
        c.output.npu_tile(c.xi, c.yi);
        REQUIRE_COMPILE_ERROR(source(c), Contains("NPU target: Func output: npu_tile(xi, yi): a row of the tile is 60 "
                                                  "float32 values, 240 bytes, not a multiple of the machine's 32-byte "
                                                  "alignment; make the extent of xi a multiple of 8"));
    }
    {
        Chain c;
        REQUIRE_COMPILE_ERROR(c.output.npu_tile(c.xi, c.y), Contains("npu_tile(xi, ...): xi is not a loop of this stage"));
    }
    {
        Chain c;
        Pipeline p(c.output);
        ScheduleFile::parse("output: tile(x, y, xo, yo, xi, yi, 128, 32) npu_tile(xi, yi)\n"
                            "stage1: compute_at(output, xo) npu_tile(x, y)\n",
                            "npu.sched")
            .apply(p, Target("npu"));
        CHECK(c.output.contents()->schedule.memory_type == MemoryType::Auto);
        CHECK(c.output.contents()->init.schedule.npu_tile == std::vector<std::string>{"x.xi", "y.yi"});
        CHECK_NOTHROW(p.compile_to_cpp_source("chain_npu_tile", Target("npu")));
        Chain d;
        REQUIRE_COMPILE_ERROR(ScheduleFile::parse("output: npu_tile(xx, y)", "t.sched").apply(Pipeline(d.output)),
                              Contains("t.sched:1:18") && Contains("is not a loop of this stage"));
    }
}

TEST_CASE("store_in and double_buffer in schedule files", "[npu][codegen][sched]") {
    Chain c;
    Pipeline p(c.output);
    ScheduleFile::parse("output: tile(x, y, xo, yo, xi, yi, 128, 32) double_buffer()\n"
                        "stage1: compute_at(output, xo) store_in(UB) double_buffer()\n"
                        "stage2: compute_at(output, xo) store_in(UB)\n",
                        "npu.sched")
        .apply(p, Target("npu"));
    const auto &s1 = c.stage1.contents()->schedule;
    CHECK(s1.memory_type == MemoryType::UB);
    CHECK(s1.double_buffer);
    CHECK(c.output.contents()->schedule.double_buffer);
    CHECK_NOTHROW(p.compile_to_cpp_source("chain_sched", Target("npu")));
    Chain d;
    REQUIRE_COMPILE_ERROR(ScheduleFile::parse("stage1: store_in(UB2)", "t.sched").apply(Pipeline(d.output), Target("npu")),
                          Contains("t.sched:1:18") && Contains("must be GM, UB, L1, L0A, L0B or L0C, found the name 'UB2'"));
}

// Found by the sanitizer run (AddressSanitizer, heap-use-after-free in
// kiln-gen for softplus_npu): const_int() returns a pointer into its Expr,
// and callers passed it temporaries (simplify(), ub_offset()). Binding a
// temporary no longer compiles.
namespace {
template<typename E, typename = void>
struct const_int_takes : std::false_type {};
template<typename E>
struct const_int_takes<E, std::void_t<decltype(kiln::internal::npu_select::const_int(std::declval<E>()))>>
    : std::true_type {};
}  // namespace

TEST_CASE("npu_select::const_int refuses a temporary Expr", "[npu][regression]") {
    STATIC_REQUIRE(const_int_takes<const kiln::Expr &>::value);
    STATIC_REQUIRE(!const_int_takes<kiln::Expr>::value);
    kiln::Expr four(4);
    const int64_t *v = kiln::internal::npu_select::const_int(four);
    REQUIRE(v);
    CHECK(*v == 4);
}

TEST_CASE("the NPU op table maps IR operations onto instructions of the ISA's kinds", "[npu][select][optable]") {
    using kiln::internal::npu_select::npu_op_rule;
    using kiln::npu::Kind;
    using kiln::npu::Op;
    Param<float> pa("pa"), pb("pb");
    Expr a = pa, b = pb;
    struct Row {
        Expr e;
        Op tile, scalar;
        bool commutes;
    };
    for (const Row &r : {Row{a + b, Op::TADD, Op::TADDS, true}, Row{a - b, Op::TSUB, Op::TSUBS, false},
                         Row{a * b, Op::TMUL, Op::TMULS, true}, Row{a / b, Op::TDIV, Op::TDIVS, false},
                         Row{max(a, b), Op::TMAX, Op::TMAXS, true}, Row{min(a, b), Op::TMIN, Op::TMINS, true}}) {
        INFO(r.e);
        const auto *rule = npu_op_rule(r.e);
        REQUIRE(rule);
        CHECK(rule->tile == r.tile);
        CHECK(rule->scalar == r.scalar);
        CHECK(rule->commutes == r.commutes);
        CHECK(kiln::npu::op_kind(rule->tile) == Kind::Binary);
        CHECK(kiln::npu::op_kind(rule->scalar) == Kind::TileScalar);
    }
    CHECK(npu_op_rule(a + b)->row == Op::TROWSUM);
    CHECK(npu_op_rule(a + b)->col == Op::TCOLSUM);
    CHECK(npu_op_rule(max(a, b))->row == Op::TROWMAX);
    CHECK(npu_op_rule(max(a, b))->col == Op::TCOLMAX);
    CHECK(kiln::npu::op_kind(npu_op_rule(a * b)->row) != Kind::Reduce);  // no multiplying reduction
    CHECK(npu_op_rule(exp(a))->tile == Op::TEXP);
    CHECK(npu_op_rule(log(a))->tile == Op::TLOG);
    CHECK(npu_op_rule(sqrt(a))->tile == Op::TSQRT);
    CHECK(npu_op_rule(tanh(a))->tile == Op::TTANH);
    CHECK(kiln::npu::op_kind(npu_op_rule(exp(a))->tile) == Kind::Unary);
    CHECK(npu_op_rule(sin(a)) == nullptr);
    CHECK(npu_op_rule(a < b) == nullptr);
}

TEST_CASE("KILN_DEBUG and KILN_TIME_PASSES show the NPU's passes after the common ones", "[npu][codegen][passes]") {
    Chain c;
    c.fused(128, 16, true);
    std::ostringstream err;
    std::streambuf *old = std::cerr.rdbuf(err.rdbuf());
    setenv("KILN_DEBUG", "1", 1);
    setenv("KILN_TIME_PASSES", "1", 1);
    std::string code = Pipeline(c.output).compile_to_cpp_source("chain", Target("npu"));
    unsetenv("KILN_DEBUG");
    unsetenv("KILN_TIME_PASSES");
    std::cerr.rdbuf(old);
    const std::string log = err.str();
    size_t common = log.find("kiln: after storage folding:"), select = log.find("kiln: after npu instruction selection:"),
           place = log.find("kiln: after npu buffer placement:"), sync = log.find("kiln: after npu sync insertion:");
    REQUIRE(common != std::string::npos);
    REQUIRE(select != std::string::npos);
    REQUIRE(place != std::string::npos);
    REQUIRE(sync != std::string::npos);
    CHECK(common < select);
    CHECK(select < place);
    CHECK(place < sync);
    CHECK(log.find("kiln: npu sync insertion: ") != std::string::npos);  // its time
    // Selection prints typed instructions as the kernel's calls; placement
    // gives the buffers addresses; sync adds the flags.
    const std::string selected = log.substr(select, place - select), placed = log.substr(place, sync - place),
                      synced = log.substr(sync);
    const std::regex nonzero_address("at UB\\+[1-9]");
    CHECK(selected.find("core.TEXP(kiln_tile(core, kiln_addr(") != std::string::npos);
    CHECK(selected.find("SET_FLAG") == std::string::npos);
    CHECK(selected.find("// stage1: 16 x 128 f32 x 2 at UB+") != std::string::npos);
    CHECK(!std::regex_search(selected, nonzero_address));
    CHECK(std::regex_search(placed, nonzero_address));
    CHECK(placed.find("SET_FLAG") == std::string::npos);
    CHECK(synced.find("core.WAIT_FLAG(Pipe::MTE2, Pipe::V, ") != std::string::npos);
    CHECK(code.find("core.TEXP(") != std::string::npos);
}

TEST_CASE("the NPU's buffer placement and sync insertion on a hand-built kernel", "[npu][passes]") {
    using namespace kiln::internal;
    namespace isa = kiln::npu;
    NpuKernel k;
    for (const char *name : {"f.in", "f"}) {
        NpuBuffer b;
        b.name = name;
        b.owner = "f";
        b.rows = 8;
        b.cols = 64;
        k.buffers.push_back(b);
    }
    auto instr = [](isa::Op op, isa::Pipe pipe, std::vector<NpuArg> args, std::vector<int> reads, std::vector<int> writes) {
        NpuItem i;
        i.kind = NpuItem::Instr;
        i.op = op, i.pipe = pipe, i.args = std::move(args), i.reads = std::move(reads), i.writes = std::move(writes);
        return i;
    };
    NpuArg in{0, 8, 64, 0, ""}, f{1, 8, 64, 0, ""}, gm_in{-1, 0, 0, 0, "in_gm.at(0, 64)"}, gm_out{-1, 0, 0, 0, "out_gm.at(0, 64)"};
    NpuItem loop;
    loop.kind = NpuItem::Loop;
    loop.text = "for (int32_t i = 0; i < 4; i++)";
    loop.body = {instr(isa::Op::TLOAD, isa::Pipe::MTE2, {in, gm_in}, {}, {0}),
                 instr(isa::Op::TEXP, isa::Pipe::V, {f, in}, {0}, {1}),
                 instr(isa::Op::TSTORE, isa::Pipe::MTE3, {gm_out, f}, {1}, {})};
    k.body = {loop};
    k = npu_insert_sync(npu_place_buffers(std::move(k)));
    REQUIRE(k.body.size() == 5);  // the flags are instructions, typed as the tile instructions are
    CHECK((k.body[0].kind == NpuItem::Instr && k.body[0].op == isa::Op::SET_FLAG));
    CHECK((k.body[4].kind == NpuItem::Instr && k.body[4].op == isa::Op::WAIT_FLAG));
    std::ostringstream printed;
    printed << k;
    const std::string tile_in = "kiln_tile(core, kiln_addr(0), 8, 64, 8, 64, \"f.in\")",
                      tile_f = "kiln_tile(core, kiln_addr(1), 8, 64, 8, 64, \"f\")";
    // The loop-carried flags of the header of NpuSync.cpp: set before the
    // loop, waited on where the next iteration needs them, drained after it.
    CHECK(printed.str() == "// f.in: 8 x 64 f32 at UB+0\n"
                           "// f: 8 x 64 f32 at UB+2048\n"
                           "core.SET_FLAG(Pipe::V, Pipe::MTE2, 1);\n"
                           "core.SET_FLAG(Pipe::MTE3, Pipe::V, 1);\n"
                           "for (int32_t i = 0; i < 4; i++) {\n"
                           "    core.WAIT_FLAG(Pipe::V, Pipe::MTE2, 1);\n"
                           "    core.TLOAD(" + tile_in + ", in_gm.at(0, 64));\n"
                           "    core.SET_FLAG(Pipe::MTE2, Pipe::V, 0);\n"
                           "    core.WAIT_FLAG(Pipe::MTE2, Pipe::V, 0);\n"
                           "    core.WAIT_FLAG(Pipe::MTE3, Pipe::V, 1);\n"
                           "    core.TEXP(" + tile_f + ", " + tile_in + ");\n"
                           "    core.SET_FLAG(Pipe::V, Pipe::MTE3, 0);\n"
                           "    core.WAIT_FLAG(Pipe::V, Pipe::MTE3, 0);\n"
                           "    core.TSTORE(out_gm.at(0, 64), " + tile_f + ");\n"
                           "    core.SET_FLAG(Pipe::V, Pipe::MTE2, 1);\n"
                           "    core.SET_FLAG(Pipe::MTE3, Pipe::V, 1);\n"
                           "}\n"
                           "core.WAIT_FLAG(Pipe::V, Pipe::MTE2, 1);\n"
                           "core.WAIT_FLAG(Pipe::MTE3, Pipe::V, 1);\n");
}

TEST_CASE("sync insertion orders the k-slices of an L1 panel one by one (ring flags)", "[npu][passes][matmul]") {
    // A panel of 4 slices of 8 rows, loaded and moved to L0B one slice per
    // iteration of ko: the load of slice s waits only for the move of
    // slice s one run of the loop before (4 iterations), so the carried
    // flag is one event set 4 times before the loop; as whole buffers (no
    // slices) the load waits for the previous iteration's move.
    using namespace kiln::internal;
    namespace isa = kiln::npu;
    auto kernel = [](int slices) {
        NpuKernel k;
        NpuBuffer p, b0;
        p.name = "p", p.owner = b0.owner = "m", p.memory = isa::Mem::L1, p.rows = 32, p.cols = 64;
        b0.name = "b0", b0.memory = isa::Mem::L0B, b0.rows = 8, b0.cols = 64;
        k.buffers = {p, b0};
        auto instr = [&](isa::Op op, isa::Pipe pipe, std::vector<NpuArg> args, std::vector<int> reads,
                         std::vector<int> writes) {
            NpuItem i;
            i.kind = NpuItem::Instr;
            i.op = op, i.pipe = pipe, i.args = std::move(args), i.reads = std::move(reads), i.writes = std::move(writes);
            i.slices = slices, i.slice_var = "ko";
            return i;
        };
        NpuArg slice{0, 8, 64, 0, ""}, l0b{1, 8, 64, 0, ""}, gm{-1, 0, 0, 0, "b_gm.at(ko * 512, 64)"};
        slice.row0_code = "ko * 8";
        NpuItem loop;
        loop.kind = NpuItem::Loop;
        loop.text = "for (int32_t ko = 0; ko < 4; ko++)";
        loop.var = "ko";
        loop.body = {instr(isa::Op::TLOAD, isa::Pipe::MTE2, {slice, gm}, {}, {0}),
                     instr(isa::Op::TMOV, isa::Pipe::MTE1, {l0b, slice}, {0}, {1})};
        k.body = {loop};
        std::ostringstream printed;
        printed << npu_insert_sync(npu_place_buffers(std::move(k)));
        return printed.str();
    };
    const std::string set = "core.SET_FLAG(Pipe::MTE1, Pipe::MTE2, 1);\n", wait = "core.WAIT_FLAG(Pipe::MTE1, Pipe::MTE2, 1);\n",
                      load = "    core.TLOAD(kiln_tile(core, Mem::L1, kiln_addr(0) + (uint32_t)(ko * 8) * 256u, 8, 64, 8, 64, "
                             "\"p\"), b_gm.at(ko * 512, 64));\n",
                      move = "    core.TMOV(kiln_tile(core, Mem::L0B, kiln_addr(1), 8, 64, 8, 64, \"b0\"), kiln_tile(core, "
                             "Mem::L1, kiln_addr(0) + (uint32_t)(ko * 8) * 256u, 8, 64, 8, 64, \"p\"));\n";
    const std::string body = "for (int32_t ko = 0; ko < 4; ko++) {\n    " + wait + load +
                             "    core.SET_FLAG(Pipe::MTE2, Pipe::MTE1, 0);\n    core.WAIT_FLAG(Pipe::MTE2, Pipe::MTE1, 0);\n" +
                             move + "    " + set + "}\n";
    const std::string ring = kernel(4), whole = kernel(0);
    INFO(ring);
    CHECK(ring.find(set + set + set + set + body + wait + wait + wait + wait) != std::string::npos);
    INFO(whole);
    CHECK(whole.find(set + body + wait) != std::string::npos);
    CHECK(whole.find(set + set) == std::string::npos);
}

TEST_CASE("NPU legality errors of bounds, loop levels, reads and matrix operands", "[npu][codegen][error]") {
    auto source = [](Func f, const char *target = "npu") {
        return Pipeline(f).compile_to_cpp_source("bad", Target(target));
    };
    {
        ImageParam in(Float(32), 2, "in"), len(Int(32), 1, "len");  // a row sum over a length read from a buffer
        Var x("x"), y("y"), yo("yo"), yi("yi");
        RDom r(0, len(0), "r");
        Func f("f"), out("out");
        f(y) = 0.0f;
        f(y) += in(clamp(r, 0, W - 1), y);
        out(x, y) = in(x, y) * f(y);
        out.bound(x, 0, W).split(y, yo, yi, 2);
        f.compute_at(out, yo);
        REQUIRE_COMPILE_ERROR(source(out), Contains("NPU target: Func f: ") && Contains("needs len(0), which has no "
                                                                                        "scalar code on the NPU's S pipe") &&
                                               Contains("give the Func's loops and RDoms bounds that are constants "
                                                        "or Params"));
    }
    {
        Chain c;  // an update of one point
        Func out("out");
        out(c.x, c.y) = c.input(c.x, c.y) * 2.0f;
        out(0, 0) = 0.0f;
        out.tile(c.x, c.y, c.xo, c.yo, c.xi, c.yi, 64, 8);
        REQUIRE_COMPILE_ERROR(source(out), Contains("NPU target: Func out is computed outside a loop (a Func of no "
                                                    "dimensions, or an update of one point such as out(0, 0) = ...)") &&
                                               Contains("so define and update out over one or two dimensions"));
        Func scalar_out("scalar_out");  // a Func of no dimensions
        scalar_out() = c.input(0, 0) * 2.0f;
        REQUIRE_COMPILE_ERROR(source(scalar_out), Contains("NPU target: Func scalar_out is computed outside a loop"));
    }
    {
        LayerNorm l;  // m (one value per row) reads g (one value per column) at a point
        Func g("g"), m("m"), out("out");
        g(l.x) = l.gamma(l.x) * 2.0f;
        m(l.y) = l.sum(l.y) + g(0);
        out(l.x, l.y) = l.input(l.x, l.y) * m(l.y) + g(l.x) + l.gamma(l.x);
        out.bound(l.x, 0, W).split(l.y, l.yo, l.yi, 2);
        for (Func *f : {&l.sum, &m, &g}) f->compute_at(out, l.yo);
        REQUIRE_COMPILE_ERROR(source(out), Contains("NPU target: Func m reads g along x (g is a row, one value per "
                                                    "column), but m's tile is 1-D along y") &&
                                               Contains("so read g in a 2-D tile or give this use its own Func "
                                                        "computed along y"));
    }
    {
        Chain c;  // an update of the output reads the output back
        Func out("out");
        out(c.x, c.y) = c.input(c.x, c.y) * 2.0f;
        out(c.x, c.y) = out(c.x, c.y) * out(c.x, c.y);
        out.bound(c.x, 0, W).bound(c.y, 0, H).tile(c.x, c.y, c.xo, c.yo, c.xi, c.yi, 64, 8);
        out.update().tile(c.x, c.y, c.xo, c.yo, c.xi, c.yi, 64, 8);
        REQUIRE_COMPILE_ERROR(source(out), Contains("NPU target: Func out reads out, the pipeline's output, while "
                                                    "computing it") &&
                                               Contains("compute the value in a Func of its own (compute_at in UB)"));
    }
    {
        Softmax s;  // row_sum's update split into two tiles of 2 rows in its 4-row buffer
        s.fused(4, false);
        Var yo2("yo2"), yi2("yi2");
        s.row_sum.update().split(s.y, yo2, yi2, 2);
        REQUIRE_COMPILE_ERROR(source(s.output), Contains("NPU target: Func row_sum is reduced into its UB buffer at "
                                                         "an offset of") &&
                                                    Contains("e.g. after a split of the update's loops") &&
                                                    Contains("do not split the update's pure loops and compute_at "
                                                             "row_sum at the loop of the tiles that read it"));
    }
    {
        Attention a;  // probs computed for two tiles of 16 rows, weighted per tile
        a.npu(16, false);
        a.output.bound(a.i, 0, Attention::S);
        Var ibo("ibo"), ibi("ibi");
        a.output.split(a.ib, ibo, ibi, 2);
        for (Func *f : {&a.scores, &a.row_max, &a.probs, &a.row_sum}) f->compute_at(a.output, ibo);
        a.weighted.compute_at(a.output, ibi);
        REQUIRE_COMPILE_ERROR(source(a.output), Contains("NPU target: Func weighted multiplies probs, which is in UB "
                                                         "as 32 x 128; the matrix unit takes a UB operand through L1 "
                                                         "whole, so compute probs at the loop of weighted's tiles "
                                                         "(compute_at), over exactly its 16 x 128 window"));
    }
    {
        Gemm g;  // a product of a product: the first stays in L0C
        Func m2("m2"), out("out");
        m2(g.x, g.y) = 0.0f;
        m2(g.x, g.y) += g.matmul(g.k, g.y) * g.B(g.x, g.k);
        out(g.x, g.y) = m2(g.x, g.y);
        out.bound(g.x, 0, Gemm::N).split(g.y, g.yo, g.yi, 32);
        g.matmul.compute_at(out, g.yo).store_in(MemoryType::L0C);
        m2.compute_at(out, g.yo).store_in(MemoryType::L0C);
        REQUIRE_COMPILE_ERROR(source(out), Contains("NPU target: Func m2 multiplies matmul, which is in L0C; the NPU "
                                                    "loads matrix operands from GM") &&
                                               Contains("so read matmul through a Func stored in UB (e.g. f(x, y) = "
                                                        "matmul(x, y), compute_at the same loop, store_in(UB)) or "
                                                        "compute_root() it"));
    }
}

TEST_CASE("NPU legality errors of tails, tile extents, reductions in GM and partial accumulators",
          "[npu][codegen][error]") {
    auto source = [](Func f) { return Pipeline(f).compile_to_cpp_source("bad", Target("npu")); };
    {
        Chain c;  // an update's tiles guarded at the image's edge
        Func out("out");
        out(c.x, c.y) = c.input(c.x, c.y) * 2.0f;
        out(c.x, c.y) = out(c.x, c.y) + 1.0f;
        out.tile(c.x, c.y, c.xo, c.yo, c.xi, c.yi, 64, 8);
        out.update().tile(c.x, c.y, c.xo, c.yo, c.xi, c.yi, 64, 8);
        REQUIRE_COMPILE_ERROR(source(out), Contains("NPU target: the loop nest has a condition (") &&
                                               Contains("from a GuardWithIf tail; use TailStrategy::ShiftInwards or "
                                                        "RoundUp, or tile sizes that divide the image"));
    }
    {
        ImageParam in(Float(32), 1, "in");  // a 1-D output over the whole, unsized image
        Var x("x");
        Func out("out");
        out(x) = in(x) * 2.0f;
        REQUIRE_COMPILE_ERROR(source(out), Contains("NPU target: Func out: loop out.s0.x of its tile has extent") &&
                                               Contains("so bound(x, 0, W) on out with W a constant") &&
                                               Contains("or split(x, xo, xi, 64) on out"));
    }
    {
        Gemm g;  // row sums of the product as the pipeline's output: a reduction in GM
        RDom r(0, Gemm::N, "r");
        Var yo("yo"), yi("yi");
        Func rs("rs");
        rs(g.y) = 0.0f;
        rs(g.y) += g.matmul(r, g.y);
        rs.bound(g.y, 0, Gemm::M);
        rs.update().split(g.y, yo, yi, 32);
        g.matmul.compute_at(rs, yo).store_in(MemoryType::L0C);
        REQUIRE_COMPILE_ERROR(source(rs), Contains("NPU target: Func rs is a reduction stored in GM; the NPU keeps "
                                                   "reductions in UB, so compute_at it inside the loop of its "
                                                   "consumer's tiles"));
    }
    {
        Attention a;  // weighted updated in two tiles of 8 rows of its 16-row accumulator
        a.npu(16, false);
        Var yo2("yo2"), yi2("yi2");
        a.weighted.update().split(a.i, yo2, yi2, 8);
        REQUIRE_COMPILE_ERROR(source(a.output), Contains("NPU target: Func weighted is updated in 8 x 64 tiles of its "
                                                         "L0C buffer of 16 x 64; a matrix update covers the whole "
                                                         "accumulator: compute_at it at the loop of its consumer's "
                                                         "tiles"));
    }
    {
        Chain c;  // an outer loop of the tiles unrolled
        c.fused(64, 8, false);
        c.output.bound(c.x, 0, W).bound(c.y, 0, H).unroll(c.yo);
        REQUIRE_COMPILE_ERROR(source(c.output), Contains("NPU target: loop output.s0.y.yo is unrolled; on the NPU the "
                                                         "innermost two loops of a stage become tile instructions, so "
                                                         "vectorize and unroll have no meaning there; remove the "
                                                         "unroll() or vectorize()"));
    }
    {
        Chain c;  // a float modulo has no vector instruction
        Func out("out");
        out(c.x, c.y) = c.input(c.x, c.y) % 2.0f;
        out.tile(c.x, c.y, c.xo, c.yo, c.xi, c.yi, 64, 8);
        REQUIRE_COMPILE_ERROR(source(out), Contains("NPU target: Func out: (input(out.s0.x, out.s0.y) % 2.000000f) has "
                                                    "no NPU vector instruction (the vector unit has +, -, *, /, min, "
                                                    "max, exp, log, sqrt, tanh, abs on float32 tiles)"));
    }
    {
        Chain c;  // a Tuple-valued output
        Func out("out");
        out(c.x, c.y) = Tuple(c.input(c.x, c.y), c.input(c.x, c.y) * 2.0f);
        out.tile(c.x, c.y, c.xo, c.yo, c.xi, c.yi, 64, 8);
        REQUIRE_COMPILE_ERROR(source(out), Contains("NPU target: Func out returns a Tuple; the NPU code generator "
                                                    "handles Funcs of one value only, so give each value its own Func"));
    }
    {
        Chain c;  // a loop of the tile made parallel
        c.fused(64, 8, false);
        c.output.parallel(c.yi);
        REQUIRE_COMPILE_ERROR(source(c.output), Contains("NPU target: Func output: loop output.s0.y.yi forms its tile "
                                                         "and must stay serial (no vectorize, unroll or parallel "
                                                         "there)"));
    }
    {
        ImageParam A(Float(32), 2, "A"), B(Float(32), 2, "B");  // a matrix update over K given at run time
        Param<int> kk("kk");
        Var x("x"), y("y"), yo("yo"), yi("yi");
        RDom k(0, kk, "k");
        Func matmul("matmul"), out("out");
        matmul(x, y) = 0.0f;
        matmul(x, y) += A(k, y) * B(x, k);
        out(x, y) = matmul(x, y) * 2.0f;
        out.bound(x, 0, 128).split(y, yo, yi, 32);
        matmul.compute_at(out, yo).store_in(MemoryType::L0C);
        REQUIRE_COMPILE_ERROR(source(out), Contains("NPU target: Func matmul: the matrix update's loops matmul.s1.y, "
                                                    "matmul.s1.x and matmul.s1.k.x have extents 32, 128 and kk; "
                                                    "TMATMUL has a constant shape, so tile C by constants and give "
                                                    "the reduction a constant extent"));
    }
    {
        Chain c;  // an int16 buffer in the kernel's signature
        c.fused(64, 8, false);
        Pipeline p(c.output);
        std::vector<Argument> args = p.infer_arguments();
        args.insert(args.begin(), Argument{"extra", true, Int(16), 2});
        REQUIRE_COMPILE_ERROR(p.compile_to_cpp_source("bad", args, Target("npu")),
                              Contains("NPU target: buffer argument extra is a 2-D int16 buffer; the NPU code "
                                       "generator handles 1-D to 4-D float32, float16, bfloat16, int8 and int32 "
                                       "buffers (tiles over dimensions 0 and 1, loops over the others), so convert "
                                       "it on the host or leave it out of the NPU kernel's arguments"));
    }
}

namespace {

// A row reduction over a 2-D RDom: s(y) = 0 (or -inf); s(y) op= e(r.x, r.y, y),
// one RVar of the row's extent W and one of extent 2, consumed by
// out(x, y) = input(x, y) * s(y) in tiles of 2 whole rows. `order` is the
// update's loop order, innermost first ("" keeps the default).
struct Reduce2D {
    ImageParam input{Float(32), 2, "input"};
    Var x{"x"}, y{"y"}, yo{"yo"}, yi{"yi"};
    Func s{"s"}, out{"out"};
    RDom r;
    Reduce2D(bool sum, bool row_first, const std::string &order, int extra_extent = 2)
        : r(row_first ? RDom(0, W, 0, extra_extent, "r") : RDom(0, extra_extent, 0, W, "r")) {
        RVar row = row_first ? r.x : r.y, extra = row_first ? r.y : r.x;
        Expr e = input(row, y) * cast<float>(extra + 1);
        if (sum) {
            s(y) = 0.0f;
            s(y) += e;
        } else {
            s(y) = type_min(Float(32));
            s(y) = max(s(y), e);
        }
        out(x, y) = input(x, y) * s(y);
        out.bound(x, 0, W).split(y, yo, yi, 2);
        s.compute_at(out, yo);
        if (order == "y_middle") s.update().reorder(r.x, y, r.y);
        if (order == "y_inner") s.update().reorder(y, r.x, r.y);
    }
};

}  // namespace

TEST_CASE("reductions over a 2-D RDom: the NPU output equals the host's or the compile is refused, never a "
          "wrong result",
          "[npu][codegen][reduce][rdom2d]") {
    Buffer<float, 2> in = make_input();
    for (bool sum : {true, false})
        for (bool row_first : {true, false})
            for (std::string order : {"", "y_middle", "y_inner"}) {
                Reduce2D p(sum, row_first, order);
                INFO((sum ? "sum" : "max") << (row_first ? " r.x of extent W" : " r.y of extent W") << " order "
                                           << order);
                Buffer<float, 2> host(W, H), npu(W, H);
                p.input.set(in);
                p.out.realize(host);
                bool refused = false;
                try {
                    Pipeline(p.out).compile_to_cpp_source("r2d", Target("npu"));
                } catch (const CompileError &e) {
                    refused = true;
                    // y innermost makes s a row of the tile, which is refused first.
                    if (order != "y_inner")
                        CHECK_THAT(e.what(), Contains("NPU target: Func s reduces over the 2-D RDom r (") &&
                                                 Contains("does not accumulate across the RDom's other variables"));
                    // The row RVar inside y inside the other RVar: before the check, a
                    // TROWSUM / TROWMAX that overwrote s on each iteration of r.y.
                    if (row_first && order == "y_middle")
                        CHECK_THAT(e.what(), Contains(std::string("NPU target: Func s reduces over the 2-D RDom r "
                                                                  "(r.x of extent 1024, r.y of extent 2) with ") +
                                                      (sum ? "TROWSUM / TCOLSUM" : "TROWMAX / TCOLMAX") +
                                                      ", which covers only its loops s.s1.y and s.s1.r.x in one "
                                                      "instruction and does not accumulate across the RDom's other "
                                                      "variables, so the NPU would not compute the host's result; "
                                                      "reduce over a 1-D RDom (e.g. one Func per value of the other "
                                                      "variable, combined by a pure Func), or compute s on the host"));
                }
                if (refused) continue;
                json rep = run_npu(Pipeline(p.out), in, npu, "r2d");
                check_same(host, npu);
                CHECK(rep["race_count"] == 0);
            }
    for (bool sum : {true, false}) {  // an RVar of extent 1 is no second reduction: TROWSUM / TROWMAX as usual
        Reduce2D p(sum, true, "", 1);
        Buffer<float, 2> host(W, H), npu(W, H);
        p.input.set(in);
        p.out.realize(host);
        json rep = run_npu(Pipeline(p.out), in, npu, "r2d_unit");
        check_same(host, npu);
        CHECK(rep["race_count"] == 0);
        CHECK(rep["instructions_by_op"][sum ? "TROWSUM" : "TROWMAX"] == H / 2);
    }
}

TEST_CASE("a matrix update over a 2-D RDom is refused, not accumulated wrongly", "[npu][codegen][matmul][rdom2d]") {
    Gemm g;
    RDom k2(0, Gemm::K / 2, 0, 2, "k2");
    Func mm("mm"), out("out");
    Expr kk = k2.x + k2.y * (Gemm::K / 2);
    mm(g.x, g.y) = 0.0f;
    mm(g.x, g.y) += g.A(kk, g.y) * g.B(g.x, kk);
    out(g.x, g.y) = mm(g.x, g.y) * 2.0f;
    out.bound(g.x, 0, Gemm::N).split(g.y, g.yo, g.yi, 32);
    mm.compute_at(out, g.yo).store_in(MemoryType::L0C);
    mm.update().reorder(k2.x, g.x, g.y, k2.y);
    REQUIRE_COMPILE_ERROR(Pipeline(out).compile_to_cpp_source("bad", Target("npu")),
                          Contains("NPU target: Func mm reduces over the 2-D RDom k2 (k2.x of extent 64, k2.y of "
                                   "extent 2) with TMATMUL, which covers only its loops mm.s1.y, mm.s1.x and "
                                   "mm.s1.k2.x in one instruction and does not accumulate across the RDom's other "
                                   "variables"));
}

TEST_CASE("a matrix update with a split K accumulates its k-slices in L0C, equal to the host",
          "[npu][codegen][matmul][splitk]") {
    // split(k, ko, ki, 32) with ko around the update's other loops: a
    // TMATMUL for the first slice, TMATMUL_ACC for the others, in increasing
    // k (the host's order, so the f32 sums are bitwise the host's). A's and
    // B's k-slices are loaded per slice, single- and double-buffered; the
    // second case reads the product in a loop beside the slices' (out's
    // update over `pass`), which the sync inserter orders as a nested loop.
    using G = Gemm;
    Gemm::Operands ops;
    Buffer<float, 2> &a = ops.a, &b = ops.b, host(G::N, G::M), npu(G::N, G::M);
    Buffer<float, 1> &bias = ops.bias;
    const int slices = G::K / 32, tiles = G::M / 32;
    for (int db = 0; db < 2; db++) {
        Gemm g;
        g.set(ops);
        g.output.realize(host);
        g.npu(32, db == 1);
        RVar ko("ko"), ki("ki");
        g.matmul.update().split(g.k, ko, ki, 32).reorder(ki, g.x, g.y, ko);
        json r = run_npu_args(Pipeline(g.output), {{"A", a}, {"B", b}, {"bias", bias}, {"output", npu}},
                              db ? "gemm_splitk_db" : "gemm_splitk_sb");
        CHECK(Gemm::mismatches(host, npu) == 0);
        CHECK(r["race_count"] == 0);
        CHECK(r["instructions_by_op"]["TMATMUL"] == tiles);
        CHECK(r["instructions_by_op"]["TMATMUL_ACC"] == tiles * (slices - 1));
        // A once; B's slices move with ko, so each tile loads all of B; bias once, before the loop.
        CHECK(r["gm_read_bytes"] == 4 * (G::M * G::K + tiles * G::K * G::N + G::N));
    }
    {
        Gemm g;  // the product read in a loop (out's update over pass) beside the k-slices' loop
        RVar ko("ko"), ki("ki");
        RDom pass(0, 2, "pass");
        Var yo("yo"), yi("yi");
        Func out("out");
        out(g.x, g.y) = 0.0f;
        out(g.x, g.y) = g.matmul(g.x, g.y) * 2.0f + cast<float>(pass);
        g.set(ops);
        out.realize(host);
        out.bound(g.x, 0, Gemm::N).bound(g.y, 0, Gemm::M).split(g.y, yo, yi, 32);
        out.update().split(g.y, yo, yi, 32).reorder(g.x, yi, pass, yo);
        g.matmul.compute_at(out, yo).store_in(MemoryType::L0C);
        g.matmul.update().split(g.k.x, ko, ki, 64).reorder(ki, g.x, g.y, ko);
        json r = run_npu_args(Pipeline(out), {{"A", a}, {"B", b}, {"out", npu}}, "gemm_splitk_pass");
        CHECK(Gemm::mismatches(host, npu) == 0);
        CHECK(r["race_count"] == 0);
        CHECK(r["instructions_by_op"]["TMATMUL_ACC"] == tiles);
    }
}

TEST_CASE("a split K's slice loop among the TMATMUL's loops is refused, saying where it goes",
          "[npu][codegen][matmul][splitk][error]") {
    Gemm g;
    g.npu(32, false);
    RVar ko("ko"), ki("ki");
    g.matmul.update().split(g.k, ko, ki, 64).reorder(ki, g.x, ko, g.y);
    REQUIRE_COMPILE_ERROR(Pipeline(g.output).compile_to_cpp_source("bad", Target("npu")),
                          Contains("NPU target: Func matmul: the matrix update's RDom variable k.x is split into "
                                   "loops matmul.s1.k.x.ko and matmul.s1.k.x.ki, and both are among the three "
                                   "innermost loops (matmul.s1.k.x.ko, matmul.s1.x, matmul.s1.k.x.ki), which form "
                                   "one TMATMUL; the k-slice loop (the outer part of the split) must be directly "
                                   "around the update's other loops, outermost: reorder(ki, x, y, ko)"));
}

TEST_CASE("a row reduction split with its part loop outside the rows is refused, not overwritten per part", "[npu][codegen][reduce][rdom2d]") {
    for (bool sum : {false, true}) {
        Softmax s;
        s.fused(2, false);
        Func &f = sum ? s.row_sum : s.row_max;
        RVar ro("ro"), ri("ri");
        f.update().split(s.r.x, ro, ri, W / 2);  // the part loop outside the rows' loop, not around the tile
        REQUIRE_COMPILE_ERROR(Pipeline(s.output).compile_to_cpp_source("bad", Target("npu")),
                              Contains(std::string("NPU target: Func ") + f.name() + ": the row reduction's "
                                       "reduction loop " + f.name() + ".s1.r.x.ri has extent 512 but its RDom "
                                       "variable r.x has extent 1024 (the reduction is split); one " +
                                       (sum ? "TROWSUM" : "TROWMAX") + " covers the whole reduction and does not "
                                       "accumulate across a loop around it, so the NPU would not compute the host's "
                                       "result; do not split the row reduction's RVar (tile only the loops of the "
                                       "Funcs that read it, or split it with the chunk loop directly around the "
                                       "reduction's tile: split(r.x, ro, ri, 2048) reorder(ri, y, ro))"));
    }
}

TEST_CASE("tile instructions in a loop beside other tile instructions get their flags, equal to the host",
          "[npu][codegen][sync]") {
    // out's update loops over pass inside yo, beside st's tiles: the sync
    // inserter orders the nested loop as one item of yo's body (its reads
    // of st wait for st's tile before the loop) and its own iterations by
    // their own flags; the simulator runs with races as errors.
    ImageParam input{Float(32), 2, "input"};
    Var x("x"), y("y"), yo("yo"), yi("yi");
    RDom pass(0, 2, "pass");
    Func st("st"), out("out");
    st(x, y) = exp(input(x, y));
    out(x, y) = 0.0f;
    out(x, y) = st(x, y) * 2.0f + cast<float>(pass);
    out.bound(x, 0, W).bound(y, 0, H).split(y, yo, yi, 2);
    out.update().split(y, yo, yi, 2).reorder(x, yi, pass, yo);
    st.compute_at(out, yo);
    Buffer<float, 2> in = make_input(), host(W, H), npu(W, H);
    input.set(in);
    out.realize(host);
    json r = run_npu(Pipeline(out), in, npu, "nested_pass");
    check_same(host, npu);
    CHECK(r["race_count"] == 0);
}
