// Sync insertion for tile-NPU kernels: exactly the flags the buffer
// accesses need, so that the pipes (ordered only by flags) never race.
// Buffers placed at shared bytes (NpuPlaceBuffers.cpp) count as one: an
// access to one is ordered after the conflicting accesses to the others.
//
// A *region* is a top-level item holding tile instructions, in a loop body B
// (or at top level). Within B, in order, an instruction on pipe P that reads a buffer last written by pipe Q,
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
//
// A loop inside B with instructions (a split K's k-slices inside a tile's
// loop body, an update's RDom loop beside a producer's tiles) gets its own
// flags first, at the next level, and is then one item of B: what its
// instructions need from B is waited for before it, and B's instructions
// after it wait for its last accesses. Buffers only the nested loop touches
// are left to its own flags, whose initial SETs and final WAITs go around
// the whole region, so one run of the loop hands its buffers to the next
// run as one iteration does to the next. A double-buffered buffer
// alternates with the loop of the outermost level that accesses it
// (kiln_pp there, kiln_pp1 one level in, ...).
//
//   for (yo) { for (ko) { TLOAD a1; TMOV a0 <- a1; TMATMUL_ACC c } TMOV t <- c; ... }
//   ->
//   SET_FLAG(MTE1, MTE2, 1); ...
//   for (yo) { WAIT_FLAG(FIX, M, ..); for (ko) { WAIT_FLAG(MTE1, MTE2, 1); TLOAD a1; ...; SET_FLAG(MTE1, MTE2, 1) }
//              SET_FLAG(M, FIX, 0); WAIT_FLAG(M, FIX, 0); TMOV t <- c; ... }
//   WAIT_FLAG(MTE1, MTE2, 1); ...
//
// A loop over the k-slices of an L1 panel loaded slice by slice (its
// instructions' NpuItem::slices, NpuSelectMatrix.cpp) touches one slice per
// iteration, in order, and the same slice again `slices` iterations later
// (the next run of the loop: the next tile, or the next panel's load). Its
// accesses of the panel conflict only with those: their carried flags are a
// *ring*, one event set `slices` times before the region and drained as
// often after it, so the k-th wait passes once the set of the iteration
// `slices` before it is done (flags count). The next panel's slice s then
// loads as soon as the last tile has moved slice s, not the whole panel.
//
//   for (ko, 0, 4) { if (yo == 0) TLOAD p[ko]; TMOV b0 <- p[ko]; ... }
//   ->
//   SET_FLAG(MTE1, MTE2, 1) x 4
//   for (ko) { WAIT_FLAG(MTE1, MTE2, 1); if (yo == 0) TLOAD p[ko]; SET_FLAG(MTE2, MTE1, 0); WAIT_FLAG(MTE2, MTE1, 0);
//              TMOV b0 <- p[ko]; ...; SET_FLAG(MTE1, MTE2, 1) }
//   WAIT_FLAG(MTE1, MTE2, 1) x 4
//
// An operand ring (NpuRing: a panel's k-slices in more slots than slices,
// the next panel's loaded during this one's tiles) is left out of that
// analysis and ordered as a queue, each flag guarded as the instruction it
// belongs to (ring_flags): a prefetch waits for a free slot, a slice's
// first move (first row tile) for its load, its last move (last row tile)
// frees its slot.
//
//   for (xo) for (yo) for (ko) { if (first) TLOAD p[slot]; TMOV b0 <- p[slot]; if (prefetch) TLOAD p[next slot] }
//   ->
//   SET_FLAG(MTE1, MTE2, free) x (slots - slices)
//   for (xo) for (yo) for (ko) {
//       if (first) TLOAD p[slot]; if (first) SET_FLAG(MTE2, MTE1, full0)
//       if (xo == 0 && yo == 0) WAIT_FLAG(MTE2, MTE1, full0); if (xo != 0 && yo == 0) WAIT_FLAG(MTE2, MTE1, full1)
//       TMOV b0 <- p[slot]; if (yo == last) SET_FLAG(MTE1, MTE2, free)
//       if (prefetch) WAIT_FLAG(MTE1, MTE2, free); if (prefetch) TLOAD p[next slot]; if (prefetch) SET_FLAG(MTE2, MTE1, full1) }
//   WAIT_FLAG(MTE1, MTE2, free) x slots
//
// A software-pipelined loop (NpuPipeline.cpp) runs stage A of iteration
// k + 1 before stage B of iteration k; A's instructions use the other copy
// of the loop's double-buffered buffers. An access and an earlier one
// touch the same copy when their iterations' distance, counting A's as
// one later, is even: then a flag (or a carried flag of distance one);
// odd and in this iteration, none; odd and previous, a carried flag of two
// copies as above. There each carried flag is set right after its last
// source (and its wait), not at the end of the body, so A's results reach
// the next iteration's B without waiting for this iteration's B. The
// stages' instructions are guarded (the loop's first trip runs A alone,
// its last B alone) and the flags are not: every trip runs all of them.
//
//   for (kb) { A: TEXP p' <- s';  B: TMOV l1 <- p; TMOV l0a <- l1; ...; merge }   (p' = p's other copy)
//   ->  for (kb) { TEXP p'; WAIT_FLAG(V, MTE3, 1); TMOV l1 <- p; SET_FLAG(V, MTE3, 1); ...; merge }
//   (block k's TMOV waits for block k's TEXP, issued in iteration k - 1, not for the merge after it)
#include <algorithm>
#include <cstdint>
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

