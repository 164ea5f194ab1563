#include "SplitFloatSums.h"

#include <algorithm>
#include <functional>
#include <vector>

#include "StoreLoops.h"
#include "UnrollLoops.h"
#include "VectorizeLoops.h"
#include "ir/IRVisitor.h"
#include "ir/Simplify.h"
#include "ir/Substitute.h"
#include "kiln/IROperator.h"

namespace kiln {
namespace internal {

namespace {

// Independent vector accumulators per sum, and their width in bytes. An
// add's latency is 3-4 cycles and a core issues two a cycle, so one chain
// of adds uses an eighth to a sixth of the adder. On Zen 4 (docs/
// performance.md, "x − mean(x): several accumulators (session 44)") four
// accumulators of 32 bytes were as fast as six or eight and faster than
// two or sixteen; 64-byte ones (Zen 4 runs them as two halves) made the
// bench's 4096x1024 case slower than the single accumulator before, 32-byte
// ones faster at every size measured.
constexpr int accumulators = 4;
constexpr int vector_bytes = 32;

// The sum of `terms` as a balanced tree: (t0 + t1) + (t2 + t3).
Expr tree_sum(const std::vector<Expr> &terms, size_t begin, size_t end) {
    if (end - begin == 1) return terms[begin];
    size_t mid = begin + (end - begin) / 2;
    return tree_sum(terms, begin, mid) + tree_sum(terms, mid, end);
}

// The leaves of a tree of Adds, left to right.
void add_terms(const Expr &e, std::vector<Expr> &out) {
    if (const Add *a = e.as<Add>()) {
        add_terms(a->a, out);
        add_terms(a->b, out);
    } else {
        out.push_back(e);
    }
}

// Whether every vector load in `s` reads consecutive elements: a sum whose
// terms are strided (a column's) would gather each vector of terms, which
// costs more than the chain of adds it breaks.
class Dense : public IRVisitor {
public:
    bool ok = true;

protected:
    void visit(const Load *op) override {
        const Ramp *r = op->index.as<Ramp>();
        ok &= op->type.is_scalar() || (r && is_one(r->stride));
        IRVisitor::visit(op);
    }
};

bool dense(const Stmt &s) {
    Dense d;
    d.include(s);
    return d.ok;
}

// Whether a term divides floats or calls a function: then the loop is
// bound by the divider (or the function's own work), not by the chain of
// adds, and the split measured slower (softmax_grad's and attention_grad's
// saved backward row sums, x / s / s, 7-10% on Zen 4).
class Costly : public IRVisitor {
public:
    bool found = false;

protected:
    void visit(const Div *op) override {
        found |= op->type.is_float();
        IRVisitor::visit(op);
    }
    void visit(const Call *op) override {
        found = true;
        IRVisitor::visit(op);
    }
};

class SplitSums : public StoreLoopMutator {
public:
    explicit SplitSums(const Target &target) : target(target) {}

protected:
    const Target &target;
    int counter = 0;

    // A local: its size is a constant (CodeGen_C puts it on the stack, or
    // it is a heap array no input, output or other allocation overlaps).
    bool tracks(const Allocate *op) override { return as_const_int(op->size) != nullptr; }

