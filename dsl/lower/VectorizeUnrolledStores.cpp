#include "VectorizeUnrolledStores.h"

#include "ir/IRVisitor.h"
#include "ir/Simplify.h"
#include "ir/Substitute.h"
#include "kiln/IROperator.h"

#include <algorithm>
#include <map>

namespace kiln {
namespace internal {

namespace {

// Whether the body of an unrolled loop over `var` is lanes: lets and
// stores only, each store's index (the lets substituted) moving by one
// with var, one store per buffer, and loads of stored buffers only at the
// store's own index.
class Lanes : public IRVisitor {
public:
    explicit Lanes(const std::string &v) : var(v) {}
    bool ok = true;
    int widest = 0;  // bytes of the widest value stored
    bool check(const Stmt &body) {
        include(body);
        for (const auto &[buffer, index] : loads)
            if (stores.count(buffer) && !equal(index, stores.at(buffer))) ok = false;
        return ok && !stores.empty();
    }

private:
    using IRVisitor::visit;
    const std::string var;
    std::map<std::string, Expr> lets;          // substituted values
    std::map<std::string, Expr> stores;        // buffer -> index
    std::multimap<std::string, Expr> loads;    // buffer -> index
    void visit(const LetStmt *op) override {
        include(op->value);
        lets[op->name] = substitute(lets, op->value);
        include(op->body);
        lets.erase(op->name);
    }
    void visit(const Let *op) override {
        include(op->value);
        lets[op->name] = substitute(lets, op->value);
        include(op->body);
        lets.erase(op->name);
    }
    void visit(const Store *op) override {
        IRVisitor::visit(op);
        Expr index = simplify(substitute(lets, op->index));
        Expr step = simplify(substitute(var, Variable::make(Int(32), var) + 1, index) - index);
        if (!op->value.type().is_scalar() || !is_one(step) || stores.count(op->name)) ok = false;
        widest = std::max(widest, op->value.type().bytes());
        stores[op->name] = index;
    }
    void visit(const Load *op) override {
        IRVisitor::visit(op);
        loads.emplace(op->name, simplify(substitute(lets, op->index)));
    }
    void visit(const For *) override { ok = false; }
    void visit(const IfThenElse *) override { ok = false; }
    void visit(const Allocate *) override { ok = false; }
    void visit(const AssertStmt *) override { ok = false; }
    void visit(const Call *op) override {
        ok &= op->call_type == Call::PureExtern;
        IRVisitor::visit(op);
    }
};

class VectorizeUnrolled : public IRMutator {
    using IRMutator::visit;
    int vectorized_depth = 0;  // inside a vectorized loop: leave the unrolled ones
    Stmt visit(const For *op) override {
        vectorized_depth += op->for_type == ForType::Vectorized;
        Stmt s = IRMutator::visit(op);
        vectorized_depth -= op->for_type == ForType::Vectorized;
        const int64_t *n = as_const_int(op->extent);
        if (op->for_type != ForType::Unrolled || vectorized_depth > 0 || !n || *n < 2 || *n > 64 || (*n & (*n - 1)))
            return s;
        const For *f = s.as<For>();
        Lanes lanes(op->name);
        // A vector of fewer than 16 bytes (two floats) fills no register.
        if (!lanes.check(f->body) || *n * lanes.widest < 16) return s;
        return For::make(f->name, f->min, f->extent, ForType::Vectorized, f->body);
    }
};

}  // namespace

Stmt vectorize_unrolled_stores(const Stmt &s) {
    return VectorizeUnrolled().mutate(s);
}

}  // namespace internal
}  // namespace kiln
