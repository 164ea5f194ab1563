// The machine description of the Kiln tile-NPU: every size and rate the
// simulator, the code generator and its legality checks use, read from a
// JSON file (runtime/npu/machine.json is the default, embedded at build
// time; docs/npu.md explains each figure and the assumption behind it).
#ifndef KILN_NPU_MACHINE_H
#define KILN_NPU_MACHINE_H

#include <algorithm>
#include <cstdint>
#include <string>

#include "npu_isa.h"

namespace kiln {
namespace npu {

struct DmaRate {
    uint64_t latency = 0;          // cycles from start to completion beyond the transfer
    uint64_t bytes_per_cycle = 1;  // the pipe is busy ceil(bytes / this) cycles
};

struct Machine {
    std::string name;
    int cores = 1;
    uint32_t alignment = 32;
    uint64_t mem_bytes[kNumMems] = {};  // capacity per memory; GM: 0 (unbounded)
    uint64_t issue_cycles = 1;          // S dispatches one instruction per issue_cycles
    uint64_t sync_cycles = 1;           // SET_FLAG / WAIT_FLAG pipe occupancy
    DmaRate dma[kNumPipes];             // indexed by Pipe: MTE2, MTE1, MTE3, FIX
    // GM bandwidth all cores share (gm.bytes_per_cycle): the GM bytes every
    // core's transfers move in one cycle, together; 0: each core's pipes
    // reach GM at their own rates whatever the other cores do.
    uint64_t gm_bytes_per_cycle = 0;
    uint64_t vector_bytes_per_cycle = 256;
    uint64_t transcendental_factor = 4;
    uint64_t reduce_factor = 1;
    uint32_t matrix_m = 16, matrix_n = 16, matrix_k_bytes = 32;
    // k0 per operand type (matrix.k_elements); 0: matrix_k_bytes / the type's size.
    uint32_t matrix_k_elements[kNumDTypes] = {};

    // The k-step of one matrix cycle for operands of type t.
    uint64_t matrix_k(DType t) const {
        uint32_t k = matrix_k_elements[(int)t];
        return k ? k : std::max<uint64_t>(1, matrix_k_bytes / dtype_size(t));
    }

    uint64_t capacity(Mem m) const { return mem_bytes[(int)m]; }
    const DmaRate &rate(Pipe p) const { return dma[(int)p]; }
};

// The default machine (runtime/npu/machine.json).
const Machine &default_machine();
// Parses a machine file's text; throws NpuError naming the missing or bad field.
Machine parse_machine(const std::string &json_text);
// Reads and parses a machine file; throws NpuError if it cannot be read.
Machine load_machine(const std::string &path);
// The default machine file's text.
const char *default_machine_json();

}  // namespace npu
}  // namespace kiln

#endif
