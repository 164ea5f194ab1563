// Sync insertion for tile-NPU kernels: exactly the flags the buffer
// accesses need, so that the pipes (ordered only by flags) never race.
// Buffers placed at shared bytes (NpuPlaceBuffers.cpp) count as one: an
// access to one is ordered after the conflicting accesses to the others.
//
// A *region* is a top-level item holding tile instructions; all of them must
// sit directly in one innermost loop body B (or at top level). Within B, in
// order, an instruction on pipe P that reads a buffer last written by pipe Q,
// or writes a buffer last read or written by Q, with nothing ordering Q's
// access before P yet, gets a SET_FLAG(Q, P, 0) / WAIT_FLAG(Q, P, 0) pair in
// front of it. Then B is walked a second time, as the next iteration: what
// the previous iteration's accesses still need is *carried*: a WAIT_FLAG(Q, P, e)
// before the first instruction needing it, a SET_FLAG(Q, P, e) at the end of
// B, one SET before the region (so the first iteration passes) and one WAIT
// after it (so the counts balance). Buffers with two copies (double_buffer)
// conflict with the iteration before the previous one: their carried flags
// use events e + parity, set twice before the region and drained twice.
//
//   for (xo) { TLOAD in; TEXP t <- in; TSTORE t }
//   ->
//   SET_FLAG(V, MTE2, 1); SET_FLAG(MTE3, V, 1)
//   for (xo) { WAIT_FLAG(V, MTE2, 1); TLOAD in; SET_FLAG(MTE2, V, 0); WAIT_FLAG(MTE2, V, 0);
//              WAIT_FLAG(MTE3, V, 1); TEXP t <- in; SET_FLAG(V, MTE3, 0); WAIT_FLAG(V, MTE3, 0); TSTORE t;
//              SET_FLAG(V, MTE2, 1); SET_FLAG(MTE3, V, 1) }
//   WAIT_FLAG(V, MTE2, 1); WAIT_FLAG(MTE3, V, 1); PIPE_BARRIER(ALL)
#include <functional>
#include <map>
#include <set>
#include <sstream>

#include "NpuKernel.h"
#include "ir/Error.h"

namespace kiln {
namespace internal {

namespace {

std::string pipe(npu::Pipe p) { return std::string("Pipe::") + npu::pipe_name(p); }

// A flag or a barrier, typed as the tile instructions are; its operands are C++ (pipes, events).
NpuItem sync_instr(npu::Op op, std::vector<std::string> args) {
    NpuItem i;
    i.kind = NpuItem::Instr;
    i.op = op;
    for (std::string &a : args) i.args.push_back(NpuArg{-1, 0, 0, 0, std::move(a)});
    return i;
}

NpuItem flag(npu::Op op, npu::Pipe q, npu::Pipe p, const std::string &event) {
    return sync_instr(op, {pipe(q), pipe(p), event});
}

int count_instrs(const std::vector<NpuItem> &items) {
    int n = 0;
    for (const NpuItem &i : items) n += i.kind == NpuItem::Instr ? 1 : count_instrs(i.body);
    return n;
}

// The innermost item list holding instructions directly, and the chain of loops to it.
std::vector<NpuItem> *find_body(std::vector<NpuItem> &items) {
    for (NpuItem &i : items)
        if (i.kind == NpuItem::Instr) return &items;
    for (NpuItem &i : items)
        if (i.kind == NpuItem::Loop && count_instrs(i.body) > 0) return find_body(i.body);
    return nullptr;
}

// The Funcs the instructions under `items` write, as " f g".
std::string owners_of(const std::vector<NpuItem> &items, const std::vector<NpuBuffer> &buffers) {
    std::set<std::string> owners;
    std::function<void(const std::vector<NpuItem> &)> walk = [&](const std::vector<NpuItem> &items) {
        for (const NpuItem &i : items) {
            for (int b : i.writes) owners.insert(buffers[b].owner);
            walk(i.body);
        }
    };
    walk(items);
    std::string s;
    for (const std::string &o : owners) s += " " + o;
    return s;
}

// The loops holding the instructions of a nest at the first level with
// instructions directly or more than one such loop, each with the Funcs its
// instructions write (and those of the instructions beside them).
std::string sibling_loops(const NpuItem &top, const std::vector<NpuBuffer> &buffers) {
    const std::vector<NpuItem> *level = &top.body;
    for (;;) {
        std::vector<const NpuItem *> loops;
        std::vector<NpuItem> direct;
        for (const NpuItem &i : *level) {
            if (i.kind == NpuItem::Loop && count_instrs(i.body) > 0) loops.push_back(&i);
            if (i.kind == NpuItem::Instr) direct.push_back(i);
        }
        if (loops.size() != 1 || !direct.empty()) {
            std::ostringstream s;
            for (size_t j = 0; j < loops.size(); j++)
                s << (j ? "; " : "") << "'" << loops[j]->text << "' writing" << owners_of(loops[j]->body, buffers);
            if (!direct.empty()) s << "; instructions beside them writing" << owners_of(direct, buffers);
            return s.str();
        }
        level = &loops[0]->body;
    }
}

struct Access {
    npu::Pipe pipe;
    bool write;
    bool previous;             // from the previous iteration (second walk)
    std::set<npu::Pipe> ordered; // pipes known to run after this access
};

// A carried flag class: (Q, P, double-buffered).
using Carried = std::tuple<npu::Pipe, npu::Pipe, bool>;

class Syncer {
public:
    Syncer(const std::vector<NpuBuffer> &buffers) : buffers(buffers), aliases(buffers.size()) {
        // Buffers placed at shared bytes (NpuPlaceBuffers.cpp) are one buffer to the flags.
        for (size_t a = 0; a < buffers.size(); a++)
            for (size_t b = 0; b < buffers.size(); b++)
                if (a == b || npu_buffers_overlap(buffers[a], buffers[b])) {
                    internal_assert(buffers[a].copies == buffers[b].copies)
                        << "NPU sync: " << buffers[a].name << " and " << buffers[b].name
                        << " share bytes but not their number of copies";
                    aliases[a].push_back((int)b);
                }
    }

