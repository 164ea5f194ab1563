// The lowered-IR interpreter (ir_interpreter.h): a tree walk over the
// statement with a scope of variable values and a table of buffers.
#include "ir_interpreter.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <functional>
#include <limits>
#include <unordered_map>
#include <vector>

#include "ir/IRPrinter.h"

namespace kiln_fuzz {

using namespace kiln;
using namespace kiln::internal;

namespace {

// A value of any type, lane by lane: integers and bools as int64 (unsigned
// ones as their bit pattern), floats as double (rounded to float for 32 bits).
struct Value {
    Type t;
    std::vector<int64_t> i;
    std::vector<double> f;
    int lanes() const { return t.lanes(); }
};

int64_t wrap(Type t, int64_t v) {
    if (t.bits() >= 64) return v;
    if (t.is_bool()) return v != 0;
    uint64_t mask = (uint64_t(1) << t.bits()) - 1, u = (uint64_t)v & mask;
    if (t.is_uint()) return (int64_t)u;
    uint64_t sign = uint64_t(1) << (t.bits() - 1);
    return (int64_t)((u ^ sign) - sign);
}
double round_float(Type t, double v) { return t.bits() == 32 ? (double)(float)v : v; }

Value make(Type t) {
    Value v;
    v.t = t;
    if (t.is_float()) v.f.resize(t.lanes());
    else v.i.resize(t.lanes());
    return v;
}
Value scalar_int(Type t, int64_t x) {
    Value v = make(t);
    v.i[0] = wrap(t, x);
    return v;
}

// Euclidean division and modulo (IR.h); zero divisors give zero.
int64_t div_int(Type t, int64_t a, int64_t b) {
    if (b == 0) return 0;
    if (t.is_uint()) return wrap(t, (int64_t)((uint64_t)a / (uint64_t)b));
    if (b == -1) return wrap(t, (int64_t)(0 - (uint64_t)a));
    int64_t q = a / b, r = a % b;
    if (r < 0) q = b > 0 ? q - 1 : q + 1;
    return wrap(t, q);
}
int64_t mod_int(Type t, int64_t a, int64_t b) {
    if (b == 0) return 0;
    if (t.is_uint()) return wrap(t, (int64_t)((uint64_t)a % (uint64_t)b));
    if (b == -1) return 0;
    int64_t r = a % b;
    if (r < 0) r += b < 0 ? -b : b;
    return wrap(t, r);
}
bool less(Type t, int64_t a, int64_t b) { return t.is_uint() ? (uint64_t)a < (uint64_t)b : a < b; }

// A buffer the statement loads from or stores to: elements [lo, hi] around
// `base` are valid.
struct Memory {
    Type elem;
    uint8_t *base = nullptr;
    int64_t lo = 0, hi = -1;
    std::vector<uint8_t> own;  // an Allocate's storage
};

struct KernelReturn {
    int code;
};

class Interpreter {
public:
    explicit Interpreter(const LoweredFunc &f) : func(f) {}

    int run(void **args, std::string *message) {
        for (size_t k = 0; k < func.args.size(); k++) bind_argument(func.args[k], args[k]);
        try {
            exec(func.body);
        } catch (const KernelReturn &r) {
            if (message) *message = last_message;
            return r.code;
        }
        return 0;
    }

private:
    const LoweredFunc &func;
    std::unordered_map<std::string, std::vector<Value>> vars;
    std::unordered_map<std::string, std::vector<Memory>> buffers;
    std::string last_message;

    [[noreturn]] void fail(const std::string &what) const {
        throw InterpreterError("interpreting kernel " + func.name + ": " + what);
    }

    void bind_argument(const LoweredArgument &a, void *arg) {
        if (!a.is_buffer) {
            Value v = make(a.type);
            if (a.type.is_float()) v.f[0] = a.type.bits() == 32 ? *(const float *)arg : *(const double *)arg;
            else {
                int64_t raw = 0;
                std::memcpy(&raw, arg, a.type.bytes());
                v.i[0] = wrap(a.type, raw);
            }
            vars[a.name].push_back(v);
            return;
        }
        const halide_buffer_t *b = (const halide_buffer_t *)arg;
        if (!b || !b->host) fail("buffer argument '" + a.name + "' is null or has no host memory");
        if (b->dimensions != a.dimensions || b->type.bits != (a.type.is_bool() ? 8 : a.type.bits()))
            fail("buffer argument '" + a.name + "' has the wrong type or dimensionality");
        Memory m;
        m.elem = a.type.element_of();
        m.base = b->host;
        m.lo = 0, m.hi = 0;
        for (int d = 0; d < b->dimensions; d++) {
            const halide_dimension_t &dim = b->dim[d];
            if (dim.extent <= 0) m.lo = 0, m.hi = -1;
            int64_t span = (int64_t)(dim.extent - 1) * dim.stride;
            if (m.hi >= m.lo) m.lo += std::min<int64_t>(0, span), m.hi += std::max<int64_t>(0, span);
            for (auto [field, value] : {std::pair<const char *, int32_t>{"min", dim.min}, {"extent", dim.extent},
                                        {"stride", dim.stride}})
                vars[a.name + "." + field + "." + std::to_string(d)].push_back(scalar_int(Int(32), value));
        }
        buffers[a.name].push_back(std::move(m));
    }

