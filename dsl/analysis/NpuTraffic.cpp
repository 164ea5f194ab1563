// See NpuTraffic.h.
#include "NpuTraffic.h"

#include <algorithm>

#include "analysis/Bounds.h"
#include "ir/IRVisitor.h"
#include "ir/Simplify.h"
#include "ir/Substitute.h"

namespace kiln {
namespace internal {

int64_t NpuTraffic::reads() const {
    int64_t n = 0;
    for (const auto &kv : read_bytes) n += kv.second;
    return n;
}
int64_t NpuTraffic::writes() const {
    int64_t n = 0;
    for (const auto &kv : write_bytes) n += kv.second;
    return n;
}

namespace {

// clamp(e, lo, hi) in a read's coordinate, as the boundary conditions write
// it (max(min(e, hi), lo) or min(max(e, lo), hi)), becomes e: the DMA
// replicates the edges, so a tile's window is its full size at the edges too.
class RemoveEdgeClamps : public IRMutator {
    const std::map<std::string, int> &gm;
    static Expr unclamped(Expr e) {
        for (;;) {
            if (const Max *mx = e.as<Max>()) {
                if (const Min *mn = mx->a.as<Min>()) {
                    e = mn->a;
                    continue;
                }
            } else if (const Min *mn = e.as<Min>()) {
                if (const Max *mx = mn->a.as<Max>()) {
                    e = mx->a;
                    continue;
                }
            }
            return e;
        }
    }

public:
    explicit RemoveEdgeClamps(const std::map<std::string, int> &g) : gm(g) {}
    using IRMutator::mutate;
    Expr mutate(const Expr &e) override {
        const Call *c = e.as<Call>();
        if (!c || !gm.count(c->name) || !(c->call_type == Call::Image || c->call_type == Call::Func))
            return IRMutator::mutate(e);
        std::vector<Expr> args;
        for (const Expr &a : c->args) args.push_back(mutate(unclamped(a)));
        return Call::make(c->type, c->name, args, c->call_type, c->func, c->param, c->value_index);
    }
};

// The tiles of the nest, grouped by the loops that hold them.
class FindTiles : public IRVisitor {
public:
    struct Group {
        std::vector<const For *> holding;                  // outermost first
        std::vector<std::pair<std::string, Expr>> lets;    // around the tiles, outermost first
        std::vector<Stmt> tiles;
    };
    std::vector<Group> groups;

    explicit FindTiles(const std::map<std::string, int> &t) : tile_loops(t) {}

private:
    const std::map<std::string, int> &tile_loops;
    std::vector<const For *> loops;
    std::vector<size_t> lets_at_loop;  // lets.size() where each loop starts
    std::vector<std::pair<std::string, Expr>> lets;
    std::map<const void *, size_t> group_of;  // innermost holding loop -> group
    std::set<const void *> seen;

