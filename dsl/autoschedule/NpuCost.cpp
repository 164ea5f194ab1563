// See NpuCost.h.
#include "NpuCost.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "codegen/NpuKernel.h"
#include "npu_sim.h"
#include "ir/Error.h"
#include "ir/IRVisitor.h"
#include "ir/Simplify.h"
#include "ir/Substitute.h"
#include "lower/Lower.h"
#include "lower/RealizationOrder.h"

namespace kiln {
namespace internal {

namespace {

// One core's program, unrolled from the kernel's loops: the instructions
// the kernel would issue on the core that runs the most tiles (a loop
// across cores gives core 0 ceil(trips / cores) of them), with their
// shapes, pipes and flags; the outermost loop capped at `cap` trips.
class Unroller {
public:
    // Top-level loops of more than `longer` trips run `cap` of them.
    Unroller(const NpuKernel &k, const npu::Machine &m, NpuCostEstimate &e, int64_t longer, int64_t cap)
        : k(k), m(m), e(e), longer(longer), cap(cap) {}
    npu::CoreProgram program;
    int64_t outer_trips = 1;  // of a top-level loop the cap shortened, per core, uncapped
    int capped = 0;           // top-level loops the cap shortened
    int active_cores = 1;     // cores a loop across cores keeps busy

    void items(const std::vector<NpuItem> &list, int depth) {
        for (const NpuItem &i : list) {
            if (i.kind == NpuItem::Line) {
                if (i.advances_parity >= 0) parity[i.advances_parity] = iter[i.advances_parity]++ & 1;
            } else if (i.kind == NpuItem::Loop) {
                int64_t n = i.trips;
                const bool known = n >= 0;
                if (!known) e.exact_trips = false, n = 1;
                if (i.across_cores) {
                    active_cores = std::max(active_cores, (int)std::min<int64_t>(m.cores, std::max<int64_t>(n, 1)));
                    n = (n + m.cores - 1) / std::max(1, m.cores);
                }
                if (i.pipelined && known && n > 0) n++;  // software-pipelined: one trip more than as written
                if (depth == 0 && n > longer) {
                    outer_trips = n, capped++;
                    n = cap;
                }
                // A software-pipelined loop (NpuPipeline.cpp) runs its first stage on all trips but the last,
                // its second on all but the first (both on the one trip of a loop of unknown trip count).
                const int64_t outer_trip = trip, outer_n = pipelined_trips;
                if (i.pipelined) pipelined_trips = known ? n : -1;
                counts_of[i.var] = n;
                for (int64_t t = 0; t < n; t++) {
                    if (i.pipelined) trip = t;
                    trips_of[i.var] = t;
                    items(i.body, depth + 1);
                }
                trips_of.erase(i.var);
                counts_of.erase(i.var);
                trip = outer_trip, pipelined_trips = outer_n;
            } else if ((i.stage < 0 || pipelined_trips < 0 || (i.stage == 0 ? trip < pipelined_trips - 1 : trip > 0)) &&
                       std::all_of(i.first_trip.begin(), i.first_trip.end(),
                                   [&](const std::string &v) { return trips_of[v] == 0; }) &&
                       (!i.ring.slots || npu_ring_runs(i.ring, i.ring.point, trips_of[i.ring.panel],
                                                       counts_of[i.ring.panel], trips_of[i.ring.tile],
                                                       counts_of[i.ring.tile], trips_of[i.ring.slice]))) {
                // (a k-slice's load runs on the first trips of its loops only, as its guard says; an operand
                // ring's loads and flags where their ring points say)
                program.instrs.push_back(instruction(i));
            }
        }
    }

private:
    const NpuKernel &k;
    const npu::Machine &m;
    NpuCostEstimate &e;
    const int64_t longer, cap;
    std::map<int, int> parity, iter;
    int64_t trip = 0, pipelined_trips = -1;  // in a software-pipelined loop: its trip and trip count
    std::map<std::string, int64_t> trips_of;  // each enclosing loop's trip (by its C++ variable)
    std::map<std::string, int64_t> counts_of; // and its trips per run, as unrolled

