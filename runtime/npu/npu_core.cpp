// Recording kernels (Core, Device of kiln_npu.h) and simulate(), which
// drives the functional, race-check and timing parts of the simulator.
#include <algorithm>
#include <map>
#include <tuple>

#include "kiln_npu.h"

namespace kiln {
namespace npu {

int Core::num_cores() const { return device_->num_cores(); }
const Machine &Core::machine() const { return device_->machine(); }
const std::string &Core::kind_name() const { return machine().kinds.at(kind_).name; }
int Core::num_blocks() const {
    return machine().split() ? device_->num_groups() * machine().kinds.at(kind_).per_group : num_cores();
}

Tile Core::tile(Mem mem, uint32_t addr, DType type, uint32_t rows, uint32_t cols, const std::string &name) {
    TileRef r;
    r.mem = mem;
    r.addr = addr;
    r.type = type;
    r.rows = r.valid_rows = rows;
    r.cols = r.valid_cols = cols;
    if (!name.empty()) {
        auto it = std::find(names_.begin(), names_.end(), name);
        r.name = (int)(it - names_.begin());
        if (it == names_.end()) names_.push_back(name);
    }
    return Tile(r);
}

void Core::emit(Instr in) {
    int index = (int)program_.size();
    check_instr(in, machine(), index, kind_);
    if (in.op == Op::TLOAD || in.op == Op::TSTORE) {
        const TileRef &t = in.op == Op::TLOAD ? in.dst : in.a;
        const auto &bufs = device_->buffers();
        if (in.gm.buffer < 0 || in.gm.buffer >= (int)bufs.size())
            throw NpuError("instruction #" + std::to_string(index) + " " + describe(in) + ": no GM buffer #" +
                           std::to_string(in.gm.buffer));
        const GmBuffer &g = bufs[in.gm.buffer];
        // The fix-pipe converts (check_instr checked what it may write).
        bool converts = in.op == Op::TSTORE && t.mem == Mem::L0C;
        if (g.type != t.type && !converts)
            throw NpuError("instruction #" + std::to_string(index) + " " + describe(in) + ": GM buffer '" + g.name +
                           "' holds " + dtype_name(g.type) + " but the tile is " + dtype_name(t.type));
        if (in.gm.clamped() && (in.op != Op::TLOAD || in.gm.row_lo > in.gm.row_hi || in.gm.col_lo > in.gm.col_hi))
            throw NpuError("instruction #" + std::to_string(index) + " " + describe(in) +
                           ": replicated edges and padding are TLOAD features and need row_lo <= row_hi and "
                           "col_lo <= col_hi");
        const GmRef &w = in.gm;
        int64_t r0 = w.row(0), c0 = w.col(0);
        int64_t first = w.offset + r0 * w.row_stride + c0;
        int64_t last = w.offset + w.row(t.valid_rows ? t.valid_rows - 1 : 0) * w.row_stride +
                       w.col(t.valid_cols ? (int64_t)t.valid_cols - 1 : 0);
        if (t.valid_rows && t.valid_cols && (first < 0 || last >= (int64_t)g.elems))
            throw NpuError("instruction #" + std::to_string(index) + " " + describe(in) + ": GM buffer '" + g.name +
                           "' has " + std::to_string(g.elems) + " elements but the access spans elements [" +
                           std::to_string(first) + ", " + std::to_string(last) + "]");
    }
    program_.push_back(in);
}

namespace {

Instr make(Op op, Pipe pipe, const TileRef &d, const TileRef &a = {}, const TileRef &b = {}, const TileRef &c = {}) {
    Instr in;
    in.op = op;
    in.pipe = pipe;
    in.dst = d;
    in.a = a;
    in.b = b;
    in.c = c;
    return in;
}

Instr make_flag(Op op, Pipe pipe, Pipe src, Pipe dst, int event) {
    Instr in = make(op, pipe, {});
    in.flag_src = src;
    in.flag_dst = dst;
    in.event = event;
    return in;
}

}  // namespace

void Core::TLOAD(const Tile &dst, const GmRef &src) {
    Instr in = make(Op::TLOAD, dma_pipe(Op::TLOAD, Mem::GM, dst.mem), dst);
    in.gm = src;
    emit(in);
}

void Core::TSTORE(const GmRef &dst, const Tile &src, bool relu) {
    Instr in = make(Op::TSTORE, dma_pipe(Op::TSTORE, src.mem, Mem::GM), {}, src);
    in.gm = dst;
    in.relu = relu;
    emit(in);
}

void Core::TMOV(const Tile &dst, const Tile &src, bool relu) {
    Instr in = make(Op::TMOV, dma_pipe(Op::TMOV, src.mem, dst.mem), dst, src);
    in.relu = relu;
    emit(in);
}

void Core::TSTORE(const GmRef &dst, const Tile &src, const Fix &fix) {
    Instr in = make(Op::TSTORE, dma_pipe(Op::TSTORE, src.mem, Mem::GM), {}, src, {}, fix.bias_tile);
    in.gm = dst;
    fix.apply(in);
    emit(in);
}

void Core::TMOV(const Tile &dst, const Tile &src, const Fix &fix) {
    Instr in = make(Op::TMOV, dma_pipe(Op::TMOV, src.mem, dst.mem), dst, src, {}, fix.bias_tile);
    fix.apply(in);
    emit(in);
}

void Core::TMOV_T(const Tile &dst, const Tile &src) {
    Instr in = make(Op::TMOV, dma_pipe(Op::TMOV, src.mem, dst.mem), dst, src);
    in.transpose = true;
    emit(in);
}

void Core::binary(Op op, const Tile &d, const Tile &a, const Tile &b) { emit(make(op, Pipe::V, d, a, b)); }

void Core::unary(Op op, const Tile &d, const Tile &a) { emit(make(op, Pipe::V, d, a)); }

void Core::scalar(Op op, const Tile &d, const Tile &a, float s) {
    Instr in = make(op, Pipe::V, d, a);
    in.scalar = s;
    emit(in);
}

void Core::TCMP(const Tile &mask, const Tile &a, const Tile &b, Cmp cmp) {
    Instr in = make(Op::TCMP, Pipe::V, mask, a, b);
    in.cmp = cmp;
    emit(in);
}

void Core::TSEL(const Tile &d, const Tile &mask, const Tile &a, const Tile &b) {
    emit(make(Op::TSEL, Pipe::V, d, mask, a, b));
}

void Core::TEXTRACT(const Tile &d, const Tile &a, uint32_t row, uint32_t col) {
    Instr in = make(Op::TEXTRACT, Pipe::V, d, a);
    in.index_row = row, in.index_col = col;
    emit(in);
}

void Core::TMATMUL(const Tile &c, const Tile &a, const Tile &b) { emit(make(Op::TMATMUL, Pipe::M, c, a, b)); }

void Core::TMATMUL_BIAS(const Tile &c, const Tile &a, const Tile &b, const Tile &bias) {
    Instr in = make(Op::TMATMUL, Pipe::M, c, a, b, bias);
    in.has_bias = true;
    emit(in);
}

void Core::TMATMUL_ACC(const Tile &c, const Tile &a, const Tile &b) { emit(make(Op::TMATMUL_ACC, Pipe::M, c, a, b)); }

void Core::SET_FLAG(Pipe src, Pipe dst, int event) { emit(make_flag(Op::SET_FLAG, src, src, dst, event)); }

void Core::WAIT_FLAG(Pipe src, Pipe dst, int event) { emit(make_flag(Op::WAIT_FLAG, dst, src, dst, event)); }

void Core::PIPE_BARRIER(Pipe pipe) { emit(make_flag(Op::PIPE_BARRIER, Pipe::S, pipe, Pipe::S, 0)); }

void Core::SET_CROSS(Pipe pipe, int flag) { emit(make_flag(Op::SET_CROSS, pipe, pipe, pipe, flag)); }

void Core::WAIT_CROSS(Pipe pipe, int flag) { emit(make_flag(Op::WAIT_CROSS, pipe, pipe, pipe, flag)); }

GlobalTensor Device::bind_owned(const std::string &name, DType type, uint64_t elems) {
    owned_.emplace_back(elems * dtype_size(type), 0);
    return bind(name, type, owned_.back().data(), elems);
}

GlobalTensor Core::scratch_gm(const std::string &name, DType type, uint64_t elems) {
    return device_->bind_owned(name + "@core" + std::to_string(index_), type, elems);
}

GlobalTensor Device::bind(const std::string &name, DType type, void *host, uint64_t elems) {
    buffers_.push_back(GmBuffer{name, type, host, elems});
    return GlobalTensor{(int)buffers_.size() - 1, type};
}

SimReport Device::run(int cores, const std::function<void(Core &)> &kernel, const SimOptions &options) {
    if (machine_.split())
        throw NpuError("machine '" + machine_.name + "' has " + std::to_string(machine_.kinds.size()) +
                       " kinds of core (" + machine_.kinds[0].name + ", " + machine_.kinds[1].name +
                       "...): record one kernel per kind with Device::run_groups");
    cores_ = cores > 0 ? cores : machine_.cores;
    groups_ = cores_;
    std::vector<CoreProgram> programs(cores_);
    for (int i = 0; i < cores_; i++) {
        Core core(*this, i);
        kernel(core);
        programs[i].instrs = core.program();
        programs[i].tile_names = core.tile_names();
        programs[i].group = i;  // a unified machine: every core its own group
    }
    return simulate(machine_, buffers_, programs, options);
}

SimReport Device::run_groups(int groups, const KindKernels &kernels, const SimOptions &options) {
    groups_ = groups > 0 ? groups : machine_.groups();
    cores_ = groups_ * machine_.group_size();
    for (const auto &k : kernels)
        if (machine_.kind_index(k.first) < 0)
            throw NpuError("Device::run_groups: machine '" + machine_.name + "' has no kind of core called '" + k.first +
                           "'");
    std::vector<CoreProgram> programs;
    for (int g = 0; g < groups_; g++)
        for (int k = 0; k < (int)machine_.kinds.size(); k++) {
            const CoreKind &kind = machine_.kinds[k];
            auto it = kernels.find(kind.name);
            if (it == kernels.end())
                throw NpuError("Device::run_groups: no kernel for the " + kind.name + " cores of machine '" +
                               machine_.name + "'");
            for (int s = 0; s < kind.per_group; s++) {
                Core core(*this, (int)programs.size(), k, g, g * kind.per_group + s);
                it->second(core);
                programs.push_back(CoreProgram{core.program(), core.tile_names(), k, g});
            }
        }
    return simulate(machine_, buffers_, programs, options);
}

namespace {

// One core's on-chip memories for functional execution (only those of its kind).
struct CoreMems {
    std::vector<uint8_t> mem[kNumMems];
    CoreMems(const Machine &m, int kind) {
        for (int i = 1; i < kNumMems; i++)
            if (m.kinds.at(kind).has((Mem)i)) mem[i].assign(m.mem_bytes[i], 0);
    }
};

// The GM round trip between kinds (SimReport::exchange_*_bytes).
void count_exchange(const Machine &m, const std::vector<CoreProgram> &programs, SimReport &r) {
    if (!m.split()) return;
    struct Use {
        std::vector<uint64_t> read, written;  // per kind
    };
    std::map<int, Use> uses;  // per GM buffer
    for (const CoreProgram &p : programs)
        for (const Instr &in : p.instrs) {
            if (in.op != Op::TLOAD && in.op != Op::TSTORE) continue;
            Use &u = uses[in.gm.buffer];
            u.read.resize(m.kinds.size()), u.written.resize(m.kinds.size());
            (in.op == Op::TLOAD ? u.read : u.written)[p.kind] += dma_bytes(in);
        }
    // Whether a kind other than k has bytes in `v`.
    auto other = [&](const std::vector<uint64_t> &v, size_t k) {
        for (size_t i = 0; i < v.size(); i++)
            if (i != k && v[i]) return true;
        return false;
    };
    for (const auto &b : uses)
        for (size_t k = 0; k < m.kinds.size(); k++) {
            if (other(b.second.read, k)) r.exchange_write_bytes += b.second.written[k];
            if (other(b.second.written, k)) r.exchange_read_bytes += b.second.read[k];
        }
}

}  // namespace

SimReport simulate(const Machine &m, const std::vector<GmBuffer> &buffers, const std::vector<CoreProgram> &programs,
                   const SimOptions &options) {
    SimReport r;
    r.machine = m.name;
    for (const CoreKind &k : m.kinds) r.kinds.push_back(k.name);
    r.cores = (int)programs.size();
    // GM's bandwidth in equal shares between the cores that move GM bytes.
    int streaming = 0;
    for (const CoreProgram &p : programs)
        streaming += std::any_of(p.instrs.begin(), p.instrs.end(),
                                 [](const Instr &in) { return in.op == Op::TLOAD || in.op == Op::TSTORE; });
    // Start cycles when cores exchange data through cross-core flags.
    const std::vector<std::vector<uint64_t>> starts = schedule_cores(m, programs, options, r, gm_share(m, streaming));
    bool cross = false;
    for (int c = 0; c < r.cores; c++) cross |= !starts[c].empty();
    if (options.functional && !cross) {  // each core in program order
        for (const CoreProgram &p : programs) {
            CoreMems mems(m, p.kind);
            for (const Instr &in : p.instrs) execute(in, mems.mem, buffers);
        }
    } else if (options.functional) {
        // Cores exchanging data through GM: every instruction in the order the
        // timed pass started them (ties in core and program order), an order
        // every flag respects: a consumer starts after its producer completed.
        std::vector<std::tuple<uint64_t, int, int>> order;
        for (int c = 0; c < r.cores; c++)
            for (int j = 0; j < (int)programs[c].instrs.size(); j++) order.emplace_back(starts[c][j], c, j);
        std::sort(order.begin(), order.end());
        std::vector<CoreMems> mems;
        for (const CoreProgram &p : programs) mems.emplace_back(m, p.kind);
        for (const auto &[t, c, j] : order) execute(programs[c].instrs[j], mems[c].mem, buffers);
    }
    count_exchange(m, programs, r);
    if (options.races_are_errors && r.race_count > 0) {
        std::string text = std::to_string(r.race_count) + " race(s):";
        for (const Race &race : r.races) text += "\n  " + race.text;
        throw NpuError(text);
    }
    return r;
}

}  // namespace npu
}  // namespace kiln
