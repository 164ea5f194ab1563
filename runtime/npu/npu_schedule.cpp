// Timing and race checking of one core's program, in one event-driven pass.
//
// S issues instructions in program order, one per issue_cycles, into the
// in-order queue of their pipe (PIPE_BARRIER holds issue until the pipe has
// drained). A pipe starts its head instruction at
//   max(issued, pipe free, [WAIT_FLAG] completion of the matching SET_FLAG)
// where the k-th WAIT_FLAG of (src, dst, event) matches its k-th SET_FLAG.
// A SET_FLAG occupies its pipe for sync_cycles like any instruction, but
// sets its flag only once every earlier instruction of the pipe is complete
// (DMA completes `latency` after its transfer), so transfers stay pipelined.
// A TLOAD or TSTORE also needs GM bandwidth, of which the core has its
// part: the transfer moves at most its pipe's rate each cycle, and at most
// what the core's GmChannel has left in that cycle, so it may occupy its
// pipe (and complete) later than ceil(bytes / rate) says. The pass schedules whichever queue head is ready until all are
// done; if none is, the program deadlocks (an NpuError lists the heads).
//
// The same pass keeps a vector clock per instruction: for each pipe, how many
// of its instructions are known complete before this one starts (own pipe
// order, matched flags, barriers). Two accesses to overlapping bytes, one a
// write, from instructions that neither clock orders are a race.
#include <algorithm>
#include <array>
#include <deque>
#include <map>
#include <tuple>

#include "npu_sim.h"

