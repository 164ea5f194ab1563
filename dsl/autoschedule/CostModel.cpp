#include "CostModel.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "kiln_runtime.h"

namespace kiln {
namespace internal {

std::string kib(int64_t bytes) {
    char s[32];
    if (bytes >= (4 << 20)) std::snprintf(s, sizeof(s), "%.1f MiB", bytes / 1048576.0);
    else std::snprintf(s, sizeof(s), "%.1f KiB", bytes / 1024.0);
    return s;
}

std::string ms(double ns) {
    char s[32];
    std::snprintf(s, sizeof(s), "%.3f ms", ns / 1e6);
    return s;
}

namespace {

// How many times faster the stores of fc run on the machine's threads.
double parallel_speedup(const FuncCounts &fc, const MachineModel &m) {
    if (!fc.stores || !fc.parallel_stores || m.threads <= 1) return 1;
    double p = (double)fc.parallel_stores / (double)fc.stores;
    int64_t tasks = std::max<int64_t>(fc.parallel_tasks, 1);
    double rounds = std::ceil((double)tasks / m.threads);
    double cores = std::min<double>(m.threads, (double)tasks / rounds);
    return 1 / ((1 - p) + p / cores);
}

const char *level_of(int64_t bytes, const MachineModel &m) {
    if (bytes <= m.l1_bytes) return "L1";
    if (bytes <= m.l2_bytes) return "L2";
    if (bytes <= m.l3_bytes) return "L3";
    return "DRAM";
}

double bandwidth(const std::string &level, double speedup, const MachineModel &m) {
    if (level == "L1") return m.l1_bytes_per_ns * speedup;
    if (level == "L2") return m.l2_bytes_per_ns * speedup;
    if (level == "L3") return m.l3_bytes_per_ns * speedup;
    return std::min(m.dram_bytes_per_ns * speedup, m.dram_total_bytes_per_ns);
}

// The aliasing term of the loads a of a Func whose stores run `speedup`
// times faster in parallel (CostModel.h); `read_bytes`: the bytes of what
// they read (0 if unknown: every load after the first of a pass counts).
AliasedCost aliased_cost(const AliasedLoads &a, double loads, int64_t read_bytes, double speedup, const MachineModel &m) {
    AliasedCost c;
    c.read = a.read;
    c.loop = a.loop;
    c.stride = a.stride;
    // An iteration's loads (the unrolled copies adjacent: a block's
    // vectors) touch `lines` lines, each a line apart from the last.
    const int64_t line = std::max<int64_t>(m.line_bytes, 1);
    const int64_t lines = std::max<int64_t>(1, (a.per_iteration * a.access_bytes + line - 1) / line);
    c.pass_bytes = a.iterations * lines * line;
    auto held = [&](int64_t size, int ways) {  // what a level holds of the pass's lines at this stride
        const int64_t way = std::max<int64_t>(size / std::max(ways, 1), line);
        return std::min<double>((double)size, (double)size * (double)(lines * line) / (double)std::min(a.stride, way));
    };
    c.fits = level_of(c.pass_bytes, m);
    const double h1 = held(m.l1_bytes, m.l1_ways), h2 = held(m.l2_bytes, m.l2_ways);
    c.from = c.pass_bytes <= h1                                       ? "L1"
             : c.pass_bytes <= h2                                     ? "L2"
             : c.pass_bytes <= m.l3_bytes                             ? "L3"
                                                                      : "DRAM";
    c.held_bytes = (int64_t)(c.fits == std::string("L1") ? h1 : h2);
    if (c.from == c.fits) return c;
    const double touched = loads / (double)std::max<int64_t>(a.per_iteration, 1) * (double)lines;
    const double again = std::max(0.0, touched - (double)read_bytes / (double)line);
    auto per_byte = [&](const std::string &level) { return level == "L1" ? 0.0 : 1 / bandwidth(level, speedup, m); };
    c.ns = again * (double)line * std::max(0.0, per_byte(c.from) - per_byte(c.fits));
    return c;
}

}  // namespace

std::string loop_name(const std::string &loop) {
    for (size_t stage = loop.find(".s"); stage != std::string::npos; stage = loop.find(".s", stage + 1)) {
        size_t dot = loop.find('.', stage + 2);
        if (dot != std::string::npos && dot > stage + 2 && loop.find_first_not_of("0123456789", stage + 2) == dot)
            return loop.substr(dot + 1);
    }
    return loop;
}

std::string AliasedCost::to_string() const {
    const std::string l = loop_name(loop);
    char s[300];
    std::snprintf(s, sizeof(s), "%s %s apart per %s: %s a pass, %s holds %s of it at that stride: from %s, +%s",
                  read.c_str(), kib(stride).c_str(), l.c_str(), kib(pass_bytes).c_str(), fits.c_str(),
                  kib(held_bytes).c_str(), from.c_str(), ms(ns).c_str());
    return s;
}

PipelineCost predict_cost(const LoopCounts &counts, const LoopCounts &baseline, const Environment &env,
                          const std::vector<std::string> &outputs, const std::map<std::string, int64_t> &input_bytes,
                          const MachineModel &m) {
    PipelineCost pc;
    double output_speedup = 1;
    for (const auto &[name, fc] : counts.funcs) {
        auto def = env.find(name);
        if (def == env.end() || !fc.stores) continue;  // an input, or inlined
        const int bpp = def->second->bytes_per_point();
        bool is_output = std::count(outputs.begin(), outputs.end(), name) != 0;
        FuncCost c;
        double speedup = parallel_speedup(fc, m);
        if (is_output) output_speedup = std::max(output_speedup, speedup);

        double v = (double)fc.vector_stores / (double)fc.stores;
        // A vector of a narrow type whose values are computed in a wider
        // one (a uint8 output's 64 lanes of float arithmetic) takes as
        // many registers, so as many operations, as the wider type needs.
        double lanes = std::max<double>((double)fc.vector_lanes, 1);
        if (fc.vector_value_bytes > 0) lanes = std::min(lanes, std::max(1.0, (double)m.vector_bytes / fc.vector_value_bytes));
        // A scattered store is one store per lane (scattered_stores counts
        // them per stored point, as memory_reads counts a gather's loads).
        double cycles = ((double)fc.arith + fc.memory_reads + fc.scattered_stores) / m.ops_per_cycle +
                        (double)fc.divs * m.div_cycles +
                        (double)fc.transcendentals * m.transcendental_cycles;
        // not vectorized by anyone
        double r = (double)(fc.serial_reduction_stores + fc.scalar_call_stores) / (double)fc.stores;
        c.terms.compute = cycles * (v / lanes + r + std::max(0.0, 1 - v - r) / m.unvectorized_lanes) / m.ghz / speedup;

        c.footprint_bytes = fc.largest_points * bpp;
        c.level = is_output ? "output" : level_of(c.footprint_bytes, m);
        double defined = (double)fc.pure_stores * bpp, reads = fc.values_loaded * bpp;
        if (is_output) {
            // Written where an input of its size is read from (below).
            c.terms.memory = defined / bandwidth(defined <= m.l3_bytes ? "L3" : "DRAM", speedup, m);
        } else {
            double again = std::max(0.0, reads - defined);  // reads beyond the first of each point: from L1
            c.terms.memory = 2 * defined / bandwidth(c.level, speedup, m) + again / bandwidth("L1", speedup, m);
        }
        if (c.footprint_bytes > (16 << 10)) c.terms.overhead += (double)fc.realizations * m.allocation_ns;
        // The runtime keeps a freed block up to kiln_heap_large_keep for the
        // kernel's next call, so only larger ones fault their pages in again.
        if (!is_output && c.footprint_bytes > (int64_t)kiln_heap_large_keep)
            c.terms.overhead += (double)(c.footprint_bytes >> 12) * m.page_ns;
        for (const auto &[a, loads] : fc.aliased) {
            int64_t read_bytes = 0;
            auto in = input_bytes.find(a.read);
            auto rc = counts.funcs.find(a.read);
            auto rd = env.find(a.read);
            if (in != input_bytes.end()) read_bytes = in->second;
            else if (rc != counts.funcs.end() && rd != env.end())
                read_bytes = rc->second.pure_stores * rd->second->bytes_per_point();
            AliasedCost ac = aliased_cost(a, loads, read_bytes, speedup, m);
            if (ac.ns <= 0) continue;
            c.terms.aliasing += ac.ns;
            c.aliased.push_back(ac);
        }
        auto b = baseline.funcs.find(name);
        c.gathers = fc.gathers / (double)fc.stores;
        c.scatters = fc.scattered_stores / (double)fc.stores;
        c.recompute = b != baseline.funcs.end() && b->second.stores ? (double)fc.stores / (double)b->second.stores : 1;
        pc.total.compute += c.terms.compute;
        pc.total.memory += c.terms.memory;
        pc.total.overhead += c.terms.overhead;
        pc.total.aliasing += c.terms.aliasing;
        pc.funcs[name] = c;
    }
    for (const auto &[name, bytes] : input_bytes) {
        double t = (double)bytes / bandwidth(bytes <= m.l3_bytes ? "L3" : "DRAM", output_speedup, m);
        pc.total.memory += t;
    }
    pc.total.overhead += (double)counts.parallel_loops * m.parallel_start_ns();
    return pc;
}

}  // namespace internal
}  // namespace kiln
