// The autoscheduler's cost model: the counts of a candidate's loop nest
// (analysis/LoopCounts.h) and a MachineModel -> predicted time, split into
// named terms per Func.
//
//   compute  = cycles / GHz / speedup, where
//              cycles = ((arith + memory_reads) / ops_per_cycle + divs * div_cycles
//                        + transcendentals * transcendental_cycles)
//                       * (v / lanes + r + (1 - v - r) / unvectorized_lanes)
//                                                    v: share of stores in a vectorized loop,
//                                                    r: of serial reductions outside one,
//                                                    and of stores there calling exp etc.
//                                                    (index arithmetic is not counted;
//                                                    a gather's memory_reads are one per lane)
//              speedup = 1 / ((1 - p) + p / cores)   p: share of stores in a parallel loop;
//                                                    cores = tasks / ceil(tasks / threads)
//   memory   = the points a Func defines are written once and read back once
//              from the level its largest realization fits in (L1, L2, L3 or
//              DRAM), each further value loaded from L1 (a load shared by an
//              unrolled block's iterations once); inputs are read once from
//              DRAM (L3 if they fit) and outputs written once, likewise.
//              Divided by the same speedup, DRAM capped at its total bandwidth.
//   aliasing = per load at a stride of a power of two >= 1 KiB along its
//              innermost serial loop (AliasedLoads): one pass of the loop
//              touches iterations * lines_per_iteration lines (its loads'
//              bytes, the unrolled copies adjacent, in lines); at stride s a
//              level of `ways` ways holds of them only
//                  size * min(1, lines_per_iteration * line / min(s, size / ways))
//              (the sets the addresses reach), so the lines the pass loads
//              again come from the first level that holds the pass that way
//              (L3 by its size: hashed) instead of the first that holds it by
//              its size: the lines touched beyond one per line of what is read,
//              times a line's bytes / that level's bandwidth less the
//              other's. Divided by the loading Func's speedup.
//   overhead = parallel loops started * parallel_start_ns() (woken or spinning workers)
//              + realizations of allocations over 16 KiB * allocation_ns
//              + the 4 KiB pages of each Func's largest allocation over
//                kiln_heap_large_keep (256 MiB; the runtime keeps smaller
//                blocks for the next call) * page_ns
#pragma once
#include <map>
#include <string>
#include <vector>

#include "analysis/LoopCounts.h"
#include "kiln/Autoschedule.h"
#include "lower/RealizationOrder.h"

namespace kiln {
namespace internal {

// A load at an aliasing stride (aliasing term): what it reads, the loop,
// the stride, the bytes one pass of the loop touches and what the level
// it fits by size holds of them at that stride, where the lines come from
// instead, and the time that adds.
struct AliasedCost {
    std::string read, loop;
    int64_t stride = 0, pass_bytes = 0, held_bytes = 0;
    std::string fits, from;  // "L1", "L2", "L3", "DRAM"
    double ns = 0;
    std::string to_string() const;  // "B 4.0 KiB apart per k.x: 128.0 KiB a pass, L2 holds 32.0 KiB of it at that stride: from L3, +3.512 ms"
};

struct FuncCost {
    CostTerms terms;
    int64_t footprint_bytes = 0;  // its largest realization
    std::string level;            // where that realization lives: "L1", "L2", "L3", "DRAM", "output"
    double recompute = 0;         // stores / the baseline's stores
    double gathers = 0;           // loads per stored point whose vector lanes are loaded one by one
    double scatters = 0;          // stores per vector of its stores whose lanes are not adjacent (0: none)
    std::vector<AliasedCost> aliased;  // its loads at aliasing strides that cost time
};

struct PipelineCost {
    CostTerms total;
    std::map<std::string, FuncCost> funcs;  // the Funcs computed (not inlined) in the candidate
    bool sampled = false;  // from counts that reached their budget of loop visits (LoopCounts::sampled)
};

// `env`: the pipeline's Funcs (for their types); `outputs`: their names;
// `input_bytes`: each input buffer's size in bytes; `baseline`: the counts
// of the all-root schedule (for the recompute factors; may be empty).
// For explanations: "12.0 KiB" (MiB from 4 MiB up), "1.234 ms" (of ns).
std::string kib(int64_t bytes);
std::string ms(double ns);
// A loop by the name a schedule gives it: "k.x" of "matmul.s1.k.x".
std::string loop_name(const std::string &loop);

PipelineCost predict_cost(const LoopCounts &counts, const LoopCounts &baseline, const Environment &env,
                          const std::vector<std::string> &outputs, const std::map<std::string, int64_t> &input_bytes,
                          const MachineModel &m);

}  // namespace internal
}  // namespace kiln
