// On-chip buffer placement for tile-NPU kernels, after instruction
// selection (NpuSelect.cpp) and before sync insertion: every buffer gets
// an address in its memory, on the machine of $KILN_NPU_MACHINE or the
// default one. Buffers whose live ranges (NpuLiveness.h) do not overlap
// share bytes, placed first fit at the machine's alignment.
//
// A double-buffered buffer has two copies used by alternate iterations, so
// the double-buffered buffers of a memory are placed in one half (copy 0)
// repeated at the half's size (copy 1): buffers sharing bytes then share
// them in the same copy only, which the sync inserter's per-copy flags
// order, and only when their copies alternate with the same loop (a
// k-slice's with the slice loop, a tile's with the tile loop: the depth
// npu_buffer_levels gives them). Single buffers go after both halves.
//
// Sharing orders the accesses of the buffers that share (NpuSync.cpp adds
// the flags). Between buffers only the vector pipe touches that costs
// nothing (the pipe runs in order), but a DMA that waits for another
// buffer's last reader (a load for the vector op at the end of an earlier
// tile, or for an earlier store) can stall the pipeline. So placement
// tries four rules and keeps the first that fits the memory: only
// vector-only buffers share; also a DMA's buffer with a vector-only one;
// any two whose live ranges are disjoint, except that a buffer a DMA writes
// (a load, the fix pipe's move out of L0C) never takes the bytes of one the
// vector or matrix unit reads before it (the transfer would wait for that
// read and could not run ahead: flash attention's P V, moved L0C -> UB over
// the merge's rescale column, waited for the merge every block); any two.
// A memory that overflows even so is a user error naming each Func's share.
//
//   in (loaded) [1, 4], t0 (vector only) [3, 6], t1 (vector only) [7, 9]: 16 x 64 f32 x 2 each
//   ->
//   in at UB+0, t0 at UB+4096, t1 at UB+4096 (copies 1 at UB+8192 and UB+12288)
#include <cstdlib>
#include <sstream>

#include "NpuKernel.h"
#include "NpuLiveness.h"
#include "ir/Error.h"
#include "npu_machine.h"

