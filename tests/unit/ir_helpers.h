// Helpers shared by the unit and lower test tiers: short constructors for
// hand-built IR; a tiny reference interpreter of integer expressions with the
// semantics IR.h states (Euclidean division and remainder, x / 0 == x % 0 ==
// 0); and a seeded generator of random int32 expressions over a few variables
// (for the simplifier and bounds property tests).
#pragma once
#include <cstdint>
#include <map>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

#include "ir/IR.h"
#include "ir/IRPrinter.h"

namespace kiln_test {

using kiln::Expr;
using kiln::Stmt;
namespace ki = kiln::internal;

inline Expr var(const std::string &name, kiln::Type t = kiln::Int(32)) { return ki::Variable::make(t, name); }
inline Expr u8(int v) { return ki::UIntImm::make(kiln::UInt(8), (uint64_t)v); }
inline Expr f32(double v) { return ki::FloatImm::make(kiln::Float(32), v); }
inline Stmt loop(const std::string &name, Expr min, Expr extent, Stmt body,
                 kiln::ForType t = kiln::ForType::Serial) {
    return ki::For::make(name, std::move(min), std::move(extent), t, std::move(body));
}

// a == (a / b) * b + a % b with 0 <= a % b < |b|; zero divisor gives zero.
inline int64_t euclid_div(int64_t a, int64_t b) {
    if (b == 0) return 0;
    int64_t q = a / b, r = a % b;
    if (r < 0) q = b > 0 ? q - 1 : q + 1;
    return q;
}
inline int64_t euclid_mod(int64_t a, int64_t b) {
    if (b == 0) return 0;
    int64_t r = a % b;
    if (r < 0) r += b > 0 ? b : -b;
    return r;
}

// Evaluates scalar integer and bool expressions in 64 bits; `overflow` is set
// when an intermediate value leaves the int32 range (the simplifier may then
// legitimately disagree, as it assumes index arithmetic does not overflow).
class Interpreter {
public:
    std::map<std::string, int64_t> env;
    bool overflow = false;

    int64_t eval(const Expr &e) {
        using namespace kiln::internal;
        if (const int64_t *c = kiln::as_const_int(e)) return *c;
        if (const auto *v = e.as<Variable>()) {
            auto it = env.find(v->name);
            if (it == env.end()) throw std::runtime_error("unbound variable " + v->name);
            return it->second;
        }
        // + - * of values that already left int32 may leave int64 too: flagged, never undefined.
        int64_t r;
        if (const auto *op = e.as<Add>()) return check(__builtin_add_overflow(eval(op->a), eval(op->b), &r), &r);
        if (const auto *op = e.as<Sub>()) return check(__builtin_sub_overflow(eval(op->a), eval(op->b), &r), &r);
        if (const auto *op = e.as<Mul>()) return check(__builtin_mul_overflow(eval(op->a), eval(op->b), &r), &r);
        if (const auto *op = e.as<Div>()) return euclid_div(eval(op->a), eval(op->b));
        if (const auto *op = e.as<Mod>()) return euclid_mod(eval(op->a), eval(op->b));
        if (const auto *op = e.as<Min>()) return std::min(eval(op->a), eval(op->b));
        if (const auto *op = e.as<Max>()) return std::max(eval(op->a), eval(op->b));
        if (const auto *op = e.as<EQ>()) return eval(op->a) == eval(op->b);
        if (const auto *op = e.as<NE>()) return eval(op->a) != eval(op->b);
        if (const auto *op = e.as<LT>()) return eval(op->a) < eval(op->b);
        if (const auto *op = e.as<LE>()) return eval(op->a) <= eval(op->b);
        if (const auto *op = e.as<GT>()) return eval(op->a) > eval(op->b);
        if (const auto *op = e.as<GE>()) return eval(op->a) >= eval(op->b);
        if (const auto *op = e.as<And>()) return (eval(op->a) != 0) & (eval(op->b) != 0);
        if (const auto *op = e.as<Or>()) return (eval(op->a) != 0) | (eval(op->b) != 0);
        if (const auto *op = e.as<Not>()) return eval(op->a) == 0;
        if (const auto *op = e.as<Select>()) {
            int64_t c = eval(op->condition), t = eval(op->true_value), f = eval(op->false_value);
            return c ? t : f;
        }
        if (const auto *op = e.as<Let>()) {
            std::map<std::string, int64_t> outer = env;
            env[op->name] = eval(op->value);
            int64_t r = eval(op->body);
            env = outer;
            return r;
        }
        if (const auto *op = e.as<Cast>()) {
            int64_t v = eval(op->value);
            if (op->type == kiln::Int(32)) return (int32_t)v;
        }
        throw std::runtime_error("interpreter: unsupported expression " + kiln::to_string(e));
    }

private:
    // The result *v of an operation that reported whether it left int64.
    int64_t check(bool left_int64, const int64_t *v) {
        if (left_int64 || *v > INT32_MAX || *v < INT32_MIN) overflow = true;
        return *v;
    }
};

// Random int32 expressions over the given variables, with small constants.
class RandomExprs {
public:
    enum Divisors {
        NonNegativeConstOrPositive,  // a constant in [0, 6], or max(e, 1)
        AnyExpr,                     // any random subexpression (negative ones too)
    };

    RandomExprs(uint32_t seed, std::vector<std::string> vars, Divisors d = NonNegativeConstOrPositive)
        : rng(seed), names(std::move(vars)), divisors(d) {}

    int pick(int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng); }

    Expr gen_int(int depth) {
        using namespace kiln::internal;
        if (depth <= 0 || pick(0, 4) == 0) {
            if (pick(0, 1)) return Variable::make(kiln::Int(32), names[pick(0, (int)names.size() - 1)]);
            return Expr(pick(-5, 5));
        }
        Expr a = gen_int(depth - 1);
        switch (pick(0, 7)) {
        case 0: return Add::make(a, gen_int(depth - 1));
        case 1: return Sub::make(a, gen_int(depth - 1));
        case 2: return Mul::make(a, gen_int(depth - 1));
        case 3: return Div::make(a, divisor(depth - 1));
        case 4: return Mod::make(a, divisor(depth - 1));
        case 5: return Min::make(a, gen_int(depth - 1));
        case 6: return Max::make(a, gen_int(depth - 1));
        default: return Select::make(gen_bool(depth - 1), a, gen_int(depth - 1));
        }
    }

    Expr gen_bool(int depth) {
        using namespace kiln::internal;
        if (depth > 1 && pick(0, 4) == 0) {
            switch (pick(0, 2)) {
            case 0: return And::make(gen_bool(depth - 1), gen_bool(depth - 1));
            case 1: return Or::make(gen_bool(depth - 1), gen_bool(depth - 1));
            default: return Not::make(gen_bool(depth - 1));
            }
        }
        Expr a = gen_int(depth - 1), b = gen_int(depth - 1);
        switch (pick(0, 5)) {
        case 0: return EQ::make(a, b);
        case 1: return NE::make(a, b);
        case 2: return LT::make(a, b);
        case 3: return LE::make(a, b);
        case 4: return GT::make(a, b);
        default: return GE::make(a, b);
        }
    }

private:
    std::mt19937 rng;
    std::vector<std::string> names;
    Divisors divisors;

    Expr divisor(int depth) {
        if (divisors == AnyExpr) return gen_int(depth);
        if (pick(0, 2)) return Expr(pick(0, 6));
        return ki::Max::make(gen_int(depth), Expr(1));
    }
};

}  // namespace kiln_test
