// npu-figures: the tile-NPU figures of docs/npu.md, measured on the simulator.
//
//   ./build/bin/npu-figures [--json out.json] [--only gemm_bf16,gemm_int8]
//
// 1. The softplus elementwise chain (generators/elementwise_chain.cpp) through
//    the NPU code generator, fused (single- and double-buffered) and unfused:
//    GM bytes against the ideal (input read once, output written once) and
//    against the fusion model (ideal + sum of intermediate sizes x 2), cycles
//    against the roofline bound max(GM read / MTE2 rate, GM write / MTE3 rate,
//    vector busy cycles) of the stream generated and against the roofline of
//    the algorithm's ideal stream (codegen/NpuIdeal.h: the input and output
//    once, each value computed once with fused ops), per-pipe busy ratios.
// 2. softmax and layernorm (generators/, width=1024, 1024 x 128) under
//    schedules/<name>/npu.sched (8-row tiles), single- and double-buffered,
//    double-buffered with 2-row tiles, and with their 2-D intermediate
//    through GM: the same GM, roofline and busy figures, and UB's peak; and
//    over rows longer than UB (width=16384, 16384 x 64, npu_long.sched: the
//    row reductions chunk by chunk; softmax's online form under
//    online/npu_long.sched too).
// 3. GEMM + bias + ReLU through the code generator (generators/gemm.cpp,
//    depth=128, schedules/gemm/npu.sched, f32, 1024 x 128 x 128) and written
//    by hand against kiln_npu.h (f16 inputs, f32 accumulation, double-buffered
//    L1 panels): the matrix pipe's busy ratio.
// 4. blur3x3 and unsharp (schedules/<name>/npu.sched, 1024 x 128) and two-pass
//    attention (schedules/attention/npu.sched, dim=64 seq=128, 1024 queries):
//    GM bytes against the ideal, cycles against the roofline, busy ratios.
//    Flash attention (algorithm=online_planes, schedules/attention/
//    online_planes/npu.sched: single-buffered, double-buffered with and
//    without its software_pipeline()) beside it at seq=128 and alone at seq=4096,
//    where the two-pass form's row of S no longer fits (its error recorded).
// 5. bf16 (type=bfloat16): softmax and layernorm under npu.sched in the
//    tables of 2., and GEMM + bias + ReLU through the code generator at
//    1024 x 128 x 256 (16- and 32-row tiles), 512 x 512 x 512 (32 x 32 tiles,
//    and schedules/gemm/npu_512.sched) and 1024 x 1024 x 512: cycles
//    against the matrix unit's peak (M * N * K / 4096 MACs per cycle).
// 6. int8 GEMM + bias + ReLU + requantization (generators/gemm.cpp's
//    gemm_int8) under the same schedules and sizes as 5., and at 512^3 and
//    1024 x 1024 x 512 under schedules/gemm_int8/npu_512.sched: the product on the
//    matrix unit's int8 path, the epilogue on the fix pipe; cycles against
//    the int8 peak (M * N * K / 8192 MACs per cycle), GM bytes.
#include <algorithm>
#include <cstdio>
#include <fstream>
#include <functional>
#include <string>

#include <kiln/Float16.h>
#include <kiln/kiln.h>
#include <nlohmann/json.hpp>

#include "codegen/NpuIdeal.h"
#include "driver/JIT.h"
#include "kiln/Generator.h"
#include "kiln/ScheduleFile.h"
#include "kiln_npu.h"

using namespace kiln;
using nlohmann::json;