// The parity of loop level `level`'s iteration: kiln_pp at the nest's level 0, kiln_pp1 in a loop inside it, ...
std::string pp_name(int level) { return level ? "kiln_pp" + std::to_string(level) : "kiln_pp"; }

// SET_FLAG / WAIT_FLAG(q, p, event [+ the parity of level parity]).
NpuItem flag(npu::Op op, npu::Pipe q, npu::Pipe p, int event, int parity = -1) {
    NpuItem i = sync_instr(op, {pipe(q), pipe(p), std::to_string(event) + (parity >= 0 ? " + " + pp_name(parity) : "")});
    i.flag_src = q, i.flag_dst = p, i.event = event, i.event_parity = parity;
    return i;
}

int count_instrs(const std::vector<NpuItem> &items) {
    int n = 0;
    for (const NpuItem &i : items) n += i.kind == NpuItem::Instr ? 1 : count_instrs(i.body);
    return n;
}

// The item list of a loop nest that its flags are inserted in: the first
// level, going inwards through loops without instructions, that holds
// instructions directly or more than one loop with instructions.
std::vector<NpuItem> *find_body(std::vector<NpuItem> &items) {
    NpuItem *only = nullptr;
    int loops = 0;
    for (NpuItem &i : items) {
        if (i.kind == NpuItem::Instr) return &items;
        if (i.kind == NpuItem::Loop && count_instrs(i.body) > 0) only = &i, loops++;
    }
    if (loops == 1) return find_body(only->body);
    return loops ? &items : nullptr;
}

// The loop whose body find_body(l.body) is: l, or the loop it goes inwards to.
const NpuItem &body_loop(NpuItem &l) {
    const std::vector<NpuItem> *b = find_body(l.body);
    const NpuItem *at = &l;
    while (b && &at->body != b)
        for (const NpuItem &i : at->body)
            if (i.kind == NpuItem::Loop && count_instrs(i.body) > 0) {
                at = &i;
                break;
            }
    return *at;
}

// The tile instructions under `items`, in program order.
void instrs_of(const std::vector<NpuItem> &items, std::vector<const NpuItem *> &out) {
    for (const NpuItem &i : items) {
        if (i.kind == NpuItem::Instr) out.push_back(&i);
        instrs_of(i.body, out);
    }
}

struct Access {
    npu::Pipe pipe;
    bool write;
    bool previous;             // from the previous iteration (second walk)
    int block = 0;             // 1: an `ahead` access of a pipelined loop (the next iteration's copy)
    size_t index = 0;          // the body item it is in
    int ring = 0;              // > 0: of one of this many slices, the one of its iteration (NpuItem::slices)
    std::set<npu::Pipe> ordered; // pipes known to run after this access
    // Of a double-buffered buffer, pipes known to run after the same access
    // two iterations before (the one that touched the same copy).
    std::set<npu::Pipe> ordered_far;
    // Of a slice, pipes known to run after the access `ring` iterations before (the same slice).
    std::set<npu::Pipe> ordered_ring;
};

