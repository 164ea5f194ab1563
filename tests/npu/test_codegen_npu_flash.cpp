// Flash attention on the NPU (issue 20): attention's online algorithm in
// generators/attention.cpp's `algorithm=online_planes` form, with the key
// block kb the outermost dimension of every per-block Func. At one block
// (the state's block loop) scores(jj, i, kb) and block_pv(c, i, kb) are
// planes accumulated in L0C by TMATMUL, probs(jj, i, kb) a tile in UB, and
// block_max(i, kb), block_sum(i, kb) columns of the query rows (planar
// Funcs: TROWMAX, TROWSUM); the state (m, l, acc) merges them per block as
// a Tuple of 2-D tiles whose m and l, which do not vary along x, are columns.
// The arithmetic and its order are the host's, so the output is the host's
// bit for bit.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
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

constexpr int D = 64, S = 256, B = 64, R = 32;  // features, tokens, keys per block, query rows per tile

// generators/attention.cpp's online_planes with dim=D seq=S key_block=B (every block whole). The
// refusals: `block_first` indexes the block maximum by block first, block_max(kb, i), as
// algorithm=online does; `keys` not a multiple of B clamps the last block's keys to the last one.
struct Flash {
    ImageParam Q{Float(32), 2, "Q"}, K{Float(32), 2, "K"}, V{Float(32), 2, "V"};
    Var c{"c"}, i{"i"}, j{"j"}, r{"r"}, jj{"jj"}, kb{"kb"}, ib{"ib"}, ii{"ii"}, kbo{"kbo"}, kbi{"kbi"};
    RDom rd{0, D, "rd"}, rj{0, B, "rj"}, rb;
    Func key_t{"key_t"}, scores{"scores"}, block_max{"block_max"}, probs{"probs"}, block_sum{"block_sum"},
        block_pv{"block_pv"}, state{"state"}, output{"output"};
    explicit Flash(bool block_first = false, int keys = S) : rb(0, (keys + B - 1) / B, "rb") {
        const Expr lowest = std::numeric_limits<float>::lowest(), alpha = 1.0f / sqrt(cast<float>(D));
        auto bmax = [&](Expr i, Expr kb) { return block_first ? block_max(kb, i) : block_max(i, kb); };
        key_t(j, r) = K(r, j);
        scores(jj, i, kb) = 0.0f;
        scores(jj, i, kb) += Q(rd, i) * key_t(keys % B ? min(kb * B + jj, keys - 1) : kb * B + jj, rd);
        bmax(i, kb) = lowest;
        bmax(i, kb) = max(bmax(i, kb), scores(rj, i, kb));
        probs(jj, i, kb) = exp((scores(jj, i, kb) - bmax(i, kb)) * alpha);
        block_sum(i, kb) = 0.0f;
        block_sum(i, kb) += probs(rj, i, kb);
        block_pv(c, i, kb) = 0.0f;
        block_pv(c, i, kb) += probs(rj, i, kb) * V(c, kb * B + rj);
        state(c, i) = Tuple(lowest, 0.0f, 0.0f);
        Expr m = state(c, i)[0], l = state(c, i)[1], acc = state(c, i)[2], bm = bmax(i, rb);
        Expr m2 = max(m, bm), a = exp((m - m2) * alpha), b = exp((bm - m2) * alpha);
        state(c, i) = Tuple(m2, l * a + block_sum(i, rb) * b, acc * a + block_pv(c, i, rb) * b);
        output(c, i) = state(c, i)[2] / state(c, i)[1];
    }
    // Every stage at the root: the host's oracle.
    void host() {
        for (Func *f : {&key_t, &scores, &block_max, &probs, &block_sum, &block_pv, &state}) f->compute_root();
    }
    // schedules/attention/online_planes/npu.sched in tiles of R = 32 query rows (it has 64): per tile
    // the state and Q's rows (in L1), and per block (kbo, rb split by 1 so that the loop has a name)
    // the block's S, statistics, P and P V.
    void npu(bool double_buffer, bool pipeline = false) {
        output.bound(c, 0, D).split(i, ib, ii, R);
        state.compute_at(output, ib);
        state.update().split(rb, kbo, kbi, 1).reorder(c, i, kbi, kbo);
        for (Func *f : {&scores, &block_max, &probs, &block_sum, &block_pv}) f->compute_at(state, kbo);
        Q.in(scores).compute_at(output, ib).store_in(MemoryType::L1);
        scores.store_in(MemoryType::L0C);
        block_pv.store_in(MemoryType::L0C);
        if (double_buffer) {
            for (Func *f : {&output, &scores, &block_max, &probs, &block_sum, &block_pv}) f->double_buffer();
            Q.in(scores).double_buffer();
        }
        // Software pipelining: block_pv and the merge run one block behind S, the statistics and P.
        if (pipeline) block_pv.software_pipeline();
    }
};

