// Names, operand rules, costs and element semantics of the tile-NPU ISA
// (see npu_isa.h; docs/npu.md is the same table in prose).
#include "npu_isa.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <sstream>

#include "npu_machine.h"
// The host's 16-bit float conversions (before the prologue: the scalar ones only).
#include "../kiln_float16.h"
// TEXP, TLOG and TTANH compute exactly the host target's float32 functions,
// so NPU and host kernels agree bitwise.
#include "../kiln_prologue.h"
#include "../kiln_vector_math.h"

namespace kiln {
namespace npu {

const char *mem_name(Mem m) {
    static const char *names[] = {"GM", "UB", "L1", "L0A", "L0B", "L0C"};
    return names[(int)m];
}

const char *pipe_name(Pipe p) {
    static const char *names[] = {"S", "MTE2", "MTE1", "V", "M", "MTE3", "FIX", "ALL"};
    return names[(int)p];
}

int dtype_size(DType t) {
    static const int sizes[] = {4, 2, 4, 1, 2, 1};
    return sizes[(int)t];
}

const char *dtype_name(DType t) {
    static const char *names[] = {"f32", "f16", "i32", "u8", "bf16", "i8"};
    return names[(int)t];
}

const char *family_name(Family f) {
    static const char *names[] = {"dma", "vector", "matrix", "sync"};
    return names[(int)f];
}

namespace {
struct OpInfo {
    const char *name;
    Family family;
    Kind kind;
};
const OpInfo &op_info(Op op) {
    static const OpInfo table[] = {
#define KILN_NPU_OP_INFO(name, fam, kind) {#name, Family::fam, Kind::kind},
        KILN_NPU_FOR_EACH_OP(KILN_NPU_OP_INFO)
#undef KILN_NPU_OP_INFO
    };
    return table[(int)op];
}
}  // namespace

const char *op_name(Op op) { return op_info(op).name; }
Family op_family(Op op) { return op_info(op).family; }
Kind op_kind(Op op) { return op_info(op).kind; }

bool expands_rows(Op op) {
    switch (op) {
    case Op::TROWEXPAND: case Op::TROWEXPANDADD: case Op::TROWEXPANDSUB: case Op::TROWEXPANDMUL:
    case Op::TROWEXPANDDIV: case Op::TROWEXPANDMAX: case Op::TROWEXPANDMIN: return true;
    default: return false;
    }
}

const char *cmp_name(Cmp c) {
    static const char *names[] = {"EQ", "NE", "LT", "LE", "GT", "GE"};
    return names[(int)c];
}

bool is_transcendental(Op op) {
    return op == Op::TEXP || op == Op::TLOG || op == Op::TSQRT || op == Op::TRSQRT || op == Op::TRECIP || op == Op::TTANH;
}

uint64_t TileRef::valid_bytes() const {
    uint64_t row = (uint64_t)valid_cols * dtype_size(type);
    return (uint64_t)valid_rows * ((row + 31) / 32 * 32);
}

Pipe dma_pipe(Op op, Mem src, Mem dst) {
    if (src == Mem::GM && (dst == Mem::UB || dst == Mem::L1)) return op == Op::TLOAD ? Pipe::MTE2 : Pipe::ALL;
    if (op == Op::TLOAD) return Pipe::ALL;
    if (src == Mem::UB && dst == Mem::GM) return op == Op::TSTORE ? Pipe::MTE3 : Pipe::ALL;
    if (src == Mem::L0C && dst == Mem::GM) return op == Op::TSTORE ? Pipe::FIX : Pipe::ALL;
    if (op != Op::TMOV) return Pipe::ALL;
    if (src == Mem::L1 && (dst == Mem::L0A || dst == Mem::L0B)) return Pipe::MTE1;
    if (src == Mem::UB && dst == Mem::L1) return Pipe::MTE3;
    if (src == Mem::L0C && dst == Mem::UB) return Pipe::FIX;
    return Pipe::ALL;
}

Pipe compute_pipe(Op op) {
    switch (op_family(op)) {
    case Family::Vector: return Pipe::V;
    case Family::Matrix: return Pipe::M;
    default: return Pipe::S;
    }
}

namespace {

std::string tile_text(const TileRef &t) {
    std::ostringstream s;
    s << mem_name(t.mem) << "[0x" << std::hex << t.addr << std::dec << " " << t.rows << "x" << t.cols << " "
      << dtype_name(t.type);
    if (t.valid_rows != t.rows || t.valid_cols != t.cols) s << " valid " << t.valid_rows << "x" << t.valid_cols;
    s << "]";
    return s.str();
}

std::string gm_text(const GmRef &g) {
    std::ostringstream s;
    s << "GM#" << g.buffer << "[+" << g.offset << " stride " << g.row_stride;
    if (g.clamped())
        s << (g.fill ? " pad outside rows " : " edge rows ") << g.row_lo << ".." << g.row_hi << " cols " << g.col_lo
          << ".." << g.col_hi << (g.fill ? " with " + std::to_string(g.fill_value) : std::string());
    s << "]";
    return s.str();
}

// Which tile operands an instruction uses, destination first.
int tile_operands(const Instr &in, const TileRef *out[4]) {
    int n = 0;
    switch (in.op) {
    case Op::TLOAD: out[n++] = &in.dst; break;
    case Op::TSTORE: out[n++] = &in.a; if (in.has_bias) out[n++] = &in.c; break;
    case Op::TDUP: out[n++] = &in.dst; break;
    case Op::TCMP: out[n++] = &in.dst; out[n++] = &in.a; out[n++] = &in.b; break;
    case Op::TSEL: out[n++] = &in.dst; out[n++] = &in.a; out[n++] = &in.b; out[n++] = &in.c; break;
    case Op::TMATMUL:
    case Op::TMATMUL_ACC:
        out[n++] = &in.dst; out[n++] = &in.a; out[n++] = &in.b;
        if (in.has_bias) out[n++] = &in.c;
        break;
    case Op::SET_FLAG:
    case Op::WAIT_FLAG:
    case Op::PIPE_BARRIER:
    case Op::SET_CROSS:
    case Op::WAIT_CROSS: break;
    default:
        out[n++] = &in.dst; out[n++] = &in.a;
        if (reads_b(in.op)) out[n++] = &in.b;
        if (in.op == Op::TMOV && in.has_bias) out[n++] = &in.c;
    }
    return n;
}

// "GM, L1, L0A" or "S, MTE2, V": what `has` holds of n names.
template <typename E>
std::string name_list(const bool *has, int n, const char *(*name_of)(E)) {
    std::string s;
    for (int i = 0; i < n; i++)
        if (has[i]) s += std::string(s.empty() ? "" : ", ") + name_of((E)i);
    return s;
}

struct Checker {
    const Instr &in;
    const Machine &m;
    int index;
    int kind;