    Memory &memory(const std::string &name) {
        auto it = buffers.find(name);
        if (it == buffers.end() || it->second.empty()) fail("no buffer named " + name);
        return it->second.back();
    }
    uint8_t *element(Memory &m, const std::string &name, int64_t index) {
        if (index < m.lo || index > m.hi)
            fail("access to " + name + "[" + std::to_string(index) + "] outside its memory [" + std::to_string(m.lo) +
                 ", " + std::to_string(m.hi) + "]");
        return m.base + index * m.elem.bytes();
    }

    // ---- expressions ----

    Value eval(const Expr &e) {
        switch (e.node_type()) {
        case IRNodeType::IntImm: return scalar_int(e.type(), e.as<IntImm>()->value);
        case IRNodeType::UIntImm: return scalar_int(e.type(), (int64_t)e.as<UIntImm>()->value);
        case IRNodeType::FloatImm: {
            Value v = make(e.type());
            v.f[0] = round_float(e.type(), e.as<FloatImm>()->value);
            return v;
        }
        case IRNodeType::Cast: return cast(e.type(), eval(e.as<Cast>()->value));
        case IRNodeType::Variable: {
            const std::string &n = e.as<Variable>()->name;
            auto it = vars.find(n);
            if (it == vars.end() || it->second.empty()) fail("variable " + n + " is not bound");
            return it->second.back();
        }
#define KILN_BIN(N) \
    case IRNodeType::N: return binary(IRNodeType::N, e.type(), eval(e.as<N>()->a), eval(e.as<N>()->b));
            KILN_BIN(Add) KILN_BIN(Sub) KILN_BIN(Mul) KILN_BIN(Div) KILN_BIN(Mod) KILN_BIN(Min) KILN_BIN(Max)
            KILN_BIN(EQ) KILN_BIN(NE) KILN_BIN(LT) KILN_BIN(LE) KILN_BIN(GT) KILN_BIN(GE) KILN_BIN(And) KILN_BIN(Or)
#undef KILN_BIN
        case IRNodeType::Not: {
            Value a = eval(e.as<Not>()->a);
            for (auto &x : a.i) x = !x;
            return a;
        }
        case IRNodeType::Select: return select(e.as<Select>());
        case IRNodeType::Load: return load(e.as<Load>());
        case IRNodeType::Ramp: {
            const Ramp *r = e.as<Ramp>();
            Value base = eval(r->base), stride = eval(r->stride), v = make(e.type());
            for (int k = 0; k < r->lanes; k++) {
                if (v.t.is_float()) v.f[k] = round_float(v.t, base.f[0] + k * stride.f[0]);
                else v.i[k] = wrap(v.t, (int64_t)((uint64_t)base.i[0] + (uint64_t)k * (uint64_t)stride.i[0]));
            }
            return v;
        }
        case IRNodeType::Broadcast: {
            const Broadcast *b = e.as<Broadcast>();
            Value s = eval(b->value), v = make(e.type());
            for (int k = 0; k < b->lanes; k++) {
                if (v.t.is_float()) v.f[k] = s.f[0];
                else v.i[k] = s.i[0];
            }
            return v;
        }
        case IRNodeType::Call: return call(e.as<Call>());
        case IRNodeType::Let: {
            const Let *l = e.as<Let>();
            vars[l->name].push_back(eval(l->value));
            Value v = eval(l->body);
            vars[l->name].pop_back();
            return v;
        }
        default: fail("cannot evaluate " + to_string(e));
        }
    }

