// The Kiln tile-NPU instruction set, described once.
//
// Everything a tool needs to know about an instruction is here: its memories
// and pipes (enums), the operand records an instruction carries (TileRef,
// GmRef, Instr), the table of opcodes (name, family, operand rules), the
// reference semantics of one element (ref_unary, ref_binary, ...) and the
// legality and cost rules. The simulator executes tiles by applying these
// element functions over a tile's valid region (npu_exec.cpp); the tests
// check the simulator against the same element functions with plain loops;
// docs/npu.md documents the same table.
//
// Tiles are row-major: `rows` x `cols` elements allocated at byte address
// `addr` of an on-chip memory, row r at addr + r * cols * size. The valid
// region is the top-left `valid_rows` x `valid_cols` corner; instructions
// read and write only valid regions (the rest of a tile keeps its bytes).
#ifndef KILN_NPU_ISA_H
#define KILN_NPU_ISA_H

#include <cstdint>
#include <stdexcept>
#include <string>

namespace kiln {
namespace npu {

struct Machine;

// Memories of one core (GM is shared by all cores: the host's memory).
enum class Mem : uint8_t { GM, UB, L1, L0A, L0B, L0C };
constexpr int kNumMems = 6;
const char *mem_name(Mem m);

// Pipes run concurrently; each executes its own instructions in order.
enum class Pipe : uint8_t { S, MTE2, MTE1, V, M, MTE3, FIX, ALL };
constexpr int kNumPipes = 7;  // ALL is only a PIPE_BARRIER operand
const char *pipe_name(Pipe p);

// BF16 (the top half of a float32) is a storage type: DMA, moves, TCVT and
// the matrix unit's operands take it; other vector ops compute in f32. I8
// is the matrix unit's integer operand type (summed in i32 in L0C) and a
// fix-pipe output (requantized); DMA moves it, the vector unit refuses it.
enum class DType : uint8_t { F32, F16, I32, U8, BF16, I8 };
constexpr int kNumDTypes = 6;
int dtype_size(DType t);
const char *dtype_name(DType t);

enum class Family : uint8_t { DMA, Vector, Matrix, Sync };
const char *family_name(Family f);

// Compare modes of TCMP.
enum class Cmp : uint8_t { EQ, NE, LT, LE, GT, GE };

// Every instruction once: name, family, and kind, the shape of its operands
// (Binary: dst = a op b; Unary: dst = f(a); TileScalar: dst = a op s;
// Reduce: a row or column of a, reduced; Expand: a row or column of a,
// repeated; ExpandBinary: dst = a op b with b's column (TROWEXPAND*) or
// row (TCOLEXPAND*) repeated, so no expanded tile is materialized; Convert:
// a in dst's type; Special: its own operands). The kind
// gives the Core method of kiln_npu.h (Special ones are written there by
// hand), the operands the checker and the simulator read, and the element
// function (ref_binary, ref_unary) a Binary, Unary, TileScalar, Reduce or
// ExpandBinary instruction applies. A new instruction: a row here, its semantics
// (ref_*), its cost (instr_cost) if it differs from its family's, and
// docs/npu.md.
#define KILN_NPU_FOR_EACH_OP(X)                                                                       \
    X(TLOAD, DMA, Special) X(TSTORE, DMA, Special) X(TMOV, DMA, Special)                               \
    X(TADD, Vector, Binary) X(TSUB, Vector, Binary) X(TMUL, Vector, Binary)                            \
    X(TDIV, Vector, Binary) X(TMAX, Vector, Binary) X(TMIN, Vector, Binary)                            \
    X(TEXP, Vector, Unary) X(TLOG, Vector, Unary) X(TSQRT, Vector, Unary) X(TRSQRT, Vector, Unary)     \
    X(TRECIP, Vector, Unary) X(TRELU, Vector, Unary) X(TTANH, Vector, Unary) X(TABS, Vector, Unary)    \
    X(TNEG, Vector, Unary) X(TCOPY, Vector, Unary)                                                     \
    X(TADDS, Vector, TileScalar) X(TSUBS, Vector, TileScalar) X(TMULS, Vector, TileScalar)             \
    X(TDIVS, Vector, TileScalar) X(TMAXS, Vector, TileScalar) X(TMINS, Vector, TileScalar)             \
    X(TDUP, Vector, Special)                                                                           \
    X(TROWSUM, Vector, Reduce) X(TROWMAX, Vector, Reduce) X(TCOLSUM, Vector, Reduce)                   \
    X(TCOLMAX, Vector, Reduce) X(TROWSUM_ACC, Vector, Reduce) X(TCOLSUM_ACC, Vector, Reduce)           \
    X(TROWEXPAND, Vector, Expand) X(TCOLEXPAND, Vector, Expand)                                        \
    X(TROWEXPANDADD, Vector, ExpandBinary) X(TROWEXPANDSUB, Vector, ExpandBinary)                      \
    X(TROWEXPANDMUL, Vector, ExpandBinary) X(TROWEXPANDDIV, Vector, ExpandBinary)                      \
    X(TROWEXPANDMAX, Vector, ExpandBinary) X(TROWEXPANDMIN, Vector, ExpandBinary)                      \
    X(TCOLEXPANDADD, Vector, ExpandBinary) X(TCOLEXPANDSUB, Vector, ExpandBinary)                      \
    X(TCOLEXPANDMUL, Vector, ExpandBinary) X(TCOLEXPANDDIV, Vector, ExpandBinary)                      \
    X(TCOLEXPANDMAX, Vector, ExpandBinary) X(TCOLEXPANDMIN, Vector, ExpandBinary)                      \
    X(TCVT, Vector, Convert) X(TCMP, Vector, Special) X(TSEL, Vector, Special)                         \
    X(TEXTRACT, Vector, Special)                                                                       \
    X(TMATMUL, Matrix, Special) X(TMATMUL_ACC, Matrix, Special)                                        \
    X(SET_FLAG, Sync, Special) X(WAIT_FLAG, Sync, Special) X(PIPE_BARRIER, Sync, Special)              \
    X(SET_CROSS, Sync, Special) X(WAIT_CROSS, Sync, Special)

enum class Op : uint8_t {
#define KILN_NPU_OP_ENUM(name, fam, kind) name,
    KILN_NPU_FOR_EACH_OP(KILN_NPU_OP_ENUM)
#undef KILN_NPU_OP_ENUM
};
constexpr int kNumOps = 0
#define KILN_NPU_OP_COUNT(name, fam, kind) +1
    KILN_NPU_FOR_EACH_OP(KILN_NPU_OP_COUNT)
#undef KILN_NPU_OP_COUNT
    ;
enum class Kind : uint8_t { Binary, Unary, TileScalar, Reduce, Expand, ExpandBinary, Convert, Special };
const char *op_name(Op op);
Family op_family(Op op);
Kind op_kind(Op op);
inline bool is_binary(Op op) { return op_kind(op) == Kind::Binary; }
inline bool is_unary(Op op) { return op_kind(op) == Kind::Unary; }
inline bool is_tile_scalar(Op op) { return op_kind(op) == Kind::TileScalar; }  // not TDUP
inline bool is_expand_binary(Op op) { return op_kind(op) == Kind::ExpandBinary; }
// An Expand or ExpandBinary op repeats a column along each row (TROWEXPAND*),
// else a row down each column (TCOLEXPAND*).
bool expands_rows(Op op);
// The destination is read too: the sum continues from its value
// (TMATMUL_ACC, TROWSUM_ACC, TCOLSUM_ACC).
inline bool accumulates(Op op) { return op == Op::TMATMUL_ACC || op == Op::TROWSUM_ACC || op == Op::TCOLSUM_ACC; }
// Binary and ExpandBinary ops read a second tile b.
inline bool reads_b(Op op) { return is_binary(op) || is_expand_binary(op); }
bool is_transcendental(Op op);
const char *cmp_name(Cmp c);

// An operand in an on-chip memory.
struct TileRef {
    Mem mem = Mem::UB;
    uint32_t addr = 0;  // bytes from the start of the memory
    DType type = DType::F32;
    uint32_t rows = 0, cols = 0;             // allocated shape
    uint32_t valid_rows = 0, valid_cols = 0; // region instructions touch
    int name = -1;                           // index into the core's tile names (reports)

