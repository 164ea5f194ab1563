#include "codegen/VectorSlots.h"

#include "ir/IRVisitor.h"
#include "kiln/IROperator.h"

namespace kiln {
namespace internal {

namespace {

// Every access to `name`: a dense vector of one lane count at a constant
// multiple of that count, or the allocation does not qualify.
class SlotAccesses : public IRVisitor {
public:
    explicit SlotAccesses(const std::string &name) : name(name) {}
    int lanes = 0;
    bool ok = true;

private:
    const std::string &name;
    using IRVisitor::visit;

    void access(const Type &t, const Expr &index) {
        if (t.is_scalar() && !t.is_bool() && as_const_int(index)) return;  // one lane of a slot
        const Ramp *ramp = index.as<Ramp>();
        const int64_t *base = ramp ? as_const_int(ramp->base) : nullptr;
        if (t.is_scalar() || t.is_bool() || !ramp || !is_one(ramp->stride) || !base ||
            (lanes != 0 && lanes != t.lanes()) || *base % t.lanes() != 0) {
            ok = false;
            return;
        }
        lanes = t.lanes();
    }
    void visit(const Load *op) override {
        if (op->name == name) access(op->type, op->index);
        IRVisitor::visit(op);
    }
    void visit(const Store *op) override {
        if (op->name == name) access(op->value.type(), op->index);
        IRVisitor::visit(op);
    }
    void visit(const Variable *op) override { ok &= op->name != name; }
    void visit(const Allocate *op) override {
        if (op->name == name) return;  // an inner allocation of the same name hides this one
        IRVisitor::visit(op);
    }
};

}  // namespace

int vector_slot_lanes(const Allocate *alloc) {
    const int64_t *size = as_const_int(alloc->size);
    if (!size || alloc->type.is_bool() || alloc->type.is_vector()) return 0;
    SlotAccesses a(alloc->name);
    a.include(alloc->body);
    return a.ok && a.lanes > 1 && *size % a.lanes == 0 ? a.lanes : 0;
}

bool scalars_at_constant_indices(const Allocate *alloc) {
    SlotAccesses a(alloc->name);
    a.include(alloc->body);
    return a.ok && a.lanes == 0;
}

}  // namespace internal
}  // namespace kiln
