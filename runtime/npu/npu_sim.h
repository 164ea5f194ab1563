// The tile-NPU simulator: runs recorded per-core programs three ways.
//
// - functional (npu_exec.cpp): every instruction in program order, applying
//   the ISA's reference semantics to the core's memories and to GM (cores
//   with cross-core flags: all cores' instructions in the order the timed
//   pass starts them, which every flag's order respects);
// - race check (npu_schedule.cpp): pipes ordered only by their own order, the
//   flags and the barriers; any two accesses to overlapping bytes of one
//   memory, at least one a write, that no chain orders, are reported with
//   both instructions (and GM accesses of different cores that no chain
//   of cross-core flags orders);
// - timed (npu_schedule.cpp): event-driven; S dispatches in program order
//   into one in-order queue per pipe; an instruction starts when its pipe is
//   free, it has been issued, and (WAIT_FLAG) its flag has been set. The
//   cores share the machine's GM bandwidth in equal parts: each core's
//   transfers to and from GM take, cycle by cycle, what is left of its
//   part (GmChannel), so n cores streaming together take n times as long
//   as one where GM is the bound. The cores are timed together: a
//   WAIT_CROSS on one core waits for SET_CROSSes on the others (split
//   machines, npu_machine.h), and GM accesses of different cores are
//   ordered only through such flags.
//
// The report (npu_report.cpp) gives cycles, per-pipe busy ratios, DMA bytes
// per direction, instruction counts, flag stalls, peak occupancy of every
// memory and named buffer, and a Chrome-trace JSON (one track per pipe).
#ifndef KILN_NPU_SIM_H
#define KILN_NPU_SIM_H

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "npu_isa.h"
#include "npu_machine.h"

namespace kiln {
namespace npu {

struct GmBuffer {
    std::string name;
    DType type = DType::F32;
    void *host = nullptr;
    uint64_t elems = 0;
};

struct CoreProgram {
    std::vector<Instr> instrs;
    std::vector<std::string> tile_names;
    int kind = 0;    // index into Machine::kinds
    int group = 0;   // cross-core flags join the cores of one group
};

struct SimOptions {
    bool functional = true;        // execute (else only check and time)
    bool check_races = true;
    bool races_are_errors = false; // throw NpuError listing the races
    bool trace = false;            // keep per-instruction events for trace_json()
};

struct Race {
    int core = 0;
    int first = 0, second = 0;   // instruction indices (in their core's program)
    int first_core = 0;          // differs from core for GM races between cores
    std::string text;            // both instructions and the overlapping range
};

struct TraceEvent {
    int core = 0, instr = 0;
    Pipe pipe = Pipe::S;
    uint64_t start = 0, end = 0;  // end: completion (DMA includes its latency)
    uint64_t busy = 0;            // cycles the pipe was occupied from start
    std::string text;             // describe() of the instruction
};

struct PipeStats {
    uint64_t busy = 0;        // cycles the pipe was occupied
    uint64_t stall = 0;       // cycles its WAIT_FLAGs waited for a set
    uint64_t instrs = 0;
};

// The figures of one core (a multi-core run balances when they agree).
struct CoreFigures {
    uint64_t cycles = 0;
    uint64_t busy[kNumPipes] = {};  // busy cycles per pipe
    uint64_t gm_read_bytes = 0, gm_write_bytes = 0;
    uint64_t instructions = 0;
    uint64_t gm_wait = 0;           // cycles its GM transfers ran longer for the shared GM bandwidth
    int kind = 0;                   // index into SimReport::kinds
};

struct SimReport {
    std::string machine;
    std::vector<std::string> kinds;                // the machine's kinds of core (CoreKind::name)
    int cores = 0;
    uint64_t cycles = 0;                           // the slowest core
    std::vector<uint64_t> core_cycles;
    std::vector<CoreFigures> per_core;             // in core order
    PipeStats pipes[kNumPipes];                    // summed over cores
    std::map<std::string, uint64_t> dma_bytes;     // "GM->UB", "UB->GM", ...
    uint64_t gm_read_bytes = 0, gm_write_bytes = 0;
    uint64_t gm_wait = 0;                          // summed over cores: see CoreFigures::gm_wait
    // A split machine's GM round trip: bytes cores of one kind write to GM
    // buffers that cores of another kind read, and the bytes those read
    // from them (a cube core's accumulator through a workspace to its
    // vector cores); the kernel's inputs and outputs do not count.
    uint64_t exchange_write_bytes = 0, exchange_read_bytes = 0;
    std::map<std::string, uint64_t> family_counts; // "dma", "vector", "matrix", "sync"
    std::map<std::string, uint64_t> op_counts;     // "TADD", ...
    uint64_t peak_bytes[kNumMems] = {};            // highest byte used per memory (max over cores)
    std::map<std::string, uint64_t> buffer_bytes;  // per named tile buffer: bytes it spans
    std::vector<Race> races;
    uint64_t race_count = 0;                       // races found (races keeps the first few)
    std::vector<TraceEvent> events;                // with SimOptions::trace