// A carried flag class: (Q, P, double-buffered, ring): ring > 0 orders the
// accesses of a slice `ring` iterations before (one event, set `ring` times
// before the region).
using Carried = std::tuple<npu::Pipe, npu::Pipe, bool, int>;

class Syncer {
public:
    // The flags of one loop body (or run of instructions) at nesting `level`
    // of its nest; `next` numbers the carried events of the whole nest, so
    // a nested loop's flags never share an event with its parent's.
    Syncer(const std::vector<NpuBuffer> &buffers, int level, std::map<std::pair<npu::Pipe, npu::Pipe>, int> &next,
           std::string var = "")
        : buffers(buffers), level(level), next(next), var(std::move(var)), aliases(buffers.size()) {
        // Buffers placed at shared bytes (NpuPlaceBuffers.cpp) are one buffer to the flags.
        for (size_t a = 0; a < buffers.size(); a++)
            for (size_t b = 0; b < buffers.size(); b++)
                if (a == b || npu_buffers_overlap(buffers[a], buffers[b])) {
                    internal_assert(a == b || (!buffers[a].ring_slots && !buffers[b].ring_slots))
                        << "NPU sync: the operand ring " << buffers[a].name << " shares bytes with " << buffers[b].name;
                    internal_assert(buffers[a].copies == buffers[b].copies &&
                                    (buffers[a].copies == 1 || buffers[a].depth == buffers[b].depth))
                        << "NPU sync: " << buffers[a].name << " and " << buffers[b].name
                        << " share bytes but not their copies";
                    aliases[a].push_back((int)b);
                }
    }

    // Adds the flags to `body`; `before` and `after` get what goes around its loop.
    void run(std::vector<NpuItem> &body, bool loop) {
        for (const NpuItem &i : body) pipelined |= block(i) == 1;
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
        for (auto &kv : carried_at)
            for (const Carried &c : kv.second)
                if (!event.count(c)) {
                    int &n = next[{std::get<0>(c), std::get<1>(c)}];
                    if (n == 0) n = 1;
                    event[c] = n;
                    n += std::get<2>(c) ? 2 : 1;
                    internal_assert(n <= 8) << "NPU sync: more than 7 carried flags between two pipes";
                }
        auto parity = [&](const Carried &c) { return std::get<2>(c) ? level : -1; };
        auto copies = [&](const Carried &c) { return std::get<3>(c) ? std::get<3>(c) : std::get<2>(c) ? 2 : 1; };
        std::vector<NpuItem> out;
        for (size_t i = 0; i < body.size(); i++) {
            for (auto &qp : intra[i]) {
                out.push_back(flag(npu::Op::SET_FLAG, qp.first, qp.second, 0));
                out.push_back(flag(npu::Op::WAIT_FLAG, qp.first, qp.second, 0));
            }
            auto it = carried_at.find(i);
            if (it != carried_at.end())
                for (const Carried &c : it->second)
                    out.push_back(flag(npu::Op::WAIT_FLAG, std::get<0>(c), std::get<1>(c), event[c], parity(c)));
            out.push_back(std::move(body[i]));
            // A pipelined loop's carried flags are set after their last source (and their wait): iteration
            // k's first stage then releases iteration k + 1's second without waiting for iteration k's second.
            for (auto &kv : event)
                if (pipelined && set_after.at(kv.first) == i)
                    out.push_back(flag(npu::Op::SET_FLAG, std::get<0>(kv.first), std::get<1>(kv.first), kv.second,
                                       parity(kv.first)));
        }
        for (auto &kv : event)
            if (!pipelined)
                out.push_back(flag(npu::Op::SET_FLAG, std::get<0>(kv.first), std::get<1>(kv.first), kv.second, parity(kv.first)));
        body = std::move(out);
        // A ring's one event is set once per slice: the first `ring` iterations pass.
        for (auto &kv : event)
            for (int copy = 0; copy < copies(kv.first); copy++) {
                const int e = kv.second + (std::get<2>(kv.first) ? copy : 0);
                before.push_back(flag(npu::Op::SET_FLAG, std::get<0>(kv.first), std::get<1>(kv.first), e));
                after.push_back(flag(npu::Op::WAIT_FLAG, std::get<0>(kv.first), std::get<1>(kv.first), e));
            }
        // A pipelined loop's copies alternate with it even without a carried flag of two copies.
        double_buffered = pipelined;
        for (auto &kv : event) double_buffered |= std::get<2>(kv.first);
    }