    void visit(const For *op) override {
        include(op->min);
        include(op->extent);
        loops.push_back(op);
        lets_at_loop.push_back(lets.size());
        include(op->body);
        loops.pop_back();
        lets_at_loop.pop_back();
    }
    void visit(const LetStmt *op) override {
        include(op->value);
        lets.emplace_back(op->name, op->value);
        include(op->body);
        lets.pop_back();
    }
    void visit(const Provide *op) override {
        // The stage's innermost loops (named func.sK.*) are its tile.
        std::string stage;
        for (auto it = loops.rbegin(); it != loops.rend() && stage.empty(); ++it) {
            const std::string &n = (*it)->name;
            if (n.compare(0, op->name.size() + 2, op->name + ".s") == 0)
                stage = n.substr(0, n.find('.', op->name.size() + 2) + 1);
        }
        auto t = tile_loops.find(op->name);
        size_t cap = t == tile_loops.end() ? 2 : t->second, n = 0;
        while (n < cap && n < loops.size() && !stage.empty() &&
               loops[loops.size() - 1 - n]->name.compare(0, stage.size(), stage) == 0)
            n++;
        const size_t first = loops.size() - n;
        Stmt tile = n ? Stmt(loops[first]) : Stmt(op);
        if (!seen.insert(tile.get()).second) return;
        const void *key = first ? (const void *)loops[first - 1] : nullptr;
        auto g = group_of.find(key);
        if (g == group_of.end()) {
            g = group_of.emplace(key, groups.size()).first;
            Group fresh;
            fresh.holding.assign(loops.begin(), loops.begin() + first);
            groups.push_back(fresh);
        }
        Group &group = groups[g->second];
        // The lets around this tile (those inside the holding loops may
        // differ between the group's tiles; their names are unique).
        size_t nlets = n ? lets_at_loop[first] : lets.size();
        for (size_t i = 0; i < nlets; i++)
            if (std::none_of(group.lets.begin(), group.lets.end(), [&](auto &l) { return l.first == lets[i].first; }))
                group.lets.push_back(lets[i]);
        group.tiles.push_back(tile);
    }
};

// e with the lets (innermost last) and the concrete values substituted.
Expr resolve(Expr e, const std::vector<std::pair<std::string, Expr>> &lets, const std::map<std::string, Expr> &values) {
    for (auto it = lets.rbegin(); it != lets.rend(); ++it)
        if (expr_uses_var(e, it->first)) e = substitute(it->first, it->second, e);
    return simplify(substitute(values, e));
}

}  // namespace

NpuTraffic npu_gm_traffic(const Stmt &loop_nest, const std::map<std::string, int> &gm,
                          const std::map<std::string, int> &tile_loops, const std::map<std::string, Expr> &values) {
    NpuTraffic r;
    Stmt s = RemoveEdgeClamps(gm).mutate(loop_nest);
    FindTiles tiles(tile_loops);
    tiles.include(s);
    for (const FindTiles::Group &g : tiles.groups) {
        Stmt body = Block::make(g.tiles);
        // The holding loops' first iterations (the box's size, taken there)
        // and how many iterations they run.
        std::map<std::string, Expr> first = values;
        int64_t iterations = 1;
        for (const For *l : g.holding) {
            Expr mn = resolve(l->min, g.lets, first), ext = resolve(l->extent, g.lets, first);
            const int64_t *m = as_const_int(mn), *e = as_const_int(ext);
            if (!m || !e) {
                r.exact = false;
                continue;
            }
            first[l->name] = mn;
            iterations *= std::max<int64_t>(*e, 0);
        }
        for (const auto &[name, bytes] : gm) {
            for (int writes = 0; writes < 2; writes++) {
                bool found = false;
                Box b = box_touched(body, name, !writes, writes, &found);
                if (!found) continue;
                // Its rows (dimension 1) of dimension 0's extent, per plane (dimensions 2, ...).
                int64_t row = 1, rows = 1, planes = 1;
                bool moves = false;
                for (size_t d = 0; d < b.size(); d++) {
                    if (!b[d].bounded()) {
                        r.exact = false;
                        continue;
                    }
                    Expr lo = resolve(b[d].min, g.lets, values), hi = resolve(b[d].max, g.lets, values);
                    for (const For *l : g.holding) moves |= expr_uses_var(lo, l->name) || expr_uses_var(hi, l->name);
                    Expr extent = simplify(substitute(first, hi - lo + 1));
                    const int64_t *e = as_const_int(extent);
                    if (!e) {
                        r.exact = false;
                        continue;
                    }
                    r.exact &= as_const_int(simplify(hi - lo + 1)) != nullptr;  // the same size in every iteration
                    (d == 0 ? row : d == 1 ? rows : planes) *= std::max<int64_t>(*e, 0);
                }
                const int64_t row_bytes = (row * bytes + 31) / 32 * 32;
                (writes ? r.write_bytes : r.read_bytes)[name] += row_bytes * rows * planes * (moves ? iterations : 1);
            }
        }
    }
    return r;
}

}  // namespace internal
}  // namespace kiln
