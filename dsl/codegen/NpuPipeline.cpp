// Software pipelining of a tile-NPU loop (Func::software_pipeline()): the
// loop a Func F is computed at is split into two stages, A (the items before
// F's first instruction) and B (F's and what follows), and rotated by one
// stage, so that iteration k + 1's stage A is issued before iteration k's
// stage B. The pipes run their queues in program order, so without this the
// vector unit takes block k's stage-B work before block k + 1's stage-A work
// and waits for whatever stage B waits for (a product on the matrix unit);
// rotated, it has block k + 1's work to do meanwhile.
//
//   for (kb = 0; kb < n; kb++) { A(kb); B(kb) }
//   ->
//   for (kb_pipe = 0; kb_pipe < n + 1; kb_pipe++) {
//       { kb = kb_pipe < n ? kb_pipe : kb_pipe - 1;  if (kb_pipe < n) A(kb) }       ahead
//       { kb = kb_pipe > 0 ? kb_pipe - 1 : kb_pipe;  if (kb_pipe > 0) B(kb) }
//   }
//
// The first trip runs A(0) alone and the last B(n - 1) alone: each tile
// instruction is guarded (NpuItem::stage), the flags npu_insert_sync adds
// are not, so every trip runs all of them and the loop's flags are those of
// any loop of n + 1 trips: they carry from one run of the loop to the next
// (the next tile's A(0) waits only for what it overwrites), and a guarded-off
// instruction makes no access, so its flags only order more. (Peeling A(0)
// and B(n - 1) out of the loop instead put them in the body of the loop
// around it, whose flags treat the copies of both stages as one buffer and
// are set at the end of that body: at 2 blocks per tile flash attention lost
// 13 %.) The loop variable is clamped for the stage that does not run, so
// that the scalar lines (lets, region checks) see an iteration of the loop.
// A loop across cores is rotated per core: core i's trips i, i + cores, ...
//
// B's staging of data from GM (a load, and the moves of what it loaded: L)
// joins A, so it runs one iteration ahead like A's own loads, rather than
// queued behind the next iteration's A in the DMA pipes while B waits for
// it (flash attention's block of V, GM -> L1 -> L0B, which P V waited for):
//
//   B(kb) = L(kb) B'(kb)  ->  { if (kb_pipe < n) A(kb) L(kb) }  { if (kb_pipe > 0) B'(kb) }
//
// A's scalar lines (lets) are repeated in front of B, with the loop variable
// rebound. A value A computes for B lives across one iteration, so it must
// have two copies (double_buffer()): A's instructions are `ahead` and use
// the copy of the next iteration, B's the copy of this one (CodeGen_NPU.cpp,
// kiln_addr_ahead); npu_insert_sync then orders the accesses knowing which
// copy each touches (NpuSync.cpp). Runs after buffer placement: the live
// ranges are the loop's as written, in which each stage's temporaries are
// dead outside it, and that stays true rotated.
#include <algorithm>
#include <cctype>
#include <set>

#include "NpuKernel.h"
#include "ir/Error.h"