void fill(Buffer<float, 2> &q, Buffer<float, 2> &k, Buffer<float, 2> &v) {
    for (int t = 0; t < S; t++)
        for (int f = 0; f < D; f++) {
            // Scores of a few units (after the 1/√d scale) whose row maximum moves from block to block.
            q(f, t) = 2.0f * std::sin(0.31f * f + 0.17f * t);
            k(f, t) = 2.0f * std::cos(0.23f * f - 0.11f * t) + std::sin(0.05f * t);
            v(f, t) = 0.5f * std::sin(0.05f * f * t + 0.3f);
        }
}

// The host's output (every stage at the root), the NPU's oracle.
void host_output(Buffer<float, 2> &q, Buffer<float, 2> &k, Buffer<float, 2> &v, Buffer<float, 2> &out) {
    Flash f;
    f.host();
    f.Q.set(q);
    f.K.set(k);
    f.V.set(v);
    f.output.realize(out);
}

}  // namespace

TEST_CASE("flash attention (online, key blocks as planes) on the NPU: equal to the host bit for bit",
          "[npu][codegen][attention][online]") {
    Buffer<float, 2> q(D, S), k(D, S), v(D, S), host(D, S);
    fill(q, k, v);
    host_output(q, k, v, host);
    // A float64 reference, the softmax over all keys at once; the host within 1e-5 of it relative to
    // max(1, |output|).
    double worst = 0;
    for (int t = 0; t < S; t++) {
        std::vector<double> s(S);
        double m = -INFINITY;
        for (int key = 0; key < S; key++) {
            double sum = 0;
            for (int f = 0; f < D; f++) sum += (double)q(f, t) * k(f, key);
            s[key] = sum / std::sqrt((double)D);
            m = std::max(m, s[key]);
        }
        double l = 0;
        for (double &x : s) l += (x = std::exp(x - m));
        for (int f = 0; f < D; f++) {
            double o = 0;
            for (int key = 0; key < S; key++) o += s[key] * v(f, key);
            o /= l;
            worst = std::max(worst, std::abs(host(f, t) - o) / std::max(1.0, std::abs(o)));
        }
    }
    INFO("host against float64: " << worst);
    CHECK(worst < 1e-5);
    const int tiles = S / R, blocks = S / B;
    json r[2];
    for (int db = 0; db < 2; db++) {
        Flash f;
        f.npu(db == 1);
        Buffer<float, 2> npu(D, S);
        r[db] = run_npu_args(Pipeline(f.output), {{"Q", q}, {"K", k}, {"V", v}, {"output", npu}},
                             db ? "flash_db" : "flash_sb");
        CHECK(r[db]["race_count"] == 0);
        int bad = 0;
        for (int t = 0; t < S; t++)
            for (int c = 0; c < D; c++) bad += npu(c, t) != host(c, t);
        CHECK(bad == 0);
        // Per tile and block: S = Q Kᵀ and P V on the matrix unit, the block's maximum and sum as columns.
        CHECK(r[db]["instructions_by_op"]["TMATMUL"] == 2 * tiles * blocks);
        CHECK(r[db]["instructions_by_op"]["TROWMAX"] == tiles * blocks);
        CHECK(r[db]["instructions_by_op"]["TROWSUM"] == tiles * blocks);
        // m and l, which do not vary along the features c, are columns: merged by column ops, their
        // rescale factors applied to acc and P V by TROWEXPANDMUL, the output divided by TROWEXPANDDIV;
        // no tile of m (TROWEXPANDMAX) nor expanded statistic (TROWEXPAND).
        CHECK(r[db]["instructions_by_op"]["TROWEXPANDMUL"] == 2 * tiles * blocks);
        CHECK(r[db]["instructions_by_op"]["TROWEXPANDDIV"] == tiles);
        CHECK(!r[db]["instructions_by_op"].contains("TROWEXPANDMAX"));
        CHECK(!r[db]["instructions_by_op"].contains("TROWEXPAND"));
        CHECK(r[db]["dma_bytes"]["UB->L1"] == 4 * (uint64_t)S * S);  // P, UB -> L1 -> L0A, never GM
        // The output once; K and V once per tile of query rows, Q once (into L1, Q.in(scores)).
        CHECK(r[db]["gm_write_bytes"] == 4 * (uint64_t)D * S);
        CHECK(r[db]["gm_read_bytes"] == 4 * (uint64_t)D * S * (2 * tiles + 1));
        CHECK(r[db]["dma_bytes"]["L1->L0A"] == 4 * (uint64_t)D * S * blocks + 4 * (uint64_t)S * S);  // Q, P per block
        INFO(r[db].dump(1));
    }
    CHECK(r[1]["cycles"] < r[0]["cycles"]);
}

