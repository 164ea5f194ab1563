// Timing and race checking of the cores' programs, in one event-driven pass.
//
// S issues instructions in program order, one per issue_cycles, into the
// in-order queue of their pipe (PIPE_BARRIER holds issue until the pipe has
// drained). A pipe starts its head instruction at
//   max(issued, pipe free, [WAIT_FLAG] completion of the matching SET_FLAG,
//       [WAIT_CROSS] cross_flag_cycles after the matching SET_CROSSes)
// where the k-th WAIT_FLAG of (src, dst, event) matches its k-th SET_FLAG,
// and the k-th WAIT_CROSS of flag f on a core the k-th SET_CROSS of f by
// every core of the other kinds in its group. A SET_FLAG (SET_CROSS)
// occupies its pipe for sync_cycles like any instruction, but sets its flag
// only once every earlier instruction of the pipe is complete (DMA
// completes `latency` after its transfer), so transfers stay pipelined.
// A TLOAD or TSTORE also needs GM bandwidth, of which the core has its
// part: the transfer moves at most its pipe's rate each cycle, and at most
// what the core's GmChannel has left in that cycle, so it may occupy its
// pipe (and complete) later than ceil(bytes / rate) says.
//
// Each core's state (queues, pipe clocks, flags) is resumable: one loop
// advances every core as far as its ready queue heads go, again and again,
// so a core waiting on another core's flag continues once that flag is
// scheduled. If no core can advance, the cores deadlock (an NpuError lists
// every stuck core's queue heads).
//
// The same pass keeps a vector clock per instruction: for each pipe of its
// core, how many of its instructions are known complete before this one
// starts (own pipe order, matched flags, barriers), and for each pipe of
// every other core, what the cross-core waits before it have learnt
// (snapshots shared between the cores). Two accesses to overlapping bytes,
// one a write, from instructions that neither clock orders are a race: on
// one core any memory, between cores GM (so a GM workspace written by one
// core and read by another needs a SET_CROSS / WAIT_CROSS pair between).
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
    case Op::PIPE_BARRIER:
    case Op::SET_CROSS:
    case Op::WAIT_CROSS: return;
    case Op::TMATMUL:
    case Op::TMATMUL_ACC:
        reads.push_back(tile_region(in.a, R, in.a.valid_cols));
        reads.push_back(tile_region(in.b, in.a.valid_cols, C));
        if (in.has_bias) reads.push_back(tile_region(in.c, 1, C));
        if (accumulates(in.op)) reads.push_back(tile_region(in.dst, R, C));
        break;
    case Op::TROWSUM: case Op::TROWMAX: case Op::TCOLSUM: case Op::TCOLMAX: case Op::TROWSUM_ACC: case Op::TCOLSUM_ACC:
        reads.push_back(tile_region(in.a, in.a.valid_rows, in.a.valid_cols));
        if (accumulates(in.op)) reads.push_back(tile_region(in.dst, R, C));
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

namespace {

// What the cores have learnt of the other cores' pipes through cross-core
// waits: snapshots of one Clock per core, shared by the cores of a run; an
// instruction keeps the index of its snapshot (-1: nothing learnt).
struct Remote {
    int ncores = 0;
    std::vector<std::vector<Clock>> snaps;

