// The fusion report: what a schedule does to each Func — where it is
// computed and stored, how big one realization is, how many points are
// computed (and recomputed), and how many bytes go to and from memory —
// beside the same pipeline with every computed Func moved to compute_root
// (the unfused baseline).
//
// Counts come from walking the lowered loop nest with concrete sizes: the
// output sizes you give, input sizes (default: as large as the largest
// output), and the current values of scalar Params. Memory model (an
// assumption, stated in every report): an allocation of at most
// `cache_bytes` (default 1 MiB) stays in cache and moves no memory traffic;
// a larger one is written to memory once per point its pure definition
// stores and read back once per such point (the updates of a reduction
// modify those points in place and add no traffic). Inputs are read once
// and outputs written once in both the schedule and the baseline.
//
// For an NPU target the report also gives the GM traffic as the NPU moves
// it (no cache: per iteration of the loops holding the tiles, the box each
// tile reads of an input or GM Func and writes of an output, rows in whole
// 32-byte blocks; dsl/analysis/NpuTraffic.h): a stencil reads its halo
// again with every tile.
#pragma once
#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace kiln {

struct FuncReport {
    std::string name;
    bool is_output = false;
    bool inlined = false;                    // computed in place at every use (no storage)
    std::string boundary_condition;          // made by BoundaryConditions::<this> ("repeat_edge"), not
                                             // by the user; empty for the user's own Funcs
    std::string compute_level, store_level;  // "root", "blur_y.x", ...
    std::vector<int64_t> allocation;         // extents of the largest realization (folded dims at their fold)
    int64_t allocation_bytes = 0;
    int64_t realizations = 0;                // how many times its storage is allocated
    int64_t points_computed = 0;             // values stored, all definitions (inlined: evaluations)
    int64_t points_computed_unfused = 0;     // the same in the baseline (inlined: points if compute_root)
    double recompute = 0;                    // points_computed / points_computed_unfused: how many
                                             // times each value is computed, on average
    int64_t reads = 0;                       // values read by consumers (loads)
    bool in_memory = false;                  // allocation larger than the cache
    int64_t memory_bytes = 0;                // written + read back when in memory (points of the pure definition)
    int64_t memory_bytes_unfused = 0;
    // For a Func stored outside the loop it is computed in: whether its
    // region slides over that loop, and its fold, e.g.
    //   "slides over out.y in y, window of 3, folded to 4"
    //   "not slid over out.y: it has update definitions"
    // Empty for other Funcs.
    std::string sliding;
};

struct PipelineReport {
    std::string pipeline;
    std::map<std::string, std::vector<int>> sizes;  // the buffer sizes the report assumes
    std::vector<std::string> assumed;  // inputs whose size was not given: as large as the largest
                                       // output, 1 in the dimensions the outputs lack
    int64_t cache_bytes = 1 << 20;
    std::vector<FuncReport> funcs;  // realization order (producers first)
    int64_t input_bytes = 0, output_bytes = 0;
    int64_t memory_bytes = 0, memory_bytes_unfused = 0;  // totals, inputs and outputs included
    int64_t bytes_saved() const { return memory_bytes_unfused - memory_bytes; }
    bool exact = true;  // false if some loop bound could not be evaluated
    // true if counting reached its budget of loop visits and took some
    // loops' first iterations for all of theirs (an estimate)
    bool sampled = false;
    // NPU targets: GM bytes read and written by the schedule's tiles (-1: not an NPU target)
    int64_t npu_read_bytes = -1, npu_write_bytes = -1;
    bool npu_exact = true;  // false if a tile's box could not be evaluated or changes size
    int64_t npu_memory_bytes() const { return npu_read_bytes < 0 ? -1 : npu_read_bytes + npu_write_bytes; }

    std::string to_text() const;
    std::string to_json() const;
};

}  // namespace kiln
