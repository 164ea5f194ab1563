// The tile-NPU kernel that the NPU's passes, after lower() stopped at
// LowerStop::LoopNest (Realize/Provide form), build and CodeGen_NPU.cpp
// prints; KILN_DEBUG shows it after each of them:
//   npu_select_kernel (NpuSelect.cpp): instruction selection, a tree of
//     items: lines of scalar C++ (the S pipe's loops and lets), loops, and
//     typed tile instructions (npu::Op and operands; the pipe from the ISA
//     table, the on-chip buffers read and written from the operands);
//   npu_place_buffers (NpuPlaceBuffers.cpp): addresses in on-chip memories,
//     shared by buffers whose live ranges do not overlap (NpuLiveness.h);
//   npu_software_pipeline (NpuPipeline.cpp): loops rotated by one stage, each
//     instruction guarded by its stage;
//   npu_insert_sync (NpuSync.cpp): the SET_FLAG / WAIT_FLAG pairs and
//     barriers, instructions too (their operands C++).
//
//   for (output.s0.y.yo, ...) for (output.s0.x.xo, ...)       loop
//     produce stage1: for y: for x: stage1(x, y) = exp(input(x, y))
//                                                   ->  TLOAD  stage1.in0 <- input    MTE2 writes 1
//                                                       TEXP   stage1 <- stage1.in0   V reads 1, writes 0
#pragma once

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "ir/Function.h"
#include "kiln/Target.h"
#include "npu_isa.h"
#include "npu_machine.h"

