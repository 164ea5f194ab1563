#include "StorageFlattening.h"

#include <map>

#include "ir/IRVisitor.h"

namespace kiln {
namespace internal {

namespace {

Expr var(const std::string &n) { return Variable::make(Int(32), n); }

class Flatten : public IRMutator {
protected:
    std::map<std::string, std::vector<Expr>> folds;  // realized Funcs with their fold factors

    Expr flat_index(const std::string &name, const std::vector<Expr> &args) {
        Expr idx;
        auto it = folds.find(name);
        for (size_t d = 0; d < args.size(); d++) {
            std::string dn = std::to_string(d);
            Expr a = args[d];
            if (it != folds.end() && it->second[d].defined()) a = a % it->second[d];
            Expr term = a - var(name + ".min." + dn);
            if (d > 0) term = term * var(name + ".stride." + dn);
            idx = idx.defined() ? idx + term : term;
        }
        return idx.defined() ? idx : Expr(0);
    }

    Stmt visit(const Realize *op) override {
        folds[op->name] = op->fold_factors;
        Stmt body = mutate(op->body);
        folds.erase(op->name);
        int n = (int)op->bounds.size();
        Expr size = 1;
        std::vector<std::pair<std::string, Expr>> lets;
        for (int d = 0; d < n; d++) {
            std::string dn = std::to_string(d);
            bool folded = op->fold_factors[d].defined();
            Expr extent = folded ? op->fold_factors[d] : op->bounds[d].extent;
            lets.push_back({op->name + ".min." + dn, folded ? Expr(0) : op->bounds[d].min});
            lets.push_back({op->name + ".extent." + dn, extent});
            lets.push_back({op->name + ".stride." + dn, d == 0 ? Expr(1) : var(op->name + ".stride." + std::to_string(d - 1)) *
                                                                         var(op->name + ".extent." + std::to_string(d - 1))});
            size = size * var(op->name + ".extent." + dn);
        }
        Stmt s = Allocate::make(op->name, op->type, size, body);
        for (auto it = lets.rbegin(); it != lets.rend(); ++it) s = LetStmt::make(it->first, it->second, s);
        return s;
    }
    Stmt visit(const Provide *op) override {
        Expr v = mutate(op->value);
        std::vector<Expr> args;
        for (const auto &a : op->args) args.push_back(mutate(a));
        return Store::make(op->name, v, flat_index(op->name, args));
    }
    Expr visit(const Call *op) override {
        if (op->call_type == Call::PureExtern) return IRMutator::visit(op);
        std::vector<Expr> args;
        for (const auto &a : op->args) args.push_back(mutate(a));
        return Load::make(op->type, op->name, flat_index(op->name, args));
    }
};

}  // namespace

Stmt storage_flattening(const Stmt &s) { return Flatten().mutate(s); }

}  // namespace internal
}  // namespace kiln
