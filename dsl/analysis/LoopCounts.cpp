#include "LoopCounts.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <functional>
#include <optional>
#include <set>
#include <unordered_map>

#include "CountCalls.h"
#include "EvaluateExpr.h"
#include "ir/ExprKey.h"
#include "ir/Function.h"
#include "ir/IRVisitor.h"
#include "ir/Simplify.h"
#include "ir/Substitute.h"

namespace kiln {
namespace internal {

namespace {

// The names of the variables an expression uses: every Variable in it, as
// expr_uses_var finds them.
std::set<std::string> variables_of(const Expr &e) {
    class Names : public IRVisitor {
    public:
        std::set<std::string> found;
        void visit(const Variable *v) override { found.insert(v->name); }
    } names;
    names.include(e);
    return names.found;
}

// Does the body of loop `var` need stepping through (not just
// multiplying)? Its counts change with `var` only through what the walk
// evaluates: loop bounds, guards and realization bounds. 0: none of them
// depends on `var` (directly or through the lets inside the body), so every
// iteration counts the same; 1: only inner loops' bounds do (affine in
// `var` in practice: the caller compares the first and last iterations);
// 2: a guard or a realization's bounds do.
class NeedsIteration : public IRVisitor {
public:
    explicit NeedsIteration(const std::string &var) { depends.insert(var); }
    int result = 0;
    void visit(const For *op) override {
        if (uses(op->min) || uses(op->extent)) result = std::max(result, 1);
        IRVisitor::visit(op);
    }
    void visit(const LetStmt *op) override {
        if (uses(op->value)) depends.insert(op->name);
        IRVisitor::visit(op);
    }
    void visit(const IfThenElse *op) override {
        if (uses(op->condition)) result = 2;
        IRVisitor::visit(op);
    }
    void visit(const Realize *op) override {
        for (size_t d = 0; d < op->bounds.size(); d++)
            if (uses(op->bounds[d].min) || uses(op->bounds[d].extent) ||
                (d < op->fold_factors.size() && op->fold_factors[d].defined() && uses(op->fold_factors[d])))
                result = 2;
        IRVisitor::visit(op);
    }

private:
    std::set<std::string> depends;
    bool uses(const Expr &e) const {
        for (const auto &v : depends)
            if (expr_uses_var(e, v)) return true;
        return false;
    }
};

bool same_counts(const LoopCounts &a, const LoopCounts &b) {
    if (a.funcs.size() != b.funcs.size()) return false;
    for (const auto &kv : a.funcs) {
        auto it = b.funcs.find(kv.first);
        if (it == b.funcs.end() || it->second.stores != kv.second.stores || it->second.loads != kv.second.loads ||
            it->second.pure_stores != kv.second.pure_stores)
            return false;
    }
    return true;
}

// Adds the counts of a part of a nest (a group, CountMemo) to those of
// the rest: what walking it after the rest would have added.
void add_counts(LoopCounts &into, const LoopCounts &part) {
    for (const auto &[name, p] : part.funcs) {
        FuncCounts &f = into.funcs[name];
        f.stores += p.stores;
        if (f.stage_stores.size() < p.stage_stores.size()) f.stage_stores.resize(p.stage_stores.size());
        for (size_t k = 0; k < p.stage_stores.size(); k++) f.stage_stores[k] += p.stage_stores[k];
        f.pure_stores += p.pure_stores;
        f.loads += p.loads;
        f.values_loaded += p.values_loaded;
        f.realizations += p.realizations;
        if (p.realizations && p.largest_points >= f.largest_points) {
            f.largest_points = p.largest_points;
            f.largest = p.largest;
        }
        f.arith += p.arith;
        f.divs += p.divs;
        f.transcendentals += p.transcendentals;
        f.reads += p.reads;
        f.memory_reads += p.memory_reads;
        f.gathers += p.gathers;
        f.scattered_stores += p.scattered_stores;
        f.vector_stores += p.vector_stores;
        f.serial_reduction_stores += p.serial_reduction_stores;
        f.scalar_call_stores += p.scalar_call_stores;
        f.vector_lanes = std::max(f.vector_lanes, p.vector_lanes);
        f.vector_value_bytes = std::max(f.vector_value_bytes, p.vector_value_bytes);
        f.parallel_stores += p.parallel_stores;
        if (p.parallel_tasks)
            f.parallel_tasks = f.parallel_tasks ? std::min(f.parallel_tasks, p.parallel_tasks) : p.parallel_tasks;
        for (const auto &[k, n] : p.aliased) f.aliased[k] += n;
    }
    into.parallel_loops += part.parallel_loops;
    into.exact &= part.exact;
    into.sampled |= part.sampled;
}

class Walker {
public:
    Walker(const std::map<std::string, int64_t> &v, const std::map<std::string, Expr> &f,
           const std::map<std::string, int> &innermost, CountMemo *memo)
        : values(v.begin(), v.end()), ev(values, f), innermost(innermost), memo(memo) {}
    // Looked up for every variable of every expression evaluated: hashed,
    // as the names share long prefixes (f.s0.x.x.loop_extent) that an
    // ordered map compares again at every level.
    std::unordered_map<std::string, int64_t> values;
    ExprEvaluator ev;
    LoopCounts out;
    std::map<const For *, int> needs_iteration;
    std::map<const Provide *, CountCalls> calls_of;
    std::map<const Provide *, int> stage_cache;
    std::vector<std::string> loops;  // enclosing loops, outermost first
    int64_t lanes = 0;               // extent of the enclosing vectorized loop, 0 outside one
    int64_t tasks = 0;               // iterations of the innermost enclosing parallel loop, 0 outside one
    // The enclosing loops' kinds and extents (outermost first), and the
    // loops each enclosing let depends on, for register reuse.
    struct Frame {
        std::string name;
        ForType type;
        int64_t extent;
    };
    std::vector<Frame> frames;
    std::map<std::string, std::set<std::string>> let_loops;
    std::vector<std::pair<std::string, Expr>> let_values;  // the enclosing lets, outermost first
    std::map<const LetStmt *, std::set<std::string>> let_deps;
    std::map<const Provide *, double> register_reads;
    std::map<const Provide *, bool> serial_reduction;  // the innermost loop, serial, does not move the stored point
    std::map<const Provide *, double> gathers;         // of reads_from_memory, the loads that are gathers
    std::map<const Provide *, double> store_ops;       // the stores one vector of a store takes
    // Of reads_from_memory, the loads at an aliasing stride (AliasedLoads)
    // and how many per execution of the store.
    std::map<const Provide *, std::vector<std::pair<AliasedLoads, double>>> aliased;
    // The extents of each Func's enclosing realization (its storage).
    std::unordered_map<std::string, std::vector<int64_t>> realized;
    // Each Func's innermost dimension in memory (reorder_storage()): the
    // index of its argument; 0 for the others and for inputs.
    const std::map<std::string, int> &innermost;
    // Of reads_from_memory, the values of each Func or input loaded (a
    // vector's lanes one each, an unrolled block's shared loads once).
    std::map<const Provide *, std::map<std::string, double>> values_loaded;