    uint32_t known(int r, int core, int pipe) const { return r < 0 ? 0 : snaps[r][core][pipe]; }
    int join(int a, int b) {
        if (a == b || b < 0) return a;
        if (a < 0) return b;
        bool a_ge = true, b_ge = true;
        for (int c = 0; c < ncores; c++)
            for (int q = 0; q < kNumPipes; q++) {
                a_ge &= snaps[a][c][q] >= snaps[b][c][q];
                b_ge &= snaps[b][c][q] >= snaps[a][c][q];
            }
        if (a_ge) return a;
        if (b_ge) return b;
        std::vector<Clock> m = snaps[a];
        for (int c = 0; c < ncores; c++) npu::join(m[c], snaps[b][c]);
        snaps.push_back(std::move(m));
        return (int)snaps.size() - 1;
    }
    // r with core `core`'s clock joined with `c`.
    int with(int r, int core, const Clock &c) {
        bool more = false;
        for (int q = 0; q < kNumPipes; q++) more |= c[q] > known(r, core, q);
        if (!more) return r;
        std::vector<Clock> m = r < 0 ? std::vector<Clock>(ncores, Clock{}) : snaps[r];
        npu::join(m[core], c);
        snaps.push_back(std::move(m));
        return (int)snaps.size() - 1;
    }
};

// What the cores of one run share: the cross-core flags scheduled so far,
// the remote clocks, and (for the race check between cores) every GM access.
struct Joint {
    struct Set {
        uint64_t done;
        Clock clock;
        int remote;
    };
    struct GmAccess {
        Region region;
        int core, instr, pipe;
        uint32_t pos;
        int remote;
        bool write;
    };
    std::vector<std::vector<int>> producers;       // per core: whose SET_CROSS its WAIT_CROSS waits for
    std::map<std::pair<int, int>, std::vector<Set>> sets;  // (core, flag) -> its sets, in order
    Remote remote;
    std::vector<GmAccess> gm;
};

// One core's scheduling state; step() advances it as far as it can go.
class CoreSched {
public:
    CoreSched(const Machine &m, const CoreProgram &p, int core, const SimOptions &options, SimReport &r,
              GmChannel *gm, Joint *joint)
        : m(m), p(p), prog(p.instrs), n(prog.size()), core(core), options(options), r(r), gm(gm), joint(joint),
          issued(n), start(n), done(n), clock(n), remote(n, -1), pos(n) {
        std::fill(last, last + kNumPipes, -1);
    }
    bool finished() const { return done_count == n; }
    bool step();
    // The queue heads that cannot start, one line each, `prefix` before each.
    std::string heads(const std::string &prefix) const;
    // After the last step: the core's pipe figures into the report, its own
    // into figures(); frees the per-instruction state but the start cycles
    // (if keep_starts).
    void finish(bool keep_starts);
    const CoreFigures &figures() const { return figures_; }
    std::vector<uint64_t> &starts() { return start; }

private:
    void check_races(int j, Pipe pipe);
    bool wait_cross_ready(int j, uint64_t &begin);

    using Key = std::tuple<int, int, int>;
    const Machine &m;
    const CoreProgram &p;
    const std::vector<Instr> &prog;
    const size_t n;
    const int core;
    const SimOptions &options;
    SimReport &r;
    GmChannel *gm;
    Joint *joint;
    std::vector<uint64_t> issued, start, done;
    std::vector<Clock> clock;
    std::vector<int> remote;
    std::vector<uint32_t> pos;
    std::deque<int> queue[kNumPipes];
    uint64_t free_at[kNumPipes] = {}, drain_at[kNumPipes] = {};
    uint32_t count[kNumPipes] = {};    // instructions scheduled per pipe
    uint32_t pending[kNumPipes] = {};  // issued but not yet scheduled
    int last[kNumPipes];
    std::map<Key, std::vector<int>> sets;  // scheduled SET_FLAGs per flag, in order
    std::map<Key, size_t> waits;           // WAIT_FLAGs scheduled per flag
    size_t cross_waits[kNumCrossFlags] = {};  // WAIT_CROSSes scheduled per flag
    std::map<int, std::vector<Access>> accesses[kNumPipes];  // per pipe, per memory space, in pipe order
    Clock barrier{};                       // what instructions issued from now on are ordered after
    int barrier_remote = -1;
    uint64_t t_issue = 0;
    size_t next = 0, done_count = 0;
    PipeStats stats[kNumPipes] = {};
    uint64_t end = 0, gm_wait = 0;
    CoreFigures figures_;
};

void CoreSched::check_races(int j, Pipe pipe) {
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
                                describe(prog[j]) + " (" + pipe_name(pipe) + ", " + (write ? "writes" : "reads") +
                                ") touch the same bytes of " +
                                (reg.space < kNumMems ? mem_name((Mem)reg.space) : "GM") + " with no flag ordering them";
                    r.races.push_back(race);
                }
            }
        }
    };
    for (const Region &reg : reads) check(reg, false);
    for (const Region &reg : writes) check(reg, true);
    for (const Region &reg : reads) accesses[(int)pipe][reg.space].push_back({j, pos[j], reg, false});
    for (const Region &reg : writes) accesses[(int)pipe][reg.space].push_back({j, pos[j], reg, true});
    if (joint)
        for (int w = 0; w < 2; w++)
            for (const Region &reg : w ? writes : reads)
                if (reg.space >= kNumMems) joint->gm.push_back({reg, core, j, (int)pipe, pos[j], remote[j], w == 1});
}

