// Live ranges of a tile-NPU kernel's on-chip buffers, and the interval
// allocator that lets buffers whose ranges do not overlap share bytes
// (npu_place_buffers, NpuPlaceBuffers.cpp, uses both).
//
// Time counts the kernel's tile instructions in program order (each loop
// body once): instruction p writes its destination at 2p + 1. A source that
// an elementwise instruction reads at exactly the shape of its destination
// is read at 2p, so the destination may take its bytes (the op then runs in
// place, element by element); every other source is read at 2p + 1 and
// never shares with the destination. The destination takes the source's
// bytes exactly (the same offset) or none of them: shifted, it would
// overwrite elements of the source not read yet.
// A loop repeats its body: a buffer accessed in a loop whose value crosses
// iterations (its first access there is not a write of the whole buffer) or
// that is accessed outside the loop too is live over the whole loop.
//
//   for (yo) { TLOAD in; TROWMAX m <- in; TROWEXPANDSUB e <- in, m; TEXP e <- e;
//              TROWSUM s <- e; TROWEXPANDDIV o <- e, s; TSTORE o }
//   ->  in [1, 4], m [3, 5], e [5, 10], s [9, 11], o [11, 13]:
//       e may take in's bytes, o e's, s m's
#pragma once

#include <cstdint>
#include <functional>
#include <vector>

#include "NpuKernel.h"

namespace kiln {
namespace internal {

struct NpuLiveRange {
    int64_t first = 0, last = -1;  // inclusive times; empty (never accessed) when last < first
    bool dma_written = false;      // written by a DMA (loaded, or moved in)
    bool dma_read = false;         // read by a DMA (stored, or moved on)
    bool compute_read = false;     // read by the vector or matrix unit
    bool overlaps(const NpuLiveRange &o) const {
        return first <= last && o.first <= o.last && first <= o.last && o.first <= last;
    }
};

// The live range of every buffer of k (indexed as k.buffers).
std::vector<NpuLiveRange> npu_live_ranges(const NpuKernel &k);

// Offsets, multiples of `alignment`, for blocks of `bytes[i]` bytes, such
// that two blocks share a byte only if their ranges do not overlap and
// may_share(i, j) allows it, and two whose ranges touch (an instruction
// run in place) only at the same offset: the largest block first (ties: the earlier
// range, then the lower index), each at the lowest offset that fits.
// Deterministic. Returns the peak: the end of the highest block, aligned.
uint64_t npu_first_fit(const std::vector<uint64_t> &bytes, const std::vector<NpuLiveRange> &live, uint64_t alignment,
                       const std::function<bool(size_t, size_t)> &may_share, std::vector<uint64_t> &offsets);

}  // namespace internal
}  // namespace kiln