    // Busy cycles of a pipe over (cycles x cores).
    double busy_ratio(Pipe p) const;
    std::string text() const;        // a human-readable summary
    std::string json() const;        // the same figures as JSON
    std::string trace_json() const;  // Chrome trace (Perfetto, chrome://tracing): pid = core, tid = pipe
};

// Runs the programs (one per core) on `buffers` (GM). Throws NpuError on a
// deadlock, an out-of-bounds GM access, or races when races_are_errors.
SimReport simulate(const Machine &m, const std::vector<GmBuffer> &buffers, const std::vector<CoreProgram> &programs,
                   const SimOptions &options);

// ---- pieces of simulate(), one file each ----

// Functional execution of one instruction (npu_exec.cpp). `mems` holds one
// byte array per on-chip memory of the core.
void execute(const Instr &in, std::vector<uint8_t> (&mems)[kNumMems], const std::vector<GmBuffer> &buffers);

// One core's part of the GM bandwidth the cores share
// (Machine::gm_bytes_per_cycle), as the bytes its transfers scheduled so
// far take in each cycle (its MTE2, MTE3 and fix pipe share it).
class GmChannel {
public:
    // bytes_per_cycle 0: unbounded (every transfer runs at its own rate).
    explicit GmChannel(uint64_t bytes_per_cycle) : capacity_(bytes_per_cycle) {}
    // A transfer of `bytes` to or from GM at up to `rate` bytes a cycle
    // starting at cycle `begin`: takes, each cycle, what is left of the
    // shared rate and returns the cycles it runs (ceil(bytes / rate) when
    // nothing else moves GM bytes then).
    uint64_t transfer(uint64_t begin, uint64_t bytes, uint64_t rate);

private:
    uint64_t capacity_;
    std::vector<uint64_t> taken_;  // per cycle, from cycle 0
};

// A core's part of GM's bandwidth when `streaming` cores move GM bytes:
// gm_bytes_per_cycle / streaming, rounded down (at least 1); 0 (unbounded)
// when the machine does not share GM.
uint64_t gm_share(const Machine &m, int streaming);

// Timing and race check of one core's program (npu_schedule.cpp): fills the
// report's cycles, pipe stats, events (if trace) and races of that core.
// Its GM transfers take their bandwidth from `gm` if given (the core's part
// of the shared GM), else run at their pipes' rates.
void schedule_core(const Machine &m, const CoreProgram &p, int core, const SimOptions &options, SimReport &r,
                   GmChannel *gm = nullptr);

// The static figures of one core's program (npu_report.cpp): instruction
// counts, DMA bytes per direction, peak occupancy per memory and buffer.
void count_program(const CoreProgram &p, SimReport &r);

// Timing and race check of every core's program together (npu_schedule.cpp):
// one pass advances whichever core can go on, so a WAIT_CROSS waits for
// another core's SET_CROSS; throws NpuError naming every stuck core's
// queue heads on a deadlock. Each core's GM transfers share
// `gm_share` bytes a cycle (gm_share()). Checks GM accesses of different
// cores for races (ordered only through cross-core flags) and fills the
// report in core order. Returns each core's instructions' start cycles
// when a program holds cross-core flags (else empty vectors).
std::vector<std::vector<uint64_t>> schedule_cores(const Machine &m, const std::vector<CoreProgram> &programs,
                                                  const SimOptions &options, SimReport &r, uint64_t gm_share);

// The bytes an operand touches: rows of `width` bytes, `stride` apart.
struct Region {
    int space = 0;   // a memory (Mem) of the core, or kNumMems + GM buffer index
    uint64_t base = 0, stride = 0, width = 0, rows = 0;
    uint64_t end() const { return rows == 0 ? base : base + (rows - 1) * stride + width; }
};
bool overlap(const Region &a, const Region &b);
// The regions `in` reads and writes (npu_schedule.cpp).
void instr_regions(const Instr &in, std::vector<Region> &reads, std::vector<Region> &writes);

}  // namespace npu
}  // namespace kiln

#endif