namespace kiln {
namespace internal {

namespace {

// Where F's first instruction is: the item list holding it and its index,
// and the loop item whose body that list is (nullptr at the top level).
struct Site {
    std::vector<NpuItem> *list = nullptr;
    size_t index = 0;
    NpuItem *loop = nullptr;
};

bool writes_func(const NpuKernel &k, const NpuItem &i, const std::string &f) {
    for (int b : i.writes)
        if (k.buffers[b].owner == f) return true;
    return false;
}

// Instructions at the top level (a nest's loop-invariant loads, hoisted before it) are in no loop's body.
bool find_first(const NpuKernel &k, std::vector<NpuItem> &items, NpuItem *loop, const std::string &f, Site &out) {
    for (size_t n = 0; n < items.size(); n++) {
        NpuItem &i = items[n];
        if (loop && i.kind == NpuItem::Instr && writes_func(k, i, f)) {
            out = Site{&items, n, loop};
            return true;
        }
        if (i.kind == NpuItem::Loop && find_first(k, i.body, &i, f, out)) return true;
    }
    return false;
}

// Whether C++ `code` names the identifier `name`.
bool uses_name(const std::string &code, const std::string &name) {
    auto ident = [](char c) { return std::isalnum((unsigned char)c) || c == '_'; };
    for (size_t at = code.find(name); at != std::string::npos; at = code.find(name, at + 1))
        if ((at == 0 || !ident(code[at - 1])) && (at + name.size() == code.size() || !ident(code[at + name.size()])))
            return true;
    return false;
}

bool has_instrs(const std::vector<NpuItem> &items) {
    for (const NpuItem &i : items)
        if (i.kind == NpuItem::Instr || has_instrs(i.body)) return true;
    return false;
}

// `items` of stage `stage` (0: A, 1: B) of the rotated loop, in a scope binding the loop variable to `value`,
// each instruction guarded by `guard`.
std::vector<NpuItem> scope(const std::string &var, const std::string &value, const std::vector<NpuItem> &lines,
                           std::vector<NpuItem> items, int stage, const std::string &guard) {
    std::vector<NpuItem> out{NpuItem::line("{"), NpuItem::line("const int32_t " + var + " = " + value + ";")};
    for (const NpuItem &l : lines) out.push_back(l);
    for (NpuItem &i : items) {
        // A k-slice's load keeps its own guard (its first trips), inside the stage's.
        if (i.kind == NpuItem::Instr)
            i.ahead = stage == 0, i.stage = stage, i.guard = i.guard.empty() ? guard : "(" + guard + ") && " + i.guard;
        out.push_back(std::move(i));
    }
    out.push_back(NpuItem::line("}"));
    return out;
}

// Stage B's staging of data from GM goes to the end of stage A, where it
// stages the next iteration's copy one stage ahead, as A's own loads do,
// rather than after this iteration's A in the DMA queues (flash attention's
// block of V, loaded GM -> L1 -> L0B, which P V waited for): a DMA (a load,
// or a move of what such a load brought) that reads nothing else, into a
// buffer of two copies that nothing before it in B touches, whose bytes no
// buffer B accesses shares, and whose window uses no let of B's. A move of
// what A computed stays in B: queued before the next iteration's staging,
// it would hold that up (P's way to L0A waits for the product of the block
// before).
void prefetch_loads(const NpuKernel &k, std::vector<NpuItem> &a, std::vector<NpuItem> &b) {
    std::set<int> in_b, in_a, moved;  // buffers touched by B's items so far, by A's, written by moved items
    for (const NpuItem &i : a) {
        in_a.insert(i.reads.begin(), i.reads.end());
        in_a.insert(i.writes.begin(), i.writes.end());
    }
    for (const NpuItem &i : b) {
        in_b.insert(i.reads.begin(), i.reads.end());
        in_b.insert(i.writes.begin(), i.writes.end());
    }
    std::set<int> before;  // buffers B's items before the current one touch
    std::vector<std::string> b_lets;
    for (size_t n = 0; n < b.size();) {
        NpuItem &i = b[n];
        if (i.kind == NpuItem::Line && i.text.rfind("const ", 0) == 0) {
            const std::string t = i.text.substr(0, i.text.find(" ="));
            b_lets.push_back(t.substr(t.rfind(' ') + 1));
        }
        bool move = i.kind == NpuItem::Instr && npu::op_family(i.op) == npu::Family::DMA && i.writes.size() == 1 &&
                    i.guard.empty() && i.slices == 0 && i.ring.slots == 0 && !i.fix;
        for (int r : i.reads) move = move && moved.count(r);
        for (int w : i.writes) {
            move = move && k.buffers[w].copies > 1 && !before.count(w) && !in_a.count(w);
            for (size_t x = 0; move && x < k.buffers.size(); x++)
                move = (int)x == w || !in_b.count((int)x) || !npu_buffers_overlap(k.buffers[x], k.buffers[w]);
        }
        for (const NpuArg &arg : i.args)
            for (const std::string &let : b_lets) move = move && !uses_name(arg.code, let);
        if (!move) {
            before.insert(i.reads.begin(), i.reads.end());
            before.insert(i.writes.begin(), i.writes.end());
            n++;
            continue;
        }
        moved.insert(i.writes.begin(), i.writes.end());
        a.push_back(std::move(i));
        b.erase(b.begin() + (long)n);
    }
}

void pipeline(NpuKernel &k, const std::string &f) {
    Site s;
    const std::string what = "NPU target: Func " + f + " is scheduled software_pipeline(), ";
    user_assert(find_first(k, k.body, nullptr, f, s))
        << what << "but it is not computed in a loop of the NPU kernel (it is inlined, or computed at the root); "
        << "software_pipeline() runs the Func, and what follows it in the body of the loop it is computed at, one "
           "iteration behind what precedes it there: compute_at(consumer, loop) it with the Funcs of that "
           "loop's first stage, or remove software_pipeline()";
    NpuItem &loop = *s.loop;
    const std::string name = loop.var;
    user_assert(!loop.pipelined)
        << what << "but the loop it is computed at (" << name << ") is pipelined already, by another Func's "
        << "software_pipeline(); software_pipeline() takes a loop once: remove it from " << f << " or compute " << f
        << " at a loop of its own";
    user_assert(loop.trips != 0)
        << what << "but the loop it is computed at (" << name << ") runs no iteration; remove software_pipeline()";
    std::vector<NpuItem> &body = *s.list;
    std::vector<NpuItem> a(body.begin(), body.begin() + (long)s.index), b(body.begin() + (long)s.index, body.end());
    for (const NpuItem &i : body)
        user_assert(i.kind != NpuItem::Loop || !has_instrs(i.body))
            << what << "but the body of the loop it is computed at (" << name << ") holds a loop of its own with "
            << "instructions (" << i.text << "); software_pipeline() splits a body of tile instructions: compute "
            << f << " at the innermost loop around the tiles, or remove software_pipeline()";
    user_assert(has_instrs(a))
        << what << "but it is the first Func with instructions in the body of the loop " << name
        << ", so there is no stage before it to run ahead; put software_pipeline() on the Func that starts the second "
           "stage (the first one that should run one iteration behind)";
    // What A writes that B reads or writes lives across an iteration: two copies. What B writes, A must not read:
    // A would see the value of two iterations before.
    std::vector<int> a_writes, a_reads;
    for (const NpuItem &i : a) {
        a_writes.insert(a_writes.end(), i.writes.begin(), i.writes.end());
        a_reads.insert(a_reads.end(), i.reads.begin(), i.reads.end());
    }
    for (const NpuItem &i : b) {
        for (int x : i.writes) {
            user_assert(std::find(a_reads.begin(), a_reads.end(), x) == a_reads.end())
                << what << "but " << k.buffers[x].owner << " (" << k.buffers[x].name << "), which the loop "
                << name << " updates in " << f << "'s stage, is read before " << f << " in that loop: run one "
                << "iteration ahead, that read would see the value of the iteration before the previous one. "
                   "Pipeline the loop at a Func after every reader of "
                << k.buffers[x].owner << ", or remove software_pipeline()";
        }
        std::vector<int> uses = i.reads;
        uses.insert(uses.end(), i.writes.begin(), i.writes.end());
        for (int x : uses)
            user_assert(k.buffers[x].copies > 1 ||
                        std::find(a_writes.begin(), a_writes.end(), x) == a_writes.end())
                << what << "so " << k.buffers[x].owner << " (" << k.buffers[x].name << "), computed before " << f
                << " in the loop " << name << " and read by " << f << "'s stage, holds the next iteration's value "
                << "while this iteration's is read: add double_buffer() to " << k.buffers[x].owner
                << " for its two copies";
    }
    prefetch_loads(k, a, b);
    // A's scalar lines (lets), repeated in front of B.
    std::vector<NpuItem> lines;
    for (const NpuItem &i : a)
        if (i.kind == NpuItem::Line) lines.push_back(i);
    // Serial: trips lo, lo + 1, ...; across cores: core i's trips lo + i, lo + i + cores, ...
    const std::string v = loop.var, lo = loop.min, end = lo + " + " + loop.extent, it = v + "_pipe",
                      first = loop.across_cores ? lo + " + core.index()" : lo,
                      step = loop.across_cores ? "core.num_cores()" : "1";
    // One trip more, none when the loop has none (a core without trips runs one whose stages are both off).
    const std::string bound = loop.trips > 0 ? end + " + " + step : end + " + (" + loop.extent + " > 0 ? " + step + " : 0)";
    NpuItem rotated = loop;
    rotated.text = "for (int32_t " + it + " = " + first + "; " + it + " < " + bound + "; " + it +
                   (loop.across_cores ? " += " + step + ")" : "++)");
    rotated.var = it, rotated.pipelined = true;
    const std::string a_on = it + " < " + end, b_on = it + " > " + first;
    rotated.body = scope(v, "(" + a_on + " ? " + it + " : " + it + " - " + step + ")", {}, a, 0, a_on);
    for (NpuItem &i : scope(v, "(" + b_on + " ? " + it + " - " + step + " : " + it + ")", lines, b, 1, b_on))
        rotated.body.push_back(std::move(i));
    *s.loop = std::move(rotated);
    k.has_ahead = true;
}

}  // namespace

NpuKernel npu_software_pipeline(NpuKernel k) {
    for (const std::string &f : k.pipelined) pipeline(k, f);
    return k;
}

}  // namespace internal
}  // namespace kiln