    // The loops (among frames) an expression depends on, through lets:
    // looked up by the names it uses, where asking each enclosing let
    // whether the expression uses it walked it once per let (hundreds
    // around camera_pipe's stores).
    std::set<std::string> loops_of(const Expr &e) const {
        std::set<std::string> r;
        const std::set<std::string> used = variables_of(e);
        for (const Frame &f : frames)
            if (used.count(f.name)) r.insert(f.name);
        for (const std::string &n : used) {
            auto deps = let_loops.find(n);
            if (deps != let_loops.end()) r.insert(deps->second.begin(), deps->second.end());
        }
        return r;
    }

    // Whether condition c is the same in every lane of the innermost
    // vectorized loop around (or no loop around is vectorized): a select on
    // it is a C conditional in the kernel, which runs one branch.
    bool same_in_every_lane(const Expr &c) const {
        const Frame *lanes_loop = nullptr;
        for (const Frame &f : frames)
            if (f.type == ForType::Vectorized) lanes_loop = &f;
        return !lanes_loop || !loops_of(c).count(lanes_loop->name);
    }

    // The reads of one execution of a store that reach memory (L1): a load
    // that does not move with an enclosing unrolled loop is loaded once for
    // all its iterations (the register tile of a matrix product), and an
    // update's read of the point it stores, where that point does not move
    // with the innermost serial loop around it, stays in a register.
    double reads_from_memory(const Provide *op) {
        auto it = register_reads.find(op);
        if (it != register_reads.end()) return it->second;
        std::set<std::string> stored;
        for (const Expr &a : op->args) {
            auto l = loops_of(a);
            stored.insert(l.begin(), l.end());
        }
        std::string serial;  // the innermost serial loop
        for (const Frame &f : frames)
            if (f.type == ForType::Serial || f.type == ForType::Parallel) serial = f.name;
        serial_reduction[op] = !frames.empty() && frames.back().type == ForType::Serial && !stored.count(frames.back().name);
        // Each distinct load once, as CountCalls counts work; those in the
        // branches of a select the same in every lane apart, as only one
        // branch runs.
        struct LoadTree {
            std::vector<const Call *> calls;
            std::vector<std::pair<LoadTree, LoadTree>> branches;
            double loads = 0;  // of the calls and of each select's branch with more
        };
        class Loads : public IRVisitor {
        public:
            Loads(const Walker &w, LoadTree &root) : walker(w), at(&root) {}
            void visit(const Call *c) override {
                IRVisitor::visit(c);
                if ((c->call_type == Call::Func || c->call_type == Call::Image) && seen.insert(*expr_key(Expr(c))).second)
                    at->calls.push_back(c);
            }
            void visit(const Select *op) override {
                if (!walker.same_in_every_lane(op->condition)) return IRVisitor::visit(op);
                include(op->condition);
                LoadTree *outer = at;
                outer->branches.emplace_back();
                std::pair<LoadTree, LoadTree> &b = outer->branches.back();
                const std::set<std::string> before = seen;
                at = &b.first;
                include(op->true_value);
                std::set<std::string> in_true;
                std::swap(in_true, seen);
                seen = before;
                at = &b.second;
                include(op->false_value);
                seen.insert(in_true.begin(), in_true.end());
                at = outer;
            }

        private:
            const Walker &walker;
            LoadTree *at;
            std::set<std::string> seen;
        };
        LoadTree tree;
        Loads loads(*this, tree);
        for (const Expr &v : op->values) loads.include(v);
        // The loads of call c, each vector's; `apply`: also the counts kept
        // per store for the cost model (gathers, values, aliased strides).
        auto account = [&](const Call *c, bool apply) -> double {
            std::set<std::string> moves;
            for (const Expr &a : c->args) {
                auto l = loops_of(a);
                moves.insert(l.begin(), l.end());
            }
            bool self = c->name == op->name && moves == stored;
            if (self && !serial.empty() && !stored.count(serial)) return 0;
            double w = 1;
            for (const Frame &f : frames)
                if (f.type == ForType::Unrolled && !moves.count(f.name)) w /= (double)f.extent;
            double loads_per_vector = vector_accesses(c->name, c->args);
            if (!apply) return w * loads_per_vector;
            if (loads_per_vector > 1) gathers[op] += w;
            values_loaded[op][c->name] += w;
            if (loads_per_vector == 1 && moves.count(serial)) {
                // Stores in a vectorized loop count once per lane, its
                // loads once per vector.
                AliasedLoads a = aliased_load(c, serial, moves);
                double lanes = 1;
                for (const Frame &f : frames)
                    if (f.type == ForType::Vectorized) lanes = (double)f.extent;
                if (a.stride) aliased[op].push_back({a, w / lanes});
            }
            return w * loads_per_vector;
        };
        // A select's branch with more loads stands for it: each tree's loads
        // priced once, innermost first (a mux of n values nests n selects),
        // then the counts kept along the branches chosen.
        std::function<void(LoadTree &)> price = [&](LoadTree &t) {
            for (const Call *c : t.calls) t.loads += account(c, false);
            for (auto &[yes, no] : t.branches) {
                price(yes);
                price(no);
                t.loads += std::max(yes.loads, no.loads);
            }
        };
        std::function<void(const LoadTree &)> keep = [&](const LoadTree &t) {
            for (const Call *c : t.calls) account(c, true);
            for (const auto &[yes, no] : t.branches) keep(yes.loads >= no.loads ? yes : no);
        };
        price(tree);
        keep(tree);
        return register_reads[op] = tree.loads;
    }

