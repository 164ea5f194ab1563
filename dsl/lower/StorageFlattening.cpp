#include "StorageFlattening.h"

#include <map>

#include "ir/IRVisitor.h"

namespace kiln {
namespace internal {

namespace {

class Flatten : public IRMutator {
public:
    explicit Flatten(const Environment &e) : env(e) {}

protected:
    const Environment &env;
    std::map<std::string, std::vector<Expr>> folds;  // realized Funcs with their fold factors

    Expr flat_index(const std::string &name, const std::vector<Expr> &args) {
        Expr idx;
        auto it = folds.find(name);
        for (size_t d = 0; d < args.size(); d++) {
            std::string dn = std::to_string(d);
            Expr a = args[d];
            if (it != folds.end() && it->second[d].defined()) a = a % it->second[d];
            Expr term = a - make_var(name + ".min." + dn);
            if (d > 0) term = term * make_var(name + ".stride." + dn);
            idx = idx.defined() ? idx + term : term;
        }
        return idx.defined() ? idx : Expr(0);
    }

    Stmt visit(const Realize *op) override {
        int n = (int)op->types.size();
        for (int i = 0; i < n; i++) folds[tuple_buffer_name(op->name, i, n)] = op->fold_factors;
        Stmt body = mutate(op->body);
        for (int i = 0; i < n; i++) folds.erase(tuple_buffer_name(op->name, i, n));
        // One buffer per Tuple element, each with its own min/extent/stride
        // lets (as outputs have one halide_buffer_t per element).
        Stmt s = body;
        for (int i = n - 1; i >= 0; i--) s = allocate(tuple_buffer_name(op->name, i, n), op->types[i], *op, s);
        return s;
    }
    Stmt allocate(const std::string &name, Type type, const Realize &r, Stmt body) {
        Expr size = 1;
        std::vector<std::pair<std::string, Expr>> lets;
        for (size_t d = 0; d < r.bounds.size(); d++) {
            std::string dn = std::to_string(d);
            bool folded = r.fold_factors[d].defined();
            Expr extent = folded ? r.fold_factors[d] : r.bounds[d].extent;
            lets.push_back({name + ".min." + dn, folded ? Expr(0) : r.bounds[d].min});
            lets.push_back({name + ".extent." + dn, extent});
            lets.push_back({name + ".stride." + dn, d == 0 ? Expr(1) : make_var(name + ".stride." + std::to_string(d - 1)) *
                                                                       make_var(name + ".extent." + std::to_string(d - 1))});
            size = size * make_var(name + ".extent." + dn);
        }
        Stmt s = Allocate::make(name, type, size, body);
        for (auto it = lets.rbegin(); it != lets.rend(); ++it) s = LetStmt::make(it->first, it->second, s);
        return s;
    }
    // A Tuple's values are all computed before any is stored: an update
    // such as f(x) = {select(c, v, f(x)[0]), select(c, i, f(x)[1])} reads
    // the old values of every element.
    Stmt visit(const Provide *op) override {
        int n = (int)op->values.size();
        std::vector<Expr> args;
        for (const auto &a : op->args) args.push_back(mutate(a));
        if (n == 1) return Store::make(op->name, mutate(op->values[0]), flat_index(op->name, args));
        std::vector<Stmt> stores;
        for (int i = 0; i < n; i++) {
            std::string b = tuple_buffer_name(op->name, i, n);
            stores.push_back(Store::make(b, make_var(b + ".value", op->values[i].type()), flat_index(b, args)));
        }
        Stmt s = Block::make(stores);
        for (int i = n - 1; i >= 0; i--) s = LetStmt::make(tuple_buffer_name(op->name, i, n) + ".value", mutate(op->values[i]), s);
        return s;
    }
    Expr visit(const Call *op) override {
        if (op->call_type == Call::PureExtern) return IRMutator::visit(op);
        std::vector<Expr> args;
        for (const auto &a : op->args) args.push_back(mutate(a));
        std::string name = op->name;
        if (op->call_type == Call::Func) {
            auto it = env.find(op->name);
            int n = it == env.end() ? 1 : it->second->num_values();
            internal_assert(op->value_index < n) << "element " << op->value_index << " of " << op->name;
            name = tuple_buffer_name(op->name, op->value_index, n);
        }
        return Load::make(op->type, name, flat_index(name, args));
    }
};

}  // namespace

Stmt storage_flattening(const Stmt &s, const Environment &env) { return Flatten(env).mutate(s); }

}  // namespace internal
}  // namespace kiln
