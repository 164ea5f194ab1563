// The machine description of the Kiln tile-NPU: every size and rate the
// simulator, the code generator and its legality checks use, read from a
// JSON file (runtime/npu/machine.json is the default, embedded at build
// time; docs/npu.md explains each figure and the assumption behind it).
#ifndef KILN_NPU_MACHINE_H
#define KILN_NPU_MACHINE_H

#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include "npu_isa.h"

namespace kiln {
namespace npu {

struct DmaRate {
    uint64_t latency = 0;          // cycles from start to completion beyond the transfer
    uint64_t bytes_per_cycle = 1;  // the pipe is busy ceil(bytes / this) cycles
};

// A kind of core: the memories and pipes its cores have, and how many of
// them a group holds. A unified machine has one kind with every memory and
// pipe (the default machine.json); a split machine (machine_split.json) has
// cube cores (L1, L0A, L0B, L0C; MTE2, MTE1, M, FIX) and vector cores (UB;
// MTE2, V, MTE3), one cube and two vector cores a group, which exchange
// data through GM and order it with cross-core flags (SET_CROSS, WAIT_CROSS).
struct CoreKind {
    std::string name;
    int count = 1;      // cores of this kind on the machine
    int per_group = 1;  // cores of this kind in one group
    bool mem[kNumMems] = {};
    bool pipe[kNumPipes] = {};

    bool has(Mem m) const { return mem[(int)m]; }
    bool has(Pipe p) const { return p != Pipe::ALL && pipe[(int)p]; }
};

struct Machine {
    std::string name;
    int cores = 1;                  // all kinds together
    std::vector<CoreKind> kinds;    // at least one; one: a unified machine
    uint32_t alignment = 32;
    uint64_t mem_bytes[kNumMems] = {};  // capacity per memory; GM: 0 (unbounded)
    uint64_t issue_cycles = 1;          // S dispatches one instruction per issue_cycles
    uint64_t sync_cycles = 1;           // SET_FLAG / WAIT_FLAG pipe occupancy
    uint64_t cross_flag_cycles = 0;     // from a SET_CROSS to its WAIT_CROSS on another core
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
    bool split() const { return kinds.size() > 1; }
    // Groups of the machine (each kind's count / per_group; all agree).
    int groups() const { return kinds.empty() ? cores : kinds[0].count / std::max(1, kinds[0].per_group); }
    // Cores of one group, all kinds.
    int group_size() const {
        int n = 0;
        for (const CoreKind &k : kinds) n += k.per_group;
        return std::max(n, 1);
    }
    // The index of the kind called `kind_name`, or -1.
    int kind_index(const std::string &kind_name) const;
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
// The split cube/vector machine (runtime/npu/machine_split.json) and its text.
const Machine &split_machine();
const char *split_machine_json();

}  // namespace npu
}  // namespace kiln

#endif