    // The load c as AliasedLoads along serial loop `serial` (which moves
    // it), or one with stride 0 if its stride there is not a multiple of
    // kiln_aliasing_stride (or not constant, or its layout is not known).
    AliasedLoads aliased_load(const Call *c, const std::string &serial, const std::set<std::string> &moves) const {
        AliasedLoads a;
        std::vector<int64_t> strides = element_strides(c->name, c->args.size());
        if (strides.empty()) return a;
        int64_t elements = 0;
        for (size_t d = 0; d < c->args.size(); d++) {
            if (!loops_of(c->args[d]).count(serial)) continue;
            std::optional<int64_t> step = step_along(c->args[d], serial);
            if (!step) return a;
            elements += *step * strides[d];
        }
        const int64_t bytes = std::abs(elements) * c->type.bytes();
        const int64_t power = bytes & -bytes;
        if (power < kiln_aliasing_stride) return a;
        a.read = c->name;
        a.loop = serial;
        a.stride = power;
        a.access_bytes = c->type.bytes();
        a.per_iteration = 1;
        bool inside = false;
        for (const Frame &f : frames) {
            inside = inside || f.name == serial;
            if (!inside || !moves.count(f.name)) continue;
            if (f.type == ForType::Vectorized) a.access_bytes *= f.extent;
            if (f.type == ForType::Unrolled) a.per_iteration *= f.extent;
            if (f.name == serial) a.iterations = f.extent;
        }
        return a;
    }