    Value cast(Type to, const Value &a) {
        Value v = make(to);
        Type from = a.t;
        for (int k = 0; k < to.lanes(); k++) {
            if (to.is_float()) {
                double x = from.is_float() ? a.f[k] : from.is_uint() ? (double)(uint64_t)a.i[k] : (double)a.i[k];
                v.f[k] = round_float(to, x);
            } else if (from.is_float()) {
                double x = std::trunc(a.f[k]);  // C truncates; out of range is undefined: clamp
                if (std::isnan(x)) x = 0;
                x = std::min(std::max(x, -9.2e18), 9.2e18);
                v.i[k] = to.is_bool() ? a.f[k] != 0 : wrap(to, (int64_t)x);
            } else {
                v.i[k] = to.is_bool() ? a.i[k] != 0 : wrap(to, a.i[k]);
            }
        }
        return v;
    }

    Value binary(IRNodeType op, Type t, const Value &a, const Value &b) {
        if (a.lanes() != b.lanes() || a.t.code() != b.t.code() || a.t.bits() != b.t.bits())
            fail("operands of different types: " + a.t.to_string() + " and " + b.t.to_string());
        Value v = make(t);
        Type ot = a.t;
        for (int k = 0; k < t.lanes(); k++) {
            if (ot.is_float()) {
                double x = a.f[k], y = b.f[k], r = 0;
                bool c = false, is_cmp = true;
                switch (op) {
                case IRNodeType::EQ: c = x == y; break;
                case IRNodeType::NE: c = x != y; break;
                case IRNodeType::LT: c = x < y; break;
                case IRNodeType::LE: c = x <= y; break;
                case IRNodeType::GT: c = x > y; break;
                case IRNodeType::GE: c = x >= y; break;
                default: is_cmp = false;
                }
                if (is_cmp) {
                    v.i[k] = c;
                    continue;
                }
                switch (op) {
                case IRNodeType::Add: r = x + y; break;
                case IRNodeType::Sub: r = x - y; break;
                case IRNodeType::Mul: r = x * y; break;
                case IRNodeType::Div: r = x / y; break;
                case IRNodeType::Mod: r = x - y * std::floor(x / y); break;
                case IRNodeType::Min: r = y < x ? y : x; break;
                case IRNodeType::Max: r = x < y ? y : x; break;
                default: fail("a logical operator on floats");
                }
                v.f[k] = round_float(t, r);
                continue;
            }
            int64_t x = a.i[k], y = b.i[k];
            uint64_t ux = (uint64_t)x, uy = (uint64_t)y;
            int64_t r = 0;
            switch (op) {
            case IRNodeType::Add: r = (int64_t)(ux + uy); break;
            case IRNodeType::Sub: r = (int64_t)(ux - uy); break;
            case IRNodeType::Mul: r = (int64_t)(ux * uy); break;
            case IRNodeType::Div: r = div_int(t, x, y); break;
            case IRNodeType::Mod: r = mod_int(t, x, y); break;
            case IRNodeType::Min: r = less(ot, y, x) ? y : x; break;
            case IRNodeType::Max: r = less(ot, x, y) ? y : x; break;
            case IRNodeType::EQ: r = x == y; break;
            case IRNodeType::NE: r = x != y; break;
            case IRNodeType::LT: r = less(ot, x, y); break;
            case IRNodeType::LE: r = !less(ot, y, x); break;
            case IRNodeType::GT: r = less(ot, y, x); break;
            case IRNodeType::GE: r = !less(ot, x, y); break;
            case IRNodeType::And: r = x && y; break;
            case IRNodeType::Or: r = x || y; break;
            default: fail("unknown binary operator");
            }
            v.i[k] = wrap(t, r);
        }
        return v;
    }

    // A scalar (or broadcast) condition picks one side, which alone is
    // evaluated, as the C ?: codegen emits (the dense load vectorize_loops
    // guards is in bounds only when its condition holds); a vector condition
    // evaluates both sides.
    Value select(const Select *s) {
        const Broadcast *uniform = s->condition.as<Broadcast>();
        if (s->condition.type().is_scalar() || uniform) {
            Value c = eval(uniform ? uniform->value : s->condition);
            return eval(c.i[0] ? s->true_value : s->false_value);
        }
        Value c = eval(s->condition), a = eval(s->true_value), b = eval(s->false_value);
        for (int k = 0; k < a.lanes(); k++) {
            bool take = c.i[c.lanes() == 1 ? 0 : k] != 0;
            if (take) continue;
            if (a.t.is_float()) a.f[k] = b.f[k];
            else a.i[k] = b.i[k];
        }
        return a;
    }

    Value load(const Load *l) {
        Value index = eval(l->index), v = make(l->type);
        Memory &m = memory(l->name);
        for (int k = 0; k < v.lanes(); k++) {
            const uint8_t *p = element(m, l->name, index.i[k]);
            read(m.elem, p, v, k);
        }
        return v;
    }

