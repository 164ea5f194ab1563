// On-chip buffer placement for tile-NPU kernels, after instruction
// selection (NpuSelect.cpp) and before sync insertion: every buffer gets
// an address in its memory, in order, each rounded up to the machine's
// alignment (both copies of a double-buffered one), on the machine of
// $KILN_NPU_MACHINE or the default one. A memory that overflows is a user
// error naming each Func's share.
//
//   stage1.t0: 16 x 64 f32 in UB, stage1: 16 x 64 f32 x 2 in UB
//   ->
//   stage1.t0 at UB+0, stage1 at UB+4096 (8192 bytes: two copies)
#include <cstdlib>
#include <sstream>

#include "NpuKernel.h"
#include "ir/Error.h"
#include "npu_machine.h"

namespace kiln {
namespace internal {

NpuKernel npu_place_buffers(NpuKernel k) {
    const char *path = std::getenv("KILN_NPU_MACHINE");
    npu::Machine m = npu::default_machine();
    try {
        if (path && *path) m = npu::load_machine(path);
    } catch (const npu::NpuError &e) {
        user_error << "NPU target: KILN_NPU_MACHINE: " << e.what();
    }
    std::map<std::string, uint64_t> next;
    std::map<std::string, std::map<std::string, uint64_t>> share;  // memory -> Func -> bytes
    std::map<std::string, npu::Mem> mems;
    for (NpuBuffer &b : k.buffers) {
        const char *mem = npu::mem_name(b.memory);
        uint64_t &addr = next[mem];
        b.addr = (int)addr;
        uint64_t bytes = (uint64_t)b.bytes() * b.copies;
        addr += (bytes + m.alignment - 1) / m.alignment * m.alignment;
        share[mem][b.owner] += bytes;
        mems[mem] = b.memory;
    }
    for (const auto &kv : next) {
        uint64_t cap = m.capacity(mems.at(kv.first)), used = kv.second;
        if (used <= cap) continue;
        std::ostringstream s;
        s << "NPU target: the buffers of this schedule need " << used << " bytes of " << kv.first
          << " but the machine has " << cap << " (over by " << used - cap
          << "). Each Func's share (its buffer, staged inputs and temporaries):";
        for (const auto &f : share[kv.first]) s << " " << f.first << " " << f.second;
        s << ". Use smaller tiles (the constant extents of the tile loops), drop double_buffer() on a Func, or "
             "compute_root() a Func so that it goes through GM";
        user_error << s.str();
    }
    return k;
}

}  // namespace internal
}  // namespace kiln
