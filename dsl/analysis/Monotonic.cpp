#include "Monotonic.h"

#include "ir/Simplify.h"
#include "ir/Substitute.h"

namespace kiln {
namespace internal {

bool constant_step(const Expr &e, const std::string &v, int64_t &step) {
    Expr next = substitute(v, Variable::make(Int(32), v) + 1, e);
    Expr d = simplify(next - e);
    const int64_t *c = as_const_int(d);
    if (!c) return false;
    step = *c;
    return true;
}

namespace {

Monotonic flip(Monotonic m) {
    if (m == Monotonic::Increasing) return Monotonic::Decreasing;
    if (m == Monotonic::Decreasing) return Monotonic::Increasing;
    return m;
}

Monotonic both(Monotonic a, Monotonic b) {
    if (a == Monotonic::Constant) return b;
    if (b == Monotonic::Constant || a == b) return a;
    return Monotonic::Unknown;
}

// m scaled by the constant c (Unknown if c is not a constant).
Monotonic scaled(Monotonic m, const Expr &c) {
    const int64_t *k = as_const_int(c);
    if (!k) return Monotonic::Unknown;
    if (*k == 0) return Monotonic::Constant;
    return *k > 0 ? m : flip(m);
}

}  // namespace

Monotonic monotonic(const Expr &e, const std::string &v) {
    if (!expr_uses_var(e, v)) return Monotonic::Constant;
    if (!e.type().is_int() || e.type().bits() < 32 || !e.type().is_scalar()) return Monotonic::Unknown;
    if (const auto *var = e.as<Variable>()) return var->name == v ? Monotonic::Increasing : Monotonic::Constant;
    if (const auto *a = e.as<Add>()) return both(monotonic(a->a, v), monotonic(a->b, v));
    if (const auto *s = e.as<Sub>()) return both(monotonic(s->a, v), flip(monotonic(s->b, v)));
    if (const auto *m = e.as<Mul>()) {
        if (!expr_uses_var(m->b, v)) return scaled(monotonic(m->a, v), m->b);
        if (!expr_uses_var(m->a, v)) return scaled(monotonic(m->b, v), m->a);
        return Monotonic::Unknown;
    }
    if (const auto *d = e.as<Div>()) {
        if (expr_uses_var(d->b, v)) return Monotonic::Unknown;
        return scaled(monotonic(d->a, v), d->b);  // rounds down: keeps the direction, or flips it for c < 0
    }
    if (const auto *m = e.as<Min>()) return both(monotonic(m->a, v), monotonic(m->b, v));
    if (const auto *m = e.as<Max>()) return both(monotonic(m->a, v), monotonic(m->b, v));
    if (const auto *s = e.as<Select>()) {
        if (expr_uses_var(s->condition, v)) return Monotonic::Unknown;
        return both(monotonic(s->true_value, v), monotonic(s->false_value, v));
    }
    return Monotonic::Unknown;
}

}  // namespace internal
}  // namespace kiln