// The k-th WAIT_CROSS of a flag starts once every producer's k-th SET_CROSS of it is scheduled.
bool CoreSched::wait_cross_ready(int j, uint64_t &begin) {
    const Instr &in = prog[j];
    const size_t k = cross_waits[in.event];
    if (!joint) return false;
    for (int pc : joint->producers[core]) {
        auto it = joint->sets.find({pc, in.event});
        if (it == joint->sets.end() || it->second.size() <= k) return false;
    }
    for (int pc : joint->producers[core]) {
        const Joint::Set &set = joint->sets[{pc, in.event}][k];
        begin = std::max(begin, set.done + m.cross_flag_cycles);
        remote[j] = joint->remote.with(joint->remote.join(remote[j], set.remote), pc, set.clock);
    }
    cross_waits[in.event] = k + 1;
    return true;
}

bool CoreSched::step() {
    bool progress = false;
    Remote *rem = joint ? &joint->remote : nullptr;
    auto join_remote = [&](int &a, int b) {
        if (rem) a = rem->join(a, b);
    };
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
                    if (last[q] >= 0) join(barrier, clock[last[q]]), join_remote(barrier_remote, remote[last[q]]);
                }
            issued[next] = start[next] = done[next] = t;
            t_issue = t + m.issue_cycles;
            stats[(int)Pipe::S].instrs++;
            if (options.trace) r.events.push_back({core, (int)next, Pipe::S, t, t, 0, describe(in)});
            next++;
            done_count++;
            progress = true;
            continue;
        }
        issued[next] = t_issue;
        t_issue += m.issue_cycles;
        clock[next] = barrier;
        remote[next] = barrier_remote;
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
                join_remote(remote[j], remote[s]);
                waits[key] = k + 1;
            }
            if (in.op == Op::WAIT_CROSS && !wait_cross_ready(j, begin)) break;  // its sets are not scheduled yet
            if (in.op == Op::WAIT_FLAG || in.op == Op::WAIT_CROSS) stats[q].stall += begin - ready;
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
            if (in.op == Op::SET_FLAG || in.op == Op::SET_CROSS) done[j] = std::max(done[j], drain_at[q]);
            free_at[q] = begin + c.busy;
            drain_at[q] = std::max(drain_at[q], done[j]);
            if (last[q] >= 0) join(clock[j], clock[last[q]]), join_remote(remote[j], remote[last[q]]);
            pos[j] = clock[j][q] = ++count[q];
            last[q] = j;
            if (in.op == Op::SET_FLAG) sets[Key{(int)in.flag_src, (int)in.flag_dst, in.event}].push_back(j);
            if (in.op == Op::SET_CROSS && joint)
                joint->sets[{core, in.event}].push_back({done[j], clock[j], remote[j]});
            stats[q].busy += c.busy;
            stats[q].instrs++;
            end = std::max(end, done[j]);
            if (options.trace) r.events.push_back({core, j, (Pipe)q, begin, done[j], c.busy, describe(in)});
            if (options.check_races) check_races(j, (Pipe)q);
            queue[q].pop_front();
            pending[q]--;
            done_count++;
            progress = true;
        }
    }
    return progress;
}