namespace kiln {
namespace npu {

namespace {

Region tile_region(const TileRef &t, uint32_t rows, uint32_t cols) {
    uint64_t es = dtype_size(t.type);
    return Region{(int)t.mem, t.addr, t.row_bytes(), cols * es, rows};
}

Region gm_region(const GmRef &g, uint32_t rows, uint32_t cols) {
    uint64_t es = dtype_size(g.type);
    if (g.clamped() && rows && cols) {  // the rows and columns the clamped window touches
        int64_t r0 = g.row(0), c0 = g.col(0);
        return Region{kNumMems + g.buffer, (uint64_t)(g.offset + r0 * g.row_stride + c0) * es, (uint64_t)g.row_stride * es,
                      (uint64_t)(g.col(cols - 1) - c0 + 1) * es, (uint32_t)(g.row(rows - 1) - r0 + 1)};
    }
    return Region{kNumMems + g.buffer, (uint64_t)g.offset * es, (uint64_t)g.row_stride * es, cols * es, rows};
}

using Clock = std::array<uint32_t, kNumPipes>;

void join(Clock &a, const Clock &b) {
    for (int i = 0; i < kNumPipes; i++) a[i] = std::max(a[i], b[i]);
}

struct Access {
    int instr;
    uint32_t pos;  // position of the instruction in its pipe, from 1
    Region region;
    bool write;
};

}  // namespace

bool overlap(const Region &a, const Region &b) {
    if (a.space != b.space || a.rows == 0 || b.rows == 0 || a.width == 0 || b.width == 0) return false;
    if (a.end() <= b.base || b.end() <= a.base) return false;
    const Region &x = a.rows <= b.rows ? a : b, &y = a.rows <= b.rows ? b : a;
    // For each row of x, the rows of y whose span could meet it.
    for (uint64_t r = 0; r < x.rows; r++) {
        uint64_t lo = x.base + r * x.stride, hi = lo + x.width;
        if (hi <= y.base || lo >= y.end()) continue;
        if (y.rows == 1 || y.stride == 0) return true;
        uint64_t first = lo + 1 > y.base + y.width ? (lo + 1 - y.base - y.width + y.stride - 1) / y.stride : 0;
        for (uint64_t s = first; s < y.rows; s++) {
            uint64_t ylo = y.base + s * y.stride;
            if (ylo >= hi) break;
            if (ylo + y.width > lo) return true;
        }
    }
    return false;
}

void instr_regions(const Instr &in, std::vector<Region> &reads, std::vector<Region> &writes) {
    const uint32_t R = in.dst.valid_rows, C = in.dst.valid_cols;
    switch (in.op) {
    case Op::TLOAD:
        reads.push_back(gm_region(in.gm, R, C));
        writes.push_back(tile_region(in.dst, R, C));
        return;
    case Op::TSTORE:
        reads.push_back(tile_region(in.a, in.a.valid_rows, in.a.valid_cols));
        if (in.has_bias) reads.push_back(tile_region(in.c, 1, in.a.valid_cols));
        writes.push_back(gm_region(in.gm, in.a.valid_rows, in.a.valid_cols));
        return;
    case Op::SET_FLAG:
    case Op::WAIT_FLAG:
    case Op::PIPE_BARRIER: return;
    case Op::TMATMUL:
    case Op::TMATMUL_ACC:
        reads.push_back(tile_region(in.a, R, in.a.valid_cols));
        reads.push_back(tile_region(in.b, in.a.valid_cols, C));
        if (in.has_bias) reads.push_back(tile_region(in.c, 1, C));
        if (in.op == Op::TMATMUL_ACC) reads.push_back(tile_region(in.dst, R, C));
        break;
    case Op::TROWSUM: case Op::TROWMAX: case Op::TCOLSUM: case Op::TCOLMAX:
        reads.push_back(tile_region(in.a, in.a.valid_rows, in.a.valid_cols));
        break;
    case Op::TROWEXPAND: reads.push_back(tile_region(in.a, R, 1)); break;
    case Op::TCOLEXPAND: reads.push_back(tile_region(in.a, 1, C)); break;
    case Op::TDUP: break;
    case Op::TEXTRACT: reads.push_back(tile_region(in.a, in.index_row + R, in.index_col + C)); break;
    case Op::TMOV:
        reads.push_back(tile_region(in.a, in.a.valid_rows, in.a.valid_cols));  // transposed: C x R
        if (in.has_bias) reads.push_back(tile_region(in.c, 1, in.a.valid_cols));
        break;
    default:
        reads.push_back(tile_region(in.a, R, C));
        if (is_expand_binary(in.op)) reads.push_back(expands_rows(in.op) ? tile_region(in.b, R, 1) : tile_region(in.b, 1, C));
        if (is_binary(in.op) || in.op == Op::TCMP || in.op == Op::TSEL) reads.push_back(tile_region(in.b, R, C));
        if (in.op == Op::TSEL) reads.push_back(tile_region(in.c, R, C));
    }
    writes.push_back(tile_region(in.dst, R, C));
}

uint64_t gm_share(const Machine &m, int streaming) {
    if (m.gm_bytes_per_cycle == 0) return 0;
    return std::max<uint64_t>(1, m.gm_bytes_per_cycle / (uint64_t)std::max(streaming, 1));
}

uint64_t GmChannel::transfer(uint64_t begin, uint64_t bytes, uint64_t rate) {
    rate = std::max<uint64_t>(rate, 1);
    if (capacity_ == 0 || bytes == 0) return (bytes + rate - 1) / rate;
    uint64_t t = begin;
    for (uint64_t left = bytes; left > 0; t++) {
        if (taken_.size() <= t) taken_.resize(std::max<uint64_t>(t + 1, 2 * taken_.size()), 0);
        uint64_t take = std::min({rate, capacity_ - taken_[t], left});
        taken_[t] += take;
        left -= take;
    }
    return t - begin;
}

void schedule_core(const Machine &m, const CoreProgram &p, int core, const SimOptions &options, SimReport &r,
                   GmChannel *gm) {
    const std::vector<Instr> &prog = p.instrs;
    const size_t n = prog.size();
    std::vector<uint64_t> issued(n), start(n), done(n);
    std::vector<Clock> clock(n);
    std::vector<uint32_t> pos(n);
    std::deque<int> queue[kNumPipes];
    uint64_t free_at[kNumPipes] = {}, drain_at[kNumPipes] = {};
    uint32_t count[kNumPipes] = {};      // instructions scheduled per pipe
    uint32_t pending[kNumPipes] = {};    // issued but not yet scheduled
    int last[kNumPipes];
    std::fill(last, last + kNumPipes, -1);
    using Key = std::tuple<int, int, int>;
    std::map<Key, std::vector<int>> sets;  // scheduled SET_FLAGs per flag, in order
    std::map<Key, size_t> waits;           // WAIT_FLAGs scheduled per flag
    std::map<int, std::vector<Access>> accesses[kNumPipes];  // per pipe, per memory space, in pipe order
    Clock barrier{};                       // what instructions issued from now on are ordered after
    uint64_t t_issue = 0;
    size_t next = 0, finished = 0;
    PipeStats stats[kNumPipes] = {};
    uint64_t end = 0, gm_wait = 0;

    auto check_races = [&](int j, Pipe pipe) {
        std::vector<Region> reads, writes;
        instr_regions(prog[j], reads, writes);
        auto check = [&](const Region &reg, bool write) {
            for (int q = 0; q < kNumPipes; q++) {
                if (q == (int)pipe) continue;
                auto it = accesses[q].find(reg.space);
                if (it == accesses[q].end()) continue;
                const std::vector<Access> &list = it->second;
                auto from = std::upper_bound(list.begin(), list.end(), clock[j][q],
                                             [](uint32_t v, const Access &a) { return v < a.pos; });
                for (; from != list.end(); ++from) {
                    if (!(write || from->write) || !overlap(reg, from->region)) continue;
                    r.race_count++;
                    if (r.races.size() < 16) {
                        Race race;
                        race.core = race.first_core = core;
                        race.first = from->instr;
                        race.second = j;
                        race.text = "core " + std::to_string(core) + ": #" + std::to_string(from->instr) + " " +
                                    describe(prog[from->instr]) + " (" + pipe_name((Pipe)q) + ", " +
                                    (from->write ? "writes" : "reads") + ") and #" + std::to_string(j) + " " +
                                    describe(prog[j]) + " (" + pipe_name(pipe) + ", " +
                                    (write ? "writes" : "reads") + ") touch the same bytes of " +
                                    (reg.space < kNumMems ? mem_name((Mem)reg.space) : "GM") +
                                    " with no flag ordering them";
                        r.races.push_back(race);
                    }
                }
            }
        };
        for (const Region &reg : reads) check(reg, false);
        for (const Region &reg : writes) check(reg, true);
        for (const Region &reg : reads) accesses[(int)pipe][reg.space].push_back({j, pos[j], reg, false});
        for (const Region &reg : writes) accesses[(int)pipe][reg.space].push_back({j, pos[j], reg, true});
    };

    while (finished < n) {
        bool progress = false;
        // S: issue in program order.
        while (next < n) {
            const Instr &in = prog[next];
            if (in.op == Op::PIPE_BARRIER) {
                bool drained = true;
                for (int q = 0; q < kNumPipes; q++)
                    if ((in.flag_src == Pipe::ALL || (int)in.flag_src == q) && pending[q] > 0) drained = false;
                if (!drained) break;
                uint64_t t = t_issue;
                for (int q = 0; q < kNumPipes; q++)
                    if (in.flag_src == Pipe::ALL || (int)in.flag_src == q) {
                        t = std::max(t, drain_at[q]);
                        if (last[q] >= 0) join(barrier, clock[last[q]]);
                    }
                issued[next] = start[next] = done[next] = t;
                t_issue = t + m.issue_cycles;
                stats[(int)Pipe::S].instrs++;
                if (options.trace) r.events.push_back({core, (int)next, Pipe::S, t, t, 0, describe(in)});
                next++;
                finished++;
                progress = true;
                continue;
            }
            issued[next] = t_issue;
            t_issue += m.issue_cycles;
            clock[next] = barrier;
            queue[(int)in.pipe].push_back((int)next);
            pending[(int)in.pipe]++;
            next++;
            progress = true;
        }
        // Each pipe: run its queue head while it is ready.
        for (int q = 0; q < kNumPipes; q++) {
            while (!queue[q].empty()) {
                int j = queue[q].front();
                const Instr &in = prog[j];
                uint64_t ready = std::max(issued[j], free_at[q]);
                uint64_t begin = ready;
                if (in.op == Op::WAIT_FLAG) {
                    Key key{(int)in.flag_src, (int)in.flag_dst, in.event};
                    size_t k = waits[key];
                    auto it = sets.find(key);
                    if (it == sets.end() || it->second.size() <= k) break;  // its set is not scheduled yet
                    int s = it->second[k];
                    begin = std::max(begin, done[s]);
                    join(clock[j], clock[s]);
                    stats[q].stall += begin - ready;
                    waits[key] = k + 1;
                }
                Cost c = instr_cost(in, m);
                if (gm && (in.op == Op::TLOAD || in.op == Op::TSTORE)) {
                    // The GM side moves its bytes evenly over the pipe's cycles (a fix-pipe
                    // store of a narrower type writes fewer bytes than it reads from L0C).
                    const uint64_t bytes = dma_bytes(in), rate = (bytes + c.busy - 1) / c.busy;
                    const uint64_t busy = std::max(c.busy, gm->transfer(begin, bytes, rate));
                    gm_wait += busy - c.busy;
                    c.done += busy - c.busy;
                    c.busy = busy;
                }
                start[j] = begin;
                done[j] = begin + c.done;
                // A set is a marker in the queue: the pipe moves on, the flag is set
                // once every earlier instruction of the pipe has completed.
                if (in.op == Op::SET_FLAG) done[j] = std::max(done[j], drain_at[q]);
                free_at[q] = begin + c.busy;
                drain_at[q] = std::max(drain_at[q], done[j]);
                if (last[q] >= 0) join(clock[j], clock[last[q]]);
                pos[j] = clock[j][q] = ++count[q];
                last[q] = j;
                if (in.op == Op::SET_FLAG) sets[Key{(int)in.flag_src, (int)in.flag_dst, in.event}].push_back(j);
                stats[q].busy += c.busy;
                stats[q].instrs++;
                end = std::max(end, done[j]);
                if (options.trace) r.events.push_back({core, j, (Pipe)q, begin, done[j], c.busy, describe(in)});
                if (options.check_races) check_races(j, (Pipe)q);
                queue[q].pop_front();
                pending[q]--;
                finished++;
                progress = true;
            }
        }
        if (!progress) {
            std::string text = "core " + std::to_string(core) + " deadlocks: every pipe waits for a flag never set:";
            for (int q = 0; q < kNumPipes; q++)
                if (!queue[q].empty())
                    text += "\n  " + std::string(pipe_name((Pipe)q)) + ": #" + std::to_string(queue[q].front()) + " " +
                            describe(prog[queue[q].front()]);
            if (next < n) text += "\n  S: #" + std::to_string(next) + " " + describe(prog[next]);
            throw NpuError(text);
        }
    }
    end = std::max(end, t_issue > 0 ? t_issue - m.issue_cycles + 1 : 0);  // the last issue slot
    stats[(int)Pipe::S].busy += n * m.issue_cycles;
    r.core_cycles.push_back(end);
    r.cycles = std::max(r.cycles, end);
    CoreFigures figures;
    figures.cycles = end;
    figures.instructions = n;
    figures.gm_wait = gm_wait;
    r.gm_wait += gm_wait;
    for (int q = 0; q < kNumPipes; q++) figures.busy[q] = stats[q].busy;
    uint64_t read = r.gm_read_bytes, written = r.gm_write_bytes;
    for (int q = 0; q < kNumPipes; q++) {
        r.pipes[q].busy += stats[q].busy;
        r.pipes[q].stall += stats[q].stall;
        r.pipes[q].instrs += stats[q].instrs;
    }
    count_program(p, r);
    figures.gm_read_bytes = r.gm_read_bytes - read;
    figures.gm_write_bytes = r.gm_write_bytes - written;
    r.per_core.push_back(figures);
}

void check_gm_races_between_cores(const std::vector<CoreProgram> &programs, SimReport &r) {
    struct Item { Region reg; int core, instr; bool write; };
    std::vector<Item> items;
    for (int c = 0; c < (int)programs.size(); c++)
        for (int j = 0; j < (int)programs[c].instrs.size(); j++) {
            std::vector<Region> reads, writes;
            instr_regions(programs[c].instrs[j], reads, writes);
            for (const Region &g : reads)
                if (g.space >= kNumMems) items.push_back({g, c, j, false});
            for (const Region &g : writes)
                if (g.space >= kNumMems) items.push_back({g, c, j, true});
        }
    std::sort(items.begin(), items.end(), [](const Item &a, const Item &b) {
        return std::tie(a.reg.space, a.reg.base) < std::tie(b.reg.space, b.reg.base);
    });
    std::vector<const Item *> active;
    for (const Item &it : items) {
        active.erase(std::remove_if(active.begin(), active.end(),
                                    [&](const Item *a) { return a->reg.space != it.reg.space || a->reg.end() <= it.reg.base; }),
                     active.end());
        for (const Item *a : active) {
            if (a->core == it.core || !(a->write || it.write) || !overlap(a->reg, it.reg)) continue;
            r.race_count++;
            if (r.races.size() < 16) {
                Race race;
                race.first_core = a->core;
                race.first = a->instr;
                race.core = it.core;
                race.second = it.instr;
                race.text = "core " + std::to_string(a->core) + " #" + std::to_string(a->instr) + " " +
                            describe(programs[a->core].instrs[a->instr]) + " and core " + std::to_string(it.core) +
                            " #" + std::to_string(it.instr) + " " + describe(programs[it.core].instrs[it.instr]) +
                            " touch the same GM bytes (" + (a->write ? "write" : "read") + "/" +
                            (it.write ? "write" : "read") + "); cores are not synchronized";
                r.races.push_back(race);
            }
        }
        active.push_back(&it);
    }
}

}  // namespace npu
}  // namespace kiln