    // The elements between neighbours in each dimension of Func or input
    // `name`: its realization's extents, innermost_dims' dimension first,
    // or an input's or output's strides; empty if unknown.
    std::vector<int64_t> element_strides(const std::string &name, size_t dims) const {
        std::vector<int64_t> r(dims, 0);
        auto f = realized.find(name);
        if (f != realized.end() && f->second.size() == dims) {
            auto in = innermost.find(name);
            std::vector<size_t> order;
            if (in != innermost.end() && in->second < (int)dims) order.push_back((size_t)in->second);
            for (size_t d = 0; d < dims; d++)
                if (order.empty() || order[0] != d) order.push_back(d);
            int64_t stride = 1;
            for (size_t d : order) {
                r[d] = stride;
                stride *= std::max<int64_t>(f->second[d], 1);
            }
            return r;
        }
        for (size_t d = 0; d < dims; d++) {
            auto v = values.find(name + ".stride." + std::to_string(d));
            if (v == values.end()) return {};
            r[d] = v->second;
        }
        return r;
    }

    // What to put into index a for the enclosing lets it names, innermost
    // first, to find how it moves along loop v: a let that moves with v its
    // value, and the lets that value names in turn; one that does not, its
    // value here if known (else it stays a name, as a loop's variable does).
    // Putting in only what moves keeps the index small: the lets of a
    // pyramid's regions name those of the level before, and putting them
    // all in made an index exponential in the pyramid's depth (seconds of
    // simplifying a local Laplacian's final count).
    std::vector<std::pair<std::string, Expr>> lets_along(const Expr &a, const std::string &v) const {
        std::vector<std::pair<std::string, Expr>> lets;
        std::set<std::string> used = variables_of(a);  // those of a as the lets are put in
        for (auto it = let_values.rbegin(); it != let_values.rend(); ++it) {
            if (!used.count(it->first)) continue;
            used.erase(it->first);
            auto deps = let_loops.find(it->first);
            if (deps != let_loops.end() && deps->second.count(v)) {
                lets.emplace_back(it->first, it->second);
                const std::set<std::string> more = variables_of(it->second);
                used.insert(more.begin(), more.end());
            } else if (auto known = values.find(it->first); known != values.end()) {
                lets.emplace_back(it->first, make_const(it->second.type(), known->second));
            }
        }
        return lets;
    }

    // How far index a (the lets around it put in) moves per iteration of
    // loop v, if by a constant.
    std::optional<int64_t> step_along(Expr a, const std::string &v) const {
        for (const auto &[name, value] : lets_along(a, v)) a = substitute(name, value, a);
        a = without_clamps(a, v);
        const int64_t *d = as_const_int(simplify(substitute(v, make_var(v) + 1, a) - a));
        if (!d) return std::nullopt;
        return *d;
    }