std::string CoreSched::heads(const std::string &prefix) const {
    std::string text;
    for (int q = 0; q < kNumPipes; q++) {
        if (queue[q].empty()) continue;
        const int j = queue[q].front();
        text += "\n  " + prefix + pipe_name((Pipe)q) + ": #" + std::to_string(j) + " " + describe(prog[j]);
        if (prog[j].op == Op::WAIT_CROSS && joint) {
            const size_t k = cross_waits[prog[j].event];
            text += " (its set #" + std::to_string(k + 1) + " by core";
            for (int pc : joint->producers[core]) {
                auto it = joint->sets.find({pc, prog[j].event});
                text += " " + std::to_string(pc) + " (set " +
                        std::to_string(it == joint->sets.end() ? 0 : it->second.size()) + " times)";
            }
            text += ")";
        }
    }
    if (next < n) text += "\n  " + prefix + "S: #" + std::to_string(next) + " " + describe(prog[next]);
    return text;
}

void CoreSched::finish(bool keep_starts) {
    end = std::max(end, t_issue > 0 ? t_issue - m.issue_cycles + 1 : 0);  // the last issue slot
    stats[(int)Pipe::S].busy += n * m.issue_cycles;
    CoreFigures &f = figures_;
    f.cycles = end;
    f.instructions = n;
    f.gm_wait = gm_wait;
    f.kind = p.kind;
    r.gm_wait += gm_wait;
    for (int q = 0; q < kNumPipes; q++) f.busy[q] = stats[q].busy;
    uint64_t read = r.gm_read_bytes, written = r.gm_write_bytes;
    for (int q = 0; q < kNumPipes; q++) {
        r.pipes[q].busy += stats[q].busy;
        r.pipes[q].stall += stats[q].stall;
        r.pipes[q].instrs += stats[q].instrs;
    }
    count_program(p, r);
    f.gm_read_bytes = r.gm_read_bytes - read;
    f.gm_write_bytes = r.gm_write_bytes - written;
    // The cores of a run are all alive until the last finishes: keep little.
    for (auto *v : {&issued, &done}) std::vector<uint64_t>().swap(*v);
    if (!keep_starts) std::vector<uint64_t>().swap(start);
    std::vector<Clock>().swap(clock);
    std::vector<int>().swap(remote);
    std::vector<uint32_t>().swap(pos);
    for (auto &a : accesses) a.clear();
    sets.clear();
}

// The figures of a finished core into the report, in core order.
void add_core(const CoreFigures &f, SimReport &r) {
    r.core_cycles.push_back(f.cycles);
    r.cycles = std::max(r.cycles, f.cycles);
    r.per_core.push_back(f);
}

// GM accesses of different cores that no chain of cross-core flags orders.
void check_gm_races_between_cores(const Machine &m, const std::vector<CoreProgram> &programs, Joint &joint,
                                  SimReport &r) {
    using Item = Joint::GmAccess;
    std::vector<Item> &items = joint.gm;
    std::sort(items.begin(), items.end(), [](const Item &a, const Item &b) {
        return std::tie(a.region.space, a.region.base) < std::tie(b.region.space, b.region.base);
    });
    // a happens before b when b's core has learnt of a's pipe up to a.
    auto before = [&](const Item &a, const Item &b) { return joint.remote.known(b.remote, a.core, a.pipe) >= a.pos; };
    auto who = [&](int core) {
        return "core " + std::to_string(core) +
               (m.split() ? " (" + m.kinds[programs[core].kind].name + ")" : std::string());
    };
    std::vector<const Item *> active;
    for (const Item &it : items) {
        active.erase(std::remove_if(active.begin(), active.end(),
                                    [&](const Item *a) {
                                        return a->region.space != it.region.space || a->region.end() <= it.region.base;
                                    }),
                     active.end());
        for (const Item *a : active) {
            if (a->core == it.core || !(a->write || it.write) || !overlap(a->region, it.region)) continue;
            if (before(*a, it) || before(it, *a)) continue;
            r.race_count++;
            if (r.races.size() < 16) {
                Race race;
                race.first_core = a->core;
                race.first = a->instr;
                race.core = it.core;
                race.second = it.instr;
                race.text = who(a->core) + " #" + std::to_string(a->instr) + " " +
                            describe(programs[a->core].instrs[a->instr]) + " and " + who(it.core) + " #" +
                            std::to_string(it.instr) + " " + describe(programs[it.core].instrs[it.instr]) +
                            " touch the same GM bytes (" + (a->write ? "write" : "read") + "/" +
                            (it.write ? "write" : "read") +
                            "); cores are not synchronized (no SET_CROSS / WAIT_CROSS chain orders them)";
                r.races.push_back(race);
            }
        }
        active.push_back(&it);
    }
}

}  // namespace

