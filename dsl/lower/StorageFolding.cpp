#include "StorageFolding.h"

#include "SlidingWindow.h"
#include "ir/IRVisitor.h"
#include "ir/Simplify.h"

namespace kiln {
namespace internal {

namespace {

class Fold : public IRMutator {
public:
    explicit Fold(const Environment &e) : env(e) {}

protected:
    const Environment &env;
    Stmt visit(const Realize *op) override {
        Stmt body = mutate(op->body);
        auto it = env.find(op->name);
        SlidingDim d;
        std::vector<Expr> folds = op->fold_factors;
        if (it != env.end() && find_sliding_dim(body, *it->second, d)) {
            // The window before sliding: what one iteration reads.
            Expr extent = simplify(d.max - d.min + 1);
            if (const int64_t *c = as_const_int(extent)) {
                int64_t f = 1;
                while (f < *c) f *= 2;
                folds[d.dim] = make_const(Int(32), f);
            }
        }
        if (body.same_as(op->body) && folds.size() == op->fold_factors.size()) {
            bool same = true;
            for (size_t i = 0; i < folds.size(); i++) same &= folds[i].same_as(op->fold_factors[i]);
            if (same) return Stmt(op);
        }
        return Realize::make(op->name, op->types, op->bounds, body, folds);
    }
};

}  // namespace

Stmt storage_folding(const Stmt &s, const Environment &env) { return Fold(env).mutate(s); }

}  // namespace internal
}  // namespace kiln