namespace kiln {
namespace internal {

// The C++ identifier of an IR name in emitted NPU kernels ("f.s0.x" -> "v_f_s0_x").
std::string npu_c_name(const std::string &ir_name);

// The NPU element type of a buffer or Func of float type t: F32, F16 or
// BF16; U8 (none) for any other type.
npu::DType npu_float_dtype(const Type &t);
// The NPU element type of any type the NPU holds: the float types above,
// I8 for int8 (matrix operands, requantized outputs) and I32 for int32
// (accumulators, biases); U8 (none) for any other type.
npu::DType npu_dtype(const Type &t);

// An on-chip buffer: a Func's storage, or a tile a stage stages or computes.
struct NpuBuffer {
    std::string name;   // "stage1", or "stage1.t0" for a temporary of stage1's tile
    std::string owner;  // the Func whose stage or storage it is (overflow reports)
    npu::Mem memory = npu::Mem::UB;
    npu::DType dtype = npu::DType::F32;  // F32, F16 / BF16 (16-bit data), or U8 for compare masks
    int rows = 0, cols = 0;  // cols padded to the 32-byte alignment
    int copies = 1;          // 2 when double-buffered
    int depth = 0;           // copies alternate with the loop this many loops inside its nest's outermost
                             // loop body with instructions (set by npu_insert_sync)
    int addr = 0;            // bytes from the start of its memory, assigned after selection
    int copy_stride = 0;     // bytes from one copy to the next (0: bytes()), assigned with addr
    int ring_slots = 0;      // > 0: an operand ring of this many slice slots (NpuRing), ordered by its own flags
    int bytes() const { return rows * cols * npu::dtype_size(dtype); }
    int stride() const { return copy_stride ? copy_stride : bytes(); }
};

// a and b (placed) share a byte of their memory in some copy.
bool npu_buffers_overlap(const NpuBuffer &a, const NpuBuffer &b);

// What buffer placement did to one memory: the peak bytes of the buffers
// live at once (as placed) and their sum without sharing.
struct NpuPlacement {
    uint64_t peak = 0, unshared = 0;
    uint64_t capacity = 0;      // the machine's bytes of this memory
    // > 0: the peak (over the capacity) of the kernel that computed each
    // repeated subexpression of a tile once; this one recomputes them
    // (npu_select_and_place).
    uint64_t sharing_peak = 0;
};

// An operand ring (NpuSelectMatrix.cpp, make_rings): an L1 panel read in
// `slices` k-slices per panel, held in `slots` slice slots (slots > slices
// when L1 has room), slice s of panel p (trips of the panel loop from 0) in
// slot (p * slices + s) % slots. The first panel is loaded by its first row
// tile, as any panel loaded in k-slices; panel p + 1's slice s by panel p's
// row tile min(tiles - 1, 1 + s * (tiles - 1) / (slots - slices)), after
// it moved slice s: spread over the tiles after the first, each into a slot
// that panel p's last tile has freed by then. npu_insert_sync orders the
// ring as queues: one event counts free slots (set slots - slices times
// before the nest and after each slice's last move, waited before each
// prefetch), one the first panel's loaded slices and one the prefetched
// ones (set after each load, waited before a slice's first move).
struct NpuRing {
    int slots = 0, slices = 0;
    // > 1: with at least parts + 1 row tiles, the next panel's slices load
    // in `parts` row parts each, one part per slice iteration, over the
    // panel's last slices * parts slice iterations (part j of the stream,
    // slice j / parts, at iteration tile * slices + slice - (tiles - parts)
    // * slices); the whole slices above with fewer tiles.
    int parts = 1;
    std::string panel, tile, slice;                  // the loops' C++ variables
    std::string panel_min, panel_extent, tile_min, tile_extent, slice_min;  // C++
    // Where an instruction or flag of the ring runs.
    enum Point { None, FirstLoad, Prefetch, Part, PartStart, PartEnd, FirstUse, PrefetchedUse, LastUse } point = None;
};
// The C++ condition of point p of ring r (empty: always).
std::string npu_ring_guard(const NpuRing &r, NpuRing::Point p);
// Whether point p runs on trip `panel` of `panels`, `tile` of `tiles`, and
// trip `slice` of the slice loop (trips from 0): npu_ring_guard's value.
bool npu_ring_runs(const NpuRing &r, NpuRing::Point p, int64_t panel, int64_t panels, int64_t tile, int64_t tiles,
                   int64_t slice);

// An operand of a tile instruction: the top-left rows x cols of buffer
// `buffer` from its row `row0` on; else C++ the S pipe computes, a GM
// window (GlobalTensor::at) or a scalar.
struct NpuArg {
    int buffer = -1;
    int rows = 0, cols = 0, row0 = 0;
    std::string code;
    std::string row0_code;  // a tile: rows from this C++ row offset on (a k-slice of an L1 panel)
};

struct NpuItem {
    enum Kind { Line, Loop, Instr } kind = Line;
    std::string text;                // Line: a statement; Loop: "for (...)"
    std::vector<NpuItem> body;       // Loop
    int64_t trips = -1;              // Loop: its trip count where the extent is a constant (the NPU
                                     // search lowers with the estimated sizes substituted), else -1
    std::string var, min, extent;    // Loop: its variable, first value and extent, C++
    bool across_cores = false;       // Loop: core i runs the trips min + i, min + i + cores, ... (parallel)
    npu::Op op = npu::Op::TCOPY;     // Instr: op(args...), TMOV_T when transposing, TCMP's mode last
    std::vector<NpuArg> args;
    bool transpose = false;
    std::string first_if;            // TMATMUL_ACC: a TMATMUL (from 0) when this C++ holds (split K's first slice)
    bool fix = false;                // TSTORE from L0C with a fix-pipe epilogue: args[2], when there, the bias
    bool relu = false;               //   ReLU on the way
    std::string scale;               //   C++ of the scale, if any
    npu::DType gm_type = npu::DType::F32;  //   the output's type in GM (the accumulator's is wider)
    npu::Cmp cmp = npu::Cmp::EQ;
    npu::Pipe pipe = npu::Pipe::S;   // Instr: from the ISA table
    // SET_FLAG / WAIT_FLAG (also as C++ in args): the pipes and the event,
    // plus the iteration parity of loop level `event_parity` if >= 0
    // (kiln_pp, kiln_pp1, ...); PIPE_BARRIER: flag_src is the pipe.
    npu::Pipe flag_src = npu::Pipe::S, flag_dst = npu::Pipe::S;
    int event = 0, event_parity = -1;
    int advances_parity = -1;        // Line: kiln_pp<level> = kiln_iter<level>++ & 1, this level
    std::vector<int> reads, writes;  // Instr: buffer indices, from the operands
    // Software pipelining (NpuPipeline.cpp): an instruction of the first
    // stage of a pipelined loop (`ahead`: it works on the next iteration's
    // copies of the loop's double-buffered buffers) has stage 0, one of the
    // second stage stage 1; each runs only when `guard` (C++) holds, the
    // first stage on all trips but the last, the second on all but the
    // first. npu_insert_sync sets ahead_level to the level of the loop. A
    // Loop marked `pipelined` is a rotated loop: one trip more than its
    // `trips`, which stay those of the loop as written.
    bool ahead = false, pipelined = false;
    int stage = -1;
    std::string guard;
    int ahead_level = -1;
    // A k-slice of an L1 panel loaded as the first tile reads it
    // (NpuSelectMatrix.cpp): the instruction accesses the panel's rows of
    // this iteration of loop `slice_var` (C++), one of `slices` disjoint
    // ranges the loop runs over in order, so it conflicts only with the
    // same range `slices` iterations before (npu_insert_sync's ring flags).
    // The load runs on the first trip of the loops `first_trip` (C++
    // variables, outermost first) only, as its `guard` says.
    int slices = 0;
    std::string slice_var;
    std::vector<std::string> first_trip;
    // An instruction or flag of an operand ring (ring.slots > 0): it runs
    // where ring.point says, as its guard (npu_ring_guard) says.
    NpuRing ring;

