// codegen_cpp()'s printer (CodeGen_CPrinter.h), part one: the runtime's
// text, the text helpers and the expressions. Statements and the function
// are printed by CodeGen_CStmt.cpp.
#include "CodeGen_C.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <functional>
#include <map>
#include <set>
#include <sstream>
#include <tuple>

#include "codegen/CNames.h"
#include "codegen/CodeGen_CPrinter.h"
#include "codegen/CodeGen_Float16.h"
#include "codegen/VectorSlots.h"
#include "ir/IRVisitor.h"
#include "ir/Simplify.h"

// The runtime files, embedded at build time by cmake/KilnEmbed.cmake.
extern const char kiln_embedded_kiln_runtime_h[];
extern const char kiln_embedded_kiln_prologue_h[];
extern const char kiln_embedded_kiln_shuffles_h[];
extern const char kiln_embedded_kiln_vector_math_h[];
extern const char kiln_embedded_kiln_runtime_cpp[];

namespace kiln {
namespace internal {

const std::string &runtime_source_text() {
    static const std::string text = kiln_embedded_kiln_runtime_cpp;
    return text;
}

const std::string &prologue_source_text() {
    static const std::string text = std::string(kiln_embedded_kiln_runtime_h) + "\n" + kiln_embedded_kiln_prologue_h +
                                    "\n" + kiln_embedded_kiln_vector_math_h + "\n" +
                                    kiln_embedded_kiln_shuffles_h + "\n";
    return text;
}

const char *runtime_header_text() { return kiln_embedded_kiln_runtime_h; }


namespace codegen_c {

// ---- Text helpers ----

// Whether s is already one operand: an identifier, a literal, a call f(...)
// or a fully parenthesized expression.
bool is_atomic(const std::string &s) {
    size_t i = 0;
    while (i < s.size() && (std::isalnum((unsigned char)s[i]) || s[i] == '_' || s[i] == '.' || s[i] == ':')) i++;
    if (i == s.size()) return !s.empty();
    if (s[i] != '(' && s[i] != '<') return false;
    int depth = 0;
    for (size_t j = i; j < s.size(); j++) {
        if (s[j] == '(') depth++;
        if (s[j] == ')' && --depth == 0) return j + 1 == s.size();
    }
    return false;
}
std::string paren(const std::string &s) { return is_atomic(s) ? s : "(" + s + ")"; }
// Drops one pair of parentheses around the whole of s (not those of a
// statement expression "({ ... })").
std::string unparen(const std::string &s) {
    if (s.size() < 3 || s.front() != '(' || s[1] == '{' || !is_atomic(s)) return s;
    return s.substr(1, s.size() - 2);
}

// s escaped for a C string literal (and for a printf format, '%' doubled).
std::string escape(const std::string &s, bool printf_format) {
    std::string r;
    for (unsigned char c : s) {
        if (c == '"' || c == '\\') r += '\\', r += (char)c;
        else if (c == '%' && printf_format) r += "%%";
        else if (c == '\n') r += "\\n";
        else if (c < 32 || c >= 127) {
            char buf[8];
            std::snprintf(buf, sizeof(buf), "\\%03o", c);
            r += buf;
        } else r += (char)c;
    }
    return r;
}
std::string quoted(const std::string &s) { return "\"" + escape(s, false) + "\""; }

std::string scalar_c_type(Type t) {
    internal_assert(t.is_scalar()) << "scalar_c_type of " << t.to_string();
    if (t.is_bool()) return "bool";
    if (t.is_float() && t.bits() != 16) return t.bits() == 32 ? "float" : "double";  // 16: the bits
    internal_assert(t.bits() == 8 || t.bits() == 16 || t.bits() == 32 || t.bits() == 64) << "no C type for " << t.to_string();
    return (t.is_uint() || t.is_float() ? "uint" : "int") + std::to_string(t.bits()) + "_t";
}

// The power of two k if e is the constant 2^k (or a broadcast of it).
int power_of_two_exponent(const Expr &e) {
    if (const Broadcast *b = e.as<Broadcast>()) return power_of_two_exponent(b->value);
    uint64_t v = 0;
    if (const IntImm *i = e.as<IntImm>()) v = i->value > 0 ? (uint64_t)i->value : 0;
    else if (const UIntImm *u = e.as<UIntImm>()) v = u->value;
    if (v == 0 || (v & (v - 1)) != 0) return -1;
    int k = 0;
    while ((v >> k) != 1) k++;
    return k;
}

// The types a vector cast converts through before `to`. g++ 12 converts
// (u)int8/16 lanes to float and float lanes to (u)int8/16 one lane at a
// time (a scalar convert and an insert or extract per lane); it converts
// int32 lanes to and from float and narrows int32 lanes with vector
// instructions. So an integer becomes int32 lanes before a float, and a
// float int32 lanes before a narrower integer. Integer lanes widen through
// the prologue's kiln_widen (one vpmovzx / vpmovsx a register, where g++
// widens piece by piece). The values are the direct cast's: widening keeps
// the value, and float -> int truncates to int32 and wraps to the narrower
// type, as the scalar code does (cvttss2si, then the low bits).
//   uint8 x 8 -> float32 x 8:   kiln_widen to int32, then float32
//   float32 x 8 -> uint8 x 8:   float32 -> int32 -> uint8
std::vector<Type> conversion_steps(Type from, Type to) {
    bool from_int = from.is_int() || from.is_uint(), to_int = to.is_int() || to.is_uint();
    if ((from_int && to.is_float() && from.bits() < 32) || (from.is_float() && to_int && to.bits() < 32))
        return {Int(32, from.lanes())};
    return {};
}

// a and b if op is a rounding average of two vectors of an unsigned 8- or
// 16-bit type T, as the IR writes it (camera_pipe's avg()):
//   cast<T>((cast<W>(a) + cast<W>(b) + 1) / 2), a and b of type T,
// the three terms in any order and association, W an integer type at
// least twice T's width (so the sum cannot wrap). The prologue's
// kiln_rounding_average computes it in T's own lanes.
bool rounding_average_operands(const Cast *op, Expr &a, Expr &b) {
    Type t = op->type;
    const Div *div = op->value.as<Div>();
    if (!t.is_vector() || !t.is_uint() || (t.bits() != 8 && t.bits() != 16) || !div || !is_const(div->b, 2)) return false;
    Type w = div->type;
    if (w.is_float() || w.bits() < 2 * t.bits()) return false;
    std::vector<Expr> terms, pending = {div->a};
    while (!pending.empty()) {
        Expr e = pending.back();
        pending.pop_back();
        if (const Add *add = e.as<Add>()) {
            pending.push_back(add->a);
            pending.push_back(add->b);
        } else {
            terms.push_back(e);
        }
    }
    if (terms.size() != 3) return false;
    std::vector<Expr> narrow;
    bool one = false;
    for (const Expr &e : terms) {
        const Cast *c = e.as<Cast>();
        if (c && c->value.type() == t) narrow.push_back(c->value);
        else if (!one && is_one(e)) one = true;
        else return false;
    }
    if (!one || narrow.size() != 2) return false;
    a = narrow[0];
    b = narrow[1];
    return true;
}

const char *math_function(const std::string &name) {
    static const std::map<std::string, const char *> fns = {
        {"exp", "exp"},     {"log", "log"},     {"sqrt", "sqrt"},   {"pow", "pow"},   {"sin", "sin"},
        {"cos", "cos"},     {"tan", "tan"},     {"asin", "asin"},   {"acos", "acos"}, {"atan", "atan"},
        {"atan2", "atan2"}, {"sinh", "sinh"},   {"cosh", "cosh"},   {"tanh", "tanh"}, {"asinh", "asinh"},
        {"acosh", "acosh"}, {"atanh", "atanh"}, {"floor", "floor"}, {"ceil", "ceil"}, {"round", "nearbyint"},
        {"trunc", "trunc"}};
    auto it = fns.find(name);
    return it == fns.end() ? nullptr : it->second;
}

// The lane width a bool-vector expression has when printed on its own; 0 if
// it has none of its own (a broadcast), so the context chooses.
int CodeGen_C::mask_bits(const Expr &e) {
    if (const Variable *v = e.as<Variable>()) {
        auto it = mask_bits_of.find(v->name);
        return it == mask_bits_of.end() ? 32 : it->second;
    }
    // Numbers compared: their width; bool operands (always, for And, Or, Min and Max): their masks' width.
#define KILN_BINARY_CASE(N) \
    if (const N *op = e.as<N>()) return op->a.type().is_bool() ? common_mask_bits(op->a, op->b) : op->a.type().bits();
    KILN_BINARY_CASE(EQ) KILN_BINARY_CASE(NE) KILN_BINARY_CASE(LT) KILN_BINARY_CASE(LE) KILN_BINARY_CASE(GT)
    KILN_BINARY_CASE(GE) KILN_BINARY_CASE(And) KILN_BINARY_CASE(Or) KILN_BINARY_CASE(Min) KILN_BINARY_CASE(Max)
#undef KILN_BINARY_CASE
    if (const Not *op = e.as<Not>()) return mask_bits(op->a);
    if (const Select *op = e.as<Select>()) return common_mask_bits(op->true_value, op->false_value);
    if (const Cast *op = e.as<Cast>()) return op->value.type().is_bool() ? mask_bits(op->value) : op->value.type().bits();
    if (e.as<Broadcast>()) return 0;
    if (e.as<Load>()) return 8;
    if (const Let *op = e.as<Let>()) {
        if (!(op->value.type().is_bool() && op->value.type().is_vector())) return mask_bits(op->body);
        auto saved = mask_bits_of;  // the binding is scoped to the body
        mask_bits_of[op->name] = mask_bits_or_default(op->value);
        int b = mask_bits(op->body);
        mask_bits_of = saved;
        return b;
    }
    return 32;
}

// e, a bool vector, as a mask with `bits`-wide lanes.
std::string CodeGen_C::mask(const Expr &e, int bits) {
    int natural = mask_bits(e);
    if (natural == 0 || natural == bits) {
        int saved = wanted_mask_bits;
        wanted_mask_bits = bits;
        std::string s = print(e);
        wanted_mask_bits = saved;
        return s;
    }
    return "__builtin_convertvector(" + print(e) + ", " + mask_type(bits, e.type().lanes()) + ")";
}

// ---- Expressions ----

void CodeGen_C::visit(const IntImm *op) {
    int64_t v = op->value;
    if (op->type.bits() == 64) {
        result = v == INT64_MIN ? "INT64_MIN" : "INT64_C(" + std::to_string(v) + ")";
    } else if (op->type.bits() == 32) {
        result = v == INT32_MIN ? "(-2147483647 - 1)" : std::to_string(v);
    } else {
        result = "(" + scalar_c_type(op->type) + ")" + std::to_string(v);
    }
}
void CodeGen_C::visit(const UIntImm *op) {
    uint64_t v = op->value;
    if (op->type.is_bool()) result = v ? "true" : "false";
    else if (op->type.bits() == 64) result = "UINT64_C(" + std::to_string(v) + ")";
    else if (op->type.bits() == 32) result = std::to_string(v) + "u";
    else result = "(" + scalar_c_type(op->type) + ")" + std::to_string(v);
}
void CodeGen_C::visit(const FloatImm *op) {
    if (op->type.bits() == 16) return void(result = float16_literal(op));
    bool f32 = op->type.bits() == 32;
    const char *suffix = f32 ? "f" : "";
    if (std::isnan(op->value)) {
        result = f32 ? "__builtin_nanf(\"\")" : "__builtin_nan(\"\")";
    } else if (std::isinf(op->value)) {
        result = std::string(op->value < 0 ? "-" : "") + (f32 ? "__builtin_inff()" : "__builtin_inf()");
    } else {
        char buf[64];
        std::snprintf(buf, sizeof(buf), f32 ? "%.9g" : "%.17g", op->value);  // round-trips exactly
        result = buf;
        if (result.find_first_of(".e") == std::string::npos) result += ".0";
        result += suffix;
    }
}
void CodeGen_C::visit(const StringImm *op) { result = quoted(op->value); }

void CodeGen_C::visit(const Cast *op) {
    Type from = op->value.type(), to = op->type;
    if (from.is_float16_or_bfloat16() || to.is_float16_or_bfloat16()) {
        result = float16_cast(from, to, unparen(print(op->value)), c_type(to));
        uses_float16 = true;
    } else if (to.is_scalar()) {
        result = "(" + scalar_c_type(to) + ")" + paren(print(op->value));
    } else if (to.is_bool()) {
        result = from.is_bool() ? print(op->value) : "(" + print(op->value) + " != 0)";
    } else if (from.is_bool()) {
        result = "__builtin_convertvector(" + paren(print(op->value)) + " & 1, " + c_type(to) + ")";
    } else if (Expr a, b; rounding_average_operands(op, a, b)) {
        result = call("kiln_rounding_average", {a, b});
    } else {
        result = unparen(print(op->value));
        std::vector<Type> steps = conversion_steps(from, to);
        steps.push_back(to);
        Type now = from;
        for (Type t : steps) {
            bool widens = !now.is_float() && !t.is_float() && t.bits() > now.bits();
            result = (widens ? "kiln_widen<" + c_type(t) + ">(" : "__builtin_convertvector(") + result +
                     (widens ? ")" : ", " + c_type(t) + ")");
            now = t;
        }
    }
}

void CodeGen_C::visit(const Variable *op) { result = names.get(op->name); }

// (a op b) of type t; narrow scalar integers are cast back, as C promotes
// them to int. Narrow signed vectors wrap (IR.h) but vector lanes are not
// promoted, so they are added, subtracted and multiplied as unsigned lanes.
std::string CodeGen_C::arith(Type t, const std::string &a, const char *op, const std::string &b) {
    bool wraps = std::strcmp(op, "+") == 0 || std::strcmp(op, "-") == 0 || std::strcmp(op, "*") == 0;
    if (wraps && t.is_vector() && t.is_int() && t.bits() < 32) {
        std::string u = "(" + vector_type(TypeCode::UInt, t.bits(), t.lanes()) + ")";
        return "(" + c_type(t) + ")(" + u + paren(a) + " " + op + " " + u + paren(b) + ")";
    }
    std::string s = "(" + a + " " + op + " " + b + ")";
    if (t.is_scalar() && !t.is_float() && t.bits() < 32) s = "(" + scalar_c_type(t) + ")" + s;
    return s;
}
void CodeGen_C::visit(const Add *op) { result = arith(op->type, print(op->a), "+", print(op->b)); }
void CodeGen_C::visit(const Sub *op) { result = arith(op->type, print(op->a), "-", print(op->b)); }
void CodeGen_C::visit(const Mul *op) { result = arith(op->type, print(op->a), "*", print(op->b)); }
// Integer division by 2^k is an arithmetic shift (it rounds down, as the IR
// wants); modulo by 2^k keeps the low bits.
void CodeGen_C::visit(const Div *op) {
    int k = op->type.is_float() ? -1 : power_of_two_exponent(op->b);
    if (op->type.is_float()) result = "(" + print(op->a) + " / " + print(op->b) + ")";
    else if (k >= 0) result = arith(op->type, print(op->a), ">>", std::to_string(k));
    else result = call("kiln_div", {op->a, op->b});
}
void CodeGen_C::visit(const Mod *op) {
    int k = op->type.is_float() ? -1 : power_of_two_exponent(op->b);
    if (k >= 0) result = arith(op->type, print(op->a), "&", std::to_string((1ull << k) - 1));
    else result = call("kiln_mod", {op->a, op->b});
}
// On bool vectors min is and, max is or (a mask's true is -1, below false).
void CodeGen_C::visit(const Min *op) {
    if (op->type.is_bool() && op->type.is_vector()) result = logical(Expr(op), op->a, op->b, "&&", "&");
    else result = call("kiln_min", {op->a, op->b});
}
void CodeGen_C::visit(const Max *op) {
    if (op->type.is_bool() && op->type.is_vector()) result = logical(Expr(op), op->a, op->b, "||", "|");
    else result = call("kiln_max", {op->a, op->b});
}

// Comparisons: C operators on scalars, the prologue's kiln_lt etc. on
// vectors (which split vectors wider than a register). Masks hold true as
// -1, so ordering bool vectors flips.
std::string CodeGen_C::compare(const Expr &a, const Expr &b, const char *op, const char *flipped) {
    static const std::map<std::string, const char *> fns = {{"==", "kiln_eq"}, {"!=", "kiln_ne"}, {"<", "kiln_lt"},
                                                            {"<=", "kiln_le"}, {">", "kiln_gt"}, {">=", "kiln_ge"}};
    if (a.type().is_scalar()) return "(" + print(a) + " " + op + " " + print(b) + ")";
    if (a.type().is_bool()) {
        int bits = common_mask_bits(a, b);
        if (bits == 0) bits = wanted_mask_bits;
        return std::string(fns.at(flipped)) + "(" + unparen(mask(a, bits)) + ", " + unparen(mask(b, bits)) + ")";
    }
    return std::string(fns.at(op)) + "(" + unparen(print(a)) + ", " + unparen(print(b)) + ")";
}
void CodeGen_C::visit(const EQ *op) { result = compare(op->a, op->b, "==", "=="); }
void CodeGen_C::visit(const NE *op) { result = compare(op->a, op->b, "!=", "!="); }
void CodeGen_C::visit(const LT *op) { result = compare(op->a, op->b, "<", ">"); }
void CodeGen_C::visit(const LE *op) { result = compare(op->a, op->b, "<=", ">="); }
void CodeGen_C::visit(const GT *op) { result = compare(op->a, op->b, ">", "<"); }
void CodeGen_C::visit(const GE *op) { result = compare(op->a, op->b, ">=", "<="); }

// a op b on bools: && or || on scalars, & or | on masks of a common width.
std::string CodeGen_C::logical(const Expr &self, const Expr &a, const Expr &b, const char *scalar_op,
                               const char *mask_op) {
    if (self.type().is_scalar()) return "(" + print(a) + " " + scalar_op + " " + print(b) + ")";
    int bits = mask_bits_or_default(self);
    return "(" + mask(a, bits) + " " + mask_op + " " + mask(b, bits) + ")";
}
void CodeGen_C::visit(const And *op) { result = logical(Expr(op), op->a, op->b, "&&", "&"); }
void CodeGen_C::visit(const Or *op) { result = logical(Expr(op), op->a, op->b, "||", "|"); }
void CodeGen_C::visit(const Not *op) {
    result = (op->type.is_scalar() ? "!" : "~") + paren(print(op->a));
}

void CodeGen_C::visit(const Select *op) {
    Type t = op->type;
    const Broadcast *uniform = op->condition.as<Broadcast>();
    std::string cond;
    if (op->condition.type().is_scalar()) cond = paren(print(op->condition));
    else if (uniform) cond = paren(print(uniform->value));
    if (t.is_bool() && t.is_vector()) {
        int bits = mask_bits_or_default(Expr(op));
        if (!cond.empty()) {
            result = "(" + cond + " ? " + mask(op->true_value, bits) + " : " + mask(op->false_value, bits) + ")";
        } else {
            result = "kiln_select(" + unparen(mask(op->condition, bits)) + ", " + unparen(mask(op->true_value, bits)) +
                     ", " + unparen(mask(op->false_value, bits)) + ")";
        }
        return;
    }
    if (!cond.empty()) {
        result = "(" + cond + " ? " + print(op->true_value) + " : " + print(op->false_value) + ")";
    } else {
        // A mask picks lane by lane (kiln_select splits vectors wider than a register).
        result = "kiln_select(" + unparen(mask(op->condition, t.bits())) + ", " + unparen(print(op->true_value)) +
                 ", " + unparen(print(op->false_value)) + ")";
    }
}

namespace {

// The constant of a Broadcast of an integer constant, or 0.
int64_t broadcast_constant(const Expr &e) {
    const Broadcast *b = e.as<Broadcast>();
    const int64_t *c = b ? as_const_int(b->value) : nullptr;
    return c ? *c : 0;
}

// An index `offset + ramp(base, 1, N) / D` (Broadcasts added or subtracted
// around the quotient, in any order), as vectorize makes of f(x / D), for D
// a power of two and at most N / 2: the scalar offset, the ramp's base and D.
struct RepeatIndex {
    Expr offset, base;
    int divisor = 0;
};
bool match_repeat(const Expr &index, RepeatIndex &m) {
    if (const Div *d = index.as<Div>()) {
        const Ramp *r = d->a.as<Ramp>();
        int64_t k = broadcast_constant(d->b);
        if (!r || !is_one(r->stride) || k < 2 || (k & (k - 1)) != 0 || 2 * k > r->lanes) return false;
        m.base = r->base;
        m.divisor = (int)k;
        m.offset = make_zero(r->base.type());
        return true;
    }
    auto with_offset = [&](const Expr &term, const Expr &other, bool subtract) {
        const Broadcast *b = other.as<Broadcast>();
        if (!b || !match_repeat(term, m)) return false;
        m.offset = subtract ? m.offset - b->value : m.offset + b->value;
        return true;
    };
    if (const Add *a = index.as<Add>()) return with_offset(a->a, a->b, false) || with_offset(a->b, a->a, false);
    if (const Sub *s = index.as<Sub>()) return with_offset(s->a, s->b, true);
    return false;
}

// A gather's index as `lanes + broadcast(offset)`: the broadcasts added,
// subtracted or multiplied into it (through sums: (v + b) * k is v * k +
// b * k) move to the scalar offset, the rest stays in the lanes; either
// part is undefined when empty. Gathers that differ by a scalar (the eight
// corners of a trilinear slice, two channels: corner + 1, + row stride,
// + plane stride) then share their lanes, and the C++ compiler extracts
// each lane's index once for all of them. The parts are int32 like the
// index; they stay in range as the index does for any buffer whose offsets
// fit int32 (the kernel's limit).
struct GatherIndex {
    Expr lanes, offset;
};
GatherIndex split_gather_index(const Expr &index) {
    auto sum = [](const Expr &a, const Expr &b, bool subtract) -> Expr {
        if (!b.defined()) return a;
        if (!a.defined()) return subtract ? make_zero(b.type()) - b : b;
        return subtract ? a - b : a + b;
    };
    auto split_sum = [&](const Expr &a, const Expr &b, bool subtract) {
        GatherIndex x = split_gather_index(a), y = split_gather_index(b);
        return GatherIndex{sum(x.lanes, y.lanes, subtract), sum(x.offset, y.offset, subtract)};
    };
    if (const Broadcast *b = index.as<Broadcast>()) return {Expr(), b->value};
    if (const Add *a = index.as<Add>()) return split_sum(a->a, a->b, false);
    if (const Sub *s = index.as<Sub>()) return split_sum(s->a, s->b, true);
    if (const Mul *m = index.as<Mul>()) {
        const Broadcast *k = m->b.as<Broadcast>();
        Expr v = m->a;
        if (!k) {
            k = m->a.as<Broadcast>();
            v = m->b;
        }
        if (k) {
            GatherIndex x = split_gather_index(v);
            return {x.lanes.defined() ? x.lanes * Expr(k) : Expr(), x.offset.defined() ? x.offset * k->value : Expr()};
        }
    }
    return {index, Expr()};
}

}  // namespace

// The size of a stack array of bytes that a gather of 64 lanes reads as a
// table (kiln_lookup, kiln_shuffles.h: whole 128-byte blocks, at most 16),
// or 0.
int64_t CodeGen_C::table_lookup_bytes(const std::string &name) const {
    auto it = stack_arrays.find(name);
    if (it == stack_arrays.end() || slot_lanes.count(name)) return 0;
    const int64_t bytes = it->second.bytes;
    return bytes % 128 == 0 && bytes <= 2048 ? bytes : 0;
}

std::string CodeGen_C::slot_or_element(const std::string &name, const Expr &index) {
    auto slot = slot_lanes.find(name);
    if (slot == slot_lanes.end()) return "[" + unparen(print(index)) + "]";
    int64_t i = *as_const_int(index);  // vector_slot_lanes admits constant scalar indices only
    return "[" + std::to_string(i / slot->second) + "][" + std::to_string(i % slot->second) + "]";
}

// Loads: scalar, dense (ramp of stride 1), uniform (broadcast index),
// strided (a ramp of constant stride 2 to 4) or repeated lanes (f(x / D)),
// both from dense loads and shuffles, a byte table on the stack read with
// shuffles, or a gather (from the buffer plus its index's scalar offset,
// split_gather_index). Bool vectors are read as bytes and turned into
// 8-bit masks.
std::string CodeGen_C::load(Type t, const std::string &name, const Expr &index) {
    std::string buf = names.get(name);
    if (t.is_scalar()) return buf + slot_or_element(name, index);
    bool is_bool = t.is_bool();
    std::string v = is_bool ? vector_type(TypeCode::UInt, 8, t.lanes()) : c_type(t);
    std::string s;
    const Ramp *ramp = index.as<Ramp>();
    if (slot_lanes.count(name)) return buf + "[" + std::to_string(*as_const_int(ramp->base) / t.lanes()) + "]";
    if (const Broadcast *b = index.as<Broadcast>()) {
        std::string scalar = buf + "[" + unparen(print(b->value)) + "]";
        if (is_bool) return "kiln_broadcast<" + mask_type(8, t.lanes()) + ">(" + scalar + " ? -1 : 0)";
        return "kiln_broadcast<" + v + ">(" + scalar + ")";
    }
    const int64_t *stride = ramp ? as_const_int(ramp->stride) : nullptr;
    RepeatIndex repeat;
    if (ramp && is_one(ramp->stride)) {
        s = "kiln_load" + type_args(v, t.lanes()) + "(" + buf + " + " + print(ramp->base) + ")";
    } else if (stride && *stride >= 2 && *stride <= 4 && *stride <= t.lanes() && !padded(t.lanes())) {
        s = "kiln_load_stride<" + v + ", " + std::to_string(*stride) + ">(" + buf + " + " + print(ramp->base) + ")";
    } else if (!padded(t.lanes()) && match_repeat(index, repeat)) {
        s = "kiln_load_repeat<" + v + ", " + std::to_string(repeat.divisor) + ">(" + buf + " + " +
            print(simplify(repeat.offset)) + ", " + unparen(print(repeat.base)) + ")";
    } else if (t.bits() == 8 && t.lanes() == 64 && index.type().bits() == 32 && table_lookup_bytes(name)) {
        // A 16- or 8-bit value cast to the 32-bit index (camera_pipe's
        // curve(clamp(corrected, 0, 1023)), corrected int16) is passed as it
        // is: the lookup narrows it to bytes from fewer registers, and it
        // is not widened first. Its values are those of the index.
        const Cast *widened = index.as<Cast>();
        bool narrow = widened && !widened->value.type().is_float() && !widened->value.type().is_bool() &&
                      widened->value.type().bits() < 32;
        s = "kiln_lookup<" + v + ", " + std::to_string(table_lookup_bytes(name)) + ">(" + buf + ", " +
            unparen(print(narrow ? widened->value : index)) + ")";
    } else if (GatherIndex g = split_gather_index(index); g.lanes.defined() && g.offset.defined()) {
        s = "kiln_gather" + type_args(v, t.lanes()) + "(" + buf + " + " + paren(print(simplify(g.offset))) + ", " +
            unparen(print(g.lanes)) + ")";
    } else {
        s = "kiln_gather" + type_args(v, t.lanes()) + "(" + buf + ", " + unparen(print(index)) + ")";
    }
    return is_bool ? "(" + s + " != 0)" : s;
}
void CodeGen_C::visit(const Load *op) { result = load(op->type, op->name, op->index); }

void CodeGen_C::visit(const Ramp *op) {
    result = call("kiln_ramp<" + c_type(op->type) + ">", {op->base, op->stride});
}
void CodeGen_C::visit(const Broadcast *op) {
    std::string v = unparen(print(op->value));
    if (op->type.is_bool()) result = "kiln_broadcast<" + mask_type(wanted_mask_bits, op->lanes) + ">(" + paren(v) + " ? -1 : 0)";
    else result = "kiln_broadcast<" + c_type(op->type) + ">(" + v + ")";
}

void CodeGen_C::visit(const Call *op) {
    const char *fn = op->call_type == Call::PureExtern ? math_function(op->name) : nullptr;
    internal_assert(op->call_type == Call::PureExtern)
        << "call to " << op->name << " reached codegen; lowering should have replaced it with a Load";
    // The integer intrinsics of IROperator.cpp: & | ^ as C operators, the
    // others (shift amounts may be negative or too large) through the prologue.
    static const std::map<std::string, const char *> bitwise = {
        {"bitwise_and", "&"}, {"bitwise_or", "|"}, {"bitwise_xor", "^"}};
    auto b = bitwise.find(op->name);
    if (b != bitwise.end()) {
        result = arith(op->type, print(op->args[0]), b->second, print(op->args[1]));
        return;
    }
    static const std::map<std::string, const char *> helpers = {
        {"bitwise_not", "kiln_not"},
        {"shift_left", "kiln_shl"},
        {"shift_right", "kiln_shr"},
        {"count_leading_zeros", "kiln_count_leading_zeros"},
        {"count_trailing_zeros", "kiln_count_trailing_zeros"},
        {"popcount", "kiln_popcount"}};
    if (op->name == "prefetch") {  // prefetch("buf", index, extent_0, stride_0, ...): the prologue's kiln_prefetch
        const StringImm *buf = op->args[0].as<StringImm>();
        internal_assert(buf) << "prefetch of " << op->args[0];
        std::string box;
        for (size_t i = 2; i < op->args.size(); i++) box += (i > 2 ? ", " : "") + unparen(print(op->args[i]));
        if (box.empty()) box = "1, 1";  // a 0-D Func: its one element
        result = "kiln_prefetch(" + names.get(buf->value) + " + " + print(op->args[1]) + ", {" + box + "})";
        return;
    }
    if (op->name == "interleave_vectors") {  // the prologue's kiln_interleave (dsl/lower/InterleaveSelects.h)
        result = call("kiln_interleave<" + c_type(op->type) + ">", op->args);
        return;
    }
    auto h = helpers.find(op->name);
    if (h != helpers.end()) {
        result = call(h->second, op->args);
        return;
    }
    internal_assert(fn) << "unknown extern function " << op->name;
    internal_assert(op->type.is_float()) << op->name << " of " << op->type.to_string();
    // float32 exp, log and tanh are the prologue's own, for scalars too, so
    // that a vector body and its scalar tail give the same bits.
    // Under fast_math, tanh is the prologue's cheaper one (within 3.5 ulp
    // instead of 2.5).
    const bool own = op->type.bits() == 32 && (op->name == "exp" || op->name == "log" || op->name == "tanh");
    const bool fast = own && op->name == "tanh" && target.has(Target::FastMath);
    result = call(op->type.is_scalar() && !own ? std::string("kiln_libm_") + fn
                                               : "kiln_" + op->name + (fast ? "_fast" : ""),
                  op->args);
}

// Let: a GCC statement expression.
void CodeGen_C::visit(const Let *op) {
    std::string type = c_type_of(op->value), value = print_binding(op->name, op->value);
    std::string body = print(op->body);
    result = "({ const " + type + " " + names.get(op->name) + " = " + unparen(value) + "; " + unparen(body) + "; })";
}

}  // namespace codegen_c
}  // namespace internal
}  // namespace kiln
