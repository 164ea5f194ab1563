#include "DecideSpecializations.h"

#include <vector>

#include "ir/IRVisitor.h"
#include "kiln/IROperator.h"
#include "ir/Substitute.h"

namespace kiln {
namespace internal {

namespace {

class Decide : public IRMutator {
    struct Fact {
        Expr condition;
        bool value;
    };
    std::vector<Fact> facts;

    // Pushes `c` (and, when true, each of its conjuncts) as known; returns how many.
    size_t assume(const Expr &c, bool value) {
        facts.push_back({c, value});
        size_t n = 1;
        if (value) {
            if (const And *a = c.as<And>()) n += assume(a->a, true) + assume(a->b, true);
        }
        return n;
    }
    void forget(size_t n) { facts.resize(facts.size() - n); }

    const Fact *known(const Expr &c) const {
        for (auto it = facts.rbegin(); it != facts.rend(); ++it)
            if (equal(it->condition, c)) return &*it;
        return nullptr;
    }

public:
    using IRMutator::mutate;
    // A condition met again inside an expression (a select of bounds
    // inference) is a constant there too.
    Expr mutate(const Expr &e) override {
        if (e.defined() && e.type().is_bool() && !facts.empty())
            if (const Fact *f = known(e)) return make_bool(f->value);
        return IRMutator::mutate(e);
    }

protected:
    using IRMutator::visit;
    Stmt visit(const IfThenElse *op) override {
        if (const Fact *f = known(op->condition)) {
            if (f->value) return mutate(op->then_case);
            return op->else_case.defined() ? mutate(op->else_case) : Evaluate::make(0);
        }
        size_t n = assume(op->condition, true);
        Stmt then_case = mutate(op->then_case);
        forget(n);
        Stmt else_case;
        if (op->else_case.defined()) {
            n = assume(op->condition, false);
            else_case = mutate(op->else_case);
            forget(n);
        }
        if (then_case.same_as(op->then_case) && else_case.same_as(op->else_case)) return Stmt(op);
        return IfThenElse::make(op->condition, then_case, else_case);
    }
};

}  // namespace

Stmt decide_specializations(const Stmt &s) { return Decide().mutate(s); }

}  // namespace internal
}  // namespace kiln