    // e without the min and max around it whose other operand does not move
    // with loop `v`: a boundary condition's clamp (repeat_edge's
    // min(max(x - 1, 0), w - 1)). partition_loops splits the vectorized
    // loop where the clamp starts and stops acting, so all but its ends
    // load lanes the unclamped index makes adjacent.
    static Expr without_clamps(Expr e, const std::string &v) {
        while (true) {
            Expr a, b;
            if (const auto *m = e.as<Min>()) a = m->a, b = m->b;
            else if (const auto *m = e.as<Max>()) a = m->a, b = m->b;
            else return e;
            if (!expr_uses_var(b, v)) e = a;
            else if (!expr_uses_var(a, v)) e = b;
            else return e;
        }
    }

    // The loads (or stores) one vector of an access to Func or input `name`
    // at `args` takes inside the innermost vectorized loop: 1 when its lanes
    // are adjacent in memory (or the same, or every 2nd or 4th lane
    // repeated: dense loads and shuffles), its stride when that is 2 to 4
    // (deinterleaving dense loads), else one per lane (a gather or a
    // scatter: the loop moves a dimension other than the innermost one in
    // memory, which reorder_storage() may have made another than the first,
    // or the innermost one by a stride or a non-affine step).
    double vector_accesses(const std::string &name, const std::vector<Expr> &args) const {
        const Frame *v = nullptr;
        for (const Frame &f : frames)
            if (f.type == ForType::Vectorized) v = &f;
        if (!v || args.empty()) return 1;
        auto in = innermost.find(name);
        const size_t inner = in == innermost.end() || in->second >= (int)args.size() ? 0 : (size_t)in->second;
        for (size_t d = 0; d < args.size(); d++)
            if (d != inner && loops_of(args[d]).count(v->name)) return (double)v->extent;
        Expr a = args[inner];
        const std::vector<std::pair<std::string, Expr>> lets = lets_along(a, v->name);
        // The stride is that of a with the lets put in, along v: a memo's
        // key is what decides it, their texts and v's name.
        std::string key;
        if (memo) {
            key = v->name + "\n" + a.type().to_string() + " " + *expr_key(a);
            for (const auto &[name, value] : lets) key += "\nlet " + name + " = " + *expr_key(value);
            if (const int *stride = memo->find_stride(key)) {
                memo->stride_hits++;
                return *stride ? (double)*stride : (double)v->extent;
            }
            memo->stride_misses++;
        }
        for (const auto &[name, value] : lets) a = substitute(name, value, a);
        const int stride = stride_along(a, v->name);
        if (memo) memo->keep_stride(key, stride);
        return stride ? (double)stride : (double)v->extent;
    }

    // The loads one vector of an access at index a (its innermost
    // dimension in memory, the lets around it put in) takes along the
    // vectorized loop v: 1 when its lanes are adjacent or the same, 2 to 4
    // for such a stride, 0 for one per lane.
    static int stride_along(Expr a, const std::string &v) {
        if (!expr_uses_var(a, v)) return 1;
        a = without_clamps(a, v);
        const Expr x = make_var(v);
        for (int step : {1, 2, 4}) {
            const int64_t *d = as_const_int(simplify(substitute(v, x + step, a) - a));
            if (!d) continue;
            int64_t stride = std::abs(*d);
            if (stride <= step) return 1;  // adjacent, repeated or broadcast lanes
            if (step == 1 && stride <= 4) return (int)stride;
            break;
        }
        return 0;
    }

    // The stage of a store to `func` here: k of its innermost loop named
    // func.s<k>.* (0 without one).
    int stage_of(const std::string &func) const {
        const std::string prefix = func + ".s";
        for (auto it = loops.rbegin(); it != loops.rend(); ++it) {
            if (it->compare(0, prefix.size(), prefix) != 0) continue;
            size_t end = it->find('.', prefix.size());
            std::string stage = it->substr(prefix.size(), end == std::string::npos ? std::string::npos : end - prefix.size());
            if (stage.empty() || stage.find_first_not_of("0123456789") != std::string::npos) continue;
            return std::stoi(stage);
        }
        return 0;
    }