    std::string pp() const { return pp_name(level); }
    std::string iter_name() const { return level ? "kiln_iter" + std::to_string(level) : "kiln_iter"; }

    std::vector<NpuItem> before, after;
    bool double_buffered = false;
    bool pipelined = false;  // the body of a software-pipelined loop (NpuPipeline.cpp)

private:
    const std::vector<NpuBuffer> &buffers;
    const int level;
    std::map<std::pair<npu::Pipe, npu::Pipe>, int> &next;
    const std::string var;  // the loop variable of this body (C++), if a loop's
    std::vector<std::vector<int>> aliases;     // per buffer: the buffers sharing its bytes, itself too
    std::map<int, std::vector<Access>> state;  // per buffer: its last write, then the reads since
    // A pipelined loop's carried flags: the body item after which each is set.
    std::map<Carried, size_t> set_after;

    // b's copies alternate with the iterations of this body.
    bool alternates(int b) const { return buffers[b].copies > 1 && buffers[b].depth == level; }
    // An instruction of this body's first stage, when it is a pipelined loop's: 1 (the next iteration).
    int block(const NpuItem &i) const { return i.ahead && i.ahead_level == level ? 1 : 0; }
    // The slices of which i accesses this iteration's, when this body's loop runs over them (else 0);
    // a pipelined loop's are ordered as whole buffers.
    int ring(const NpuItem &i) const { return !pipelined && i.slices > 1 && i.slice_var == var ? i.slices : 0; }

    // A flag from pipe q to p orders q's accesses so far (only_previous: of
    // the previous iteration) before p; a carried flag of two copies
    // (only_double) those of the iteration before the previous one.
    // A carried flag set after body item `upto` orders the previous
    // iteration's accesses up to that item.
    void order(npu::Pipe q, npu::Pipe p, bool only_previous, bool only_double, size_t upto = SIZE_MAX) {
        for (auto &kv : state) {
            if (only_double && !alternates(kv.first)) continue;
            for (Access &a : kv.second)
                if (a.pipe == q && (!only_previous || (a.previous && a.index <= upto))) {
                    a.ordered_far.insert(p);
                    a.ordered_ring.insert(p);
                    if (!only_double) a.ordered.insert(p);
                }
        }
    }

    // How an access at `block` relates to the earlier access a of buffer b:
    // Same (one copy: flag it in this iteration, or carried from the
    // previous one), Far (the other copy; carried from the iteration before
    // the previous, which touched this copy) or None (the other copy, in
    // this iteration). A pipelined loop's `ahead` accesses use the copy of
    // the next iteration.
    // Two accesses of one ring of slices (of buffer b itself, ring > 0)
    // touch the same slice in one iteration; a previous iteration's touched
    // another, and the same one `ring` iterations before (Ring).
    enum class Relation { None, Same, Far, Ring };
    Relation relation(int b, const Access &a, int block, int ring = 0) const {
        if (ring && a.ring == ring) return a.previous ? Relation::Ring : Relation::Same;
        if (!alternates(b)) return Relation::Same;
        const bool same_copy = (block - a.block + (a.previous ? 1 : 0)) % 2 == 0;
        if (same_copy) return Relation::Same;
        return a.previous ? Relation::Far : Relation::None;
    }