    uint32_t row_bytes() const { return cols * dtype_size(type); }
    uint32_t bytes() const { return rows * row_bytes(); }
    // Bytes of the valid region with every row rounded up to 32 B.
    uint64_t valid_bytes() const;
};

// A 2-D strided window of a GM buffer: element (r, c) of the window is
// element offset + r * row_stride + c of the buffer. A TLOAD window may
// replicate its edges: row r then reads window row clamp(r, row_lo, row_hi)
// and column c window column clamp(c, col_lo, col_hi) (the DMA engine's
// edge padding, which a stencil's repeat_edge boundary needs). It may
// instead pad with a constant: an element outside those rows or columns is
// fill_value (a constant_exterior boundary, the zero outside an adjoint's region).
struct GmRef {
    static constexpr int64_t kNoClamp = int64_t(1) << 40;
    int buffer = -1;
    int64_t offset = 0;      // elements
    int64_t row_stride = 0;  // elements
    DType type = DType::F32; // the buffer's element type
    int64_t row_lo = -kNoClamp, row_hi = kNoClamp, col_lo = -kNoClamp, col_hi = kNoClamp;
    bool fill = false;       // outside the rows and columns above: fill_value, not the edge
    float fill_value = 0.0f;

    // This window with replicated edges: rows outside [row_lo, row_hi] and
    // columns outside [col_lo, col_hi] (window coordinates) repeat the edge.
    GmRef edge(int64_t rlo, int64_t rhi, int64_t clo, int64_t chi) const {
        GmRef g = *this;
        g.row_lo = rlo, g.row_hi = rhi, g.col_lo = clo, g.col_hi = chi;
        return g;
    }
    // This window padded with `value`: elements outside rows [rlo, rhi] and
    // columns [clo, chi] (window coordinates) are `value`, the others read as usual.
    GmRef padded(int64_t rlo, int64_t rhi, int64_t clo, int64_t chi, float value) const {
        GmRef g = edge(rlo, rhi, clo, chi);
        g.fill = true, g.fill_value = value;
        return g;
    }
    bool inside(int64_t r, int64_t c) const { return r >= row_lo && r <= row_hi && c >= col_lo && c <= col_hi; }
    bool clamped() const { return row_lo != -kNoClamp || row_hi != kNoClamp || col_lo != -kNoClamp || col_hi != kNoClamp; }
    int64_t row(int64_t r) const { return r < row_lo ? row_lo : r > row_hi ? row_hi : r; }
    int64_t col(int64_t c) const { return c < col_lo ? col_lo : c > col_hi ? col_hi : c; }
};

struct Instr {
    Op op = Op::TCOPY;
    Pipe pipe = Pipe::V;
    TileRef dst, a, b, c;  // a, b, c: sources (c: TSEL's "else", TMATMUL's bias)
    GmRef gm;              // TLOAD's source, TSTORE's destination
    float scalar = 0.0f;   // tile-scalar operand
    Cmp cmp = Cmp::EQ;
    bool relu = false;     // FIX-pipe transfers: ReLU on the way
    bool transpose = false; // TMOV L1 -> L0A/L0B: dst[i][j] = src[j][i] (the MTE1 layout change)
    bool has_bias = false; // TMATMUL with bias c (1 x N, in L1); a FIX-pipe transfer adding bias c per column
    bool has_scale = false; // FIX-pipe transfers: multiply by `scalar` (in f32) before the conversion
    Pipe flag_src = Pipe::S, flag_dst = Pipe::S;  // SET_FLAG, WAIT_FLAG; PIPE_BARRIER uses flag_src
    // SET_FLAG, WAIT_FLAG: the event (0..7); SET_CROSS, WAIT_CROSS: the cross-core flag (0..15) on `pipe`.
    uint32_t index_row = 0, index_col = 0;  // TEXTRACT: dst[i][j] = a[index_row + i][index_col + j]
    int event = 0;
};

// Errors a kernel makes against the machine: capacity, alignment, bounds,
// operand memories or shapes, deadlock. The message names the instruction.
struct NpuError : std::runtime_error {
    using std::runtime_error::runtime_error;
};

// The pipe a DMA instruction runs on, from its memories; Pipe::ALL if the
// machine has no path between them.
Pipe dma_pipe(Op op, Mem src, Mem dst);
// The pipe of any other instruction.
Pipe compute_pipe(Op op);

// Cross-core flags of a split machine (Machine::kinds): SET_CROSS(pipe, f)
// on one core sets flag f of its group once every earlier instruction of
// `pipe` has completed; the k-th WAIT_CROSS(pipe, f) of a core holds `pipe`
// until every core of the other kinds in its group has set f k times
// (a vector core waits for its cube core; the cube core for both vector
// cores). Counted like SET_FLAG / WAIT_FLAG; flags 0..kNumCrossFlags-1.
constexpr int kNumCrossFlags = 16;
inline bool is_cross_flag(Op op) { return op == Op::SET_CROSS || op == Op::WAIT_CROSS; }

// Throws NpuError if `in` breaks an operand rule (memories, shapes, types,
// alignment, capacity) or uses a memory or pipe that a core of kind `kind`
// (an index into Machine::kinds) lacks. `index` and `describe` name it in
// the message.
void check_instr(const Instr &in, const Machine &m, int index, int kind = 0);

// Cycles `in` occupies its pipe, and cycles from its start until its result
// is complete (larger for DMA, whose latency is pipelined).
struct Cost {
    uint64_t busy = 0, done = 0;
};
Cost instr_cost(const Instr &in, const Machine &m);

// Bytes a DMA instruction moves (valid region, rows rounded up to 32 B):
// what it writes to GM for a TSTORE (in GM's type: a fix-pipe store may
// narrow), what it reads otherwise.
uint64_t dma_bytes(const Instr &in);

// The fix pipe's epilogue on one accumulator element v (L0C's type: f32, or
// i32 read as an integer in `iv`) at column `col`: + bias[col] (i32 wraps),
// ReLU, then the value as float times the scale, converted to `out`'s type
// by fix_store: i8 rounds to nearest even and saturates to [-128, 127]
// (requantization), f16 / bf16 round to nearest even, i32 keeps the integer
// when no scale was applied. The same steps as the host's
// saturating_cast<int8_t>(round(cast<float>(max(acc + bias, 0)) * scale)).
struct FixValue {
    bool is_int = false;
    int32_t iv = 0;
    float fv = 0.0f;
};
FixValue fix_element(const Instr &in, FixValue v, FixValue bias);
// Requantization of one float: round to nearest even, saturate to int8.
int8_t fix_requantize_i8(float f);

// "TADD UB[0x0 32x64 f32] <- UB[...], UB[...]", for messages and traces.
std::string describe(const Instr &in);

// ---- Reference semantics of one element ----
// f32 tiles compute in float, as host kernels do (std::exp(float), ...);
// f16 tiles compute in float and round to half; i32 tiles wrap, and divide
// with Kiln's Euclidean rule (x / 0 == 0). bf16 tiles are only converted
// (TCVT), moved and multiplied (TMATMUL, summing in f32).
float ref_unary(Op op, float x);
float ref_binary(Op op, float a, float b);  // also the tile-scalar ops, with b = scalar
int32_t ref_binary_i32(Op op, int32_t a, int32_t b);
int32_t ref_unary_i32(Op op, int32_t x);  // TABS, TNEG, TRELU, TCOPY
template <typename T>
bool ref_compare(Cmp c, T a, T b) {
    switch (c) {
    case Cmp::EQ: return a == b;
    case Cmp::NE: return a != b;
    case Cmp::LT: return a < b;
    case Cmp::LE: return a <= b;
    case Cmp::GT: return a > b;
    case Cmp::GE: return a >= b;
    }
    return false;
}

// 16-bit float conversions, the host's (runtime/kiln_float16.h: round to
// nearest even, NaN stays NaN), so NPU and host kernels convert alike.
uint16_t float_to_half(float f);
float half_to_float(uint16_t h);
uint16_t float_to_bfloat16(float f);
float bfloat16_to_float(uint16_t b);

}  // namespace npu
}  // namespace kiln

#endif