namespace {

constexpr int W = 1024, H = 128;

// The roofline of the algorithm's ideal instruction stream (codegen/NpuIdeal.h)
// on the default machine, for pipeline p over buffers of `sizes`.
json ideal_stream(const Pipeline &p, const std::map<std::string, std::vector<int>> &sizes) {
    internal::NpuIdealStream s = internal::npu_ideal_stream(p, sizes, npu::default_machine());
    return {{"roofline_cycles", s.roofline_cycles()}, {"read_cycles", s.read_cycles}, {"write_cycles", s.write_cycles},
            {"vector_cycles", s.vector_cycles}, {"matrix_cycles", s.matrix_cycles}};
}

// The cycles of report r against the ideal stream's roofline, into figures f.
void against_ideal(const json &r, const json &ideal, json &f) {
    f["ideal"] = ideal;
    f["ideal_roofline_cycles"] = ideal["roofline_cycles"];
    f["cycles_over_ideal_roofline"] = r["cycles"].get<double>() / ideal["roofline_cycles"].get<double>();
}

json run_chain(const char *label, int mode) {
    ImageParam input(Float(32), 2, "input");
    Var x("x"), y("y"), xo("xo"), yo("yo"), xi("xi"), yi("yi");
    Func stage1("stage1"), stage2("stage2"), output("output");
    stage1(x, y) = exp(input(x, y));
    stage2(x, y) = stage1(x, y) + 1.0f;
    output(x, y) = log(stage2(x, y));
    output.tile(x, y, xo, yo, xi, yi, 128, 32);
    if (mode == 2) {
        for (Func *f : {&stage1, &stage2}) f->compute_root().tile(x, y, xo, yo, xi, yi, 128, 32);
    } else {
        stage1.compute_at(output, xo);
        stage2.compute_at(output, xo);
        if (mode == 1) {
            stage1.double_buffer();
            output.double_buffer();
        }
    }
    Buffer<float, 2> in(W, H), out(W, H);
    in.fill(0.5f);
    Pipeline p(output);
    Target t("npu");
    std::string fn = std::string("figures_") + label;
    auto m = internal::JITModule::compile(p.compile_to_cpp_source(fn, p.infer_arguments(), t), fn, t);
    void *argv[] = {in.raw_buffer(), out.raw_buffer()};
    m->run_or_throw(argv);
    json r = json::parse(((const char *(*)())m->symbol(fn + "_npu_report"))());
    const double bytes = (double)W * H * 4;
    json f;
    against_ideal(r, ideal_stream(p, {{"input", {W, H}}, {"output", {W, H}}}), f);
    f["schedule"] = label;
    f["gm_read_bytes"] = r["gm_read_bytes"];
    f["gm_write_bytes"] = r["gm_write_bytes"];
    f["gm_ideal_bytes"] = 2 * bytes;
    f["gm_model_bytes"] = 2 * bytes + (mode == 2 ? 2 * (2 * bytes) : 0.0);  // two intermediates of W x H floats
    double bound = std::max({r["pipes"]["V"]["busy_cycles"].get<double>(), r["gm_read_bytes"].get<double>() / 64,
                             r["gm_write_bytes"].get<double>() / 64});
    f["cycles"] = r["cycles"];
    f["roofline_cycles"] = bound;
    f["cycles_over_roofline"] = r["cycles"].get<double>() / bound;
    for (const char *pipe : {"MTE2", "V", "MTE3"}) f["busy_ratio"][pipe] = r["pipes"][pipe]["busy_ratio"];
    return f;
}

// The figures of one simulator report: GM bytes against the ideal and the
// model, cycles against the roofline bound, busy ratios.
json figures(const std::string &label, const json &r, double ideal, double model) {
    json f;
    f["schedule"] = label;
    f["gm_read_bytes"] = r["gm_read_bytes"];
    f["gm_write_bytes"] = r["gm_write_bytes"];
    f["gm_ideal_bytes"] = ideal;
    f["gm_model_bytes"] = model;
    double bound = std::max({r["pipes"]["V"]["busy_cycles"].get<double>(), r["gm_read_bytes"].get<double>() / 64,
                             r["gm_write_bytes"].get<double>() / 64});
    f["cycles"] = r["cycles"];
    f["roofline_cycles"] = bound;
    f["cycles_over_roofline"] = r["cycles"].get<double>() / bound;
    against_ideal(r, r["ideal"], f);
    for (const char *pipe : {"MTE2", "V", "MTE3", "M"}) f["busy_ratio"][pipe] = r["pipes"][pipe]["busy_ratio"];
    f["peak_bytes"] = r["peak_bytes"];
    return f;
}

// Generator `name` with `params` under the schedule text `sched` on the NPU
// target, run on `buffers` (by argument name; scalars take their defaults);
// the simulator's report, with the ideal stream's figures under "ideal".
json run_generator(const std::string &name, const std::vector<std::string> &params, const std::string &sched,
                   std::map<std::string, Buffer<>> buffers, const std::string &fn) {
    auto g = GeneratorRegistry::create(name);
    g->set_generator_params(params);
    Pipeline p = g->build_pipeline();
    Target t("npu");
    ScheduleFile::parse(sched, fn + ".sched").apply(p, t);
    std::vector<Argument> args = g->arguments();
    auto m = internal::JITModule::compile(p.compile_to_cpp_source(fn, args, t), fn, t);
    std::vector<void *> argv;
    std::vector<float> scalars(args.size(), 1e-5f);
    for (size_t i = 0; i < args.size(); i++)
        argv.push_back(args[i].is_buffer ? (void *)buffers.at(args[i].name).raw_buffer() : (void *)&scalars[i]);
    m->run_or_throw(argv.data());
    json r = json::parse(((const char *(*)())m->symbol(fn + "_npu_report"))());
    std::map<std::string, std::vector<int>> sizes;
    for (const Argument &a : args)
        if (a.is_buffer)
            for (int d = 0; d < buffers.at(a.name).dimensions(); d++) sizes[a.name].push_back(buffers.at(a.name).dim(d).extent());
    r["ideal"] = ideal_stream(p, sizes);
    return r;
}

std::string read_file(const std::string &path) {
    std::ifstream f(path);
    return std::string(std::istreambuf_iterator<char>(f), {});
}

// The schedule text without its double_buffer() directives.
// The schedule without `directive` (" double_buffer()").
std::string without(std::string s, const std::string &directive) {
    for (size_t at; (at = s.find(directive)) != std::string::npos;) s.erase(at, directive.size());
    return s;
}

// Single-buffered, and so not software-pipelined (which needs two copies).
std::string single_buffered(const std::string &s) {
    return without(without(s, " software_pipeline()"), " double_buffer()");
}

// softmax and layernorm: fused (npu.sched single- and double-buffered) and
// unfused (the 2-D intermediate compute_root, through GM).
json run_rows(const std::string &name, const std::string &source_dir) {
    Buffer<float> in(W, H), gamma(W), beta(W), out(W, H);
    in.for_each_element([&](int x, int y) { in(x, y) = std::sin(0.01f * x) + 0.02f * y; });
    gamma.fill(1.25f);
    beta.fill(-0.5f);
    std::map<std::string, Buffer<>> b = {{"input", in}, {"gamma", gamma}, {"beta", beta}, {"output", out}};
    const double bytes = (double)W * H * 4, ideal = 2 * bytes + (name == "layernorm" ? 2.0 * W * 4 : 0.0);
    std::string fused = read_file(source_dir + "/schedules/" + name + "/npu.sched");
    std::string inter = name == "softmax" ? "exps" : "normalized";
    std::string unfused = "output: bound(x, 0, 1024) split(y, yo, yi, 2)\n" + inter +
                          ": compute_root() bound(x, 0, 1024) split(y, yo, yi, 2)\n" +
                          (name == "softmax" ? "row_max: compute_at(exps, yo)\nrow_sum: compute_at(output, yo)\n"
                                             : "sum: compute_at(normalized, yo)\nmean: compute_at(normalized, yo)\n"
                                               "sum_sq: compute_at(normalized, yo)\ninv_std: compute_at(normalized, yo)\n");
    json rows;
    const std::vector<std::string> params = {"width=1024"};
    rows.push_back(figures("fused", run_generator(name, params, single_buffered(fused), b, name + "_sb"), ideal, ideal));
    rows.push_back(figures("fused, double-buffered", run_generator(name, params, fused, b, name + "_db"), ideal, ideal));
    // The same with tiles of 2 rows (what fitted UB before buffers shared it).
    std::string two_rows = fused;
    for (size_t at; (at = two_rows.find("split(y, yo, yi, 8)")) != std::string::npos;) two_rows.replace(at, 19, "split(y, yo, yi, 2)");
    rows.push_back(figures("fused, double-buffered, 2-row tiles", run_generator(name, params, two_rows, b, name + "_db2"),
                           ideal, ideal));
    rows.push_back(figures(inter + " through GM", run_generator(name, params, unfused, b, name + "_unfused"), ideal,
                           ideal + 2 * bytes));
    // bf16 (type=bfloat16): the same input rounded to bf16, half the GM bytes, a TCVT each way per tile.
    Buffer<kiln::bfloat16_t> in16(W, H), gamma16(W), beta16(W), out16(W, H);
    in16.for_each_element([&](int x, int y) { in16(x, y) = kiln::bfloat16_t(in(x, y)); });
    gamma16.fill(kiln::bfloat16_t(1.25f));
    beta16.fill(kiln::bfloat16_t(-0.5f));
    std::map<std::string, Buffer<>> b16 = {{"input", in16}, {"gamma", gamma16}, {"beta", beta16}, {"output", out16}};
    const std::vector<std::string> params16 = {"width=1024", "type=bfloat16"};
    rows.push_back(figures("bf16, fused", run_generator(name, params16, single_buffered(fused), b16, name + "_bf16_sb"),
                           ideal / 2, ideal / 2));
    rows.push_back(figures("bf16, fused, double-buffered", run_generator(name, params16, fused, b16, name + "_bf16_db"),
                           ideal / 2, ideal / 2));
    // Rows longer than UB (16384 floats, 64 rows; schedules/<name>/npu_long.sched): the reductions chunk by
    // chunk, the input read three times (model: that, gamma and beta per chunk of each of the 4 row tiles).
    const int LW = 16384, LH = 64;
    Buffer<float> lin(LW, LH), lgamma(LW), lbeta(LW), lout(LW, LH);
    lin.for_each_element([&](int x, int y) { lin(x, y) = std::sin(0.01f * x) + 0.02f * y; });
    lgamma.fill(1.25f);
    lbeta.fill(-0.5f);
    std::map<std::string, Buffer<>> lb = {{"input", lin}, {"gamma", lgamma}, {"beta", lbeta}, {"output", lout}};
    const double lbytes = (double)LW * LH * 4, lvec = name == "layernorm" ? 2.0 * LW * 4 : 0.0;
    const std::string long_rows = read_file(source_dir + "/schedules/" + name + "/npu_long.sched");
    const std::vector<std::string> lparams = {"width=16384"};
    rows.push_back(figures("rows of 16384, chunks",
                           run_generator(name, lparams, single_buffered(long_rows), lb, name + "_long_sb"),
                           2 * lbytes + lvec, 4 * lbytes + (LH / 16) * lvec));
    rows.push_back(figures("rows of 16384, chunks, double-buffered",
                           run_generator(name, lparams, long_rows, lb, name + "_long_db"), 2 * lbytes + lvec,
                           4 * lbytes + (LH / 16) * lvec));
    if (name == "softmax") {  // the online form (a Tuple state): the input read twice, not three times
        const std::string online = read_file(source_dir + "/schedules/softmax/online/npu_long.sched");
        const std::vector<std::string> oparams = {"width=16384", "algorithm=online"};
        rows.push_back(figures("online, rows of 16384, chunks",
                               run_generator(name, oparams, single_buffered(online), lb, name + "_online_long_sb"),
                               2 * lbytes, 3 * lbytes));
        rows.push_back(figures("online, rows of 16384, chunks, double-buffered",
                               run_generator(name, oparams, online, lb, name + "_online_long_db"), 2 * lbytes,
                               3 * lbytes));
    }
    return rows;
}

// Runs a generator single- and double-buffered under `sched` and records,
// for each, its cycles, the busy ratio of each of `pipes`, GM bytes and
// races; `extra` adds the kernel's own figures to each entry.
json buffering_figures(const std::string &generator, const std::vector<std::string> &params, const std::string &sched,
                       std::map<std::string, Buffer<>> &bufs, const std::vector<const char *> &pipes,
                       const std::function<void(const json &r, json &g)> &extra = nullptr) {
    json f;
    // A software-pipelined schedule (double-buffered) also without its software_pipeline().
    const bool pipelined = sched.find(" software_pipeline()") != std::string::npos;
    for (int db = 0; db < (pipelined ? 3 : 2); db++) {
        json r = run_generator(generator, params,
                               db == 0 ? single_buffered(sched) : db == 1 ? sched : without(sched, " software_pipeline()"),
                               bufs, generator + (db == 0 ? "_sb" : db == 1 ? "_db" : "_db_np"));
        json &g = f[db == 0 ? "single_buffered" : db == 1 ? "double_buffered" : "double_buffered_not_pipelined"];
        g["cycles"] = r["cycles"];
        for (const char *pipe : pipes) g["busy_ratio"][pipe] = r["pipes"][pipe]["busy_ratio"];
        g["gm_read_bytes"] = r["gm_read_bytes"];
        g["gm_write_bytes"] = r["gm_write_bytes"];
        g["races"] = r["race_count"];
        if (extra) extra(r, g);
    }
    return f;
}

// GEMM + bias + ReLU through the code generator: f32, 1024 x 128 x 128.
json run_gemm_generated(const std::string &source_dir) {
    const int M = 1024, N = 128, K = 128;
    Buffer<float> a(K, M), b(N, K), bias(N), out(N, M);
    a.for_each_element([&](int x, int y) { a(x, y) = std::sin(0.37f * x + 0.11f * y); });
    b.for_each_element([&](int x, int y) { b(x, y) = std::cos(0.23f * x - 0.07f * y); });
    bias.fill(0.25f);
    std::map<std::string, Buffer<>> bufs = {{"A", a}, {"B", b}, {"bias", bias}, {"output", out}};
    std::string sched = read_file(source_dir + "/schedules/gemm/npu.sched");
    json f = buffering_figures("gemm", {"depth=128", "activation=relu"}, sched, bufs, {"M", "MTE2", "MTE1", "FIX", "V"});
    f["kernel"] = "GEMM 1024x128x128 f32 + bias + ReLU, code generator (schedules/gemm/npu.sched)";
    return f;
}

// A stencil generator (blur3x3, unsharp) under schedules/<name>/npu.sched
// (64 x 32 tiles of output) on a 1024 x 128 image, single- and
// double-buffered. The ideal reads the input once; the schedule's model
// reads, per tile, the tile and its halo once: `halo` rows and columns on
// each side (1 for blur3x3, 2 for unsharp), each row moved in whole 32-byte
// blocks as the DMA moves it.
json run_stencil(const std::string &name, int halo, const std::string &source_dir) {
    Buffer<float> in(W, H), out(W, H);
    in.for_each_element([&](int x, int y) { in(x, y) = std::sin(0.01f * x) + 0.02f * y; });
    std::map<std::string, Buffer<>> b = {{"input", in}, {"output", out}};
    const double bytes = (double)W * H * 4, ideal = 2 * bytes;
    const double tiles = (W / 64) * (H / 32), row = ((64 + 2 * halo) * 4 + 31) / 32 * 32;
    const double model = tiles * (32 + 2 * halo) * row + bytes;
    std::string sched = read_file(source_dir + "/schedules/" + name + "/npu.sched");
    json rows;
    rows.push_back(figures("fused", run_generator(name, {}, single_buffered(sched), b, name + "_sb"), ideal, model));
    rows.push_back(figures("fused, double-buffered", run_generator(name, {}, sched, b, name + "_db"), ideal, model));
    return rows;
}

// The attention figures of report r into g (d features, nq queries, seq keys): busy cycles, GM
// bytes against the ideal (Q, K, V read once, O written once), the roofline (the largest of V's and
// M's busy cycles and GM bytes over 64 B/cycle) and the ideal stream's.
void attention_figures(const json &r, json &g, const std::vector<const char *> &pipes, int d, int nq, int seq) {
    for (const char *pipe : pipes) g["busy_cycles"][pipe] = r["pipes"][pipe]["busy_cycles"];
    g["gm_ideal_bytes"] = 4.0 * (2 * d * nq + 2 * d * seq);
    g["dma_bytes"] = r["dma_bytes"];
    g["peak_bytes"] = r["peak_bytes"];
    double bound = std::max({r["pipes"]["V"]["busy_cycles"].get<double>(), r["pipes"]["M"]["busy_cycles"].get<double>(),
                             r["gm_read_bytes"].get<double>() / 64, r["gm_write_bytes"].get<double>() / 64});
    g["roofline_cycles"] = bound;
    g["cycles_over_roofline"] = r["cycles"].get<double>() / bound;
    against_ideal(r, r["ideal"], g);
}

// Two-pass attention (generators/attention.cpp, dim=64 seq=128; 1024 queries) under
// schedules/attention/npu.sched: both products on the matrix unit, the
// softmax on the vector unit, P moved UB -> L1 -> L0A.
json run_attention(const std::string &source_dir) {
    const int D = 64, S = 128, NQ = 1024;  // NQ queries against S keys
    Buffer<float> q(D, NQ), k(D, S), v(D, S), out(D, NQ);
    q.for_each_element([&](int f, int t) { q(f, t) = std::sin(0.31f * f + 0.17f * t); });
    k.for_each_element([&](int f, int t) { k(f, t) = std::cos(0.23f * f - 0.11f * t); });
    v.for_each_element([&](int f, int t) { v(f, t) = 0.5f * std::sin(0.05f * f * t + 0.3f); });
    std::map<std::string, Buffer<>> bufs = {{"Q", q}, {"K", k}, {"V", v}, {"output", out}};
    std::string sched = read_file(source_dir + "/schedules/attention/npu.sched");
    const std::vector<const char *> pipes = {"M", "V", "MTE2", "MTE1", "MTE3", "FIX"};
    json f = buffering_figures("attention", {"dim=64", "seq=128"}, sched, bufs, pipes,
                               [&](const json &r, json &g) { attention_figures(r, g, pipes, D, NQ, S); });
    f["kernel"] = "attention d=64, 1024 queries x 128 keys, f32, code generator (schedules/attention/npu.sched)";
    return f;
}

// Attention's online form (algorithm=online_planes: key blocks as planes)
// under schedules/attention/online_planes/npu.sched, 1024 queries against
// `seq` keys in blocks of `block`, single- and double-buffered; and the
// two-pass form at the same seq (its figures, or the error that it does
// not fit). The roofline as run_attention's: the largest of V's and M's
// busy cycles and GM bytes over 64 B/cycle.
json run_attention_online(const std::string &source_dir, int seq, int block) {
    const int D = 64, NQ = 1024;
    Buffer<float> q(D, NQ), k(D, seq), v(D, seq), out(D, NQ);
    q.for_each_element([&](int f, int t) { q(f, t) = std::sin(0.31f * f + 0.17f * t); });
    k.for_each_element([&](int f, int t) { k(f, t) = std::cos(0.23f * f - 0.11f * t); });
    v.for_each_element([&](int f, int t) { v(f, t) = 0.5f * std::sin(0.05f * f * t + 0.3f); });
    std::map<std::string, Buffer<>> bufs = {{"Q", q}, {"K", k}, {"V", v}, {"output", out}};
    const std::vector<const char *> pipes = {"M", "V", "MTE2", "MTE1", "MTE3", "FIX"};
    auto extra = [&](const json &r, json &g) { attention_figures(r, g, pipes, D, NQ, seq); };
    const std::string s = std::to_string(seq), b = std::to_string(block);
    json f;
    f["online"] = buffering_figures("attention", {"dim=64", "seq=" + s, "key_block=" + b, "algorithm=online_planes"},
                                    read_file(source_dir + "/schedules/attention/online_planes/npu.sched"), bufs,
                                    pipes, extra);
    f["online"]["kernel"] = "flash attention d=64, 1024 queries x " + s + " keys in blocks of " + b +
                            ", f32 (schedules/attention/online_planes/npu.sched)";
    try {
        f["two_pass"] = buffering_figures("attention", {"dim=64", "seq=" + s},
                                          read_file(source_dir + "/schedules/attention/npu.sched"), bufs, pipes, extra);
        f["two_pass"]["kernel"] = "two-pass attention d=64, 1024 queries x " + s + " keys (schedules/attention/npu.sched)";
    } catch (const CompileError &e) {
        f["two_pass_error"] = e.what();
    }
    return f;
}

// A GEMM size and schedule of the bf16 and int8 figures.
struct GemmCase {
    std::string label;
    int M, N, K;
    std::string sched;
};

// gemm's NPU schedules at the figures' sizes; with `tiles32`, also 512^3 in
// 32 x 32 tiles (the bf16 figure from before split K and L1 panels).
std::vector<GemmCase> gemm_cases(const std::string &source_dir, bool tiles32) {
    const std::string npu = read_file(source_dir + "/schedules/gemm/npu.sched");
    const std::string npu512 = read_file(source_dir + "/schedules/gemm/npu_512.sched");
    std::string rows32 = npu;
    rows32.replace(rows32.find("split(y, yo, yi, 16)"), 20, "split(y, yo, yi, 32)");
    std::vector<GemmCase> cases = {
        {"1024x128x256, schedules/gemm/npu.sched (16-row tiles)", 1024, 128, 256, npu},
        {"1024x128x256, 32-row tiles", 1024, 128, 256, rows32},
    };
    if (tiles32)
        cases.push_back({"512x512x512, 32 x 32 tiles", 512, 512, 512,
                         "output: tile(x, y, xo, yo, xi, yi, 32, 32) double_buffer()\n"
                         "matmul: compute_at(output, xo) store_in(L0C) double_buffer()\n"});
    cases.push_back({"512x512x512, schedules/gemm/npu_512.sched (B panel in L1, split K)", 512, 512, 512, npu512});
    cases.push_back({"1024x1024x512, schedules/gemm/npu_512.sched", 1024, 1024, 512, npu512});
    return cases;
}

// A GEMM figure: cycles against the matrix unit's peak at `macs_per_cycle`, busy ratios, GM bytes.
json gemm_row(const std::string &kernel, const GemmCase &c, const json &r, double macs_per_cycle) {
    json f;
    f["kernel"] = kernel + " " + c.label;
    f["cycles"] = r["cycles"];
    const double peak_cycles = (double)c.M * c.N * c.K / macs_per_cycle;
    f["peak_cycles"] = peak_cycles;
    f["fraction_of_peak"] = peak_cycles / r["cycles"].get<double>();
    for (const char *pipe : {"M", "MTE2", "MTE1", "FIX", "V", "MTE3"}) f["busy_ratio"][pipe] = r["pipes"][pipe]["busy_ratio"];
    f["gm_read_bytes"] = r["gm_read_bytes"];
    f["gm_write_bytes"] = r["gm_write_bytes"];
    f["vector_instructions"] = r["pipes"]["V"]["instructions"];
    f["races"] = r["race_count"];
    return f;
}

// bf16 GEMM + bias + ReLU (type=bfloat16) through the code generator, one
// core: the matrix pipe's share of the cycles and the fraction of the matrix
// unit's peak the kernel reaches (M * N * K MACs at 4096 per cycle, over
// the kernel's cycles).
json run_gemm_bf16(const std::string &source_dir) {
    json rows;
    for (const GemmCase &c : gemm_cases(source_dir, true)) {
        Buffer<kiln::bfloat16_t> a(c.K, c.M), b(c.N, c.K), bias(c.N), out(c.N, c.M);
        a.for_each_element([&](int x, int y) { a(x, y) = kiln::bfloat16_t(std::sin(0.37f * x + 0.11f * y)); });
        b.for_each_element([&](int x, int y) { b(x, y) = kiln::bfloat16_t(std::cos(0.23f * x - 0.07f * y)); });
        bias.fill(kiln::bfloat16_t(0.25f));
        std::map<std::string, Buffer<>> bufs = {{"A", a}, {"B", b}, {"bias", bias}, {"output", out}};
        json r = run_generator("gemm", {"depth=" + std::to_string(c.K), "activation=relu", "type=bfloat16"}, c.sched,
                               bufs, "gemm_bf16_" + std::to_string(rows.size()));
        rows.push_back(gemm_row("GEMM bf16", c, r, 4096));
    }
    return rows;
}

// int8 GEMM + bias + ReLU + requantization (gemm_int8) through the code
// generator, one core, under gemm's schedules: the fraction of the matrix
// unit's int8 peak (M * N * K MACs at 8192 per cycle, over the kernel's
// cycles), the pipes' busy ratios (V and MTE3 stay idle: the epilogue is the
// fix pipe's store) and GM bytes.
json run_gemm_int8(const std::string &source_dir) {
    json rows;
    std::vector<GemmCase> cases = gemm_cases(source_dir, false);
    const std::string int8_512 = read_file(source_dir + "/schedules/gemm_int8/npu_512.sched");
    cases.push_back({"512x512x512, schedules/gemm_int8/npu_512.sched (k-slices of 128)", 512, 512, 512, int8_512});
    cases.push_back({"1024x1024x512, schedules/gemm_int8/npu_512.sched", 1024, 1024, 512, int8_512});
    for (const GemmCase &c : cases) {
        Buffer<int8_t> a(c.K, c.M), b(c.N, c.K), out(c.N, c.M);
        Buffer<int32_t> bias(c.N);
        a.for_each_element([&](int x, int y) { a(x, y) = (int8_t)(int)((x * 37 + y * 11) % 256 - 128); });
        b.for_each_element([&](int x, int y) { b(x, y) = (int8_t)(int)((x * 53 + y * 7) % 256 - 128); });
        bias.fill(1000);
        std::map<std::string, Buffer<>> bufs = {{"A", a}, {"B", b}, {"bias", bias}, {"output", out}};
        json r = run_generator("gemm_int8", {"depth=" + std::to_string(c.K)}, c.sched, bufs,
                               "gemm_int8_" + std::to_string(rows.size()));
        rows.push_back(gemm_row("GEMM int8", c, r, 8192));
    }
    return rows;
}

// C (M x N, f32) = relu(A (M x K, f16) x B (K x N, f16) + bias (N)) on one core:
// B's panel stays in L1; A's panels of 128 rows are double-buffered in L1; k
// slices of 64 move to L0A/L0B (double-buffered); each 128 x 128 block of C
// accumulates in L0C and leaves through the fix-pipe with ReLU.
json run_gemm() {
    using namespace kiln::npu;
    const int M = 1024, N = 128, K = 256, BM = 128, BK = 64;
    std::vector<uint16_t> A(M * K), B(K * N);
    std::vector<float> bias(N), C(M * N);
    for (int i = 0; i < M * K; i++) A[i] = float_to_half(((i * 7) % 13 - 6) * 0.125f);
    for (int i = 0; i < K * N; i++) B[i] = float_to_half(((i * 5) % 11 - 5) * 0.25f);
    for (int j = 0; j < N; j++) bias[j] = 0.5f * (j % 3) - 0.5f;
    Device dev;
    GlobalTensor ga = dev.bind("A", DType::F16, A.data(), A.size()), gb = dev.bind("B", DType::F16, B.data(), B.size()),
                 gbias = dev.bind("bias", DType::F32, bias.data(), N), gc = dev.bind("C", DType::F32, C.data(), C.size());
    SimOptions opt;
    opt.races_are_errors = true;
    SimReport r = dev.run(1, [&](Core &c) {
        const uint32_t panel = BM * K * 2, bpanel = K * N * 2, slice = BM * BK * 2;
        Tile lb = c.tile(Mem::L1, 0, DType::F16, K, N, "B"), lbias = c.tile(Mem::L1, bpanel, DType::F32, 1, N, "bias");
        Tile la[2] = {c.tile(Mem::L1, bpanel + 1024, DType::F16, BM, K, "A"),
                      c.tile(Mem::L1, bpanel + 1024 + panel, DType::F16, BM, K, "A")};
        Tile a0[2] = {c.tile(Mem::L0A, 0, DType::F16, BM, BK, "A0"), c.tile(Mem::L0A, slice, DType::F16, BM, BK, "A0")};
        Tile b0[2] = {c.tile(Mem::L0B, 0, DType::F16, BK, N, "B0"), c.tile(Mem::L0B, BK * N * 2, DType::F16, BK, N, "B0")};
        Tile acc[2] = {c.tile(Mem::L0C, 0, DType::F32, BM, N, "C"), c.tile(Mem::L0C, BM * N * 4, DType::F32, BM, N, "C")};
        c.TLOAD(lb, gb.at(0, N));
        c.TLOAD(lbias, gbias.at(0, N));
        for (int b = 0; b < 2; b++) {
            c.SET_FLAG(Pipe::MTE1, Pipe::MTE2, b);  // A panel b free
            c.SET_FLAG(Pipe::M, Pipe::MTE1, b);     // L0 slice b free
            c.SET_FLAG(Pipe::FIX, Pipe::M, b);      // accumulator b free
        }
        int step = 0;
        for (int mb = 0; mb < M / BM; mb++) {
            int p = mb & 1;
            c.WAIT_FLAG(Pipe::MTE1, Pipe::MTE2, p);
            c.TLOAD(la[p], ga.at((int64_t)mb * BM * K, K));
            c.SET_FLAG(Pipe::MTE2, Pipe::MTE1, 0);
            c.WAIT_FLAG(Pipe::MTE2, Pipe::MTE1, 0);  // the panel (and, first time, B) is in L1
            c.WAIT_FLAG(Pipe::FIX, Pipe::M, p);
            for (int kb = 0; kb < K / BK; kb++, step++) {
                int s = step & 1;
                Tile as = la[p], bs = lb;  // the k-slice: columns kb*BK.. of A, rows of B
                as.addr += kb * BK * 2;
                as.cols = K;  // row stride of the panel
                as.set_valid(BM, BK);
                bs.addr += kb * BK * N * 2;
                bs.rows = BK;
                bs.set_valid(BK, N);
                c.WAIT_FLAG(Pipe::M, Pipe::MTE1, s);
                Tile a = a0[s], bt = b0[s];
                c.TMOV(a, as);
                c.TMOV(bt, bs);
                if (kb == K / BK - 1) c.SET_FLAG(Pipe::MTE1, Pipe::MTE2, p);  // done reading panel p
                c.SET_FLAG(Pipe::MTE1, Pipe::M, s);
                c.WAIT_FLAG(Pipe::MTE1, Pipe::M, s);
                if (kb == 0) c.TMATMUL_BIAS(acc[p], a, bt, lbias);
                else c.TMATMUL_ACC(acc[p], a, bt);
                c.SET_FLAG(Pipe::M, Pipe::MTE1, s);
            }
            c.SET_FLAG(Pipe::M, Pipe::FIX, p);
            c.WAIT_FLAG(Pipe::M, Pipe::FIX, p);
            c.TSTORE(gc.at((int64_t)mb * BM * N, N), acc[p], /*relu=*/true);
            c.SET_FLAG(Pipe::FIX, Pipe::M, p);
        }
        for (int b = 0; b < 2; b++) {
            c.WAIT_FLAG(Pipe::MTE1, Pipe::MTE2, b);
            c.WAIT_FLAG(Pipe::M, Pipe::MTE1, b);
            c.WAIT_FLAG(Pipe::FIX, Pipe::M, b);
        }
    }, opt);
    // Check one element against a plain loop.
    float want = bias[5];
    for (int k = 0; k < K; k++) want = want + half_to_float(A[3 * K + k]) * half_to_float(B[k * N + 5]);
    json f;
    f["kernel"] = "GEMM 1024x128x256 f16 + bias + ReLU, hand-written, double-buffered";
    f["correct"] = C[3 * N + 5] == (want > 0 ? want : 0.0f);
    f["cycles"] = r.cycles;
    f["matrix_busy_ratio"] = r.busy_ratio(Pipe::M);
    f["mte2_busy_ratio"] = r.busy_ratio(Pipe::MTE2);
    f["mte1_busy_ratio"] = r.busy_ratio(Pipe::MTE1);
    f["races"] = r.race_count;
    return f;
}

}  // namespace

