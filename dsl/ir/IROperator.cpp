// The user-facing expression builders: type coercion, then node construction.
#include <cmath>

#include "IR.h"

namespace kiln {

using namespace internal;

Expr::Expr(int x) : Expr(IntImm::make(Int(32), x)) {}
Expr::Expr(bool x) : Expr(UIntImm::make(Bool(), x ? 1 : 0)) {}
Expr::Expr(float x) : Expr(FloatImm::make(Float(32), x)) {}
Expr::Expr(double x) : Expr(FloatImm::make(Float(32), x)) {}
Expr::Expr(int64_t x) : Expr(IntImm::make(Int(64), x)) {}
Expr::Expr(uint32_t x) : Expr(UIntImm::make(UInt(32), x)) {}

Expr make_const(Type t, int64_t v) {
    Expr e;
    if (t.is_int()) e = IntImm::make(t.element_of(), v);
    else if (t.is_uint()) e = UIntImm::make(t.element_of(), (uint64_t)v);
    else e = FloatImm::make(t.element_of(), (double)v);
    return t.is_vector() ? Broadcast::make(e, t.lanes()) : e;
}
Expr make_const(Type t, double v) {
    if (!t.is_float()) return make_const(t, (int64_t)v);
    Expr e = FloatImm::make(t.element_of(), v);
    return t.is_vector() ? Broadcast::make(e, t.lanes()) : e;
}
Expr make_zero(Type t) { return make_const(t, (int64_t)0); }
Expr make_one(Type t) { return make_const(t, (int64_t)1); }
Expr make_bool(bool b, int lanes) { return make_const(Bool(lanes), (int64_t)(b ? 1 : 0)); }

Expr type_max(Type t) {
    if (t.is_int()) return make_const(t, (int64_t)((((uint64_t)1) << (t.bits() - 1)) - 1));
    if (t.is_uint()) {
        Expr e = UIntImm::make(t.element_of(), t.bits() == 64 ? ~(uint64_t)0 : (((uint64_t)1) << t.bits()) - 1);
        return t.is_vector() ? Broadcast::make(e, t.lanes()) : e;
    }
    return make_const(t, t.bits() == 32 ? (double)HUGE_VALF : HUGE_VAL);
}
Expr type_min(Type t) {
    if (t.is_int()) return make_const(t, t.bits() == 64 ? INT64_MIN : -((int64_t)1 << (t.bits() - 1)));
    if (t.is_uint()) return make_zero(t);
    return make_const(t, t.bits() == 32 ? -(double)HUGE_VALF : -HUGE_VAL);
}
Expr Type::max() const { return type_max(*this); }
Expr Type::min() const { return type_min(*this); }

const int64_t *as_const_int(const Expr &e) {
    if (!e.defined()) return nullptr;
    if (const auto *b = e.as<Broadcast>()) return as_const_int(b->value);
    if (const auto *i = e.as<IntImm>()) return &i->value;
    if (const auto *u = e.as<UIntImm>()) {
        if (u->value <= (uint64_t)INT64_MAX) return reinterpret_cast<const int64_t *>(&u->value);
    }
    return nullptr;
}
const double *as_const_float(const Expr &e) {
    if (!e.defined()) return nullptr;
    if (const auto *b = e.as<Broadcast>()) return as_const_float(b->value);
    if (const auto *f = e.as<FloatImm>()) return &f->value;
    return nullptr;
}
bool is_const(const Expr &e) { return as_const_int(e) || as_const_float(e); }
bool is_const(const Expr &e, int64_t v) {
    if (const int64_t *i = as_const_int(e)) return *i == v;
    if (const double *f = as_const_float(e)) return *f == (double)v;
    return false;
}
bool is_zero(const Expr &e) { return is_const(e, 0); }
bool is_one(const Expr &e) { return is_const(e, 1); }

namespace {

void check_defined(const Expr &a, const char *op) {
    user_assert(a.defined()) << "Operand of '" << op
                             << "' is undefined: an Expr was used before it was given a value.";
}

// Halide's coercion rules, for two operands of a binary operator.
void match_types(Expr &a, Expr &b, const char *op) {
    check_defined(a, op);
    check_defined(b, op);
    Type ta = a.type(), tb = b.type();
    if (ta == tb) return;
    user_assert(ta.lanes() == tb.lanes()) << "Operands of '" << op << "' have different lane counts";
    if (ta.is_float() && !tb.is_float()) {
        b = cast(ta, b);
    } else if (tb.is_float() && !ta.is_float()) {
        a = cast(tb, a);
    } else if (ta.is_float() && tb.is_float()) {
        if (ta.bits() == tb.bits()) {  // float16 with bfloat16: neither holds the other
            a = cast(Float(32, ta.lanes()), a);
            b = cast(Float(32, tb.lanes()), b);
        } else if (ta.bits() > tb.bits()) b = cast(ta, b);
        else a = cast(tb, a);
    } else if (ta.is_bool() && !tb.is_bool()) {
        a = cast(tb, a);
    } else if (tb.is_bool() && !ta.is_bool()) {
        b = cast(ta, b);
    } else if (ta.code() == tb.code()) {
        if (ta.bits() > tb.bits()) b = cast(ta, b);
        else a = cast(tb, a);
    } else {
        // Mixed signedness: signed of the larger width.
        Type t = Int(std::max(ta.bits(), tb.bits()), ta.lanes());
        a = cast(t, a);
        b = cast(t, b);
    }
}

// A literal on one side takes the other operand's type.
Expr literal_like(const Expr &e, int v, const char *op) {
    check_defined(e, op);
    Type t = e.type();
    if (t.is_float()) return make_const(t, (double)v);
    if (t.is_uint()) {
        user_assert(v >= 0) << "Integer literal " << v << " used with an expression of unsigned type "
                            << t.to_string() << "; cast one side explicitly.";
    }
    if (t.bits() < 32) {
        int64_t lo = t.is_int() ? -((int64_t)1 << (t.bits() - 1)) : 0;
        int64_t hi = t.is_int() ? ((int64_t)1 << (t.bits() - 1)) - 1 : ((int64_t)1 << t.bits()) - 1;
        user_assert(v >= lo && v <= hi) << "Integer literal " << v << " does not fit in type " << t.to_string()
                                        << " of the other operand of '" << op << "'; cast one side explicitly.";
    }
    return make_const(t, (int64_t)v);
}
Expr literal_like(const Expr &e, double v, const char *op) {
    check_defined(e, op);
    Type t = e.type();
    if (t.is_float()) return make_const(t, v);
    return FloatImm::make(Float(32), v);  // int op float literal: the float wins
}

// A bool next to an int literal is compared or combined as an int32 (0 or 1).
Expr int_if_bool(const Expr &e, const char *op) {
    check_defined(e, op);
    return e.type().is_bool() ? Cast::make(Int(32, e.type().lanes()), e) : e;
}


}  // namespace

#define KILN_DEFINE_BIN(OP, NODE)                                              \
    Expr operator OP(Expr a, Expr b) {                                         \
        match_types(a, b, #OP);                                                \
        return NODE::make(a, b);                                               \
    }                                                                          \
    Expr operator OP(Expr a, int b) {                                          \
        a = int_if_bool(a, #OP);                                               \
        return NODE::make(a, literal_like(a, b, #OP));                         \
    }                                                                          \
    Expr operator OP(int a, Expr b) {                                          \
        b = int_if_bool(b, #OP);                                               \
        return NODE::make(literal_like(b, a, #OP), b);                         \
    }                                                                          \
    Expr operator OP(Expr a, float b) { return a OP Expr(literal_like(a, (double)b, #OP)); } \
    Expr operator OP(float a, Expr b) { return Expr(literal_like(b, (double)a, #OP)) OP b; } \
    Expr operator OP(Expr a, double b) { return a OP Expr(literal_like(a, b, #OP)); } \
    Expr operator OP(double a, Expr b) { return Expr(literal_like(b, a, #OP)) OP b; }

// Bool operands of arithmetic become int32 first.
static Expr arith_operand(Expr e) {
    if (e.defined() && e.type().is_bool()) return Cast::make(Int(32, e.type().lanes()), e);
    return e;
}
namespace internal {
struct ArithAdd { static Expr make(Expr a, Expr b) { return Add::make(arith_operand(a), arith_operand(b)); } };
struct ArithSub { static Expr make(Expr a, Expr b) { return Sub::make(arith_operand(a), arith_operand(b)); } };
struct ArithMul { static Expr make(Expr a, Expr b) { return Mul::make(arith_operand(a), arith_operand(b)); } };
struct ArithDiv { static Expr make(Expr a, Expr b) { return Div::make(arith_operand(a), arith_operand(b)); } };
struct ArithMod { static Expr make(Expr a, Expr b) { return Mod::make(arith_operand(a), arith_operand(b)); } };
}  // namespace internal

KILN_DEFINE_BIN(+, ArithAdd)
KILN_DEFINE_BIN(-, ArithSub)
KILN_DEFINE_BIN(*, ArithMul)
KILN_DEFINE_BIN(/, ArithDiv)
KILN_DEFINE_BIN(%, ArithMod)
KILN_DEFINE_BIN(==, EQ)
KILN_DEFINE_BIN(!=, NE)
KILN_DEFINE_BIN(<, LT)
KILN_DEFINE_BIN(<=, LE)
KILN_DEFINE_BIN(>, GT)
KILN_DEFINE_BIN(>=, GE)
#undef KILN_DEFINE_BIN

Expr operator-(Expr a) {
    check_defined(a, "-");
    return Sub::make(make_zero(a.type()), a);
}
static Expr as_bool(Expr a, const char *op) {
    check_defined(a, op);
    if (a.type().is_bool()) return a;
    return NE::make(a, make_zero(a.type()));
}
Expr operator&&(Expr a, Expr b) { return And::make(as_bool(a, "&&"), as_bool(b, "&&")); }
Expr operator||(Expr a, Expr b) { return Or::make(as_bool(a, "||"), as_bool(b, "||")); }
Expr operator!(Expr a) { return Not::make(as_bool(a, "!")); }

Expr &operator+=(Expr &a, Expr b) { return a = a + b; }
Expr &operator-=(Expr &a, Expr b) { return a = a - b; }
Expr &operator*=(Expr &a, Expr b) { return a = a * b; }
Expr &operator/=(Expr &a, Expr b) { return a = a / b; }

Expr select(Expr c, Expr t, Expr f) {
    check_defined(c, "select");
    // As in Halide: no implicit "!= 0", which would hide a condition that is
    // a value by mistake (select(x % 2, ...) meant select(x % 2 == 1, ...)?).
    user_assert(c.type().is_bool()) << "select: the condition " << to_string(c) << " has type "
                                    << c.type().to_string() << ", but select() needs a boolean condition; "
                                    << "compare it, e.g. select(" << to_string(c) << " != 0, ...)";
    // As in Halide: an integer constant takes the other value's type, so
    // that select(c, 0, u8) is a uint8 (a table of bytes stays bytes).
    check_defined(t, "select");
    check_defined(f, "select");
    if (as_const_int(t)) t = cast(f.type(), t);
    if (as_const_int(f)) f = cast(t.type(), f);
    match_types(t, f, "select");
    return Select::make(c, t, f);
}
Expr min(Expr a, Expr b) {
    match_types(a, b, "min");
    return Min::make(a, b);
}
Expr max(Expr a, Expr b) {
    match_types(a, b, "max");
    return Max::make(a, b);
}
Expr clamp(Expr x, Expr lo, Expr hi) {
    check_defined(x, "clamp");
    check_defined(lo, "clamp");
    check_defined(hi, "clamp");
    if (lo.type() != x.type()) lo = cast(x.type(), lo);
    if (hi.type() != x.type()) hi = cast(x.type(), hi);
    return Max::make(Min::make(x, hi), lo);
}
Expr abs(Expr a) {
    check_defined(a, "abs");
    Type t = a.type();
    if (t.is_uint()) return a;
    if (t.is_int()) {
        // Negated in the unsigned type, where it wraps: 0 - a in int32 would
        // overflow (undefined, IR.h) for the most negative value, whose abs
        // the unsigned result holds.
        Expr u = Cast::make(UInt(t.bits(), t.lanes()), a);
        return Select::make(LT::make(a, make_zero(t)), Sub::make(make_zero(u.type()), u), u);
    }
    return Select::make(LT::make(a, make_zero(t)), Sub::make(make_zero(t), a), a);
}
Expr cast(Type t, Expr a) {
    check_defined(a, "cast");
    if (a.type().lanes() > 1 && t.lanes() == 1) t = t.with_lanes(a.type().lanes());
    if (a.type() == t) return a;
    if (t.is_bool()) return NE::make(a, make_zero(a.type()));
    return Cast::make(t, a);
}

Expr absd(Expr a, Expr b) {
    match_types(a, b, "absd");
    Type t = a.type();
    if (t.is_float()) return Select::make(LT::make(a, b), Sub::make(b, a), Sub::make(a, b));
    // In the unsigned type of the same width, where the difference always fits.
    Type u = t.is_bool() ? t : UInt(t.bits(), t.lanes());
    Expr ua = cast(u, a), ub = cast(u, b);
    return Select::make(LT::make(a, b), Sub::make(ub, ua), Sub::make(ua, ub));
}

Expr mux(Expr id, const std::vector<Expr> &values) {
    check_defined(id, "mux");
    user_assert(!values.empty()) << "mux(" << to_string(id) << ", {}): give at least one value to choose from";
    user_assert(!id.type().is_float()) << "mux: the index " << to_string(id) << " has type " << id.type().to_string()
                                       << "; it must be an integer";
    std::vector<Expr> v = values;
    Expr common = v[0];  // the type every value is coerced to
    for (Expr x : v) match_types(common, x, "mux");
    for (Expr &x : v) x = cast(common.type(), x);
    Expr r = v.back();
    for (size_t i = v.size() - 1; i-- > 0;) {
        Expr at = make_const(id.type(), (int64_t)i);
        r = Select::make(i == 0 ? LE::make(id, at) : EQ::make(id, at), v[i], r);
    }
    return r;
}

Expr saturating_cast(Type t, Expr e) {
    check_defined(e, "saturating_cast");
    Type from = e.type();
    t = t.with_lanes(from.lanes());
    if (t.is_float() || from.is_bool() || t.is_bool()) return cast(t, e);
    // The ends of t's range that e's type can go past, as values of e's type.
    const double lo = t.is_int() ? -std::ldexp(1.0, t.bits() - 1) : 0.0;
    const double hi = t.is_int() ? std::ldexp(1.0, t.bits() - 1) - 1 : std::ldexp(1.0, t.bits()) - 1;
    if (from.is_float()) {
        // Clamped to [lo, top], top the largest value of e's type below
        // hi + 1 (a power of two, exact in any float type), then cast: the
        // cast of a float in that range is exact or truncates towards hi.
        const double end = hi + 1;
        const double top = from.bits() == 32 ? (double)std::nextafter((float)end, 0.0f) : std::nextafter(end, 0.0);
        Expr clamped = Cast::make(t, Max::make(Min::make(e, make_const(from, top)), make_const(from, lo)));
        // Where hi itself is no value of e's type (2^31 - 1 in float32, 2^63
        // - 1 in float64), top is below it: from hi + 1 up the result is hi,
        // as Halide's is (3e9f to int32 is 2147483647, not 2147483520).
        if (top < hi) return Select::make(GE::make(e, make_const(from, end)), type_max(t), clamped);
        return clamped;
    }
    const double from_lo = from.is_int() ? -std::ldexp(1.0, from.bits() - 1) : 0.0;
    const double from_hi = from.is_int() ? std::ldexp(1.0, from.bits() - 1) - 1 : std::ldexp(1.0, from.bits()) - 1;
    if (from_hi > hi) e = Min::make(e, make_const(from, (int64_t)hi));
    if (from_lo < lo) e = Max::make(e, make_const(from, (int64_t)lo));
    return cast(t, e);
}

Expr lerp(Expr zero, Expr one, Expr weight) {
    check_defined(weight, "lerp");
    match_types(zero, one, "lerp");
    Type t = zero.type(), w = weight.type();
    user_assert(w.is_float() || w.is_uint()) << "lerp: the weight " << to_string(weight) << " has type "
                                              << w.to_string() << "; it must be a float or an unsigned integer "
                                              << "(a fixed-point fraction of its type's maximum)";
    user_assert(t.is_float() || t.bits() <= 32) << "lerp of " << t.to_string() << " values: 64-bit integers are not supported";
    if (t.is_float()) {
        Expr f = w.is_float() ? cast(t, weight) : cast(t, weight) / make_const(t, std::ldexp(1.0, w.bits()) - 1);
        return zero * (make_one(t) - f) + one * f;
    }
    if (t.is_bool()) {
        Expr half = w.is_float() ? Expr(cast(w, Expr(0.5f))) : make_const(w, ((int64_t)1 << (w.bits() - 1)) - 1);
        return Select::make(GT::make(weight, half), one, zero);
    }
    // In the unsigned type of the values' width (signed values offset by the
    // type's minimum), the weight scaled to that type's maximum M; then
    // (zero * (M - w) + one * w) / M, rounded, through a type twice as wide.
    const int bits = t.bits();
    Type u = UInt(bits, t.lanes()), wide = UInt(2 * bits, t.lanes());
    Expr bias = t.is_int() ? make_const(u, (int64_t)1 << (bits - 1)) : Expr();
    auto unsigned_of = [&](const Expr &v) { return bias.defined() ? Cast::make(u, v) + bias : cast(u, v); };
    const double top = std::ldexp(1.0, bits) - 1;
    Expr scaled;
    if (w.is_float()) {
        scaled = Cast::make(u, bits == 32 ? Cast::make(Float(64, t.lanes()), weight) * top : weight * (float)top);
    } else if (w.bits() == bits) {
        scaled = weight;
    } else if (w.bits() < bits) {
        // 2^n - 1 = (2^m - 1)(2^m + 1)(2^2m + 1)...: repeat the weight's bits.
        scaled = cast(u, weight);
        for (int have = w.bits(); have < bits; have *= 2) scaled = scaled + scaled * make_const(u, (int64_t)1 << have);
    } else {
        // (2^m - 1) / (2^n - 1) is an integer for n dividing m (65535 / 255 = 257).
        scaled = cast(u, Div::make(weight, make_const(w, (int64_t)(((1ull << w.bits()) - 1) / ((1ull << bits) - 1)))));
    }
    Expr inverse = make_const(u, (int64_t)top) - scaled;
    Expr sum = cast(wide, unsigned_of(zero)) * cast(wide, inverse) + cast(wide, unsigned_of(one)) * cast(wide, scaled);
    Expr r = Cast::make(u, (sum + make_const(wide, (int64_t)top / 2)) / make_const(wide, (int64_t)top));  // rounded
    return bias.defined() ? Cast::make(t, r - bias) : r;
}

// ---- Bitwise operators and shifts ----

namespace {

Expr bits_operand(Expr e, const char *op) {
    check_defined(e, op);
    user_assert(!e.type().is_float()) << "Operand " << to_string(e) << " of '" << op << "' has type "
                                      << e.type().to_string() << "; bitwise operators and shifts take integers "
                                      << "(reinterpret a float's bits is not supported)";
    return e;
}

// a & b, a | b, a ^ b: on bools the logical operators; on integers of
// different types Halide's coercion; a constant mask 2^k - 1 is a modulo
// (which bounds inference and the vectorizer know).
Expr bitwise(Expr a, Expr b, const char *op, const char *name) {
    bits_operand(a, op);
    bits_operand(b, op);
    match_types(a, b, op);
    const std::string o = op;
    if (a.type().is_bool()) return o == "&" ? And::make(a, b) : o == "|" ? Or::make(a, b) : NE::make(a, b);
    const int64_t *m = as_const_int(b);
    if (o == "&" && m && *m >= 0 && ((*m + 1) & *m) == 0 && *m < INT64_MAX)
        return Mod::make(a, make_const(a.type(), *m + 1));
    return Call::make(a.type(), name, {a, b}, Call::PureExtern);
}

// a << b, a >> b: of a's type. A constant amount in [0, bits) is a multiply
// or a (flooring) divide by 2^b; others go to the shift intrinsics, whose
// amount (of a's width, its own signedness) shifts the other way when
// negative and shifts everything out when of a's width or more.
Expr shift(Expr a, Expr b, bool left) {
    const char *op = left ? "<<" : ">>";
    bits_operand(a, op);
    bits_operand(b, op);
    if (a.type().is_bool()) a = cast(Int(32, a.type().lanes()), a);
    Type t = a.type();
    user_assert(b.type().lanes() == t.lanes() || b.type().is_scalar()) << "Operands of '" << op << "' have different lane counts";
    b = cast((b.type().is_uint() ? UInt(t.bits()) : Int(t.bits())).with_lanes(t.lanes()), b);
    const int64_t *k = as_const_int(b);
    if (k && *k >= 0 && *k < t.bits() && *k < 63) {
        Expr p = make_const(t, (int64_t)1 << *k);
        return left ? Mul::make(a, p) : Div::make(a, p);
    }
    return Call::make(t, left ? "shift_left" : "shift_right", {a, b}, Call::PureExtern);
}

}  // namespace

Expr operator&(Expr a, Expr b) { return bitwise(a, b, "&", "bitwise_and"); }
Expr operator|(Expr a, Expr b) { return bitwise(a, b, "|", "bitwise_or"); }
Expr operator^(Expr a, Expr b) { return bitwise(a, b, "^", "bitwise_xor"); }
Expr operator~(Expr a) {
    bits_operand(a, "~");
    if (a.type().is_bool()) return Not::make(a);
    return Call::make(a.type(), "bitwise_not", {a}, Call::PureExtern);
}
Expr operator<<(Expr a, Expr b) { return shift(a, b, true); }
Expr operator>>(Expr a, Expr b) { return shift(a, b, false); }
Expr operator&(Expr a, int b) { return a & literal_like(bits_operand(a, "&"), b, "&"); }
Expr operator&(int a, Expr b) { return literal_like(bits_operand(b, "&"), a, "&") & b; }
Expr operator|(Expr a, int b) { return a | literal_like(bits_operand(a, "|"), b, "|"); }
Expr operator|(int a, Expr b) { return literal_like(bits_operand(b, "|"), a, "|") | b; }
Expr operator^(Expr a, int b) { return a ^ literal_like(bits_operand(a, "^"), b, "^"); }
Expr operator^(int a, Expr b) { return literal_like(bits_operand(b, "^"), a, "^") ^ b; }
Expr operator<<(Expr a, int b) { return a << Expr(b); }
Expr operator>>(Expr a, int b) { return a >> Expr(b); }

Expr undef(Type t) { return Call::make(t, "undef", {}, Call::PureExtern); }

static Expr bit_count(Expr x, const char *name) {
    bits_operand(x, name);
    user_assert(!x.type().is_bool()) << name << "(" << to_string(x) << "): the operand must be an integer, not a bool";
    return Call::make(x.type(), name, {x}, Call::PureExtern);
}
Expr count_leading_zeros(Expr x) { return bit_count(x, "count_leading_zeros"); }
Expr count_trailing_zeros(Expr x) { return bit_count(x, "count_trailing_zeros"); }
Expr popcount(Expr x) { return bit_count(x, "popcount"); }

// An operand of a float math function: defined, a non-float as float32.
static Expr float_operand(Expr x, const char *name) {
    check_defined(x, name);
    return x.type().is_float() ? x : cast(Float(32, x.type().lanes()), x);
}
static Expr float_call(const char *name, std::vector<Expr> args) {
    for (auto &x : args) x = float_operand(x, name);
    if (args.size() == 2 && args[0].type() != args[1].type()) match_types(args[0], args[1], name);
    Type t = args[0].type();
    return Call::make(t, name, args, Call::PureExtern);
}
Expr stop_gradient(Expr x) {
    check_defined(x, "stop_gradient");
    return Call::make(x.type(), "stop_gradient", {x}, Call::PureExtern);
}
Expr exp(Expr x) { return float_call("exp", {x}); }
Expr log(Expr x) { return float_call("log", {x}); }
Expr sqrt(Expr x) { return float_call("sqrt", {x}); }
Expr pow(Expr x, Expr y) { return float_call("pow", {x, y}); }
Expr sin(Expr x) { return float_call("sin", {x}); }
Expr cos(Expr x) { return float_call("cos", {x}); }
Expr tan(Expr x) { return float_call("tan", {x}); }
Expr asin(Expr x) { return float_call("asin", {x}); }
Expr acos(Expr x) { return float_call("acos", {x}); }
Expr atan(Expr x) { return float_call("atan", {x}); }
Expr atan2(Expr y, Expr x) { return float_call("atan2", {y, x}); }
Expr sinh(Expr x) { return float_call("sinh", {x}); }
Expr cosh(Expr x) { return float_call("cosh", {x}); }
Expr tanh(Expr x) { return float_call("tanh", {x}); }
Expr asinh(Expr x) { return float_call("asinh", {x}); }
Expr acosh(Expr x) { return float_call("acosh", {x}); }
Expr atanh(Expr x) { return float_call("atanh", {x}); }
Expr hypot(Expr x, Expr y) {
    x = float_operand(x, "hypot");
    y = float_operand(y, "hypot");
    return sqrt(x * x + y * y);
}
Expr floor(Expr x) { return float_call("floor", {x}); }
Expr ceil(Expr x) { return float_call("ceil", {x}); }
Expr round(Expr x) { return float_call("round", {x}); }
Expr trunc(Expr x) { return float_call("trunc", {x}); }

}  // namespace kiln