    npu::Instr instruction(const NpuItem &i) {
        npu::Instr in;
        in.op = i.op;
        in.pipe = i.pipe;
        switch (i.op) {
        case npu::Op::SET_FLAG:
        case npu::Op::WAIT_FLAG:
            in.pipe = i.op == npu::Op::SET_FLAG ? i.flag_src : i.flag_dst;
            in.flag_src = i.flag_src, in.flag_dst = i.flag_dst;
            in.event = i.event + (i.event_parity >= 0 ? parity[i.event_parity] : 0);
            return in;
        case npu::Op::PIPE_BARRIER:
            in.pipe = npu::Pipe::S;
            in.flag_src = i.flag_src;
            return in;
        default: break;
        }
        std::vector<npu::TileRef> tiles;
        for (const NpuArg &a : i.args) {
            if (a.buffer < 0) continue;
            const NpuBuffer &b = k.buffers[a.buffer];
            npu::TileRef t;
            t.mem = b.memory;
            t.type = b.dtype;
            t.addr = (uint32_t)b.addr;
            t.rows = (uint32_t)b.rows;
            t.cols = (uint32_t)b.cols;
            t.valid_rows = (uint32_t)a.rows;
            t.valid_cols = (uint32_t)a.cols;
            tiles.push_back(t);
        }
        npu::TileRef *slots[4] = {&in.dst, &in.a, &in.b, &in.c};
        for (size_t j = 0; j < tiles.size() && j < 3; j++) *slots[i.op == npu::Op::TSTORE ? j + 1 : j] = tiles[j];
        if (tiles.size() > 3 && i.op != npu::Op::TSTORE) in.c = tiles[3];
        if (i.op == npu::Op::TLOAD) in.gm.type = in.dst.type;
        if (i.op == npu::Op::TSTORE) in.gm.type = i.fix ? i.gm_type : in.a.type;
        if (i.fix) {  // the fix pipe's epilogue: the bias tile (after the accumulator) is its c
            in.relu = i.relu;
            in.has_scale = !i.scale.empty();
            in.has_bias = tiles.size() > 1;
            if (in.has_bias) in.c = in.b, in.b = npu::TileRef();
        }
        return in;
    }
};

// The estimated sizes in the loops' extents, through the lets they read,
// so that selection records each loop's trip count. Nothing else changes:
// selection recognizes a boundary's clamps in their symbolic form.
class SizesInLoopExtents : public IRMutator {
public:
    explicit SizesInLoopExtents(std::map<std::string, Expr> values) : values(std::move(values)) {}

private:
    std::map<std::string, Expr> values;
    Stmt visit(const LetStmt *op) override {
        const Expr v = simplify(substitute(values, op->value));
        const bool constant = as_const_int(v) != nullptr;
        if (constant) values[op->name] = v;
        Stmt body = mutate(op->body);
        if (constant) values.erase(op->name);
        return LetStmt::make(op->name, op->value, body);
    }
    Stmt visit(const For *op) override {
        Stmt body = mutate(op->body);
        return For::make(op->name, op->min, simplify(substitute(values, op->extent)), op->for_type, body);
    }
};

std::string bytes_text(uint64_t b) {
    char s[32];
    if (b >= (1u << 20)) std::snprintf(s, sizeof s, "%.1f MiB", b / 1048576.0);
    else std::snprintf(s, sizeof s, "%.1f KiB", b / 1024.0);
    return s;
}

}  // namespace

std::string NpuCostEstimate::to_string() const {
    char s[64];
    std::snprintf(s, sizeof s, "%.0f cycles", cycles);
    std::string r = s;
    r += "; busy";
    for (const auto &[pipe, b] : busy) {
        if (b == 0 || pipe == "S") continue;
        std::snprintf(s, sizeof s, " %s %.0f%%", pipe.c_str(), cycles > 0 ? 100.0 * b / cycles : 0.0);
        r += s;
    }
    r += "; GM " + bytes_text(gm_read) + " in, " + bytes_text(gm_write) + " out";
    for (const auto &[mem, b] : peak)
        if (b) r += "; " + mem + " " + bytes_text(b);
    if (!exact_trips) r += " (a loop of unknown trip count counted once)";
    return r;
}

NpuCostEstimate npu_predict(const std::vector<std::shared_ptr<FunctionContents>> &outs, const Target &t,
                            const std::map<std::string, int64_t> &values) {
    internal_assert(t.has(Target::NPU)) << "npu_predict: target " << t.to_string() << " is not an NPU target";
    std::vector<std::string> out_names;
    for (const auto &o : outs) out_names.push_back(o->name);
    LowerOptions nest_only;
    nest_only.stop = LowerStop::LoopNest;
    Stmt nest = lower(outs, "npu_cost", {}, t, nest_only).body;
    std::map<std::string, Expr> sizes;
    for (const auto &[name, v] : values) sizes[name] = Expr((int)v);
    nest = SizesInLoopExtents(sizes).mutate(nest);
    NpuKernel k = npu_insert_sync(
        npu_software_pipeline(npu_select_and_place("npu_cost", nest, find_environment(outs), out_names, t)));

    // The core's program, a top-level loop of more than 8 trips capped at
    // 8: the trips beyond are extrapolated from what the last 4 took.
    const npu::Machine m = npu_target_machine();
    NpuCostEstimate e;
    npu::SimOptions timing_only;
    timing_only.functional = false;
    timing_only.check_races = false;
    constexpr int64_t cap = 8;
    auto run = [&](int64_t longer, int64_t to, int64_t *trips, int *capped) {
        NpuCostEstimate scratch;
        Unroller u(k, m, scratch, longer, to);
        u.items(k.body, 0);
        e.exact_trips &= scratch.exact_trips;
        if (trips) *trips = u.outer_trips, *capped = u.capped;
        npu::SimReport r;
        npu::count_program(u.program, r);  // before schedule_core, which takes the GM bytes from it
        // The cores the loop across cores keeps busy share GM equally.
        npu::GmChannel gm(npu::gm_share(m, u.active_cores));
        npu::schedule_core(m, u.program, 0, timing_only, r, &gm);
        return r;
    };
    int64_t trips = 1;
    int capped = 0;
    npu::SimReport full = run(cap, cap, &trips, &capped);
    double scale = 1;
    // Extrapolated from one capped nest only: the difference between the
    // runs is then that nest's trips alone. Several capped nests (a Func
    // through GM, then the output) are unrolled whole.
    if (capped > 1) full = run(INT64_MAX, INT64_MAX, nullptr, nullptr);
    e.cycles = (double)full.per_core[0].cycles;
    if (capped == 1) {
        npu::SimReport half = run(cap, cap / 2, nullptr, nullptr);
        const double per_trip = (double)(full.per_core[0].cycles - half.per_core[0].cycles) / (cap - cap / 2);
        e.cycles += per_trip * (double)(trips - cap);
        scale = (double)trips / cap;
    }
    for (int p = 0; p < npu::kNumPipes; p++)
        e.busy[npu::pipe_name((npu::Pipe)p)] = (uint64_t)(scale * (double)full.per_core[0].busy[p]);
    e.instructions = (int)(scale * (double)full.per_core[0].instructions);
    e.gm_read = (uint64_t)(scale * (double)full.per_core[0].gm_read_bytes) * (uint64_t)(k.multi_core ? m.cores : 1);
    e.gm_write = (uint64_t)(scale * (double)full.per_core[0].gm_write_bytes) * (uint64_t)(k.multi_core ? m.cores : 1);
    for (const auto &[mem, pl] : k.placement) e.peak[mem] = pl.peak;
    return e;
}

}  // namespace internal
}  // namespace kiln