TEST_CASE("flash attention forms the NPU does not take are refused with the fix", "[npu][codegen][attention][errors]") {
    {
        // Statistics indexed by block first (algorithm=online's block_max(kb, i)): at the block loop the
        // Func's dimension 0 is fixed, not a coordinate of its tile.
        Flash f(true);
        f.npu(false);
        REQUIRE_COMPILE_ERROR(Pipeline(f.output).compile_to_cpp_source("flash_block_first", Target("npu")),
                              Contains("Func block_max reads block_max(") &&
                                  Contains("its coordinate 0 is fixed within the tile") &&
                                  Contains("make that index the last dimension (block_max(i, kb) rather than "
                                           "block_max(kb, i)"));
    }
    {
        // A partial last block: its keys clamped to the last key, a window clamped on one side.
        Flash f(false, S - 8);
        f.npu(false);
        REQUIRE_COMPILE_ERROR(Pipeline(f.output).compile_to_cpp_source("flash_partial", Target("npu")),
                              Contains("Func scores reads K(") &&
                                  Contains("its coordinate 1 is clamped on one side only") &&
                                  Contains("make the extent a multiple of the block"));
    }
}

TEST_CASE("flash attention software-pipelined on the NPU: block k + 1's S and P before block k's P V",
          "[npu][codegen][attention][online][software_pipeline]") {
    Buffer<float, 2> q(D, S), k(D, S), v(D, S), host(D, S);
    fill(q, k, v);
    host_output(q, k, v, host);
    const int tiles = S / R, blocks = S / B;
    json r[2];
    for (int sp = 0; sp < 2; sp++) {
        Flash f;
        f.npu(true, sp == 1);
        Buffer<float, 2> npu(D, S);
        r[sp] = run_npu_args(Pipeline(f.output), {{"Q", q}, {"K", k}, {"V", v}, {"output", npu}},
                             sp ? "flash_sp" : "flash_db2");
        CHECK(r[sp]["race_count"] == 0);
        int bad = 0;
        for (int t = 0; t < S; t++)
            for (int c = 0; c < D; c++) bad += npu(c, t) != host(c, t);
        CHECK(bad == 0);
        // The same instructions, in another order.
        CHECK(r[sp]["instructions_by_op"]["TMATMUL"] == 2 * tiles * blocks);
        CHECK(r[sp]["instructions_by_op"]["TROWMAX"] == tiles * blocks);
        CHECK(r[sp]["instructions_by_op"]["TEXP"] == r[0]["instructions_by_op"]["TEXP"]);
        CHECK(r[sp]["gm_read_bytes"] == 4 * (uint64_t)D * S * (2 * tiles + 1));
        INFO(r[sp].dump(1));
    }
    // The vector unit takes block k + 1's softmax while block k's P goes round the matrix unit.
    INFO("double-buffered " << r[0]["cycles"] << ", software-pipelined " << r[1]["cycles"]);
    CHECK(r[1]["cycles"].get<double>() < 0.95 * r[0]["cycles"].get<double>());
}

