#include "StripStopGradient.h"

#include "ir/IRVisitor.h"

namespace kiln {
namespace internal {

namespace {

class StripStopGradient : public IRMutator {
    using IRMutator::visit;
    Expr visit(const Call *op) override {
        if (op->call_type == Call::PureExtern && op->name == "stop_gradient") return mutate(op->args[0]);
        return IRMutator::visit(op);
    }
};

}  // namespace

Stmt strip_stop_gradient(const Stmt &s) { return StripStopGradient().mutate(s); }

}  // namespace internal
}  // namespace kiln
