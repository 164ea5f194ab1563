// The header tile-NPU kernels are written against, in the style of Ascend C
// and PTO: a kernel is a function of a Core (one AI core: its index, its
// on-chip memories, its pipes) and of GlobalTensors (views of GM); it places
// Tiles in on-chip memories, moves them with DMA, computes on them with
// vector and matrix instructions, and orders its pipes with flags.
//
//   void scale(npu::Core &core, npu::GlobalTensor in, npu::GlobalTensor out) {
//       using namespace kiln::npu;
//       Tile t = core.tile(Mem::UB, 0, DType::F32, 8, 64);       // 8 x 64 floats at UB+0
//       core.TLOAD(t, in.at(core.index() * 8 * 64, 64));          // MTE2: GM -> UB
//       core.SET_FLAG(Pipe::MTE2, Pipe::V, 0);
//       core.WAIT_FLAG(Pipe::MTE2, Pipe::V, 0);                   // V waits for the load
//       core.TMULS(t, t, 2.0f);                                   // V
//       core.SET_FLAG(Pipe::V, Pipe::MTE3, 0);
//       core.WAIT_FLAG(Pipe::V, Pipe::MTE3, 0);
//       core.TSTORE(out.at(core.index() * 8 * 64, 64), t);        // MTE3: UB -> GM
//   }
//   npu::Device dev;                                     // default machine
//   auto in = dev.bind("in", DType::F32, in_ptr, n), out = dev.bind("out", DType::F32, out_ptr, n);
//   npu::SimReport r = dev.run(4, [&](npu::Core &c) { scale(c, in, out); });
//
// Calling an instruction records it (after checking its operands against
// the machine: an NpuError names it and the numbers); Device::run then
// executes every core's program (functional, in program order), checks it
// for races (pipes ordered only by flags) and times it (npu_sim.h).
#ifndef KILN_NPU_H
#define KILN_NPU_H

#include <deque>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "npu_isa.h"
#include "npu_machine.h"
#include "npu_sim.h"

namespace kiln {
namespace npu {

// A tile: a TileRef with a settable valid region.
struct Tile : TileRef {
    Tile() = default;
    explicit Tile(const TileRef &r) : TileRef(r) {}
    // Restrict instructions to the top-left rows x cols (e.g. the tail tile of a row).
    Tile &set_valid(uint32_t r, uint32_t c) {
        valid_rows = r;
        valid_cols = c;
        return *this;
    }
};

// A GM buffer bound to the device.
struct GlobalTensor {
    int buffer = -1;
    DType type = DType::F32;
    // The window whose row r, column c is element offset + r * row_stride + c.
    GmRef at(int64_t offset, int64_t row_stride) const { return GmRef{buffer, offset, row_stride, type}; }
};

// The fix pipe's epilogue on an L0C -> GM / UB transfer, applied on the
// way in this order: + bias (a 1 x N tile in L1 of the accumulator's type,
// one value per column; an f32 accumulator's may be f16 or bf16, widened
// exactly on the way), ReLU, times a scale (in f32), then the conversion
// to the destination's type (i8: round to nearest even and saturate, the
// requantization of an int8 GEMM; f16 / bf16: round to nearest even).
//   core.TSTORE(out.at(off, n), acc, Fix().bias(bias_l1).relu().scale(0.02f));
struct Fix {
    Tile bias_tile;
    bool has_bias = false, has_relu = false, has_scale = false;
    float scale_value = 1.0f;
    Fix &bias(const Tile &t) { return bias_tile = t, has_bias = true, *this; }
    Fix &relu() { return has_relu = true, *this; }
    Fix &scale(float s) { return scale_value = s, has_scale = true, *this; }
    void apply(Instr &in) const {
        in.has_bias = has_bias, in.relu = has_relu, in.has_scale = has_scale, in.scalar = scale_value;
    }
};

class Device;

class Core {
public:
    Core(Device &device, int index, int kind = 0, int group = -1, int block = -1)
        : device_(&device), index_(index), kind_(kind), group_(group < 0 ? index : group),
          block_(block < 0 ? index : block) {}
    int index() const { return index_; }  // the core's index, 0 .. num_cores() - 1
    int num_cores() const;
    const Machine &machine() const;
    // A split machine's cores (Device::run_groups): the core's kind (an
    // index into machine().kinds), its group, and its block, the index
    // among the cores of its kind (group * per_group + its place in the
    // group), 0 .. num_blocks() - 1. On a unified machine: kind 0, and
    // group and block are index().
    int kind() const { return kind_; }
    const std::string &kind_name() const;
    int group() const { return group_; }
    int block() const { return block_; }
    int num_blocks() const;

    // A rows x cols tile of `type` at byte `addr` of `mem`, all of it valid.
    // `name` labels it in reports (peak occupancy per buffer).
    Tile tile(Mem mem, uint32_t addr, DType type, uint32_t rows, uint32_t cols, const std::string &name = "");