TEST_CASE("software pipelining: one loop of n + 1 trips, block k + 1's first stage before block k's second",
          "[npu][codegen][lowering][software_pipeline]") {
    Flash f;
    f.npu(true, true);
    const std::string src =
        Pipeline(f.output).compile_to_cpp_source("flash_order", Pipeline(f.output).infer_arguments(), Target("npu"));
    const std::string loop = "for (int32_t v_state_s1_rb_x_kbo_pipe = (int32_t)0; v_state_s1_rb_x_kbo_pipe < "
                             "(int32_t)0 + (int32_t)4 + 1; v_state_s1_rb_x_kbo_pipe++) {";
    const size_t tile = src.find("for (int32_t v_output_s0_i_ib"), at = src.find(loop),
                 end = src.find("core.TROWEXPANDDIV(");
    REQUIRE(tile != std::string::npos);
    REQUIRE(at != std::string::npos);
    REQUIRE(end != std::string::npos);
    auto find = [&](const std::string &what, size_t from, size_t to) {
        size_t p = src.find(what, from);
        return p < to ? p : std::string::npos;
    };
    auto count = [&](const std::string &what) {
        int n = 0;
        for (size_t p = src.find(what); p != std::string::npos; p = src.find(what, p + 1)) n++;
        return n;
    };
    // No block's instructions outside the loop: its first trip runs block 0's first stage alone, its last
    // the last block's second stage alone, so each per-block instruction is written once.
    CHECK(find("\"probs\")", tile, at) == std::string::npos);
    CHECK(find("\"block_pv", end, std::string::npos) == std::string::npos);
    CHECK(count("core.TROWMAX(") == 1);
    CHECK(count("core.TMATMUL(") == 2);
    // In the loop: block kbo_pipe's S, maximum, P and sum on the next copies, then block kbo_pipe - 1's
    // P -> L1, P V and the merge on this trip's copies, each stage's instructions guarded by its trips.
    const std::string a_on = "if (v_state_s1_rb_x_kbo_pipe < (int32_t)0 + (int32_t)4) ",
                      b_on = "if (v_state_s1_rb_x_kbo_pipe > (int32_t)0) ";
    const size_t next = find("const int32_t v_state_s1_rb_x_kbo = (v_state_s1_rb_x_kbo_pipe < (int32_t)0 + (int32_t)4 ? "
                             "v_state_s1_rb_x_kbo_pipe : v_state_s1_rb_x_kbo_pipe - 1);",
                             at, end);
    const size_t self = find("const int32_t v_state_s1_rb_x_kbo = (v_state_s1_rb_x_kbo_pipe > (int32_t)0 ? "
                             "v_state_s1_rb_x_kbo_pipe - 1 : v_state_s1_rb_x_kbo_pipe);",
                             at, end);
    REQUIRE(next != std::string::npos);
    REQUIRE(self != std::string::npos);
    CHECK(next < self);
    CHECK(find(a_on + "core.TEXP(kiln_tile(core, kiln_addr_ahead(", next, self) != std::string::npos);
    // Of block_pv's stage only the staging of V's block (GM -> L1 -> L0B, which reads nothing A computes) runs
    // in the first stage, for the next block; P's way to L0A and the product stay in the second.
    auto line_of = [&](const std::string &what, size_t from, size_t to) {
        const size_t p = find(what, from, to);
        return p == std::string::npos ? std::string() : src.substr(src.rfind('\n', p) + 1, p - src.rfind('\n', p) - 1);
    };
    CHECK(line_of("\"block_pv.b1\"), v_V_gm.at(", next, self)
              .find(a_on + "core.TLOAD(kiln_tile(core, Mem::L1, kiln_addr_ahead(") != std::string::npos);
    CHECK(line_of("\"block_pv.b0\"), kiln_tile(core, Mem::L1, kiln_addr_ahead(", next, self)
              .find(a_on + "core.TMOV(kiln_tile(core, Mem::L0B, kiln_addr_ahead(") != std::string::npos);
    CHECK(find("\"block_pv.a", next, self) == std::string::npos);
    CHECK(find("\"block_pv\")", next, self) == std::string::npos);
    CHECK(find("\"block_pv.b1\"), v_V_gm.at(", self, end) == std::string::npos);
    CHECK(find("core.TMOV(kiln_tile(core, Mem::L0B, ", self, end) == std::string::npos);
    CHECK(find(b_on + "core.TMOV(kiln_tile(core, Mem::L1, kiln_addr(", self, end) != std::string::npos);
    CHECK(find(b_on + "core.TMATMUL(kiln_tile(core, Mem::L0C, kiln_addr(", self, end) != std::string::npos);
    CHECK(find("\"probs\"), kiln_tile(", self, end) == std::string::npos);  // P is written in the first stage only
    // Every trip runs all the flags: no SET_FLAG or WAIT_FLAG is guarded.
    CHECK(count(") core.SET_FLAG(") + count(") core.WAIT_FLAG(") == 0);
    CHECK(count(a_on) + count(b_on) > 20);
}