    // Returns the body with flags, and the carried classes it needs.
    void run(std::vector<NpuItem> &body, bool loop) {
        std::vector<std::vector<std::pair<npu::Pipe, npu::Pipe>>> intra(body.size());
        walk(body, false, intra, nullptr);
        std::map<size_t, std::vector<Carried>> carried_at;
        if (loop) {
            for (auto &kv : state)
                for (Access &a : kv.second) a.previous = true;
            walk(body, true, intra, &carried_at);
        }
        // Events: 0 for adjacent pairs, then one (or two) per carried class.
        std::map<Carried, int> event;
        std::map<std::pair<npu::Pipe, npu::Pipe>, int> next;
        for (auto &kv : carried_at)
            for (const Carried &c : kv.second)
                if (!event.count(c)) {
                    int &n = next[{std::get<0>(c), std::get<1>(c)}];
                    if (n == 0) n = 1;
                    event[c] = n;
                    n += std::get<2>(c) ? 2 : 1;
                    internal_assert(n <= 8) << "NPU sync: more than 7 carried flags between two pipes";
                }
        auto ev = [&](const Carried &c) {
            return std::to_string(event[c]) + (std::get<2>(c) ? " + kiln_pp" : "");
        };
        std::vector<NpuItem> out;
        for (size_t i = 0; i < body.size(); i++) {
            for (auto &qp : intra[i]) {
                out.push_back(flag(npu::Op::SET_FLAG, qp.first, qp.second, "0"));
                out.push_back(flag(npu::Op::WAIT_FLAG, qp.first, qp.second, "0"));
            }
            auto it = carried_at.find(i);
            if (it != carried_at.end())
                for (const Carried &c : it->second)
                    out.push_back(flag(npu::Op::WAIT_FLAG, std::get<0>(c), std::get<1>(c), ev(c)));
            out.push_back(std::move(body[i]));
        }
        for (auto &kv : event) out.push_back(flag(npu::Op::SET_FLAG, std::get<0>(kv.first), std::get<1>(kv.first), ev(kv.first)));
        body = std::move(out);
        for (auto &kv : event)
            for (int copy = 0; copy < (std::get<2>(kv.first) ? 2 : 1); copy++) {
                std::string e = std::to_string(kv.second + copy);
                before.push_back(flag(npu::Op::SET_FLAG, std::get<0>(kv.first), std::get<1>(kv.first), e));
                after.push_back(flag(npu::Op::WAIT_FLAG, std::get<0>(kv.first), std::get<1>(kv.first), e));
            }
        double_buffered = false;
        for (auto &kv : event) double_buffered |= std::get<2>(kv.first);
    }