    static void read(Type elem, const uint8_t *p, Value &v, int k) {
        if (elem.is_float()) {
            if (elem.bits() == 32) {
                float x;
                std::memcpy(&x, p, 4);
                v.f[k] = x;
            } else {
                std::memcpy(&v.f[k], p, 8);
            }
            return;
        }
        int64_t raw = 0;
        std::memcpy(&raw, p, elem.bytes());  // little-endian
        v.i[k] = wrap(v.t.is_bool() ? UInt(8) : v.t.element_of(), raw);
        if (v.t.is_bool()) v.i[k] = v.i[k] != 0;
    }
    static void write(Type elem, uint8_t *p, const Value &v, int k) {
        if (elem.is_float()) {
            if (elem.bits() == 32) {
                float x = (float)v.f[k];
                std::memcpy(p, &x, 4);
            } else {
                std::memcpy(p, &v.f[k], 8);
            }
            return;
        }
        int64_t raw = v.i[k];
        std::memcpy(p, &raw, elem.bytes());
    }

    // The integer intrinsics of IROperator.cpp, by their definitions there.
    int64_t int_call(Type t, const std::string &n, int64_t a, int64_t b) const {
        const int bits = t.bits();
        const uint64_t mask = bits >= 64 ? ~uint64_t(0) : (uint64_t(1) << bits) - 1, u = (uint64_t)a & mask;
        if (n == "bitwise_and") return wrap(t, a & b);
        if (n == "bitwise_or") return wrap(t, a | b);
        if (n == "bitwise_xor") return wrap(t, a ^ b);
        if (n == "bitwise_not") return wrap(t, ~a);
        if (n == "popcount") return __builtin_popcountll(u);
        if (n == "count_leading_zeros") return u == 0 ? bits : __builtin_clzll(u) - (64 - bits);
        if (n == "count_trailing_zeros") return u == 0 ? bits : __builtin_ctzll(u);
        bool left = n == "shift_left";
        if (!left && n != "shift_right") fail("unknown integer intrinsic " + n);
        if (b < 0) {
            left = !left;
            b = b <= -bits ? bits : -b;
        }
        if (left) return b >= bits ? 0 : wrap(t, (int64_t)(u << b));
        if (b >= bits) return t.is_int() && a < 0 ? -1 : 0;
        return t.is_int() ? wrap(t, a >> b) : (int64_t)(u >> b);
    }

    Value call(const Call *c) {
        if (c->call_type != Call::PureExtern) fail("call to " + c->name + " survived lowering");
        std::vector<Value> args;
        for (const Expr &a : c->args) args.push_back(eval(a));
        Value v = make(c->type);
        if (c->name == "interleave_vectors") {  // a[0], b[0], a[1], b[1], ...
            for (int k = 0; k < v.lanes(); k++) {
                const Value &half = args[k % 2];
                if (c->type.is_float()) v.f[k] = half.f[k / 2];
                else v.i[k] = half.i[k / 2];
            }
            return v;
        }
        if (!c->type.is_float()) {
            for (int k = 0; k < v.lanes(); k++)
                v.i[k] = int_call(c->type, c->name, args[0].i[k], args.size() > 1 ? args[1].i[k] : 0);
            return v;
        }
        for (int k = 0; k < v.lanes(); k++) {
            double x = args[0].f[k], r = 0;
            bool f32 = c->type.bits() == 32;
            const std::string &n = c->name;
            if (n == "exp") r = f32 ? std::exp((float)x) : std::exp(x);
            else if (n == "log") r = f32 ? std::log((float)x) : std::log(x);
            else if (n == "sqrt") r = f32 ? std::sqrt((float)x) : std::sqrt(x);
            else if (n == "sin") r = f32 ? std::sin((float)x) : std::sin(x);
            else if (n == "cos") r = f32 ? std::cos((float)x) : std::cos(x);
            else if (n == "tanh") r = f32 ? std::tanh((float)x) : std::tanh(x);
            else if (n == "floor") r = std::floor(x);
            else if (n == "ceil") r = std::ceil(x);
            else if (n == "round") r = std::nearbyint(x);
            else if (n == "pow") r = f32 ? std::pow((float)x, (float)args[1].f[k]) : std::pow(x, args[1].f[k]);
            else fail("unknown math function " + n);
            v.f[k] = round_float(c->type, r);
        }
        return v;
    }

    // ---- statements ----