namespace {

// The flags written directly in the tile loop's body (outside the block loop), by kind, their events left out.
std::map<std::string, int> tile_flags(const std::string &src) {
    const size_t tile = src.find("for (int32_t v_output_s0_i_ib");
    REQUIRE(tile != std::string::npos);
    const size_t line = src.rfind('\n', tile) + 1;
    const std::string indent(tile - line + 4, ' ');
    std::map<std::string, int> flags;
    for (size_t p = src.find("\n" + indent + "core.", tile); p != std::string::npos;
         p = src.find("\n" + indent + "core.", p + 1)) {
        const std::string text = src.substr(p + 1 + indent.size(), src.find('\n', p + 1) - p - 1 - indent.size());
        if (text.find("_FLAG(") != std::string::npos) flags[text.substr(0, text.rfind(','))]++;
    }
    return flags;
}

}  // namespace

TEST_CASE("software pipelining at 2 blocks per tile: the tile loop's flags are those of the loop as written",
          "[npu][codegen][attention][online][software_pipeline]") {
    // Keys of 2 blocks (the seq = 128 shape of docs/npu.md). Block 0's first stage and the last block's second
    // stage run in the block loop's own trips, so the block loop's flags carry from one tile to the next as
    // any loop's do, and the tile loop orders only what it touches itself: the same flags as without
    // software_pipeline(). (Peeled out of the loop, they were ordered by the tile loop's flags, which took
    // both copies of P for one and waited for the previous tile's output store: 13 % slower.)
    constexpr int keys = 2 * B;
    Buffer<float, 2> q(D, S), k(D, S), v(D, S), host(D, S);
    fill(q, k, v);
    {
        Flash h(false, keys);
        h.host();
        h.Q.set(q);
        h.K.set(k);
        h.V.set(v);
        h.output.realize(host);
    }
    std::string src[2];
    json r[2];
    for (int sp = 0; sp < 2; sp++) {
        Flash f(false, keys);
        f.npu(true, sp == 1);
        Pipeline p(f.output);
        src[sp] = p.compile_to_cpp_source(sp ? "flash2_sp" : "flash2_db", p.infer_arguments(), Target("npu"));
        Buffer<float, 2> npu(D, S);
        r[sp] = run_npu_args(p, {{"Q", q}, {"K", k}, {"V", v}, {"output", npu}}, sp ? "flash2_sp" : "flash2_db");
        CHECK(r[sp]["race_count"] == 0);
        int bad = 0;
        for (int t = 0; t < S; t++)
            for (int c = 0; c < D; c++) bad += npu(c, t) != host(c, t);
        CHECK(bad == 0);
        CHECK(r[sp]["instructions_by_op"]["TMATMUL"] == 2 * (S / R) * 2);
    }
    const std::map<std::string, int> plain = tile_flags(src[0]), pipelined = tile_flags(src[1]);
    CHECK(!plain.empty());
    CHECK(pipelined == plain);
    CHECK(src[1].find("v_state_s1_rb_x_kbo_pipe < (int32_t)0 + (int32_t)2 + 1;") != std::string::npos);
}

TEST_CASE("software_pipeline() misused is refused with the fix", "[npu][codegen][errors][software_pipeline]") {
    {
        // P crosses the stage boundary with one copy: block k + 1's P would overwrite block k's before P V reads it.
        Flash f;
        f.npu(false, true);
        for (Func *g : {&f.output, &f.scores, &f.block_max, &f.block_sum, &f.block_pv}) g->double_buffer();
        REQUIRE_COMPILE_ERROR(Pipeline(f.output).compile_to_cpp_source("flash_sp_single", Target("npu")),
                              Contains("Func block_pv is scheduled software_pipeline(), so probs (probs)") &&
                                  Contains("computed before block_pv in the loop v_state_s1_rb_x_kbo") &&
                                  Contains("add double_buffer() to probs"));
    }
    {
        // The first Func of the loop's body: no stage before it.
        Flash f;
        f.npu(true);
        f.scores.software_pipeline();
        REQUIRE_COMPILE_ERROR(Pipeline(f.output).compile_to_cpp_source("flash_sp_first", Target("npu")),
                              Contains("Func scores is scheduled software_pipeline(), but it is the first Func with "
                                       "instructions in the body of the loop v_state_s1_rb_x_kbo") &&
                                  Contains("put software_pipeline() on the Func that starts the second stage"));
    }
    {
        // Not computed in a loop of the kernel (inlined).
        Flash f;
        f.npu(true);
        f.key_t.software_pipeline();
        REQUIRE_COMPILE_ERROR(Pipeline(f.output).compile_to_cpp_source("flash_sp_inline", Target("npu")),
                              Contains("Func key_t is scheduled software_pipeline(), but it is not computed in a "
                                       "loop of the NPU kernel") &&
                                  Contains("compute_at(consumer, loop) it"));
    }
}