    std::vector<NpuItem> before, after;
    bool double_buffered = false;

private:
    const std::vector<NpuBuffer> &buffers;
    std::vector<std::vector<int>> aliases;     // per buffer: the buffers sharing its bytes, itself too
    std::map<int, std::vector<Access>> state;  // per buffer: its last write, then the reads since

    void order(npu::Pipe q, npu::Pipe p, bool only_previous, bool only_double) {
        for (auto &kv : state) {
            if (only_double && buffers[kv.first].copies < 2) continue;
            for (Access &a : kv.second)
                if (a.pipe == q && (!only_previous || a.previous)) a.ordered.insert(p);
        }
    }

    void walk(const std::vector<NpuItem> &body, bool second,
              std::vector<std::vector<std::pair<npu::Pipe, npu::Pipe>>> &intra,
              std::map<size_t, std::vector<Carried>> *carried) {
        for (size_t i = 0; i < body.size(); i++) {
            const NpuItem &in = body[i];
            if (in.kind != NpuItem::Instr) continue;
            npu::Pipe p = in.pipe;
            if (second)
                for (auto &qp : intra[i]) order(qp.first, qp.second, false, false);
            auto need = [&](int b, bool write) {
                for (int alias : aliases[b])
                    for (Access &a : state[alias]) {
                        if (a.pipe == p || a.ordered.count(p) || !(write || a.write)) continue;
                        if (!a.previous) {
                            intra[i].push_back({a.pipe, p});
                            order(a.pipe, p, false, false);
                        } else {
                            bool dbl = buffers[b].copies > 1;
                            (*carried)[i].push_back(Carried{a.pipe, p, dbl});
                            order(a.pipe, p, true, dbl);
                        }
                    }
            };
            for (int b : in.reads) need(b, false);
            for (int b : in.writes) need(b, true);
            for (int b : in.reads) state[b].push_back(Access{p, false, false, {}});
            for (int b : in.writes) state[b] = {Access{p, true, false, {}}};
        }
    }
};

}  // namespace

NpuKernel npu_insert_sync(NpuKernel k) {
    std::vector<NpuItem> out;
    std::vector<size_t> regions;
    for (size_t i = 0; i < k.body.size(); i++)
        if (k.body[i].kind == NpuItem::Instr || count_instrs(k.body[i].body) > 0) regions.push_back(i);
    size_t r = 0;
    for (size_t i = 0; i < k.body.size(); i++) {
        NpuItem &item = k.body[i];
        if (r >= regions.size() || regions[r] != i) {
            out.push_back(std::move(item));
            continue;
        }
        r++;
        Syncer s(k.buffers);
        if (item.kind == NpuItem::Instr) {
            // Top-level instructions up to the next non-instruction item form one region.
            std::vector<NpuItem> run;
            while (i < k.body.size() && k.body[i].kind == NpuItem::Instr) {
                run.push_back(std::move(k.body[i++]));
                if (r < regions.size() && regions[r] == i && i < k.body.size() && k.body[i].kind == NpuItem::Instr) r++;
            }
            i--;
            s.run(run, false);
            for (NpuItem &x : run) out.push_back(std::move(x));
        } else {
            std::vector<NpuItem> *body = find_body(item.body);
            // Syncer::run orders only the instructions directly in `body`.
            int direct = 0;
            for (const NpuItem &x : body ? *body : item.body) direct += x.kind == NpuItem::Instr;
            user_assert(body && direct == count_instrs(item.body))
                << "NPU target: the tile instructions of one loop nest sit in sibling loops ("
                << sibling_loops(item, k.buffers)
                << ") rather than all in one loop body; the sync inserter orders the instructions of one loop "
                   "body, so a Func's tiles must sit in the loop body its consumer's tiles are in: do not split "
                   "or reorder a stage's reduction (e.g. a matrix update's K, or an update's RDom) into a loop "
                   "beside another stage's tiles there, or compute_at the Func inside that stage's loop";
            s.run(*body, true);
            if (s.double_buffered)
                body->insert(body->begin(), NpuItem::line("kiln_pp = kiln_iter++ & 1;"));
            for (NpuItem &x : s.before) out.push_back(std::move(x));
            out.push_back(std::move(item));
            for (NpuItem &x : s.after) out.push_back(std::move(x));
        }
        if (r < regions.size()) out.push_back(sync_instr(npu::Op::PIPE_BARRIER, {"Pipe::ALL"}));
    }
    k.body = std::move(out);
    return k;
}

}  // namespace internal
}  // namespace kiln