    static NpuItem line(std::string t) {
        NpuItem i;
        i.text = std::move(t);
        return i;
    }
};

struct NpuKernel {
    std::vector<NpuItem> body;
    std::vector<NpuBuffer> buffers;
    std::vector<std::string> gm_scratch;  // Funcs stored in GM (not outputs), allocated by the stub
    bool multi_core = false;              // a loop runs across cores
    std::map<std::string, NpuPlacement> placement;  // memory name -> its figures (npu_place_buffers)
    int shared_subexpressions = 0;        // repeated tile subexpressions computed once (selection)
    std::string overflow;                 // npu_place_buffers(k, false): why a memory overflows, else empty
    std::vector<std::string> pipelined;   // Funcs scheduled software_pipeline() (selection)
    bool has_ahead = false;               // some instruction is `ahead` (npu_software_pipeline)
};

// The NPU's passes, in order (see above); each may refuse the schedule (a
// user error naming the Func and the fix).
// With share_subexpressions, a subexpression a tile's value computes more
// than once (exp(x) in exp(x) / (exp(x) + 1)) is selected once, its tile
// kept in UB until its last reader.
NpuKernel npu_select_kernel(const std::string &name, const Stmt &loop_nest,
                            const std::map<std::string, std::shared_ptr<FunctionContents>> &env,
                            const std::vector<std::string> &outputs, const Target &t,
                            bool share_subexpressions = true);
// Refuses a memory that overflows (a user error naming each Func's share),
// or with refuse_overflow false returns the kernel with the message in
// k.overflow.
NpuKernel npu_place_buffers(NpuKernel k, bool refuse_overflow = true);
// Selection, then placement: when the tiles of shared subexpressions make a
// memory overflow, selected again recomputing them (the placement's
// sharing_peak says what sharing needed); the overflow error of the kernel
// that recomputes them if that does not fit either.
// With a log, each pass is logged as lower()'s are.
class PassLog;
NpuKernel npu_select_and_place(const std::string &name, const Stmt &loop_nest,
                               const std::map<std::string, std::shared_ptr<FunctionContents>> &env,
                               const std::vector<std::string> &outputs, const Target &t, PassLog *log = nullptr);
// Software pipelining of the loops the Funcs in k.pipelined are computed at
// (NpuPipeline.cpp); after placement (the buffers' live ranges are the
// loop's as written), before sync insertion. Refuses a misuse (a user error
// naming the Func, the loop and the fix).
NpuKernel npu_software_pipeline(NpuKernel k);
// The machine the passes check against: $KILN_NPU_MACHINE's file, else the
// default (a CompileError if the file does not parse).
npu::Machine npu_target_machine();
NpuKernel npu_insert_sync(NpuKernel k);
// Sets each buffer's depth: the nesting level, in its loop nest, of the
// outermost loop body whose instructions access it (NpuSync.cpp).
void npu_buffer_levels(NpuKernel &k);

// An instruction as the C++ call the kernel makes (CodeGen_NPU.cpp).
std::string npu_instr_code(const NpuKernel &k, const NpuItem &i);
// The buffers and the body, as comments and the kernel's C++ (KILN_DEBUG).
std::ostream &operator<<(std::ostream &s, const NpuKernel &k);

}  // namespace internal
}  // namespace kiln