    [[noreturn]] void fail(const std::string &what) const {
        throw NpuError("instruction #" + std::to_string(index) + " " + describe(in) + ": " + what);
    }
    void require(bool ok, const std::string &what) const {
        if (!ok) fail(what);
    }
    void tile(const TileRef &t, const char *role) const {
        std::string r = role;
        require(t.mem != Mem::GM, r + " is a tile in GM; tiles live in on-chip memories (UB, L1, L0A, L0B, L0C)");
        require(t.rows > 0 && t.cols > 0, r + " has an empty shape " + std::to_string(t.rows) + "x" + std::to_string(t.cols));
        require(t.valid_rows <= t.rows && t.valid_cols <= t.cols,
                r + " has a valid region " + std::to_string(t.valid_rows) + "x" + std::to_string(t.valid_cols) +
                    " larger than its shape " + std::to_string(t.rows) + "x" + std::to_string(t.cols));
        require(t.addr % m.alignment == 0, r + " address " + std::to_string(t.addr) + " is not a multiple of " +
                                               std::to_string(m.alignment) + " bytes");
        require(t.row_bytes() % m.alignment == 0,
                r + " rows are " + std::to_string(t.row_bytes()) + " bytes (" + std::to_string(t.cols) + " x " +
                    dtype_name(t.type) + "), not a multiple of " + std::to_string(m.alignment) + " bytes");
        uint64_t end = (uint64_t)t.addr + t.bytes();
        require(end <= m.capacity(t.mem), r + " occupies bytes [" + std::to_string(t.addr) + ", " +
                                              std::to_string(end) + ") but " + mem_name(t.mem) + " has " +
                                              std::to_string(m.capacity(t.mem)) + " bytes (over by " +
                                              std::to_string(end - m.capacity(t.mem)) + ")");
    }
    void mem(const TileRef &t, const char *role, Mem want) const {
        require(t.mem == want, std::string(role) + " must be in " + mem_name(want) + ", not " + mem_name(t.mem));
    }
    void same_type(const TileRef &a, const TileRef &b, const char *what) const {
        require(a.type == b.type, std::string(what) + " have different types (" + dtype_name(a.type) + ", " +
                                      dtype_name(b.type) + ")");
    }
    void covers(const TileRef &src, uint32_t rows, uint32_t cols, const char *role) const {
        require(src.valid_rows >= rows && src.valid_cols >= cols,
                std::string(role) + "'s valid region " + std::to_string(src.valid_rows) + "x" +
                    std::to_string(src.valid_cols) + " does not cover the " + std::to_string(rows) + "x" +
                    std::to_string(cols) + " it must supply");
    }
    void float_type(const TileRef &t) const {
        require(t.type == DType::F32 || t.type == DType::F16,
                std::string(op_name(in.op)) + " needs f32 or f16 tiles, not " + dtype_name(t.type));
    }
    void arith_type(const TileRef &t) const {
        require(t.type != DType::U8, std::string(op_name(in.op)) + " does not take u8 (mask) tiles");
        require(t.type != DType::I8, std::string(op_name(in.op)) +
                                         " does not take i8 tiles; i8 is a matrix operand and a fix-pipe output");
        no_bf16(t);
    }
    // bf16 is a storage type: the vector unit converts it (TCVT) and computes in f32.
    void no_bf16(const TileRef &t) const {
        require(t.type != DType::BF16, std::string(op_name(in.op)) +
                                           " does not take bf16 tiles; TCVT them to f32, compute, and TCVT the "
                                           "result back to bf16 (the vector unit computes bf16 data in f32)");
    }

