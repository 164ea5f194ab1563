// See NpuLiveness.h.
#include "NpuLiveness.h"

#include <algorithm>
#include <map>
#include <numeric>

namespace kiln {
namespace internal {

namespace {

struct Access {
    int64_t time;
    bool write, whole;
};

class Walk {
public:
    explicit Walk(const NpuKernel &k) : k(k), accesses(k.buffers.size()), live(k.buffers.size()) {}

    void items(const std::vector<NpuItem> &body) {
        for (const NpuItem &i : body) {
            if (i.kind == NpuItem::Loop) {
                int64_t start = 2 * pos;
                items(i.body);
                if (pos * 2 > start) loops.push_back({start, 2 * pos - 1});
            } else if (i.kind == NpuItem::Instr) {
                instr(i);
                pos++;
            }
        }
    }

    std::vector<NpuLiveRange> ranges() {
        for (size_t b = 0; b < k.buffers.size(); b++) {
            std::vector<Access> &a = accesses[b];
            if (a.empty()) continue;
            // In time order, a read before the write of the same instruction.
            std::stable_sort(a.begin(), a.end(), [](const Access &x, const Access &y) { return x.time < y.time; });
            NpuLiveRange &r = live[b];
            r.first = a.front().time;
            r.last = a.back().time;
            for (const auto &[lo, hi] : loops) {
                auto in = [&](const Access &x) { return x.time >= lo && x.time <= hi; };
                auto first = std::find_if(a.begin(), a.end(), in);
                if (first == a.end()) continue;
                bool outside = !std::all_of(a.begin(), a.end(), in);
                if (outside || !(first->write && first->whole)) r.first = std::min(r.first, lo), r.last = std::max(r.last, hi);
            }
        }
        return live;
    }

private:
    const NpuKernel &k;
    std::vector<std::vector<Access>> accesses;
    std::vector<NpuLiveRange> live;
    std::vector<std::pair<int64_t, int64_t>> loops;  // time ranges of loop bodies
    int64_t pos = 0;

    // The tile operand of buffer b in i's arguments, or nullptr.
    static const NpuArg *arg_of(const NpuItem &i, int b, size_t from) {
        for (size_t j = from; j < i.args.size(); j++)
            if (i.args[j].buffer == b) return &i.args[j];
        return nullptr;
    }

    static bool same_place(const NpuArg &a, const NpuArg &d, const NpuBuffer &ba, const NpuBuffer &bd) {
        return a.row0 == 0 && d.row0 == 0 && a.rows == d.rows && a.cols == d.cols && ba.cols == bd.cols &&
               ba.dtype == bd.dtype && ba.memory == bd.memory;
    }

    void instr(const NpuItem &i) {
        const bool dma = npu::op_family(i.op) == npu::Family::DMA;
        const npu::Kind kind = npu::op_kind(i.op);
        const bool elementwise = kind == npu::Kind::Binary || kind == npu::Kind::Unary ||
                                 kind == npu::Kind::TileScalar || kind == npu::Kind::ExpandBinary;
        const NpuArg *dst = i.writes.empty() ? nullptr : arg_of(i, i.writes[0], 0);
        for (int b : i.reads) {
            bool in_place = false;
            if (elementwise && dst) {
                // The sources are args 1 (and 2 for Binary; ExpandBinary's 2 is a line, never in place).
                const size_t last = kind == npu::Kind::Binary ? 2 : 1;
                in_place = true;
                bool found = false;
                for (size_t j = 1; j < i.args.size(); j++) {
                    if (i.args[j].buffer != b) continue;
                    found = true;
                    in_place &= j <= last && same_place(i.args[j], *dst, k.buffers[b], k.buffers[dst->buffer]);
                }
                in_place &= found;
            }
            accesses[b].push_back({2 * pos + (in_place ? 0 : 1), false, false});
            (dma ? live[b].dma_read : live[b].compute_read) = true;
        }
        for (int b : i.writes) {
            const NpuArg *a = arg_of(i, b, 0);
            const NpuBuffer &buf = k.buffers[b];
            bool whole = a && a->row0 == 0 && a->rows >= buf.rows && a->cols >= cols_used(b);
            accesses[b].push_back({2 * pos + 1, true, whole});
            if (dma) live[b].dma_written = true;
        }
    }

    // The widest columns any operand of b spans (a tile narrower than its padded buffer).
    int cols_used(int b) {
        auto it = widest.find(b);
        if (it != widest.end()) return it->second;
        int w = 0;
        std::function<void(const std::vector<NpuItem> &)> scan = [&](const std::vector<NpuItem> &body) {
            for (const NpuItem &i : body) {
                for (const NpuArg &a : i.args)
                    if (a.buffer == b) w = std::max(w, a.cols);
                scan(i.body);
            }
        };
        scan(k.body);
        return widest[b] = w;
    }
    std::map<int, int> widest;
};

}  // namespace

std::vector<NpuLiveRange> npu_live_ranges(const NpuKernel &k) {
    Walk w(k);
    w.items(k.body);
    return w.ranges();
}

uint64_t npu_first_fit(const std::vector<uint64_t> &bytes, const std::vector<NpuLiveRange> &live, uint64_t alignment,
                       const std::function<bool(size_t, size_t)> &may_share, std::vector<uint64_t> &offsets) {
    auto align = [&](uint64_t v) { return (v + alignment - 1) / alignment * alignment; };
    std::vector<size_t> order(bytes.size());
    std::iota(order.begin(), order.end(), 0);
    std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) {
        if (bytes[a] != bytes[b]) return bytes[a] > bytes[b];
        return live[a].first < live[b].first;
    });
    offsets.assign(bytes.size(), 0);
    std::vector<size_t> placed;
    uint64_t peak = 0;
    // Ranges that touch (one ends at 2p, read in place by instruction p, the
    // other starts at 2p + 1) belong to an instruction run in place: the
    // two blocks share bytes only at the same offset, since a destination
    // that overlaps its source shifted would overwrite elements not read yet.
    auto touch = [&](size_t i, size_t j) {
        const NpuLiveRange &a = live[i], &b = live[j];
        return a.first <= a.last && b.first <= b.last && (a.last + 1 == b.first || b.last + 1 == a.first);
    };
    for (size_t i : order) {
        // The byte ranges i must avoid (a touching block's, unless at its very offset); i goes at the
        // lowest offset that avoids them: 0, the end of a block, or a touching block's offset.
        struct Block {
            uint64_t lo, hi;
            bool exact_ok;
        };
        std::vector<Block> taken;
        std::vector<uint64_t> candidates{0};
        for (size_t j : placed) {
            const uint64_t lo = offsets[j], hi = offsets[j] + align(bytes[j]);
            if (live[i].overlaps(live[j]) || !may_share(i, j)) taken.push_back({lo, hi, false});
            else if (touch(i, j)) taken.push_back({lo, hi, true}), candidates.push_back(lo);
            else continue;
            candidates.push_back(hi);
        }
        std::sort(candidates.begin(), candidates.end());
        uint64_t at = 0;
        for (uint64_t c : candidates) {
            const uint64_t end = c + align(bytes[i]);
            bool fits = true;
            for (const Block &t : taken) fits &= end <= t.lo || t.hi <= c || (t.exact_ok && t.lo == c);
            if (fits) {
                at = c;
                break;
            }
        }
        offsets[i] = at;
        placed.push_back(i);
        if (bytes[i] > 0) peak = std::max(peak, at + align(bytes[i]));
    }
    return peak;
}

}  // namespace internal
}  // namespace kiln