void schedule_core(const Machine &m, const CoreProgram &p, int core, const SimOptions &options, SimReport &r,
                   GmChannel *gm) {
    CoreSched s(m, p, core, options, r, gm, nullptr);
    while (!s.finished())
        if (!s.step())
            throw NpuError("core " + std::to_string(core) + " deadlocks: every pipe waits for a flag never set:" +
                           s.heads(""));
    s.finish(false);
    add_core(s.figures(), r);
}

std::vector<std::vector<uint64_t>> schedule_cores(const Machine &m, const std::vector<CoreProgram> &programs,
                                                  const SimOptions &options, SimReport &r, uint64_t gm_share) {
    const int ncores = (int)programs.size();
    Joint joint;
    joint.remote.ncores = ncores;
    joint.producers.resize(ncores);
    for (int c = 0; c < ncores; c++)
        for (int o = 0; o < ncores; o++)
            if (programs[o].group == programs[c].group && programs[o].kind != programs[c].kind)
                joint.producers[c].push_back(o);
    std::vector<GmChannel> channels(ncores, GmChannel(gm_share));
    bool cross = false;  // the functional pass then follows the start cycles
    for (const CoreProgram &p : programs)
        for (const Instr &in : p.instrs) cross |= is_cross_flag(in.op);
    std::vector<CoreSched> cores;
    cores.reserve(ncores);
    for (int c = 0; c < ncores; c++) cores.emplace_back(m, programs[c], c, options, r, &channels[c], &joint);
    std::vector<bool> finished(ncores, false);
    for (;;) {
        bool progress = false, all = true;
        for (int c = 0; c < ncores; c++) {
            CoreSched &s = cores[c];
            while (!s.finished() && s.step()) progress = true;
            if (s.finished() && !finished[c]) s.finish(cross), finished[c] = true;
            all &= s.finished();
        }
        if (all) break;
        if (progress) continue;
        std::vector<int> stuck;
        for (int c = 0; c < ncores; c++)
            if (!cores[c].finished()) stuck.push_back(c);
        std::string text;
        if (stuck.size() == 1) {
            text = "core " + std::to_string(stuck[0]) + " deadlocks: every pipe waits for a flag never set:" +
                   cores[stuck[0]].heads("");
        } else {
            text = std::to_string(stuck.size()) + " cores deadlock: every pipe of each waits for a flag never set:";
            for (int c : stuck) {
                std::string who = "core " + std::to_string(c);
                if (m.split()) who += " (" + m.kinds[programs[c].kind].name + ", group " + std::to_string(programs[c].group) + ")";
                text += cores[c].heads(who + " ");
            }
        }
        throw NpuError(text);
    }
    std::vector<std::vector<uint64_t>> starts;
    for (CoreSched &s : cores) {
        add_core(s.figures(), r);
        starts.push_back(std::move(s.starts()));
    }
    if (options.check_races) check_gm_races_between_cores(m, programs, joint, r);
    return starts;
}

}  // namespace npu
}  // namespace kiln