    // Item i of the body: an instruction, or a nested loop (its own flags
    // already inserted), whose instructions all count as accesses of item i:
    // what they need is waited for before the loop, and what follows the
    // loop waits for its last accesses (a SET_FLAG after the loop sets once
    // every earlier instruction of its pipe, the loop's too, is complete).
    void walk(const std::vector<NpuItem> &body, bool second,
              std::vector<std::vector<std::pair<npu::Pipe, npu::Pipe>>> &intra,
              std::map<size_t, std::vector<Carried>> *carried) {
        // The buffers each item accesses; a nested loop's buffers that nothing
        // else in the body touches (nor their aliases) are ordered by the loop's own flags.
        std::vector<std::set<int>> touched(body.size());
        for (size_t i = 0; i < body.size(); i++) {
            std::vector<const NpuItem *> ins;
            if (body[i].kind == NpuItem::Instr) ins.push_back(&body[i]);
            else if (body[i].kind == NpuItem::Loop) instrs_of(body[i].body, ins);
            for (const NpuItem *in : ins)
                for (const std::vector<int> *bs : {&in->reads, &in->writes})
                    for (int b : *bs)
                        if (!buffers[b].ring_slots) touched[i].insert(b);
        }
        for (size_t i = 0; i < body.size(); i++) {
            std::vector<const NpuItem *> ins;
            if (body[i].kind == NpuItem::Instr) ins.push_back(&body[i]);
            else if (body[i].kind == NpuItem::Loop) instrs_of(body[i].body, ins);
            if (ins.empty()) continue;
            // An operand ring's accesses are ordered by its own queue flags (ring_flags).
            auto shared = [&](int b) {
                if (buffers[b].ring_slots) return false;
                if (body[i].kind == NpuItem::Instr) return true;
                for (size_t j = 0; j < body.size(); j++)
                    for (int alias : aliases[b])
                        if (j != i && touched[j].count(alias)) return true;
                return false;
            };
            if (second)
                for (auto &qp : intra[i]) order(qp.first, qp.second, false, false);
            for (const NpuItem *in : ins) {
                const npu::Pipe p = in->pipe;
                const int block = this->block(*in), ring = this->ring(*in);
                auto need = [&](int b, bool write) {
                    for (int alias : aliases[b])
                        for (Access &a : state[alias]) {
                            const Relation r = relation(b, a, block, alias == b ? ring : 0);
                            if (a.pipe == p || r == Relation::None || !(write || a.write)) continue;
                            if ((r == Relation::Same ? a.ordered : r == Relation::Far ? a.ordered_far : a.ordered_ring)
                                    .count(p))
                                continue;
                            if (!a.previous) {
                                intra[i].push_back({a.pipe, p});
                                order(a.pipe, p, false, false);
                            } else if (r == Relation::Ring) {
                                // Carried over the ring: the slice's access `ring` iterations before.
                                (*carried)[i].push_back(Carried{a.pipe, p, false, ring});
                                for (auto &kv : state)
                                    for (Access &o : kv.second)
                                        if (o.pipe == a.pipe && o.previous && o.ring == ring) o.ordered_ring.insert(p);
                            } else if (!pipelined) {
                                bool dbl = r == Relation::Far;
                                (*carried)[i].push_back(Carried{a.pipe, p, dbl, 0});
                                order(a.pipe, p, true, dbl);
                            } else {
                                // One wait per class and iteration, before its first reader; the set after the
                                // last source found (an earlier wait of p orders this item too).
                                const Carried c{a.pipe, p, r == Relation::Far, 0};
                                auto at = set_after.find(c);
                                if (at == set_after.end()) {
                                    (*carried)[i].push_back(c);
                                    at = set_after.emplace(c, i).first;
                                }
                                at->second = std::max({at->second, a.index, i});
                                order(a.pipe, p, true, std::get<2>(c), at->second);
                            }
                        }
                };
                for (int b : in->reads)
                    if (shared(b)) need(b, false);
                for (int b : in->writes)
                    if (shared(b)) need(b, true);
            }
            for (const NpuItem *in : ins) {
                const int block = this->block(*in), ring = this->ring(*in);
                for (int b : in->reads)
                    if (shared(b)) state[b].push_back(Access{in->pipe, false, false, block, i, ring, {}, {}, {}});
                for (int b : in->writes) {
                    if (!shared(b)) continue;
                    // The write is ordered after every earlier access of its copy (and, when all of an
                    // iteration's accesses use one copy, after the other copy's of the iteration before
                    // the previous one), so it stands for them; the other copy's of a pipelined loop stay.
                    std::vector<Access> &list = state[b];
                    list.erase(std::remove_if(list.begin(), list.end(),
                                              [&](const Access &a) {
                                                  return !pipelined || relation(b, a, block) == Relation::Same;
                                              }),
                               list.end());
                    list.push_back(Access{in->pipe, true, false, block, i, ring, {}, {}, {}});
                }
            }
        }
    }
};