namespace kiln {
namespace internal {

bool npu_buffers_overlap(const NpuBuffer &a, const NpuBuffer &b) {
    if (a.memory != b.memory) return false;
    for (int i = 0; i < a.copies; i++)
        for (int j = 0; j < b.copies; j++) {
            int64_t a0 = (int64_t)a.addr + (int64_t)i * a.stride(), b0 = (int64_t)b.addr + (int64_t)j * b.stride();
            if (a0 < b0 + b.bytes() && b0 < a0 + a.bytes()) return true;
        }
    return false;
}

namespace {

// Which pairs may share bytes: each rule allows more than the one before,
// but for OneDma and AnyButDmaAfterRead, neither of which allows all the other does.
enum class Share { VectorOnly, OneDma, AnyButDmaAfterRead, Any };

// Places the buffers `which` of one memory; returns its peak bytes.
uint64_t place(NpuKernel &k, const std::vector<int> &which, const std::vector<NpuLiveRange> &live, uint64_t alignment,
               Share rule) {
    std::vector<uint64_t> halves[2];  // copy 0 of double-buffered ones, single ones
    std::vector<NpuLiveRange> ranges[2];
    std::vector<int> index[2];
    for (int b : which) {
        int s = k.buffers[b].copies > 1 ? 0 : 1;
        halves[s].push_back((uint64_t)k.buffers[b].bytes());
        ranges[s].push_back(live[b]);
        index[s].push_back(b);
    }
    uint64_t peak[2];
    std::vector<uint64_t> offsets[2];
    for (int s = 0; s < 2; s++) {
        const std::vector<NpuLiveRange> &r = ranges[s];
        peak[s] = npu_first_fit(halves[s], r, alignment,
                                [&](size_t i, size_t j) {
                                    // Copies that alternate with different loops (a k-slice and a
                                    // tile's buffer) are never at the same bytes.
                                    if (k.buffers[index[s][i]].depth != k.buffers[index[s][j]].depth) return false;
                                    int dmas = (r[i].dma_written || r[i].dma_read) + (r[j].dma_written || r[j].dma_read);
                                    // A DMA writing b after the vector or matrix unit read a.
                                    auto waits = [&](const NpuLiveRange &a, const NpuLiveRange &b) {
                                        return a.compute_read && b.dma_written && a.last < b.first;
                                    };
                                    if (rule == Share::AnyButDmaAfterRead)
                                        return !waits(r[i], r[j]) && !waits(r[j], r[i]);
                                    return rule == Share::Any || dmas == 0 || (rule == Share::OneDma && dmas == 1);
                                },
                                offsets[s]);
    }
    for (int s = 0; s < 2; s++)
        for (size_t i = 0; i < index[s].size(); i++) {
            NpuBuffer &b = k.buffers[index[s][i]];
            b.addr = (int)(s == 0 ? offsets[0][i] : 2 * peak[0] + offsets[1][i]);
            b.copy_stride = s == 0 ? (int)peak[0] : 0;
        }
    return 2 * peak[0] + peak[1];
}

}  // namespace

npu::Machine npu_target_machine() {
    const char *path = std::getenv("KILN_NPU_MACHINE");
    if (!path || !*path) return npu::default_machine();
    npu::Machine m;
    try {
        m = npu::load_machine(path);
    } catch (const npu::NpuError &e) {
        user_error << "NPU target: KILN_NPU_MACHINE: " << e.what();
    }
    // A split machine's kernels are one per kind of core (cube, vector), which
    // the code generator does not write yet: refused rather than run wrongly.
    if (m.split())
        user_error << "NPU target: KILN_NPU_MACHINE: machine '" << m.name << "' (" << path << ") has "
                   << m.kinds.size() << " kinds of core (" << m.kinds[0].name << ", " << m.kinds[1].name
                   << "...); the code generator targets a unified machine (one kind of core with every memory "
                      "and pipe, like runtime/npu/machine.json); a split machine runs hand-written kernels "
                      "(Device::run_groups, docs/npu.md)";
    return m;
}

NpuKernel npu_place_buffers(NpuKernel k, bool refuse_overflow) {
    const npu::Machine m = npu_target_machine();
    npu_buffer_levels(k);
    const std::vector<NpuLiveRange> live = npu_live_ranges(k);
    std::map<std::string, std::vector<int>> by_mem;
    std::map<std::string, std::map<std::string, uint64_t>> share;  // memory -> Func -> bytes
    for (size_t i = 0; i < k.buffers.size(); i++) {
        const NpuBuffer &b = k.buffers[i];
        const char *mem = npu::mem_name(b.memory);
        by_mem[mem].push_back((int)i);
        uint64_t bytes = (uint64_t)b.bytes() * b.copies;
        share[mem][b.owner] += bytes;
        k.placement[mem].unshared += (bytes + m.alignment - 1) / m.alignment * m.alignment;
    }
    for (const auto &[mem, which] : by_mem) {
        uint64_t cap = m.capacity(k.buffers[which[0]].memory);
        uint64_t used = 0;
        for (Share rule : {Share::VectorOnly, Share::OneDma, Share::AnyButDmaAfterRead, Share::Any})
            if ((used = place(k, which, live, m.alignment, rule)) <= cap) break;
        k.placement[mem].peak = used;
        k.placement[mem].capacity = cap;
        if (used <= cap) continue;
        std::ostringstream s;
        s << "NPU target: the buffers of this schedule need " << used << " bytes of " << mem
          << " at once (buffers whose lifetimes do not overlap share bytes; " << k.placement[mem].unshared
          << " without sharing) but the machine has " << cap << " (over by " << used - cap
          << "). Each Func's share (its buffer, staged inputs and temporaries, without sharing):";
        for (const auto &f : share[mem]) s << " " << f.first << " " << f.second;
        s << ". Use smaller tiles (the constant extents of the tile loops), drop double_buffer() on a Func, or "
             "compute_root() a Func so that it goes through GM";
        if (refuse_overflow) user_error << s.str();
        if (k.overflow.empty()) k.overflow = s.str();
    }
    return k;
}

}  // namespace internal
}  // namespace kiln