    // What the fix pipe writes from an f32 or i32 accumulator: f32 (from i32 as float), f16, bf16, i8
    // (requantized), or i32 (unscaled).
    void fix_output(DType t) const {
        if (in.a.type == DType::F32)
            require(t == DType::F32 || t == DType::F16 || t == DType::BF16,
                    std::string("the fix-pipe writes an f32 accumulator as f32, f16 or bf16, not ") + dtype_name(t));
        else
            require(t == DType::F32 || t == DType::F16 || t == DType::BF16 || t == DType::I8 ||
                        (t == DType::I32 && !in.has_scale),
                    std::string("the fix-pipe writes an i32 accumulator as i8 (requantized), f32, f16, bf16 or i32 "
                                "(without a scale), not ") + dtype_name(t));
    }

    // The kinds of core that have memory `mem`: "the vector cores".
    std::string owners(Mem mem) const {
        std::string s;
        for (const CoreKind &k : m.kinds)
            if (k.has(mem)) s += std::string(s.empty() ? "the " : " and the ") + k.name;
        return s.empty() ? "no core" : s + " cores";
    }

    // The memories and pipes of the core's kind (a split machine's cube
    // core has no UB and no V; its vector core no L1, L0* or M).
    void kind_rules(const TileRef *const *ops, int n, const char *const *roles) const {
        if (m.kinds.empty() && !is_cross_flag(in.op)) return;  // a Machine built in code: one kind, everything
        if (kind < 0 || kind >= (int)m.kinds.size())
            fail("the machine '" + m.name + "' has no core kind #" + std::to_string(kind));
        const CoreKind &k = m.kinds[kind];
        const std::string core = "a " + k.name + " core";
        if (is_cross_flag(in.op)) {
            require(m.split(), std::string(op_name(in.op)) + " joins the cores of different kinds in a group, but machine '" +
                                   m.name + "' has one kind of core; SET_FLAG / WAIT_FLAG order the pipes of one core");
            require(in.pipe != Pipe::ALL, "a cross-core flag is set and waited for on one pipe, not ALL");
            require(in.event >= 0 && in.event < kNumCrossFlags,
                    "cross-core flags are 0.." + std::to_string(kNumCrossFlags - 1));
        }
        for (int i = 0; i < n; i++) {
            const Mem mem = ops[i]->mem;
            if (k.has(mem)) continue;
            if (op_family(in.op) == Family::DMA && ops[i] == &in.dst) {
                // "the fix pipe of a cube core writes GM only": the destinations this pipe reaches on this kind.
                const Mem src = in.op == Op::TLOAD ? Mem::GM : in.a.mem;
                bool reach[kNumMems] = {};
                for (int d = 0; d < kNumMems; d++)
                    for (Op op : {Op::TLOAD, Op::TSTORE, Op::TMOV})
                        reach[d] = reach[d] || (k.has((Mem)d) && dma_pipe(op, src, (Mem)d) == in.pipe);
                fail("the " + std::string(in.pipe == Pipe::FIX ? "fix" : pipe_name(in.pipe)) + " pipe of " + core +
                     " writes " + name_list<Mem>(reach, kNumMems, mem_name) + " only: " + core + " has no " +
                     mem_name(mem) + " (" + owners(mem) + " do; cores of different kinds exchange data through GM, "
                     "ordered by SET_CROSS / WAIT_CROSS)");
            }
            fail(std::string(roles[i]) + " is in " + mem_name(mem) + ", which " + core + " of machine '" + m.name +
                 "' lacks (its memories: " + name_list<Mem>(k.mem, kNumMems, mem_name) + "; " + owners(mem) +
                 " have " + mem_name(mem) + ")");
        }
        Pipe pipes[3] = {in.pipe, Pipe::ALL, Pipe::ALL};
        if (in.op == Op::SET_FLAG || in.op == Op::WAIT_FLAG) pipes[1] = in.flag_src, pipes[2] = in.flag_dst;
        if (in.op == Op::PIPE_BARRIER) pipes[1] = in.flag_src;
        for (Pipe p : pipes)
            require(p == Pipe::ALL || k.has(p), core + " of machine '" + m.name + "' has no " + pipe_name(p) +
                                                    " pipe (its pipes: " +
                                                    name_list<Pipe>(k.pipe, kNumPipes, pipe_name) + ")");
    }

