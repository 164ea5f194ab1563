#include "StorageFlattening.h"

#include <algorithm>
#include <map>
#include <numeric>

#include "ir/IRVisitor.h"
#include "kiln/IROperator.h"

namespace kiln {
namespace internal {

namespace {

class Flatten : public IRMutator {
public:
    explicit Flatten(const Environment &e) : env(e) {}

protected:
    const Environment &env;
    std::map<std::string, std::vector<Expr>> folds;  // realized Funcs with their fold factors
    std::map<std::string, size_t> innermost;         // realized Funcs whose storage starts with another dimension

    // The dimensions of Func `name`'s storage, innermost first (reorder_storage).
    std::vector<size_t> storage_order(const std::string &name, size_t dims) const {
        std::vector<size_t> order(dims);
        std::iota(order.begin(), order.end(), 0);
        auto f = env.find(name);
        const std::vector<std::string> &args = f == env.end() ? std::vector<std::string>() : f->second->args;
        if (f != env.end() && f->second->schedule.storage_dims.size() == dims)
            for (size_t k = 0; k < dims; k++)
                order[k] = std::find(args.begin(), args.end(), f->second->schedule.storage_dims[k]) - args.begin();
        return order;
    }

    Expr flat_index(const std::string &name, const std::vector<Expr> &args) {
        Expr idx;
        auto it = folds.find(name);
        auto in = innermost.find(name);
        const size_t unit = in == innermost.end() ? 0 : in->second;  // the dimension of stride 1
        for (size_t d = 0; d < args.size(); d++) {
            std::string dn = std::to_string(d);
            Expr a = args[d];
            if (it != folds.end() && it->second[d].defined()) a = a % it->second[d];
            Expr term = a - make_var(name + ".min." + dn);
            if (d != unit) term = term * make_var(name + ".stride." + dn);
            idx = idx.defined() ? idx + term : term;
        }
        return idx.defined() ? idx : Expr(0);
    }

    Stmt visit(const Realize *op) override {
        int n = (int)op->types.size();
        const std::vector<size_t> order = storage_order(op->name, op->bounds.size());
        internal_assert(op->in_output.empty() || (n == 1 && (order.empty() || order[0] == 0)))
            << "realize " << op->name << " in " << op->in_output << ": a Tuple or a reordered storage";
        for (int i = 0; i < n; i++) {
            folds[tuple_buffer_name(op->name, i, n)] = op->fold_factors;
            if (!order.empty() && order[0] != 0) innermost[tuple_buffer_name(op->name, i, n)] = order[0];
        }
        Stmt body = mutate(op->body);
        for (int i = 0; i < n; i++) {
            folds.erase(tuple_buffer_name(op->name, i, n));
            innermost.erase(tuple_buffer_name(op->name, i, n));
        }
        // One buffer per Tuple element, each with its own min/extent/stride
        // lets (as outputs have one halide_buffer_t per element).
        Stmt s = body;
        for (int i = n - 1; i >= 0; i--) s = allocate(tuple_buffer_name(op->name, i, n), op->types[i], *op, order, s);
        return s;
    }
    // Dimension order[k] is the k-th innermost in memory: its stride is the
    // product of the extents of order[0 .. k-1].
    Stmt allocate(const std::string &name, Type type, const Realize &r, const std::vector<size_t> &order, Stmt body) {
        Expr size = 1;
        std::vector<std::pair<std::string, Expr>> lets;
        for (size_t k = 0; k < order.size(); k++) {
            const size_t d = order[k];
            std::string dn = std::to_string(d), prev = k == 0 ? "" : std::to_string(order[k - 1]);
            bool folded = r.fold_factors[d].defined();
            Expr extent = folded ? r.fold_factors[d] : r.bounds[d].extent;
            lets.push_back({name + ".min." + dn, folded ? Expr(0) : r.bounds[d].min});
            lets.push_back({name + ".extent." + dn, extent});
            Expr stride = k == 0 ? Expr(1) : make_var(name + ".stride." + prev) * make_var(name + ".extent." + prev);
            // Storage that is an output's buffer when r.in_place holds (its
            // region is then the buffer's, so only the strides differ).
            if (k > 0 && !r.in_output.empty()) stride = select(r.in_place, make_var(r.in_output + ".stride." + dn), stride);
            lets.push_back({name + ".stride." + dn, stride});
            size = size * make_var(name + ".extent." + dn);
        }
        Stmt s = Allocate::make(name, type, size, body, r.in_output, r.in_place);
        for (auto it = lets.rbegin(); it != lets.rend(); ++it) s = LetStmt::make(it->first, it->second, s);
        return s;
    }
    // A Tuple's values are all computed before any is stored: an update
    // such as f(x) = {select(c, v, f(x)[0]), select(c, i, f(x)[1])} reads
    // the old values of every element.
    // An undef() value stores nothing (a Tuple element an update leaves alone).
    static bool undef(const Expr &e) {
        const Call *c = e.as<Call>();
        return c && c->call_type == Call::PureExtern && c->name == "undef";
    }
    Stmt visit(const Provide *op) override {
        int n = (int)op->values.size();
        std::vector<Expr> args;
        for (const auto &a : op->args) args.push_back(mutate(a));
        if (n == 1)
            return undef(op->values[0]) ? Evaluate::make(0)
                                        : Store::make(op->name, mutate(op->values[0]), flat_index(op->name, args));
        std::vector<Stmt> stores;
        for (int i = 0; i < n; i++) {
            std::string b = tuple_buffer_name(op->name, i, n);
            if (!undef(op->values[i]))
                stores.push_back(Store::make(b, make_var(b + ".value", op->values[i].type()), flat_index(b, args)));
        }
        Stmt s = stores.empty() ? Evaluate::make(0) : Block::make(stores);
        for (int i = n - 1; i >= 0; i--)
            if (!undef(op->values[i]))
                s = LetStmt::make(tuple_buffer_name(op->name, i, n) + ".value", mutate(op->values[i]), s);
        return s;
    }
    // prefetch(f(coordinates), extents...) -> prefetch("f", index, extent_0, stride_0, ...).
    Expr flatten_prefetch(const Call *op) {
        const Call *first = op->args[0].as<Call>();
        internal_assert(first && first->call_type != Call::PureExtern) << "prefetch of " << op->args[0];
        std::vector<Expr> coords;
        for (const auto &a : first->args) coords.push_back(mutate(a));
        std::vector<Expr> args = {StringImm::make(first->name), flat_index(first->name, coords)};
        for (size_t d = 1; d < op->args.size(); d++) {
            args.push_back(mutate(op->args[d]));
            args.push_back(make_var(first->name + ".stride." + std::to_string(d - 1)));
        }
        return Call::make(op->type, op->name, args, Call::PureExtern);
    }
    Expr visit(const Call *op) override {
        if (op->call_type == Call::PureExtern && op->name == "prefetch") return flatten_prefetch(op);
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