// The level of each buffer in the nest under `body` (level `level`): the
// least level of a loop body whose instructions access it.
void buffer_levels(const std::vector<NpuItem> &body, int level, std::vector<int> &depth) {
    for (const NpuItem &i : body) {
        if (i.kind == NpuItem::Instr) {
            for (int b : i.reads) depth[b] = std::min(depth[b], level);
            for (int b : i.writes) depth[b] = std::min(depth[b], level);
        } else if (i.kind == NpuItem::Loop && count_instrs(i.body) > 0) {
            // count_instrs > 0, so find_body finds the loop's level
            buffer_levels(*find_body(const_cast<std::vector<NpuItem> &>(i.body)), level + 1, depth);
        }
    }
}

// Inserts the flags of `body` (a loop body when `loop`) at nesting `level`,
// nested loops first; adds to `before` and `after` what goes around the
// nest. A nested loop's carried flags are set before the whole nest and
// drained after it, not around each run of the loop: the last iteration of
// one run then hands its buffers to the first of the next, as one
// iteration does to the next, so the k-slices of the next tile load while
// the last ones of this tile are multiplied.
void sync_body(std::vector<NpuItem> &body, bool loop, int level, const std::vector<NpuBuffer> &buffers,
               std::map<std::pair<npu::Pipe, npu::Pipe>, int> &next, std::vector<NpuItem> &before,
               std::vector<NpuItem> &after, const std::string &var) {
    for (NpuItem &i : body)
        if (i.kind == NpuItem::Loop && count_instrs(i.body) > 0)
            sync_body(*find_body(i.body), true, level + 1, buffers, next, before, after, body_loop(i).var);
    // The level whose next copies an `ahead` instruction uses: this body's.
    for (NpuItem &i : body)
        if (i.kind == NpuItem::Instr && i.ahead) i.ahead_level = level;
    Syncer s(buffers, level, next, var);
    s.run(body, loop);
    if (s.double_buffered) {
        NpuItem advance = NpuItem::line(s.pp() + " = " + s.iter_name() + "++ & 1;");
        advance.advances_parity = level;
        body.insert(body.begin(), std::move(advance));
    }
    for (NpuItem &x : s.before) before.push_back(std::move(x));
    for (NpuItem &x : s.after) after.push_back(std::move(x));
}

// The queue flags of the operand rings under `items` (NpuRing), events
// {free, first panel's full, prefetched full}: a prefetch waits for a free
// slot (MTE1 -> MTE2), every load then says its slice is there (MTE2 ->
// MTE1, the first panel's and the prefetched ones counted apart, each in
// the order they load and are first moved); a slice's first move waits for
// it, its last move frees the slot. Each flag runs where its instruction's
// ring point says: a load's where it runs, a move's at the first and the
// last row tile.
void ring_flags(std::vector<NpuItem> &items, const std::map<int, std::vector<int>> &events) {
    std::vector<NpuItem> out;
    for (NpuItem &i : items) {
        ring_flags(i.body, events);
        if (i.kind != NpuItem::Instr || !i.ring.slots) {
            out.push_back(std::move(i));
            continue;
        }
        const bool load = i.op == npu::Op::TLOAD, first = i.ring.point == NpuRing::FirstLoad,
                   part = i.ring.point == NpuRing::Part;
        const std::vector<int> &e = events.at(load ? i.writes[0] : i.reads[0]);
        const NpuRing ring = i.ring;
        auto ringed = [&](NpuItem f, NpuRing::Point p) {
            f.ring = ring;
            f.ring.point = p;
            f.guard = npu_ring_guard(f.ring, p);
            return f;
        };
        using npu::Pipe;
        // A slice loaded in parts waits before its first part and says so after its last.
        if (load && !first)
            out.push_back(ringed(flag(npu::Op::WAIT_FLAG, Pipe::MTE1, Pipe::MTE2, e[0]), part ? NpuRing::PartStart : ring.point));
        if (!load) {
            out.push_back(ringed(flag(npu::Op::WAIT_FLAG, Pipe::MTE2, Pipe::MTE1, e[1]), NpuRing::FirstUse));
            out.push_back(ringed(flag(npu::Op::WAIT_FLAG, Pipe::MTE2, Pipe::MTE1, e[2]), NpuRing::PrefetchedUse));
        }
        out.push_back(std::move(i));
        out.push_back(load ? ringed(flag(npu::Op::SET_FLAG, Pipe::MTE2, Pipe::MTE1, first ? e[1] : e[2]),
                                    part ? NpuRing::PartEnd : ring.point)
                           : ringed(flag(npu::Op::SET_FLAG, Pipe::MTE1, Pipe::MTE2, e[0]), NpuRing::LastUse));
    }
    items = std::move(out);
}