    // DMA
    void TLOAD(const Tile &dst, const GmRef &src);
    void TSTORE(const GmRef &dst, const Tile &src, bool relu = false);
    void TMOV(const Tile &dst, const Tile &src, bool relu = false);
    // From L0C through the fix pipe with its epilogue (see Fix).
    void TSTORE(const GmRef &dst, const Tile &src, const Fix &fix);
    void TMOV(const Tile &dst, const Tile &src, const Fix &fix);
    // TMOV L1 -> L0A/L0B transposing: dst[i][j] = src[j][i] (a matrix operand read as its transpose, K^T).
    void TMOV_T(const Tile &dst, const Tile &src);
    // Vector, on UB: one method per Binary, Unary, TileScalar, Reduce, Expand,
    // ExpandBinary and Convert row of KILN_NPU_FOR_EACH_OP, e.g.
    //   void TADD(const Tile &d, const Tile &a, const Tile &b);   // Binary, ExpandBinary (b: R x 1 or 1 x C)
    //   void TEXP(const Tile &d, const Tile &a);                  // Unary, Reduce, Expand, Convert
    //   void TADDS(const Tile &d, const Tile &a, float s);        // TileScalar
#define KILN_NPU_METHOD_Binary(op) \
    void op(const Tile &d, const Tile &a, const Tile &b) { binary(Op::op, d, a, b); }
#define KILN_NPU_METHOD_Unary(op) \
    void op(const Tile &d, const Tile &a) { unary(Op::op, d, a); }
#define KILN_NPU_METHOD_TileScalar(op) \
    void op(const Tile &d, const Tile &a, float s) { scalar(Op::op, d, a, s); }
#define KILN_NPU_METHOD_Reduce(op) KILN_NPU_METHOD_Unary(op)
#define KILN_NPU_METHOD_Expand(op) KILN_NPU_METHOD_Unary(op)
#define KILN_NPU_METHOD_ExpandBinary(op) KILN_NPU_METHOD_Binary(op)
#define KILN_NPU_METHOD_Convert(op) KILN_NPU_METHOD_Unary(op)
#define KILN_NPU_METHOD_Special(op)
#define KILN_NPU_METHOD(name, fam, kind) KILN_NPU_METHOD_##kind(name)
    KILN_NPU_FOR_EACH_OP(KILN_NPU_METHOD)
#undef KILN_NPU_METHOD
    void TDUP(const Tile &d, float s) { scalar(Op::TDUP, d, d, s); }
    void TCMP(const Tile &mask, const Tile &a, const Tile &b, Cmp cmp);
    void TSEL(const Tile &d, const Tile &mask, const Tile &a, const Tile &b);
    // d = the sub-tile of a at (row, col), any element offset: d[i][j] = a[row + i][col + j] over d's
    // valid region (a stencil's shifted window, read from its halo tile in UB).
    void TEXTRACT(const Tile &d, const Tile &a, uint32_t row, uint32_t col);
    // Matrix: c = a x b, c = a x b + bias (bias: 1 x N in L1), c += a x b
    void TMATMUL(const Tile &c, const Tile &a, const Tile &b);
    void TMATMUL_BIAS(const Tile &c, const Tile &a, const Tile &b, const Tile &bias);
    void TMATMUL_ACC(const Tile &c, const Tile &a, const Tile &b);
    // Sync: `dst` waits until `src` has set the flag (a counting semaphore per (src, dst, event)).
    void SET_FLAG(Pipe src, Pipe dst, int event);
    void WAIT_FLAG(Pipe src, Pipe dst, int event);
    // Everything issued after it waits for every earlier instruction of `pipe` (or of all pipes: Pipe::ALL).
    void PIPE_BARRIER(Pipe pipe);
    // Cross-core flags of a split machine (npu_isa.h): the other kinds' cores of the group wait with
    // WAIT_CROSS(pipe, flag) until this core's `pipe` has completed what it issued before SET_CROSS.
    void SET_CROSS(Pipe pipe, int flag);
    void WAIT_CROSS(Pipe pipe, int flag);

    // A GM buffer private to this core, zero-filled, owned by the device
    // (for Funcs stored in GM between stages).
    GlobalTensor scratch_gm(const std::string &name, DType type, uint64_t elems);

    const std::vector<Instr> &program() const { return program_; }
    const std::vector<std::string> &tile_names() const { return names_; }

private:
    void emit(Instr in);
    void binary(Op op, const Tile &d, const Tile &a, const Tile &b);
    void unary(Op op, const Tile &d, const Tile &a);
    void scalar(Op op, const Tile &d, const Tile &a, float s);

    Device *device_;
    int index_, kind_, group_, block_;
    std::vector<Instr> program_;
    std::vector<std::string> names_;
};

class Device {
public:
    explicit Device(const Machine &m = default_machine()) : machine_(m) {}
    const Machine &machine() const { return machine_; }

    // Makes `elems` elements of `type` at `host` a GM buffer kernels can reach.
    GlobalTensor bind(const std::string &name, DType type, void *host, uint64_t elems);
    const std::vector<GmBuffer> &buffers() const { return buffers_; }

    // Records `kernel` on `cores` cores (0: the machine's count), then
    // simulates them (see SimOptions). Throws NpuError on an illegal
    // instruction, a deadlock, or (if options.races_are_errors) a race.
    // A unified machine's kernel: a split machine refuses it (use run_groups).
    SimReport run(int cores, const std::function<void(Core &)> &kernel, const SimOptions &options = {});
    // A split machine: records kernels.at(kind's name) on every core of
    // each kind in `groups` groups (0: the machine's), numbered group by
    // group (group 0's cube core, its two vector cores, group 1's ...),
    // then simulates all cores together. Every kind needs a kernel.
    using KindKernels = std::map<std::string, std::function<void(Core &)>>;
    SimReport run_groups(int groups, const KindKernels &kernels, const SimOptions &options = {});
    int num_cores() const { return cores_; }
    int num_groups() const { return groups_; }
    // Binds `elems` zero-filled elements owned by the device.
    GlobalTensor bind_owned(const std::string &name, DType type, uint64_t elems);

private:
    Machine machine_;
    std::vector<GmBuffer> buffers_;
    std::deque<std::vector<uint8_t>> owned_;
    int cores_ = 0, groups_ = 0;
};

}  // namespace npu
}  // namespace kiln

#endif