    void walk(const Stmt &s, int64_t mult) {
        if (!s.defined()) return;
        if (const auto *op = s.as<Block>()) {
            walk(op->first, mult);
            walk(op->rest, mult);
        } else if (const auto *op = s.as<LetStmt>()) {
            int64_t v;
            bool known = ev.eval(op->value, v);
            // The value of an outer let of the same name, restored after the
            // body (a flag and a value: g++ 12 warns of a std::optional's
            // payload here as maybe uninitialized).
            auto outer = values.find(op->name);
            const bool had_outer = outer != values.end();
            const int64_t outer_value = had_outer ? outer->second : 0;
            if (known) values[op->name] = v;
            else values.erase(op->name);
            auto saved_deps = let_loops.find(op->name) != let_loops.end()
                                  ? std::optional<std::set<std::string>>(let_loops[op->name])
                                  : std::nullopt;
            auto deps = let_deps.find(op);  // the loops around a let are always the same
            if (deps == let_deps.end()) deps = let_deps.emplace(op, loops_of(op->value)).first;
            let_loops[op->name] = deps->second;
            let_values.emplace_back(op->name, op->value);
            walk(op->body, mult);
            let_values.pop_back();
            if (saved_deps) let_loops[op->name] = *saved_deps;
            else let_loops.erase(op->name);
            if (had_outer) values[op->name] = outer_value;
            else values.erase(op->name);
        } else if (const auto *op = s.as<For>()) {
            loops.push_back(op->name);
            walk_for(op, mult);
            loops.pop_back();
        } else if (const auto *op = s.as<IfThenElse>()) {
            int64_t c;
            if (!ev.eval(op->condition, c)) {
                out.exact = false;
                walk(op->then_case, mult);  // assume the guard holds
                return;
            }
            walk(c ? op->then_case : op->else_case, mult);
        } else if (const auto *op = s.as<Realize>()) {
            FuncCounts &fc = out.funcs[op->name];
            fc.realizations += mult;
            std::vector<int64_t> ext;
            int64_t points = 1;
            for (size_t d = 0; d < op->bounds.size(); d++) {
                int64_t e = 0;
                const Expr &x = op->fold_factors[d].defined() ? op->fold_factors[d] : op->bounds[d].extent;
                if (!ev.eval(x, e)) out.exact = false;
                ext.push_back(e);
                points *= e;
            }
            if (points >= fc.largest_points) {
                fc.largest_points = points;
                fc.largest = ext;
            }
            auto outer = realized.find(op->name);
            std::optional<std::vector<int64_t>> saved;
            if (outer != realized.end()) saved = outer->second;
            realized[op->name] = ext;
            walk(op->body, mult);
            if (saved) realized[op->name] = *saved;
            else realized.erase(op->name);
        } else if (const auto *op = s.as<Provide>()) {
            FuncCounts &fc = out.funcs[op->name];
            fc.stores += mult;
            auto st = stage_cache.find(op);  // the loops around a store are always the same
            if (st == stage_cache.end()) st = stage_cache.emplace(op, stage_of(op->name)).first;
            size_t k = (size_t)st->second;
            if (fc.stage_stores.size() <= k) fc.stage_stores.resize(k + 1);
            fc.stage_stores[k] += mult;
            if (k == 0) fc.pure_stores += mult;
            auto it = calls_of.find(op);
            if (it == calls_of.end()) {
                CountCalls cc;
                cc.uniform = [this](const Expr &c) { return same_in_every_lane(c); };
                for (const auto &v : op->values) cc.include(v);
                cc.uniform = nullptr;  // kept with the counts, which outlive these frames
                for (const auto &a : op->args) cc.include_index(a);
                it = calls_of.emplace(op, cc).first;
            }
            const CountCalls &cc = it->second;
            fc.arith += cc.arith * mult;
            fc.divs += cc.divs * mult;
            fc.transcendentals += cc.transcendentals * mult;
            if (lanes) {
                fc.vector_stores += mult;
                fc.vector_lanes = std::max(fc.vector_lanes, lanes);
                fc.vector_value_bytes = std::max(fc.vector_value_bytes, cc.widest);
            }
            if (tasks) {
                fc.parallel_stores += mult;
                fc.parallel_tasks = fc.parallel_tasks ? std::min(fc.parallel_tasks, tasks) : tasks;
            }
            for (const auto &kv : cc.calls) {
                out.funcs[kv.first].loads += kv.second * mult;
                fc.reads += kv.second * mult;
            }
            fc.memory_reads += reads_from_memory(op) * (double)mult;
            for (const auto &[name, n] : values_loaded[op]) out.funcs[name].values_loaded += n * (double)mult;
            if (auto al = aliased.find(op); al != aliased.end())
                for (const auto &[a, n] : al->second) fc.aliased[a] += n * (double)mult;
            fc.gathers += gathers[op] * (double)mult;
            if (lanes) {
                auto so = store_ops.find(op);
                if (so == store_ops.end()) so = store_ops.emplace(op, vector_accesses(op->name, op->args)).first;
                if (so->second > 1) fc.scattered_stores += (double)mult * so->second;
            }
            if (!lanes && serial_reduction[op]) fc.serial_reduction_stores += mult;
            else if (!lanes && cc.transcendentals) fc.scalar_call_stores += mult;
        } else if (const auto *op = s.as<ProducerConsumer>()) {
            if (op->is_producer && frames.empty() && mult == 1) walk_group(op);
            else walk(op->body, mult);
        }
        // AssertStmt, Evaluate: nothing to count.
    }