    Stmt rewrite(const StoreLoop &l) override {
        const For *op = l.loop;
        const Store *store = l.store;
        const Type t = store->value.type();
        if (t != Float(32) && t != Float(64)) return Stmt();
        const int lanes = std::min(target.natural_vector_size(t), vector_bytes / t.bytes());
        if (lanes < 2) return Stmt();
        if (expr_uses_var(store->index, op->name)) return Stmt();
        for (const LetStmt *let : l.lets)
            if (expr_uses_var(store->index, let->name)) return Stmt();
        auto reads_acc = [&](const Expr &e) {
            return expr_loads_if(e, [&](const std::string &b) { return b == store->name; });
        };
        if (reads_acc(store->index)) return Stmt();
        for (const LetStmt *let : l.lets)
            if (reads_acc(let->value)) return Stmt();
        // The value: the accumulator's element once, plus terms that do not
        // read the allocation.
        std::vector<Expr> terms, rest;
        add_terms(store->value, terms);
        int own = 0;
        for (const Expr &term : terms) {
            const Load *ld = term.as<Load>();
            if (ld && ld->name == store->name && ld->type == t && equal(ld->index, store->index)) {
                own++;
            } else if (reads_acc(term)) {
                return Stmt();
            } else {
                rest.push_back(term);
            }
        }
        if (own != 1 || rest.empty()) return Stmt();
        Costly costly;
        costly.include(store->value);
        for (const LetStmt *let : l.lets) costly.include(let->value);
        if (costly.found) return Stmt();
        Expr e = rest[0];
        for (size_t i = 1; i < rest.size(); i++) e = e + rest[i];

        const int block = accumulators * lanes;
        const int64_t *constant_extent = as_const_int(op->extent);
        if (constant_extent && *constant_extent < block) return Stmt();  // the main part would never run
        const std::string id = std::to_string(counter++);
        const std::string parts = store->name + ".parts." + id, lane_sums = store->name + ".lanes." + id;
        const Expr n = Variable::make(Int(32), op->name + ".n");
        const Expr blocks = n / block, done = blocks * block;
        const std::string outer = op->name + ".o", unrolled = op->name + ".u", vector = op->name + ".v";
        const Expr u = Variable::make(Int(32), unrolled), v = Variable::make(Int(32), vector);

        // parts[u * lanes + v] += e(r = min + outer * block + u * lanes + v),
        // in loops that unroll_loops and vectorize_loops lower.
        const Expr slot = u * lanes + v;
        Stmt body = Store::make(parts, Load::make(t, parts, slot) + e, slot);
        for (auto it = l.lets.rbegin(); it != l.lets.rend(); ++it) body = LetStmt::make((*it)->name, (*it)->value, body);
        body = substitute(op->name, op->min + Variable::make(Int(32), outer) * block + slot, body);
        Stmt loop = For::make(vector, 0, lanes, ForType::Vectorized, body);
        loop = For::make(unrolled, 0, accumulators, ForType::Unrolled, loop);
        loop = For::make(outer, 0, blocks, ForType::Serial, loop);

        std::vector<Stmt> main, vectors;
        std::vector<Expr> part_loads, lane_loads;
        for (int j = 0; j < accumulators; j++) {
            main.push_back(Store::make(parts, Broadcast::make(make_zero(t), lanes), Ramp::make(j * lanes, 1, lanes)));
            part_loads.push_back(Load::make(t.with_lanes(lanes), parts, Ramp::make(j * lanes, 1, lanes)));
        }
        Stmt vectorized = simplify(vectorize_loops(unroll_loops(loop)));
        if (!dense(vectorized)) return Stmt();
        main.push_back(vectorized);
        main.push_back(Store::make(lane_sums, tree_sum(part_loads, 0, part_loads.size()), Ramp::make(0, 1, lanes)));
        for (int j = 0; j < lanes; j++) lane_loads.push_back(Load::make(t, lane_sums, j));
        main.push_back(Store::make(store->name, Load::make(t, store->name, store->index) + tree_sum(lane_loads, 0, lanes),
                                   store->index));
        Stmt split = Allocate::make(parts, t, block, Allocate::make(lane_sums, t, lanes, Block::make(main)));
        split = IfThenElse::make(block <= n, split);
        // The remainder: the loop as it was, over the terms the main part left.
        Stmt tail = For::make(op->name, simplify(op->min + done), simplify(n - done), op->for_type, l.body);
        return LetStmt::make(op->name + ".n", max(op->extent, 0), Block::make({split, tail}));
    }
};

}  // namespace

Stmt split_float_sums(const Stmt &s, const Target &target) { return SplitSums(target).mutate(s); }

}  // namespace internal
}  // namespace kiln
