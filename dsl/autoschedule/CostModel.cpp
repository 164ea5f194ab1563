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

}  // namespace

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
        double lanes = std::max<double>((double)fc.vector_lanes, 1);
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
        auto b = baseline.funcs.find(name);
        c.gathers = fc.gathers / (double)fc.stores;
        c.scatters = fc.scattered_stores / (double)fc.stores;
        c.recompute = b != baseline.funcs.end() && b->second.stores ? (double)fc.stores / (double)b->second.stores : 1;
        pc.total.compute += c.terms.compute;
        pc.total.memory += c.terms.memory;
        pc.total.overhead += c.terms.overhead;
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