    // A group (CountMemo): counted apart and added, or its counts from the
    // memo added where counting it again would not reach the budget of
    // loop visits (so would count the same, taking the same visits).
    CountMemo *memo;
    void walk_group(const ProducerConsumer *op) {
        std::string key;
        if (memo) {
            key = group_key(op);
            const CountMemo::Entry *e = memo->find(key);
            if (e && e->visits < visits_left) {
                memo->hits++;
                add_counts(out, e->counts);
                visits_left -= e->visits;
                return;
            }
            memo->misses++;
        }
        LoopCounts saved;
        std::swap(saved, out);
        const int64_t before = visits_left;
        walk(op->body, 1);
        LoopCounts group;
        std::swap(group, out);
        std::swap(out, saved);
        add_counts(out, group);
        // Kept if the budget was not reached: the visits it took are then
        // all it takes, from any budget larger than that.
        if (memo && !group.sampled && visits_left > 0) memo->keep(key, {std::move(group), before - visits_left});
    }

    // What a group's counts depend on: its text; the value of each variable
    // it uses from outside it; the text of the lets those name, through
    // which vector_accesses finds a stride; and the extents of the Funcs it
    // reads that are realized outside it (aliased_load's strides).
    std::string group_key(const ProducerConsumer *op) const {
        class Names : public IRVisitor {
        public:
            std::set<std::string> used, bound, called;
            void visit(const Variable *v) override { used.insert(v->name); }
            void visit(const Call *c) override {
                called.insert(c->name);
                IRVisitor::visit(c);
            }
            void visit(const LetStmt *l) override {
                bound.insert(l->name);
                IRVisitor::visit(l);
            }
            void visit(const Let *l) override {
                bound.insert(l->name);
                IRVisitor::visit(l);
            }
            void visit(const For *f) override {
                bound.insert(f->name);
                IRVisitor::visit(f);
            }
        } names;
        Stmt group(op);
        names.include(group);
        std::string key = to_string(group);
        std::vector<std::string> work;
        for (const std::string &n : names.used)
            if (!names.bound.count(n)) work.push_back(n);
        for (const std::string &n : work) {
            auto v = values.find(n);
            key += "\n" + n + (v == values.end() ? std::string(" unknown") : " = " + std::to_string(v->second));
        }
        for (const std::string &n : names.called) {
            auto r = realized.find(n);
            if (r == realized.end()) continue;
            key += "\nrealized " + n;
            for (int64_t e : r->second) key += " " + std::to_string(e);
        }
        std::set<std::string> seen(work.begin(), work.end());
        while (!work.empty()) {
            std::string n = work.back();
            work.pop_back();
            for (auto it = let_values.rbegin(); it != let_values.rend(); ++it) {
                if (it->first != n) continue;
                key += "\nlet " + n + " = " + *expr_key(it->second);
                Names inner;
                inner.include(it->second);
                for (const std::string &m : inner.used)
                    if (seen.insert(m).second) work.push_back(m);
                break;
            }
        }
        return key;
    }

    // One loop: multiplied out when its body has no inner loops, guards or
    // realizations; with inner loops, or guards and realizations that do not
    // move with it, multiplied out if its first and last iterations count
    // the same; stepped through otherwise.
    int64_t visits_left = kiln_count_loop_visits;
    void walk_for(const For *op, int64_t mult) {
        if (visits_left > 0) visits_left--;
        int64_t mn, ex;
        if (!ev.eval(op->min, mn) || !ev.eval(op->extent, ex)) {
            out.exact = false;
            return;
        }
        if (ex <= 0) return;
        int64_t saved_lanes = lanes, saved_tasks = tasks;
        if (op->for_type == ForType::Vectorized) lanes = ex;
        if (op->for_type == ForType::Parallel) {
            tasks = ex;
            out.parallel_loops += mult;
        }
        frames.push_back({op->name, op->for_type, ex});
        walk_for_body(op, mult, mn, ex);
        frames.pop_back();
        lanes = saved_lanes;
        tasks = saved_tasks;
    }

