// Reverse accumulation over one expression (ReverseAccumulate.h).
#include "autodiff/ReverseAccumulate.h"

#include <unordered_map>
#include <unordered_set>

#include "ir/IRVisitor.h"
#include "ir/Substitute.h"

namespace kiln {
namespace internal {

namespace {

class InlineLets : public IRMutator {
protected:
    using IRMutator::visit;
    Expr visit(const Let *op) override { return mutate(substitute(op->name, mutate(op->value), op->body)); }
};

// Nodes in post order (each after all its operands), each once.
class PostOrder : public IRVisitor {
public:
    std::vector<Expr> nodes;

    void include(const Expr &e) override {
        if (!e.defined() || !seen.insert(e.get()).second) return;
        IRVisitor::include(e);
        nodes.push_back(e);
    }

protected:
    using IRVisitor::visit;
    std::unordered_set<const void *> seen;
    void visit(const Call *op) override {
        if (op->call_type == Call::PureExtern) IRVisitor::visit(op);  // Func and image args are indices
    }
};

bool is_zero_select_branch(const Expr &e) { return is_zero(e); }

// adjoint * factor (or / factor), moved inside a select that zeroes one side,
// so that a factor that is infinite or NaN where that side is not taken
// (1 / sqrt(x) of a guarded sqrt) cannot turn the zero into a NaN.
Expr scaled(const Expr &adjoint, const Expr &factor, bool divide) {
    if (const Select *s = adjoint.as<Select>()) {
        if (is_zero_select_branch(s->false_value))
            return Select::make(s->condition, scaled(s->true_value, factor, divide), s->false_value);
        if (is_zero_select_branch(s->true_value))
            return Select::make(s->condition, s->true_value, scaled(s->false_value, factor, divide));
    }
    return divide ? adjoint / factor : adjoint * factor;
}
Expr mul(const Expr &adjoint, const Expr &factor) { return scaled(adjoint, factor, false); }
Expr div(const Expr &adjoint, const Expr &factor) { return scaled(adjoint, factor, true); }
Expr when(const Expr &c, const Expr &adjoint) { return Select::make(c, adjoint, make_zero(adjoint.type())); }
Expr unless(const Expr &c, const Expr &adjoint) { return Select::make(c, make_zero(adjoint.type()), adjoint); }

class Accumulator {
public:
    Accumulator(std::string what, Expr self) : what(std::move(what)), self(std::move(self)) {}

    std::vector<LeafAdjoint> run(const Expr &value, const Expr &seed) {
        root = value.get();
        PostOrder order;
        order.include(value);
        adjoints[value.get()] = seed;
        std::vector<LeafAdjoint> leaves;
        for (auto it = order.nodes.rbegin(); it != order.nodes.rend(); ++it) {
            const Expr &e = *it;
            auto found = adjoints.find(e.get());
            if (found == adjoints.end() || !e.type().is_float()) continue;
            const Expr adj = found->second;
            if (const Call *c = e.as<Call>(); c && c->call_type != Call::PureExtern) {
                leaves.push_back({e, adj});
            } else if (const Variable *v = e.as<Variable>(); v && v->param && !v->param->is_buffer) {
                leaves.push_back({e, adj});
            } else {
                propagate(e, adj);
            }
        }
        return leaves;
    }

private:
    std::string what;
    Expr self;                  // reads the value being differentiated, or undefined
    const void *root = nullptr;  // that value
    std::unordered_map<const void *, Expr> adjoints;

    // Node e as a derivative uses it: the whole value read back from its
    // Func rather than computed again (exp(u)' = the value itself).
    Expr value_of(const Expr &e) const { return self.defined() && e.get() == root ? self : e; }

    void add(const Expr &operand, const Expr &adjoint) {
        if (!operand.type().is_float()) return;  // no gradient through integers and bools
        auto [it, fresh] = adjoints.emplace(operand.get(), adjoint);
        if (!fresh) it->second = it->second + adjoint;
    }

