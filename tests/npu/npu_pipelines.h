// The pipelines and harness the NPU code-generator tests share: the
// softplus chain, softmax and layernorm as the generators define them (over
// rows of a constant width W), and runners that compile a pipeline for the
// NPU target, run it on the simulator and return its report.
#ifndef KILN_TESTS_NPU_PIPELINES_H
#define KILN_TESTS_NPU_PIPELINES_H

#include <catch2/catch.hpp>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <limits>
#include <map>
#include <string>

#include <kiln/kiln.h>
#include <nlohmann/json.hpp>

#include "driver/JIT.h"
#include "npu_machine.h"

namespace npu_pipelines {

using namespace kiln;
using nlohmann::json;

constexpr int W = 1024, H = 128;

// The softplus elementwise chain of generators/elementwise_chain.cpp.
struct Chain {
    ImageParam input{Float(32), 2, "input"};
    Var x{"x"}, y{"y"}, xo{"xo"}, yo{"yo"}, xi{"xi"}, yi{"yi"};
    Func stage1{"stage1"}, stage2{"stage2"}, output{"output"};
    Chain() {
        stage1(x, y) = exp(input(x, y));
        stage2(x, y) = stage1(x, y) + 1.0f;
        output(x, y) = log(stage2(x, y));
    }
    void fused(int tw, int th, bool double_buffer) {
        output.tile(x, y, xo, yo, xi, yi, tw, th);
        stage1.compute_at(output, xo);
        stage2.compute_at(output, xo);
        if (double_buffer) {
            stage1.double_buffer();
            output.double_buffer();
        }
    }
};

inline Buffer<float, 2> make_input() {
    Buffer<float, 2> in(W, H);
    for (int j = 0; j < H; j++)
        for (int i = 0; i < W; i++) in(i, j) = std::sin(0.01f * i) + 0.02f * j;
    return in;
}

// Runs `p` on the NPU target; returns the simulator's report.
inline json run_npu(const Pipeline &p, Buffer<float, 2> &in, Buffer<float, 2> &out, const std::string &fn) {
    Target t("npu");
    std::vector<Argument> args = p.infer_arguments();
    auto m = internal::JITModule::compile(p.compile_to_cpp_source(fn, args, t), fn, t);
    void *argv[] = {in.raw_buffer(), out.raw_buffer()};
    m->run_or_throw(argv);
    auto report = (const char *(*)())m->symbol(fn + "_npu_report");
    REQUIRE(report);
    return json::parse(report());
}

inline void check_same(const Buffer<float, 2> &a, const Buffer<float, 2> &b) {
    int bad = 0;
    for (int j = 0; j < H; j++)
        for (int i = 0; i < W; i++) bad += a(i, j) != b(i, j);
    CHECK(bad == 0);
}

inline double roofline(const json &r) {
    double v = r["pipes"]["V"]["busy_cycles"].get<double>();
    double rd = r["gm_read_bytes"].get<double>() / 64, wr = r["gm_write_bytes"].get<double>() / 64;
    return std::max(v, std::max(rd, wr));
}

// The row-reduction pipelines of generators/softmax.cpp and
// generators/layernorm.cpp over rows of a constant width W (a tile holds a
// whole row, so TROWSUM adds it in the host's order).
struct Softmax {
    ImageParam input{Float(32), 2, "input"};
    Var x{"x"}, y{"y"}, yo{"yo"}, yi{"yi"};
    RDom r{0, W, "r"};
    Func row_max{"row_max"}, exps{"exps"}, row_sum{"row_sum"}, output{"output"};
    explicit Softmax(float sum_from = 0.0f) {
        row_max(y) = type_min(Float(32));
        row_max(y) = max(row_max(y), input(r, y));
        exps(x, y) = exp(input(x, y) - row_max(y));
        row_sum(y) = sum_from;
        row_sum(y) += exps(r, y);
        output(x, y) = exps(x, y) / row_sum(y);
    }
    // rows x W tiles of output; the statistics and exps per tile, in UB.
    void fused(int rows, bool double_buffer) {
        output.bound(x, 0, W).split(y, yo, yi, rows);
        for (Func *f : {&row_max, &exps, &row_sum}) f->compute_at(output, yo);
        if (double_buffer)
            for (Func *f : {&row_max, &exps, &row_sum, &output}) f->double_buffer();
    }
    // exps computed over the whole image first, through GM.
    void unfused(int rows) {
        output.bound(x, 0, W).split(y, yo, yi, rows);
        exps.compute_root().bound(x, 0, W).split(y, yo, yi, rows);
        row_max.compute_at(exps, yo);
        row_sum.compute_at(output, yo);
    }
};

struct LayerNorm {
    ImageParam input{Float(32), 2, "input"}, gamma{Float(32), 1, "gamma"}, beta{Float(32), 1, "beta"};
    Var x{"x"}, y{"y"}, yo{"yo"}, yi{"yi"};
    RDom r{0, W, "r"};
    Func sum{"sum"}, mean{"mean"}, sum_sq{"sum_sq"}, inv_std{"inv_std"}, normalized{"normalized"}, output{"output"};
    LayerNorm() {
        sum(y) = 0.0f;
        sum(y) += input(r, y);
        mean(y) = sum(y) / (float)W;
        Expr d = input(r, y) - mean(y);
        sum_sq(y) = 0.0f;
        sum_sq(y) += d * d;
        inv_std(y) = 1.0f / sqrt(sum_sq(y) / (float)W + 1e-5f);
        normalized(x, y) = (input(x, y) - mean(y)) * inv_std(y);
        output(x, y) = normalized(x, y) * gamma(x) + beta(x);
    }
    void fused(int rows, bool double_buffer) {
        output.bound(x, 0, W).split(y, yo, yi, rows);
        for (Func *f : {&sum, &mean, &sum_sq, &inv_std}) {
            f->compute_at(output, yo);
            if (double_buffer) f->double_buffer();
        }
        if (double_buffer) output.double_buffer();
    }
    void unfused(int rows) {
        output.bound(x, 0, W).split(y, yo, yi, rows);
        normalized.compute_root().bound(x, 0, W).split(y, yo, yi, rows);
        for (Func *f : {&sum, &mean, &sum_sq, &inv_std}) f->compute_at(normalized, yo);
    }
};

// The 3x3 box blur of generators/blur3x3.cpp.
struct Blur {
    ImageParam input{Float(32), 2, "input"};
    Var x{"x"}, y{"y"}, xo{"xo"}, yo{"yo"}, xi{"xi"}, yi{"yi"};
    Func clamped, blur_x{"blur_x"}, output{"output"};
    // Edges repeated, or the image padded with `exterior` when it is defined (constant_exterior).
    explicit Blur(Expr exterior = Expr()) {
        clamped = exterior.defined() ? BoundaryConditions::constant_exterior(input, exterior)
                                     : BoundaryConditions::repeat_edge(input);
        blur_x(x, y) = (clamped(x - 1, y) + clamped(x, y) + clamped(x + 1, y)) / 3;
        output(x, y) = (blur_x(x, y - 1) + blur_x(x, y) + blur_x(x, y + 1)) / 3;
    }
    // tw x th tiles of output; blur_x per tile over th + 2 rows, in UB.
    void npu(int tw, int th, bool double_buffer) {
        output.tile(x, y, xo, yo, xi, yi, tw, th);
        blur_x.compute_at(output, xo);
        if (double_buffer) {
            output.double_buffer();
            blur_x.double_buffer();
        }
    }
};

// The two-pass attention of generators/attention.cpp (dim=D seq=S): S = Q Kᵀ
// and O = P V on the matrix unit, the softmax on the vector unit between them.
struct Attention {
    static constexpr int D = 64, S = 128;
    ImageParam Q{Float(32), 2, "Q"}, K{Float(32), 2, "K"}, V{Float(32), 2, "V"};
    Var c{"c"}, i{"i"}, j{"j"}, r{"r"}, ib{"ib"}, ii{"ii"};
    RDom rd{0, D, "rd"}, rk{0, S, "rk"};
    Func key_t{"key_t"}, scores{"scores"}, row_max{"row_max"}, probs{"probs"}, row_sum{"row_sum"},
        weighted{"weighted"}, output{"output"};
    Attention() {
        key_t(j, r) = K(r, j);
        scores(j, i) = 0.0f;
        scores(j, i) += Q(rd, i) * key_t(j, rd);
        row_max(i) = std::numeric_limits<float>::lowest();
        row_max(i) = max(row_max(i), scores(rk, i));
        Expr inv_sqrt_d = 1.0f / sqrt(cast<float>(D));
        probs(j, i) = exp((scores(j, i) - row_max(i)) * inv_sqrt_d);
        row_sum(i) = 0.0f;
        row_sum(i) += probs(rk, i);
        weighted(c, i) = 0.0f;
        weighted(c, i) += probs(rk, i) * V(c, rk);
        output(c, i) = weighted(c, i) / row_sum(i);
    }
    // rows query rows per tile: S and O accumulate in L0C, the softmax in UB.
    void npu(int rows, bool double_buffer, bool pipeline = false) {
        output.bound(c, 0, D).split(i, ib, ii, rows);
        for (Func *f : {&scores, &row_max, &probs, &row_sum, &weighted}) {
            f->compute_at(output, ib);
            if (double_buffer) f->double_buffer();
        }
        scores.store_in(MemoryType::L0C);
        weighted.store_in(MemoryType::L0C);
        if (double_buffer) output.double_buffer();
        // schedules/attention/npu.sched: P V and the division one tile behind S and the softmax.
        if (pipeline) weighted.software_pipeline();
    }
    // Queries q (D x any count), keys k and values v (D x S).
    static void fill(Buffer<float, 2> &q, Buffer<float, 2> &k, Buffer<float, 2> &v) {
        for (int t = 0; t < q.dim(1).extent(); t++)
            for (int f = 0; f < D; f++) q(f, t) = std::sin(0.31f * f + 0.17f * t);
        for (int t = 0; t < S; t++)
            for (int f = 0; f < D; f++) {
                k(f, t) = std::cos(0.23f * f - 0.11f * t);
                v(f, t) = 0.5f * std::sin(0.05f * f * t + 0.3f);
            }
    }
};

inline Buffer<float, 1> make_row(float scale, float offset) {
    Buffer<float, 1> b(W);
    for (int i = 0; i < W; i++) b(i) = offset + scale * std::cos(0.03f * i);
    return b;
}

// Runs `p` on the NPU target with each buffer argument looked up by name.
inline json run_npu_args(const Pipeline &p, const std::map<std::string, Halide::Runtime::Buffer<>> &buffers,
                  const std::string &fn) {
    std::vector<void *> argv;
    for (const Argument &a : p.infer_arguments()) argv.push_back((void *)buffers.at(a.name).raw_buffer());
    Target t("npu");
    auto m = internal::JITModule::compile(p.compile_to_cpp_source(fn, p.infer_arguments(), t), fn, t);
    m->run_or_throw(argv.data());
    auto report = (const char *(*)())m->symbol(fn + "_npu_report");
    REQUIRE(report);
    return json::parse(report());
}

// The default machine with `from` replaced by `to` in its file, as
// $KILN_NPU_MACHINE (the passes and the simulator read it) while the
// object lives.
struct EditedMachine {
    const std::string path;
    EditedMachine(const std::string &from, const std::string &to, const std::string &file) : path(file) {
        std::string text = npu::default_machine_json();
        const size_t at = text.find(from);
        REQUIRE(at != std::string::npos);
        text.replace(at, from.size(), to);
        std::ofstream(path) << text;
        setenv("KILN_NPU_MACHINE", path.c_str(), 1);
    }
    ~EditedMachine() {
        unsetenv("KILN_NPU_MACHINE");
        std::remove(path.c_str());
    }
};

// The default machine with one core.
struct OneCoreMachine : EditedMachine {
    OneCoreMachine() : EditedMachine("\"cores\": 8,", "\"cores\": 1,", "npu_one_core_machine.json") {}
};

// The default machine without its shared GM bandwidth: every core's pipes
// reach GM at their own rates.
struct UnsharedGmMachine : EditedMachine {
    UnsharedGmMachine() : EditedMachine("\"gm\": {", "\"gm_left_out\": {", "npu_unshared_gm_machine.json") {}
};

}  // namespace npu_pipelines

#endif
