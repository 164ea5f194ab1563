#include "EvaluateExpr.h"

#include <algorithm>
#include <cmath>

#include "ir/IR.h"
#include "kiln/IROperator.h"

namespace kiln {
namespace internal {

namespace {

int64_t euclid_div(int64_t a, int64_t b) {
    if (b == 0) return 0;
    int64_t q = a / b, r = a % b;
    if (r < 0) q += b > 0 ? -1 : 1;
    return q;
}

}  // namespace

template<typename Node, typename Holds>
bool ExprEvaluator::compare(const Node *op, int64_t &r, Holds holds) {
    if (op->a.type().is_float()) {
        double x, y;
        return eval_float(op->a, x) && eval_float(op->b, y) && (r = holds(x, y), true);
    }
    int64_t x, y;
    return eval(op->a, x) && eval(op->b, y) && (r = holds(x, y), true);
}

bool ExprEvaluator::eval_float(const Expr &e, double &r) {
    if (!e.type().is_float()) {
        int64_t i;
        return eval(e, i) && (r = (double)i, true);
    }
    if (e.type().bits() < 32) return false;
    auto rounded = [&](double v) { return r = e.type().bits() == 32 ? (double)(float)v : v, true; };
    if (const auto *f = e.as<FloatImm>()) return rounded(f->value);
    if (const auto *v = e.as<Variable>()) {
        auto it = floats.find(v->name);
        const FloatImm *f = it == floats.end() ? nullptr : it->second.as<FloatImm>();
        return f && rounded(f->value);
    }
    double a, b;
    auto two = [&](const Expr &x, const Expr &y) { return eval_float(x, a) && eval_float(y, b); };
    if (const auto *op = e.as<Add>()) return two(op->a, op->b) && rounded(a + b);
    if (const auto *op = e.as<Sub>()) return two(op->a, op->b) && rounded(a - b);
    if (const auto *op = e.as<Mul>()) return two(op->a, op->b) && rounded(a * b);
    if (const auto *op = e.as<Div>()) return two(op->a, op->b) && b != 0 && rounded(a / b);
    if (const auto *op = e.as<Min>()) return two(op->a, op->b) && rounded(std::min(a, b));
    if (const auto *op = e.as<Max>()) return two(op->a, op->b) && rounded(std::max(a, b));
    if (const auto *op = e.as<Cast>()) return eval_float(op->value, a) && rounded(a);
    if (const auto *op = e.as<Select>()) {
        int64_t c;
        return eval(op->condition, c) && eval_float(c ? op->true_value : op->false_value, r);
    }
    if (const auto *op = e.as<Call>()) {
        if (op->call_type != Call::PureExtern || op->args.size() != 1 || !eval_float(op->args[0], a)) return false;
        if (op->name == "floor") return rounded(std::floor(a));
        if (op->name == "ceil") return rounded(std::ceil(a));
        if (op->name == "round") return rounded(std::nearbyint(a));
        if (op->name == "trunc") return rounded(std::trunc(a));
        if (op->name == "sqrt") return rounded(std::sqrt(a));
    }
    return false;
}

bool ExprEvaluator::eval(const Expr &e, int64_t &r) {
    if (const int64_t *c = as_const_int(e)) return r = *c, true;
    if (const auto *v = e.as<Variable>()) {
        auto it = values.find(v->name);
        if (it == values.end()) return false;
        r = it->second;
        return true;
    }
    int64_t a, b;
    auto two = [&](const Expr &x, const Expr &y) { return eval(x, a) && eval(y, b); };
    if (const auto *op = e.as<Cast>(); op && op->value.type().is_float() && !op->type.is_float()) {
        double d;  // truncated toward zero, as C converts
        if (!eval_float(op->value, d) || !std::isfinite(d) || std::fabs(d) > 9.0e18) return false;
        return r = (int64_t)d, true;
    }
    if (const auto *op = e.as<Add>()) return two(op->a, op->b) && (r = a + b, true);
    if (const auto *op = e.as<Sub>()) return two(op->a, op->b) && (r = a - b, true);
    if (const auto *op = e.as<Mul>()) return two(op->a, op->b) && (r = a * b, true);
    if (const auto *op = e.as<Div>()) return two(op->a, op->b) && (r = euclid_div(a, b), true);
    if (const auto *op = e.as<Mod>()) return two(op->a, op->b) && (r = b == 0 ? 0 : a - euclid_div(a, b) * b, true);
    if (const auto *op = e.as<Min>()) return two(op->a, op->b) && (r = std::min(a, b), true);
    if (const auto *op = e.as<Max>()) return two(op->a, op->b) && (r = std::max(a, b), true);
    if (const auto *op = e.as<EQ>()) return compare(op, r, [](auto x, auto y) { return x == y; });
    if (const auto *op = e.as<NE>()) return compare(op, r, [](auto x, auto y) { return x != y; });
    if (const auto *op = e.as<LT>()) return compare(op, r, [](auto x, auto y) { return x < y; });
    if (const auto *op = e.as<LE>()) return compare(op, r, [](auto x, auto y) { return x <= y; });
    if (const auto *op = e.as<GT>()) return compare(op, r, [](auto x, auto y) { return x > y; });
    if (const auto *op = e.as<GE>()) return compare(op, r, [](auto x, auto y) { return x >= y; });
    if (const auto *op = e.as<And>()) return two(op->a, op->b) && (r = a && b, true);
    if (const auto *op = e.as<Or>()) return two(op->a, op->b) && (r = a || b, true);
    if (const auto *op = e.as<Not>()) return eval(op->a, a) && (r = !a, true);
    if (const auto *op = e.as<Select>()) {
        int64_t c;
        if (!eval(op->condition, c)) return false;
        return eval(c ? op->true_value : op->false_value, r);
    }
    if (const auto *op = e.as<Cast>()) return !op->type.is_float() && !op->value.type().is_float() && eval(op->value, r);
    return false;
}

}  // namespace internal
}  // namespace kiln