    void propagate(const Expr &e, const Expr &d) {
        if (const Add *op = e.as<Add>()) {
            add(op->a, d);
            add(op->b, d);
        } else if (const Sub *op = e.as<Sub>()) {
            add(op->a, d);
            add(op->b, -d);
        } else if (const Mul *op = e.as<Mul>()) {
            add(op->a, mul(d, op->b));
            add(op->b, mul(d, op->a));
        } else if (const Div *op = e.as<Div>()) {
            add(op->a, div(d, op->b));
            add(op->b, mul(-d, value_of(e) / op->b));  // -a / b^2 = -(a / b) / b
        } else if (const Mod *op = e.as<Mod>()) {
            // a % b = a - b * floor(a / b) for floats
            add(op->a, d);
            add(op->b, mul(-d, floor(op->a / op->b)));
        } else if (const Min *op = e.as<Min>()) {
            add(op->a, when(op->a <= op->b, d));
            add(op->b, unless(op->a <= op->b, d));
        } else if (const Max *op = e.as<Max>()) {
            add(op->a, when(op->a >= op->b, d));
            add(op->b, unless(op->a >= op->b, d));
        } else if (const Select *op = e.as<Select>()) {
            add(op->true_value, when(op->condition, d));
            add(op->false_value, unless(op->condition, d));
        } else if (const Cast *op = e.as<Cast>()) {
            add(op->value, Cast::make(op->value.type(), d));
        } else if (const Call *op = e.as<Call>()) {
            math(e, op, d);
        } else if (e.as<Load>() || e.as<Ramp>() || e.as<Broadcast>() || e.as<Let>()) {
            internal_error << "unexpected " << e << " in a definition being differentiated (" << what << ")";
        }
        // Constants and Vars: nothing to propagate to.
    }

    // The derivatives of the math functions of IROperator.h.
    void math(const Expr &e, const Call *op, const Expr &d) {
        const std::string &n = op->name;
        const Expr &x = op->args.empty() ? Expr() : op->args[0];
        Type t = e.type();
        const Expr v = value_of(e);
        if (n == "exp") {
            add(x, mul(d, v));
        } else if (n == "log") {
            add(x, div(d, x));
        } else if (n == "sqrt") {
            add(x, div(d, make_const(t, 2.0) * v));
        } else if (n == "sin") {
            add(x, mul(d, cos(x)));
        } else if (n == "cos") {
            add(x, mul(-d, sin(x)));
        } else if (n == "tan") {
            add(x, mul(d, make_one(t) + v * v));
        } else if (n == "asin") {
            add(x, div(d, sqrt(make_one(t) - x * x)));
        } else if (n == "acos") {
            add(x, div(-d, sqrt(make_one(t) - x * x)));
        } else if (n == "atan") {
            add(x, div(d, make_one(t) + x * x));
        } else if (n == "atan2") {  // atan2(y, x): d/dy = x / r^2, d/dx = -y / r^2
            const Expr &y = op->args[0], &xx = op->args[1];
            Expr r2 = xx * xx + y * y;
            add(y, div(mul(d, xx), r2));
            add(xx, div(mul(-d, y), r2));
        } else if (n == "sinh") {
            add(x, mul(d, cosh(x)));
        } else if (n == "cosh") {
            add(x, mul(d, sinh(x)));
        } else if (n == "tanh") {
            add(x, mul(d, make_one(t) - v * v));
        } else if (n == "asinh") {
            add(x, div(d, sqrt(x * x + make_one(t))));
        } else if (n == "acosh") {
            add(x, div(d, sqrt(x * x - make_one(t))));
        } else if (n == "atanh") {
            add(x, div(d, make_one(t) - x * x));
        } else if (n == "pow") {
            const Expr &y = op->args[1];
            add(x, mul(d, y * pow(x, y - make_one(t))));
            add(y, mul(d, v * log(x)));
        } else if (n == "stop_gradient") {
            // a constant to the derivative
        } else if (n == "floor" || n == "ceil" || n == "round" || n == "trunc" || n == "undef") {
            // piecewise constant: derivative zero (where it exists)
        } else {
            user_error << "Cannot differentiate " << what << ": it calls " << n << "(), which has no derivative in "
                       << "Kiln's autodiff (differentiable: + - * / %, min, max, select, casts between floats, exp, "
                       << "log, sqrt, pow, sin, cos, tan, asin, acos, atan, atan2, sinh, cosh, tanh, asinh, acosh, "
                       << "atanh; floor, ceil, round and trunc pass no gradient). Compute the "
                       << "value of " << n << "() in a Func of its own and leave it out of the gradient path";
        }
    }
};

}  // namespace

Expr inline_lets(const Expr &e) { return InlineLets().mutate(e); }

std::vector<LeafAdjoint> reverse_accumulate(const Expr &value, const Expr &seed, const std::string &what,
                                            const Expr &self) {
    return Accumulator(what, self).run(inline_lets(value), seed);
}

}  // namespace internal
}  // namespace kiln