// The operand rings under `items`: buffer -> its ring.
void find_rings(const std::vector<NpuItem> &items, std::map<int, NpuRing> &rings) {
    for (const NpuItem &i : items) {
        find_rings(i.body, rings);
        if (i.kind == NpuItem::Instr && i.ring.slots && i.op == npu::Op::TLOAD) rings[i.writes[0]] = i.ring;
    }
}

}  // namespace

void npu_buffer_levels(NpuKernel &k) {
    std::vector<int> depth(k.buffers.size(), 1 << 20);
    for (NpuItem &item : k.body)
        if (item.kind == NpuItem::Loop && count_instrs(item.body) > 0) buffer_levels(*find_body(item.body), 0, depth);
    for (size_t b = 0; b < k.buffers.size(); b++) k.buffers[b].depth = depth[b] == 1 << 20 ? 0 : depth[b];
}

NpuKernel npu_insert_sync(NpuKernel k) {
    npu_buffer_levels(k);  // each buffer's copies alternate with the loop of its level
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
        std::map<std::pair<npu::Pipe, npu::Pipe>, int> next;
        if (item.kind == NpuItem::Instr) {
            // Top-level instructions up to the next non-instruction item form one region.
            std::vector<NpuItem> run;
            while (i < k.body.size() && k.body[i].kind == NpuItem::Instr) {
                run.push_back(std::move(k.body[i++]));
                if (r < regions.size() && regions[r] == i && i < k.body.size() && k.body[i].kind == NpuItem::Instr) r++;
            }
            i--;
            Syncer s(k.buffers, 0, next);
            s.run(run, false);
            for (NpuItem &x : run) out.push_back(std::move(x));
        } else {
            std::vector<NpuItem> before, after;
            // An operand ring's events first; its free slots beyond the first panel's counted before the
            // nest, all of them drained after it.
            std::map<int, NpuRing> rings;
            std::map<int, std::vector<int>> events;
            find_rings(item.body, rings);
            for (const auto &[b, ring] : rings) {
                int &free = next[{npu::Pipe::MTE1, npu::Pipe::MTE2}], &full = next[{npu::Pipe::MTE2, npu::Pipe::MTE1}];
                free = std::max(free, 1), full = std::max(full, 1);
                events[b] = {free, full, full + 1};
                free++, full += 2;
                for (int s = 0; s < ring.slots; s++) {
                    if (s < ring.slots - ring.slices)
                        before.push_back(flag(npu::Op::SET_FLAG, npu::Pipe::MTE1, npu::Pipe::MTE2, events[b][0]));
                    after.push_back(flag(npu::Op::WAIT_FLAG, npu::Pipe::MTE1, npu::Pipe::MTE2, events[b][0]));
                }
            }
            ring_flags(item.body, events);
            sync_body(*find_body(item.body), true, 0, k.buffers, next, before, after, body_loop(item).var);
            for (NpuItem &x : before) out.push_back(std::move(x));
            out.push_back(std::move(item));
            for (NpuItem &x : after) out.push_back(std::move(x));
        }
        if (r < regions.size()) {
            out.push_back(sync_instr(npu::Op::PIPE_BARRIER, {"Pipe::ALL"}));
            out.back().flag_src = npu::Pipe::ALL;
        }
    }
    k.body = std::move(out);
    return k;
}

}  // namespace internal
}  // namespace kiln