    void walk_for_body(const For *op, int64_t mult, int64_t mn, int64_t ex) {
        auto cached = needs_iteration.find(op);
        if (cached == needs_iteration.end()) {
            NeedsIteration ni(op->name);
            ni.include(op->body);
            cached = needs_iteration.emplace(op, ni.result).first;
        }
        if (!cached->second) {
            walk(op->body, mult * ex);
            return;
        }
        if (visits_left <= 0) {  // the budget spent: the first iteration stands for all
            out.sampled = true;
            values[op->name] = mn;
            walk(op->body, mult * ex);
            values.erase(op->name);
            return;
        }
        std::map<int64_t, LoopCounts> probed;  // the counts of one iteration, by its value of the variable
        auto counts_at = [&](int64_t i) -> const LoopCounts & {
            auto it = probed.find(i);
            if (it != probed.end()) return it->second;
            LoopCounts saved;
            std::swap(saved, out);
            values[op->name] = i;
            walk(op->body, 1);
            LoopCounts &r = probed[i];
            std::swap(r, out);
            std::swap(out, saved);
            return r;
        };
        if (cached->second == 1 && ex > 2) {
            // Only inner loops: if the first and last iterations count the
            // same, every iteration does (inner extents are affine in the
            // loop variable in practice).
            const LoopCounts &first = counts_at(mn);
            if (first.exact && same_counts(first, counts_at(mn + ex - 1))) {
                values[op->name] = mn;
                walk(op->body, mult * ex);
                values.erase(op->name);
                return;
            }
        }
        walk_range(op, mult, mn, mn + ex - 1, counts_at);
        values.erase(op->name);
    }

    // Iterations a to b of loop op. Guards and bounds affine in its variable
    // make its counts constant on a few intervals: a range whose second,
    // middle and second-to-last iterations count the same is its first
    // iteration, those between (counted once, multiplied) and its last
    // (a warm-up, a tail); any other range of more than 4 iterations is
    // halved. Constant counts cost 5 walks of the body, one piece more
    // about 5 per halving, where stepping through costs one per iteration.
    template<typename Probe>
    void walk_range(const For *op, int64_t mult, int64_t a, int64_t b, Probe &counts_at) {
        auto step = [&](int64_t i, int64_t m) {
            values[op->name] = i;
            walk(op->body, m);
        };
        if (b - a < 4) {
            for (int64_t i = a; i <= b; i++) step(i, mult);
            return;
        }
        const LoopCounts &inner = counts_at(a + 1);
        if (inner.exact && same_counts(inner, counts_at(a + (b - a) / 2)) && same_counts(inner, counts_at(b - 1))) {
            step(a, mult);
            step(a + 1, mult * (b - a - 1));
            step(b, mult);
            return;
        }
        int64_t mid = a + (b - a) / 2;
        walk_range(op, mult, a, mid, counts_at);
        walk_range(op, mult, mid + 1, b, counts_at);
    }
};

}  // namespace

std::map<std::string, int> innermost_storage_dims(const std::map<std::string, std::shared_ptr<FunctionContents>> &env) {
    std::map<std::string, int> r;
    for (const auto &[name, f] : env) {
        const std::vector<std::string> &order = f->schedule.storage_dims;
        if (order.empty()) continue;
        auto it = std::find(f->args.begin(), f->args.end(), order[0]);
        if (it != f->args.end() && it != f->args.begin()) r[name] = (int)(it - f->args.begin());
    }
    return r;
}

LoopCounts count_loop_nest(const Stmt &s, const std::map<std::string, int64_t> &values,
                           const std::map<std::string, Expr> &float_values,
                           const std::map<std::string, int> &innermost_dims, CountMemo *memo) {
    Walker w(values, float_values, innermost_dims, memo);
    w.walk(s, 1);
    return w.out;
}

}  // namespace internal
}  // namespace kiln