int main(int argc, char **argv) {
    // --json FILE writes the figures; --only G1,G2 measures those groups alone (the keys of the JSON).
    const std::vector<std::string> groups = {"chain",  "softmax", "layernorm", "gemm",      "gemm_generated",
                                             "gemm_bf16", "gemm_int8", "blur3x3", "unsharp", "attention",
                                             "attention_online"};
    std::string json_path, only;
    for (int i = 1; i + 1 < argc; i += 2) {
        const std::string flag = argv[i];
        if (flag == "--json") json_path = argv[i + 1];
        else if (flag == "--only") only = "," + std::string(argv[i + 1]) + ",";
        else argc = 0;
    }
    for (size_t at = 1; at < only.size(); at = only.find(',', at) + 1)
        if (std::find(groups.begin(), groups.end(), only.substr(at, only.find(',', at) - at)) == groups.end()) argc = 0;
    if (argc % 2 == 0) {
        std::string list;
        for (const std::string &g : groups) list += (list.empty() ? "" : ", ") + g;
        std::fprintf(stderr, "usage: npu-figures [--json FILE] [--only GROUP,...]; groups: %s\n", list.c_str());
        return 2;
    }
    auto want = [&](const char *g) { return only.empty() || only.find("," + std::string(g) + ",") != std::string::npos; };
    json all;
    if (want("chain"))
        for (int mode = 0; mode < 3; mode++)
            all["chain"].push_back(run_chain(mode == 0 ? "fused" : mode == 1 ? "fused_double_buffered" : "unfused", mode));
    for (const char *name : {"softmax", "layernorm"})
        if (want(name)) all[name] = run_rows(name, KILN_SOURCE_DIR);
    if (want("gemm")) all["gemm"] = run_gemm();
    if (want("gemm_generated")) all["gemm_generated"] = run_gemm_generated(KILN_SOURCE_DIR);
    if (want("gemm_bf16")) all["gemm_bf16"] = run_gemm_bf16(KILN_SOURCE_DIR);
    if (want("gemm_int8")) all["gemm_int8"] = run_gemm_int8(KILN_SOURCE_DIR);
    if (want("blur3x3")) all["blur3x3"] = run_stencil("blur3x3", 1, KILN_SOURCE_DIR);
    if (want("unsharp")) all["unsharp"] = run_stencil("unsharp", 2, KILN_SOURCE_DIR);
    if (want("attention")) all["attention"] = run_attention(KILN_SOURCE_DIR);
    if (want("attention_online"))
        for (int seq : {128, 4096})
            for (int block : {64, 128})
                if (block <= seq / 2) all["attention_online"].push_back(run_attention_online(KILN_SOURCE_DIR, seq, block));
    for (const char *pipeline : {"chain", "softmax", "layernorm", "blur3x3", "unsharp"}) {
        if (!all.contains(pipeline)) continue;
        std::printf("%-36s %10s %10s %10s %10s %9s %9s %6s %9s %6s %6s %6s %8s\n", pipeline, "GM read", "GM write",
                    "ideal", "model", "cycles", "roofline", "ratio", "ideal roof", "ratio", "V%", "MTE2%", "UB peak");
        for (const json &f : all[pipeline])
            std::printf("%-36s %10.0f %10.0f %10.0f %10.0f %9.0f %9.0f %6.2f %9.0f %6.2f %6.1f %6.1f %8.0f\n",
                        f["schedule"].get<std::string>().c_str(), f["gm_read_bytes"].get<double>(),
                        f["gm_write_bytes"].get<double>(), f["gm_ideal_bytes"].get<double>(),
                        f["gm_model_bytes"].get<double>(), f["cycles"].get<double>(),
                        f["roofline_cycles"].get<double>(), f["cycles_over_roofline"].get<double>(),
                        f["ideal_roofline_cycles"].get<double>(), f["cycles_over_ideal_roofline"].get<double>(),
                        100 * f["busy_ratio"]["V"].get<double>(), 100 * f["busy_ratio"]["MTE2"].get<double>(),
                        f.contains("peak_bytes") ? f["peak_bytes"]["UB"].get<double>() : 0.0);
        std::printf("\n");
    }
    const json &gg = all["gemm_generated"];
    for (const char *v : {"single_buffered", "double_buffered"})
        if (!gg.is_null()) std::printf("%s, %s: %.0f cycles, matrix pipe busy %.1f%%, MTE2 %.1f%%, MTE1 %.1f%%, FIX %.1f%%, V %.1f%%\n",
                    gg["kernel"].get<std::string>().c_str(), v, gg[v]["cycles"].get<double>(),
                    100 * gg[v]["busy_ratio"]["M"].get<double>(), 100 * gg[v]["busy_ratio"]["MTE2"].get<double>(),
                    100 * gg[v]["busy_ratio"]["MTE1"].get<double>(), 100 * gg[v]["busy_ratio"]["FIX"].get<double>(),
                    100 * gg[v]["busy_ratio"]["V"].get<double>());
    for (const char *gemm : {"gemm_bf16", "gemm_int8"})  // the peak of the operands' type: 4096 or 8192 MACs/cycle
        for (const json &f : all[gemm])
            std::printf("%s: %.0f cycles, %.1f%% of the matrix unit's peak (%.0f cycles), M %.1f%%, MTE2 %.1f%%, "
                        "MTE1 %.1f%%, FIX %.1f%%, V %.1f%% (%.0f instructions), MTE3 %.1f%%, GM read %.0f write %.0f\n",
                        f["kernel"].get<std::string>().c_str(), f["cycles"].get<double>(),
                        100 * f["fraction_of_peak"].get<double>(), f["peak_cycles"].get<double>(),
                        100 * f["busy_ratio"]["M"].get<double>(), 100 * f["busy_ratio"]["MTE2"].get<double>(),
                        100 * f["busy_ratio"]["MTE1"].get<double>(), 100 * f["busy_ratio"]["FIX"].get<double>(),
                        100 * f["busy_ratio"]["V"].get<double>(), f["vector_instructions"].get<double>(),
                        100 * f["busy_ratio"]["MTE3"].get<double>(), f["gm_read_bytes"].get<double>(),
                        f["gm_write_bytes"].get<double>());
    const json &at = all["attention"];
    for (const char *v : {"single_buffered", "double_buffered"})
        if (!at.is_null()) std::printf("%s, %s: %.0f cycles (roofline %.0f, %.2fx; ideal stream's %.0f, %.2fx), GM read %.0f write %.0f (ideal %.0f), "
                    "M %.1f%%, V %.1f%%, MTE2 %.1f%%, MTE1 %.1f%%, MTE3 %.1f%%, FIX %.1f%%\n",
                    at["kernel"].get<std::string>().c_str(), v, at[v]["cycles"].get<double>(),
                    at[v]["roofline_cycles"].get<double>(), at[v]["cycles_over_roofline"].get<double>(),
                    at[v]["ideal_roofline_cycles"].get<double>(), at[v]["cycles_over_ideal_roofline"].get<double>(),
                    at[v]["gm_read_bytes"].get<double>(), at[v]["gm_write_bytes"].get<double>(),
                    at[v]["gm_ideal_bytes"].get<double>(), 100 * at[v]["busy_ratio"]["M"].get<double>(),
                    100 * at[v]["busy_ratio"]["V"].get<double>(), 100 * at[v]["busy_ratio"]["MTE2"].get<double>(),
                    100 * at[v]["busy_ratio"]["MTE1"].get<double>(), 100 * at[v]["busy_ratio"]["MTE3"].get<double>(),
                    100 * at[v]["busy_ratio"]["FIX"].get<double>());
    for (const json &a : all["attention_online"])
        for (const char *form : {"two_pass", "online"}) {
            if (!a.contains(form)) {
                std::printf("two-pass attention at the same seq: %s\n", a["two_pass_error"].get<std::string>().c_str());
                continue;
            }
            const json &x = a[form];
            for (const char *v : {"single_buffered", "double_buffered_not_pipelined", "double_buffered"}) {
                if (!x.contains(v)) continue;
                std::printf("%s, %s: %.0f cycles (roofline %.0f, %.2fx; ideal stream's %.0f, %.2fx), GM read %.0f "
                            "write %.0f (ideal %.0f), races %d, M %.1f%%, V %.1f%%, MTE2 %.1f%%, MTE1 %.1f%%, MTE3 "
                            "%.1f%%, FIX %.1f%%, UB peak %.0f, L0C peak %.0f\n",
                            x["kernel"].get<std::string>().c_str(), v, x[v]["cycles"].get<double>(),
                            x[v]["roofline_cycles"].get<double>(), x[v]["cycles_over_roofline"].get<double>(),
                            x[v]["ideal_roofline_cycles"].get<double>(), x[v]["cycles_over_ideal_roofline"].get<double>(),
                            x[v]["gm_read_bytes"].get<double>(), x[v]["gm_write_bytes"].get<double>(),
                            x[v]["gm_ideal_bytes"].get<double>(), x[v]["races"].get<int>(),
                            100 * x[v]["busy_ratio"]["M"].get<double>(), 100 * x[v]["busy_ratio"]["V"].get<double>(),
                            100 * x[v]["busy_ratio"]["MTE2"].get<double>(), 100 * x[v]["busy_ratio"]["MTE1"].get<double>(),
                            100 * x[v]["busy_ratio"]["MTE3"].get<double>(), 100 * x[v]["busy_ratio"]["FIX"].get<double>(),
                            x[v]["peak_bytes"]["UB"].get<double>(), x[v]["peak_bytes"]["L0C"].get<double>());
            }
        }
    if (!json_path.empty()) std::ofstream(json_path) << all.dump(2) << "\n";
    const json &g = all["gemm"];
    if (g.is_null()) return 0;
    std::printf("\n%s: %.0f cycles, matrix pipe busy %.1f%%, MTE2 %.1f%%, MTE1 %.1f%%, %s, %d races\n",
                g["kernel"].get<std::string>().c_str(), g["cycles"].get<double>(),
                100 * g["matrix_busy_ratio"].get<double>(), 100 * g["mte2_busy_ratio"].get<double>(),
                100 * g["mte1_busy_ratio"].get<double>(), g["correct"].get<bool>() ? "correct" : "WRONG",
                g["races"].get<int>());
    return g["correct"].get<bool>() ? 0 : 1;
}
