// The GM traffic of a tile-NPU schedule, counted from its loop nest (the
// fusion report's model for NPU targets; docs/npu.md, "The fusion report").
//
// The NPU moves data between GM and the core in tiles: the innermost two
// loops of a stage (three for a matrix update into L0C) are one tile, and
// the loops around them hold it. Per iteration of the loops holding a
// group of tiles, each GM buffer (an input, a Func in GM, an output) is
// moved once as the box those tiles read (or write) of it, edge clamps
// removed (the DMA replicates the edges itself), each 2-D plane's rows
// rounded up to whole 32-byte blocks, as the DMA moves them. A box that
// does not move with any holding loop is moved once, before the loops.
//
//   for (yo, 0, 4) for (xo, 0, 16) {
//     for (blur_x.y, 32*yo - 1, 34) for (blur_x.x, 64*xo, 64)
//       blur_x(x, y) = input(clamp(x - 1, ...), ...) + input(x, ...) + input(x + 1, ...)
//     for (yi, 0, 32) for (xi, 0, 64) output(...) = blur_x(...) + ...
//   }
//   -> input: 64 iterations x 34 rows x 288 bytes (66 floats = 264, rounded) = 626688 read
//      output: 64 x 32 rows x 256 bytes = 524288 written
#pragma once
#include <cstdint>
#include <map>
#include <set>
#include <string>

#include "ir/IR.h"

namespace kiln {
namespace internal {

struct NpuTraffic {
    std::map<std::string, int64_t> read_bytes, write_bytes;  // per GM buffer
    int64_t reads() const;
    int64_t writes() const;
    bool exact = true;  // false if a box's size could not be evaluated or varies between iterations
};

// `gm`: the GM buffers to count and the bytes of one element of each;
// `tile_loops`: Funcs whose tiles span more than 2 loops (a matrix update
// into L0C: 3); `values`: the concrete sizes and scalars (ConcreteSizes'
// substitutions).
NpuTraffic npu_gm_traffic(const Stmt &loop_nest, const std::map<std::string, int> &gm,
                          const std::map<std::string, int> &tile_loops, const std::map<std::string, Expr> &values);

}  // namespace internal
}  // namespace kiln