    void run() const {
        const TileRef *ops[4];
        int n = tile_operands(in, ops);
        static const char *roles[] = {"destination", "source a", "source b", "source c"};
        for (int i = 0; i < n; i++) tile(*ops[i], roles[i]);
        kind_rules(ops, n, roles);
        const TileRef &d = in.dst, &a = in.a, &b = in.b;
        switch (op_family(in.op)) {
        case Family::DMA: {
            Mem src = in.op == Op::TLOAD ? Mem::GM : a.mem;
            Mem dst = in.op == Op::TSTORE ? Mem::GM : d.mem;
            require(dma_pipe(in.op, src, dst) != Pipe::ALL,
                    std::string("no ") + op_name(in.op) + " path from " + mem_name(src) + " to " + mem_name(dst) +
                        " (TLOAD: GM->UB/L1; TSTORE: UB->GM, L0C->GM; TMOV: L1->L0A/L0B, UB->L1, L0C->UB)");
            require(in.pipe == dma_pipe(in.op, src, dst), "issued on the wrong pipe");
            if (in.transpose) {
                require(in.op == Op::TMOV && a.mem == Mem::L1 && (d.mem == Mem::L0A || d.mem == Mem::L0B),
                        "a transposing TMOV moves L1 -> L0A/L0B (the MTE1 layout change)");
                require(d.valid_rows == a.valid_cols && d.valid_cols == a.valid_rows,
                        "a transposing TMOV's destination valid region is the source's transposed");
            } else if (in.op == Op::TMOV) {
                require(d.valid_rows == a.valid_rows && d.valid_cols == a.valid_cols,
                        "destination and source valid regions differ");
                if (a.mem != Mem::L0C) same_type(d, a, "destination and source");
                else fix_output(d.type);
            }
            if (in.op == Op::TSTORE && a.mem == Mem::L0C) fix_output(in.gm.type);
            if (in.relu) require(src == Mem::L0C, "ReLU on the way is a fix-pipe feature (L0C sources only)");
            require(!(in.has_bias || in.has_scale) || src == Mem::L0C,
                    "a bias or a scale on the way is a fix-pipe feature (L0C sources only)");
            if (in.has_bias) {
                mem(in.c, "the bias", Mem::L1);
                // An f32 accumulator's bias may be 16-bit: widened exactly as the fix pipe reads it.
                if (a.type == DType::F32)
                    require(in.c.type == DType::F32 || in.c.type == DType::F16 || in.c.type == DType::BF16,
                            std::string("the bias of an f32 accumulator is f32, f16 or bf16, not ") +
                                dtype_name(in.c.type));
                else same_type(in.c, a, "the bias and the accumulator");
                covers(in.c, 1, a.valid_cols, "the bias (one value per column)");
            }
            return;
        }
        case Family::Sync:
            if (in.op == Op::SET_FLAG || in.op == Op::WAIT_FLAG) {
                require(in.flag_src != Pipe::ALL && in.flag_dst != Pipe::ALL && in.flag_src != in.flag_dst,
                        "a flag joins two different pipes");
                require(in.event >= 0 && in.event < 8, "event ids are 0..7");
            }
            return;
        case Family::Matrix: {
            mem(d, "destination", Mem::L0C);
            mem(a, "source a", Mem::L0A);
            mem(b, "source b", Mem::L0B);
            require(a.type == DType::F32 || a.type == DType::F16 || a.type == DType::BF16 || a.type == DType::I8,
                    std::string("the operands are f16, bf16 or f32 (summed in f32) or i8 (summed in i32), not ") +
                        dtype_name(a.type));
            if (a.type == DType::I8) require(d.type == DType::I32, "the accumulator of i8 operands is i32");
            else require(d.type == DType::F32, "the accumulator of float operands is f32");
            same_type(a, b, "the operands");
            require(a.valid_cols == b.valid_rows, "K differs: a is " + std::to_string(a.valid_rows) + "x" +
                                                      std::to_string(a.valid_cols) + ", b is " +
                                                      std::to_string(b.valid_rows) + "x" + std::to_string(b.valid_cols));
            covers(a, d.valid_rows, a.valid_cols, "source a");
            covers(b, b.valid_rows, d.valid_cols, "source b");
            if (in.has_bias) {
                require(a.type != DType::I8, "TMATMUL_BIAS takes float operands (an i32 bias goes through the fix pipe)");
                mem(in.c, "bias", Mem::L1);
                require(in.c.type == DType::F32, "the bias is f32");
                covers(in.c, 1, d.valid_cols, "bias");
            }
            return;
        }
        case Family::Vector: break;
        }
        for (int i = 0; i < n; i++) mem(*ops[i], roles[i], Mem::UB);
        uint32_t R = d.valid_rows, C = d.valid_cols;
        if (is_expand_binary(in.op)) {  // b: one value per row (a column) or per column (a row)
            arith_type(d); same_type(d, a, "destination and source a"); same_type(d, b, "destination and source b");
            covers(a, R, C, "source a");
            if (expands_rows(in.op)) covers(b, R, 1, "source b (one value per row)");
            else covers(b, 1, C, "source b (one value per column)");
            return;
        }
        switch (in.op) {
        case Op::TDUP: arith_type(d); return;
        case Op::TROWSUM: case Op::TROWMAX: case Op::TROWSUM_ACC:
            arith_type(a); same_type(d, a, "destination and source");
            require(R == a.valid_rows && C == 1, "the destination's valid region must be " +
                                                      std::to_string(a.valid_rows) + "x1 (one value per row)");
            return;
        case Op::TCOLSUM: case Op::TCOLMAX: case Op::TCOLSUM_ACC:
            arith_type(a); same_type(d, a, "destination and source");
            require(R == 1 && C == a.valid_cols, "the destination's valid region must be 1x" +
                                                      std::to_string(a.valid_cols) + " (one value per column)");
            return;
        case Op::TROWEXPAND: no_bf16(d); same_type(d, a, "destination and source"); covers(a, R, 1, "source a"); return;
        case Op::TCOLEXPAND: no_bf16(d); same_type(d, a, "destination and source"); covers(a, 1, C, "source a"); return;
        case Op::TCVT: covers(a, R, C, "source a"); return;
        case Op::TEXTRACT:  // a data move: any type
            same_type(d, a, "destination and source");
            covers(a, in.index_row + R, in.index_col + C,
                   ("source a (from row " + std::to_string(in.index_row) + ", column " + std::to_string(in.index_col) +
                    ")").c_str());
            return;
        case Op::TCMP:
            require(d.type == DType::U8, "the destination is a u8 mask");
            arith_type(a); same_type(a, b, "the sources");
            covers(a, R, C, "source a"); covers(b, R, C, "source b");
            return;
        case Op::TSEL:
            require(a.type == DType::U8, "source a is the u8 mask");
            no_bf16(d);
            same_type(d, b, "destination and source b"); same_type(d, in.c, "destination and source c");
            covers(a, R, C, "source a"); covers(b, R, C, "source b"); covers(in.c, R, C, "source c");
            return;
        default: break;
        }
        arith_type(d);
        same_type(d, a, "destination and source a");
        covers(a, R, C, "source a");
        if (is_binary(in.op)) { same_type(d, b, "destination and source b"); covers(b, R, C, "source b"); }
        if (is_unary(in.op) && in.op != Op::TCOPY && in.op != Op::TABS && in.op != Op::TNEG && in.op != Op::TRELU)
            float_type(d);
    }
};

uint64_t ceil_div(uint64_t a, uint64_t b) { return (a + b - 1) / b; }

}  // namespace

void check_instr(const Instr &in, const Machine &m, int index, int kind) { Checker{in, m, index, kind}.run(); }

uint64_t dma_bytes(const Instr &in) {
    if (in.op == Op::TSTORE) {  // GM's side: a fix-pipe store may write a narrower type than L0C holds
        TileRef g = in.a;
        g.type = in.gm.type;
        return g.valid_bytes();
    }
    return in.op == Op::TLOAD ? in.dst.valid_bytes() : in.a.valid_bytes();
}

Cost instr_cost(const Instr &in, const Machine &m) {
    Cost c;
    switch (op_family(in.op)) {
    case Family::DMA: {
        const DmaRate &r = m.rate(in.pipe);
        // The fix pipe reads its source at its rate whatever it writes (the epilogue is on the way).
        const uint64_t bytes = in.pipe == Pipe::FIX ? std::max(dma_bytes(in), in.a.valid_bytes()) : dma_bytes(in);
        c.busy = std::max<uint64_t>(1, ceil_div(bytes, r.bytes_per_cycle));
        c.done = c.busy + r.latency;
        return c;
    }
    case Family::Sync:
        c.busy = c.done = in.op == Op::PIPE_BARRIER ? 0 : m.sync_cycles;
        return c;
    case Family::Matrix: {
        uint64_t k0 = m.matrix_k(in.a.type);
        c.busy = c.done = ceil_div(in.dst.valid_rows, m.matrix_m) * ceil_div(in.dst.valid_cols, m.matrix_n) *
                          ceil_div(in.a.valid_cols, k0);
        if (c.busy == 0) c.busy = c.done = 1;
        return c;
    }
    case Family::Vector: break;
    }
    uint64_t bytes = std::max(in.dst.valid_bytes(), in.op == Op::TDUP ? 0 : in.a.valid_bytes());
    // A shifted read: every destination row plus one 32-byte block of the source (a row at an element
    // offset straddles one block more than it fills), whatever the offset.
    if (in.op == Op::TEXTRACT) bytes = in.dst.valid_bytes() + (uint64_t)in.dst.valid_rows * 32;
    if (reads_b(in.op) || in.op == Op::TCMP || in.op == Op::TSEL) bytes = std::max(bytes, in.b.valid_bytes());
    uint64_t cycles = std::max<uint64_t>(1, ceil_div(bytes, m.vector_bytes_per_cycle));
    if (is_transcendental(in.op)) cycles *= m.transcendental_factor;
    if (op_kind(in.op) == Kind::Reduce) cycles *= m.reduce_factor;
    c.busy = c.done = cycles;
    return c;
}

std::string describe(const Instr &in) {
    std::ostringstream s;
    s << op_name(in.op);
    switch (in.op) {
    case Op::SET_FLAG:
    case Op::WAIT_FLAG:
        s << "(" << pipe_name(in.flag_src) << " -> " << pipe_name(in.flag_dst) << ", event " << in.event << ")";
        return s.str();
    case Op::PIPE_BARRIER: s << "(" << pipe_name(in.flag_src) << ")"; return s.str();
    case Op::SET_CROSS:
    case Op::WAIT_CROSS: s << "(" << pipe_name(in.pipe) << ", flag " << in.event << ")"; return s.str();
    case Op::TLOAD: s << " " << tile_text(in.dst) << " <- " << gm_text(in.gm); break;
    case Op::TSTORE: s << " " << gm_text(in.gm) << " <- " << tile_text(in.a); break;
    default: {
        const TileRef *ops[4];
        int n = tile_operands(in, ops);
        for (int i = 0; i < n; i++) s << (i == 0 ? " " : i == 1 ? " <- " : ", ") << tile_text(*ops[i]);
        if (is_tile_scalar(in.op) || in.op == Op::TDUP) s << ", " << in.scalar;
        if (in.op == Op::TEXTRACT) s << " at (" << in.index_row << ", " << in.index_col << ")";
    }
    }
    if (in.relu) s << " relu";
    if (in.has_scale) s << " scale " << in.scalar;
    if (in.transpose) s << " transpose";
    return s.str();
}

// ---- Element semantics ----

float ref_unary(Op op, float x) {
    switch (op) {
    case Op::TEXP: return kiln_exp(x);
    case Op::TLOG: return kiln_log(x);
    case Op::TSQRT: return std::sqrt(x);
    case Op::TRSQRT: return 1.0f / std::sqrt(x);
    case Op::TRECIP: return 1.0f / x;
    case Op::TRELU: return x > 0.0f ? x : 0.0f;
    case Op::TTANH: return kiln_tanh(x);
    case Op::TABS: return std::fabs(x);
    case Op::TNEG: return -x;
    case Op::TCOPY: return x;
    default: throw NpuError(std::string("ref_unary: ") + op_name(op) + " is not unary");
    }
}

float ref_binary(Op op, float a, float b) {
    switch (op) {
    case Op::TADD: case Op::TADDS: case Op::TROWEXPANDADD: case Op::TCOLEXPANDADD: return a + b;
    case Op::TSUB: case Op::TSUBS: case Op::TROWEXPANDSUB: case Op::TCOLEXPANDSUB: return a - b;
    case Op::TMUL: case Op::TMULS: case Op::TROWEXPANDMUL: case Op::TCOLEXPANDMUL: return a * b;
    case Op::TDIV: case Op::TDIVS: case Op::TROWEXPANDDIV: case Op::TCOLEXPANDDIV: return a / b;
    // Kiln's (and Halide's) max and min: select(a > b, a, b), select(a < b, a, b).
    case Op::TMAX: case Op::TMAXS: case Op::TROWMAX: case Op::TCOLMAX: case Op::TROWEXPANDMAX: case Op::TCOLEXPANDMAX:
        return a > b ? a : b;
    case Op::TMIN: case Op::TMINS: case Op::TROWEXPANDMIN: case Op::TCOLEXPANDMIN: return a < b ? a : b;
    case Op::TROWSUM: case Op::TCOLSUM: case Op::TROWSUM_ACC: case Op::TCOLSUM_ACC: return a + b;
    default: throw NpuError(std::string("ref_binary: ") + op_name(op) + " is not binary");
    }
}

int32_t ref_binary_i32(Op op, int32_t a, int32_t b) {
    uint32_t ua = (uint32_t)a, ub = (uint32_t)b;
    switch (op) {
    case Op::TADD: case Op::TADDS: case Op::TROWSUM: case Op::TCOLSUM: case Op::TROWSUM_ACC: case Op::TCOLSUM_ACC:
    case Op::TROWEXPANDADD: case Op::TCOLEXPANDADD:
        return (int32_t)(ua + ub);
    case Op::TSUB: case Op::TSUBS: case Op::TROWEXPANDSUB: case Op::TCOLEXPANDSUB: return (int32_t)(ua - ub);
    case Op::TMUL: case Op::TMULS: case Op::TROWEXPANDMUL: case Op::TCOLEXPANDMUL: return (int32_t)(ua * ub);
    case Op::TDIV: case Op::TDIVS: case Op::TROWEXPANDDIV: case Op::TCOLEXPANDDIV: {
        if (b == 0) return 0;
        if (a == INT32_MIN && b == -1) return INT32_MIN;
        int32_t q = a / b, r = a % b;
        if (r < 0) q += b > 0 ? -1 : 1;  // Euclidean: the remainder is never negative
        return q;
    }
    case Op::TMAX: case Op::TMAXS: case Op::TROWMAX: case Op::TCOLMAX: case Op::TROWEXPANDMAX: case Op::TCOLEXPANDMAX:
        return a > b ? a : b;
    case Op::TMIN: case Op::TMINS: case Op::TROWEXPANDMIN: case Op::TCOLEXPANDMIN: return a < b ? a : b;
    default: throw NpuError(std::string("ref_binary_i32: ") + op_name(op) + " is not binary");
    }
}

int32_t ref_unary_i32(Op op, int32_t x) {
    switch (op) {
    case Op::TABS: return x < 0 ? (int32_t)(0u - (uint32_t)x) : x;
    case Op::TNEG: return (int32_t)(0u - (uint32_t)x);
    case Op::TRELU: return x > 0 ? x : 0;
    case Op::TCOPY: return x;
    default: throw NpuError(std::string("ref_unary_i32: ") + op_name(op) + " is not an int32 unary instruction");
    }
}

int8_t fix_requantize_i8(float f) {
    float r = std::nearbyint(f);  // the default rounding: to nearest, ties to even (the host's round())
    return (int8_t)(r > 127.0f ? 127.0f : r < -128.0f ? -128.0f : r);
}

FixValue fix_element(const Instr &in, FixValue v, FixValue bias) {
    if (v.is_int) {
        if (in.has_bias) v.iv = (int32_t)((uint32_t)v.iv + (uint32_t)bias.iv);
        if (in.relu && v.iv < 0) v.iv = 0;
        if (!in.has_scale) return v;
        return FixValue{false, 0, (float)v.iv * in.scalar};
    }
    if (in.has_bias) v.fv = v.fv + bias.fv;
    if (in.relu && !(v.fv > 0.0f)) v.fv = 0.0f;
    if (in.has_scale) v.fv = v.fv * in.scalar;
    return v;
}

uint16_t float_to_half(float f) { return kiln_float16_from_float(f); }
float half_to_float(uint16_t h) { return kiln_float16_to_float(h); }
uint16_t float_to_bfloat16(float f) { return kiln_bfloat16_from_float(f); }
float bfloat16_to_float(uint16_t b) { return kiln_bfloat16_to_float(b); }

}  // namespace npu
}  // namespace kiln