    void exec(const Stmt &s) {
        if (!s.defined()) return;
        switch (s.node_type()) {
        case IRNodeType::LetStmt: {
            const LetStmt *l = s.as<LetStmt>();
            vars[l->name].push_back(eval(l->value));
            exec(l->body);
            vars[l->name].pop_back();
            return;
        }
        case IRNodeType::AssertStmt: return assert_stmt(s.as<AssertStmt>());
        case IRNodeType::ProducerConsumer: return exec(s.as<ProducerConsumer>()->body);
        case IRNodeType::For: return for_loop(s.as<For>());
        case IRNodeType::Store: return store(s.as<Store>());
        case IRNodeType::Allocate: return allocate(s.as<Allocate>());
        case IRNodeType::Block:
            exec(s.as<Block>()->first);
            exec(s.as<Block>()->rest);
            return;
        case IRNodeType::IfThenElse: {
            const IfThenElse *i = s.as<IfThenElse>();
            Value c = eval(i->condition);
            if (c.lanes() != 1) fail("a vector condition in an if");
            exec(c.i[0] ? i->then_case : i->else_case);
            return;
        }
        case IRNodeType::Evaluate: eval(s.as<Evaluate>()->value); return;
        default: fail("cannot execute " + to_string(s));
        }
    }

    void assert_stmt(const AssertStmt *a) {
        Value c = eval(a->condition);
        if (c.i[0]) return;
        std::string text;
        for (const Expr &part : a->message) {
            if (const StringImm *str = part.as<StringImm>()) {
                text += str->value;
                continue;
            }
            Value v = eval(part);
            if (v.t.is_float()) {
                char buf[32];
                std::snprintf(buf, sizeof(buf), "%g", v.f[0]);
                text += buf;
            } else {
                text += v.t.is_uint() && v.t.bits() == 64 ? std::to_string((uint64_t)v.i[0]) : std::to_string(v.i[0]);
            }
        }
        if (a->message.empty()) text = "check failed";
        std::string prefix = func.name + ": ";
        last_message = text.compare(0, prefix.size(), prefix) == 0 ? text : prefix + text;
        throw KernelReturn{a->error_code};
    }

    void for_loop(const For *f) {
        // A LaneFallback loop (a vector tail's lanes) is a serial loop.
        if (f->for_type != ForType::Serial && f->for_type != ForType::Parallel &&
            f->for_type != ForType::LaneFallback)
            fail("loop " + f->name + " is still vectorized or unrolled");
        Value mn = eval(f->min), ext = eval(f->extent);
        int64_t lo = mn.i[0], n = ext.i[0];
        auto &slot = vars[f->name];
        // Parallel iterations last to first: an order the compiled loop may take.
        bool backwards = f->for_type == ForType::Parallel;
        for (int64_t k = 0; k < n; k++) {
            slot.push_back(scalar_int(Int(32), lo + (backwards ? n - 1 - k : k)));
            exec(f->body);
            slot.pop_back();
        }
    }

    void store(const Store *st) {
        Value v = eval(st->value), index = eval(st->index);
        Memory &m = memory(st->name);
        for (int k = 0; k < v.lanes(); k++) write(m.elem, element(m, st->name, index.i[k]), v, k);
    }

    void allocate(const Allocate *a) {
        // The size in 64 bits, as codegen multiplies it (no int32 wrap-around).
        std::function<int64_t(const Expr &)> size = [&](const Expr &e) -> int64_t {
            if (const Mul *m = e.as<Mul>()) return size(m->a) * size(m->b);
            return eval(e).i[0];
        };
        int64_t n = std::max<int64_t>(size(a->size), 1);
        if (n > std::numeric_limits<int32_t>::max() || n * a->type.bytes() > (int64_t(1) << 30)) {
            last_message = func.name + ": out of memory allocating " + std::to_string(n) + " elements for '" + a->name + "'";
            throw KernelReturn{-10};
        }
        Memory m;
        m.elem = a->type.element_of();
        m.own.resize(n * m.elem.bytes());
        for (size_t k = 0; k < m.own.size(); k++) m.own[k] = (uint8_t)(0xa5 ^ (k * 37));  // not zeros
        m.base = m.own.data();
        m.lo = 0, m.hi = n - 1;
        buffers[a->name].push_back(std::move(m));
        exec(a->body);
        buffers[a->name].pop_back();
    }
};

}  // namespace

int interpret(const LoweredFunc &f, void **args, std::string *message) { return Interpreter(f).run(args, message); }

}  // namespace kiln_fuzz
