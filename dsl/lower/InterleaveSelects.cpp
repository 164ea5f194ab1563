#include "InterleaveSelects.h"

#include "ir/IRVisitor.h"
#include "ir/Simplify.h"

namespace kiln {
namespace internal {

namespace {

struct NotHalvable {};  // thrown when an expression's lanes cannot be split by parity

// The lanes parity, parity + 2, ... of a vector expression, as an
// expression of half the lanes: ramp(b, s, N) -> ramp(b + parity * s, 2 * s,
// N / 2), broadcasts narrower, the rest rebuilt from its halved operands.
class HalfLanes : public IRMutator {
public:
    explicit HalfLanes(int p) : parity(p) {}
    using IRMutator::mutate;
    Expr mutate(const Expr &e) override { return e.type().is_scalar() ? e : IRMutator::mutate(e); }

protected:
    int parity;
    using IRMutator::visit;
    Expr visit(const Broadcast *op) override { return Broadcast::make(op->value, op->lanes / 2); }
    Expr visit(const Ramp *op) override {
        Expr base = parity ? op->base + op->stride : op->base;
        return Ramp::make(base, op->stride * 2, op->lanes / 2);
    }
    Expr visit(const Cast *op) override {
        Expr v = mutate(op->value);
        return Cast::make(op->type.with_lanes(v.type().lanes()), v);
    }
    Expr visit(const Variable *) override { throw NotHalvable(); }  // a vector let's lanes
    Expr visit(const Let *op) override {
        if (op->value.type().is_vector()) throw NotHalvable();
        return IRMutator::visit(op);
    }
    Expr visit(const Call *op) override {
        if (op->call_type != Call::PureExtern) throw NotHalvable();
        if (op->name == "interleave_vectors") return op->args[parity];
        return IRMutator::visit(op);
    }
};

// Lanes read one at a time: those of vector loads that are neither dense
// (a ramp of stride 1) nor uniform (a broadcast index).
class LaneByLaneReads : public IRVisitor {
public:
    int64_t lanes = 0;

protected:
    using IRVisitor::visit;
    void visit(const Load *op) override {
        const Ramp *r = op->index.as<Ramp>();
        if (op->type.is_vector() && !op->index.as<Broadcast>() && !(r && is_one(r->stride)))
            lanes += op->type.lanes();
        IRVisitor::visit(op);
    }
};

int64_t lane_by_lane_reads(const Expr &e) {
    LaneByLaneReads r;
    r.include(e);
    return r.lanes;
}

bool uniform(const Expr &c) { return c.type().is_scalar() || c.as<Broadcast>(); }

class InterleaveSelects : public IRMutator {
protected:
    using IRMutator::visit;
    Expr visit(const Select *op) override {
        const int n = op->type.lanes();
        if (!op->condition.type().is_vector() || op->type.is_bool() || n < 4 || (n & (n - 1)) != 0)
            return IRMutator::visit(op);
        Expr halves[2];
        try {
            for (int p = 0; p < 2; p++) halves[p] = simplify(HalfLanes(p).mutate(Expr(op)));
        } catch (const NotHalvable &) {
            return IRMutator::visit(op);
        }
        for (const Expr &h : halves) {
            const Select *s = h.as<Select>();
            if (s && !uniform(s->condition)) return IRMutator::visit(op);
        }
        if (lane_by_lane_reads(halves[0]) + lane_by_lane_reads(halves[1]) >= lane_by_lane_reads(Expr(op)))
            return IRMutator::visit(op);
        return Call::make(op->type, "interleave_vectors", {mutate(halves[0]), mutate(halves[1])}, Call::PureExtern);
    }
};

}  // namespace

Stmt interleave_parity_selects(const Stmt &s) { return InterleaveSelects().mutate(s); }

}  // namespace internal
}  // namespace kiln
