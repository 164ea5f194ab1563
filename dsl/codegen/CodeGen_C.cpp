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
#include "codegen/CodeGen_Float16.h"
#include "codegen/VectorSlots.h"
#include "ir/IRVisitor.h"
#include "ir/Simplify.h"

// The runtime files, embedded at build time by cmake/KilnEmbed.cmake.
extern const char kiln_embedded_kiln_runtime_h[];
extern const char kiln_embedded_kiln_prologue_h[];
extern const char kiln_embedded_kiln_shuffles_h[];
extern const char kiln_embedded_kiln_runtime_cpp[];

namespace kiln {
namespace internal {

const std::string &runtime_source_text() {
    static const std::string text = kiln_embedded_kiln_runtime_cpp;
    return text;
}

const std::string &prologue_source_text() {
    static const std::string text = std::string(kiln_embedded_kiln_runtime_h) + "\n" + kiln_embedded_kiln_prologue_h +
                                    "\n" + kiln_embedded_kiln_shuffles_h + "\n";
    return text;
}

const char *runtime_header_text() { return kiln_embedded_kiln_runtime_h; }

namespace {

// ---- C identifiers for IR names ----

// One C identifier per IR name, unique in the emitted function.
class Names {
public:
    const std::string &get(const std::string &ir_name) {
        auto it = c_of.find(ir_name);
        if (it != c_of.end()) return it->second;
        std::string id = c_mangle(ir_name);
        if (id.empty() || std::isdigit((unsigned char)id[0])) id = "v_" + id;
        return c_of[ir_name] = fresh(id);
    }
    // A new identifier not bound to any IR name.
    std::string fresh(std::string id) {
        if (is_reserved_c_name(id) && is_reserved_c_name(id + "_")) id = "v_" + id;  // a reserved prefix stays reserved
        while (is_reserved_c_name(id) || taken.count(id)) id += '_';
        taken.insert(id);
        return id;
    }

private:
    std::map<std::string, std::string> c_of;
    std::set<std::string> taken;
};

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
        {"exp", "exp"}, {"log", "log"}, {"sqrt", "sqrt"}, {"pow", "pow"}, {"sin", "sin"}, {"cos", "cos"},
        {"tanh", "tanh"}, {"floor", "floor"}, {"ceil", "ceil"}, {"round", "nearbyint"}};
    auto it = fns.find(name);
    return it == fns.end() ? nullptr : it->second;
}

bool allocation_on_stack(const Allocate *op) {
    const int64_t *n = as_const_int(op->size);
    return n && *n * op->type.bytes() <= 64 * 1024;  // thread stacks are MiBs
}

// Whether emitting s produces a `return` (a failed assert or a failed heap
// allocation): in the body of a parallel loop, such a failure records its
// code and jumps to the end of the iteration instead.
class MayReturn : public IRVisitor {
public:
    explicit MayReturn(bool asserts) : asserts(asserts) {}
    bool result = false;

private:
    bool asserts;
    using IRVisitor::visit;
    void visit(const AssertStmt *) override { result |= asserts; }
    void visit(const Allocate *op) override {
        result |= !allocation_on_stack(op);
        IRVisitor::visit(op);
    }
};

// Whether s declares C names into the enclosing block (so a Block wraps it in
// braces to keep the IR's scoping).
bool declares(const Stmt &s) {
    if (s.as<LetStmt>() || s.as<Allocate>()) return true;
    if (const Block *b = s.as<Block>()) return declares(b->first) || declares(b->rest);
    if (const ProducerConsumer *pc = s.as<ProducerConsumer>()) return declares(pc->body);
    return false;
}

class CodeGen_C : public IRVisitor {
public:
    CodeGen_C(const LoweredFunc &f, const Target &t) : func(f), target(t) {}
    std::string emit();

private:
    const LoweredFunc &func;
    Target target;
    Names names;
    std::ostringstream out;  // the function bodies
    int indent = 0;
    std::string result;                       // of the last expression visited
    std::set<std::tuple<TypeCode, int, int>> vector_types;  // (code, bits, lanes) used
    std::map<std::string, int> mask_bits_of;  // lane width of bool-vector variables
    std::map<std::string, int> slot_lanes;    // stack arrays of vectors (VectorSlots.h): their lanes
    std::map<std::string, int64_t> stack_bytes;  // other stack arrays: their sizes in bytes
    int wanted_mask_bits = 32;                // for bool vectors of no natural width
    bool uses_float16 = false;                // converts 16-bit floats (CodeGen_Float16.h)
    // Where a failure goes inside the body of a parallel loop (empty: the
    // function returns its code): the iteration's error variable and the
    // label at the end of the iteration.
    std::string fail_code, fail_label;

    using IRVisitor::visit;

    std::ostream &line() { return out << std::string(4 * indent, ' '); }
    // Fail with `code`: return it, or in a parallel loop's body record it
    // and leave the iteration.
    void emit_fail(const std::string &code) {
        if (fail_label.empty()) {
            line() << "return " << code << ";\n";
            return;
        }
        line() << fail_code << " = " << code << ";\n";
        line() << "goto " << fail_label << ";\n";
    }
    std::string print(const Expr &e) {
        include(e);
        return result;
    }
    void print_body(const Stmt &s) {
        indent++;
        include(s);
        indent--;
    }

    // ---- types ----
    std::string vector_type(TypeCode code, int bits, int lanes) {
        vector_types.insert({code, bits, lanes});
        return Type(code, bits, lanes).to_string();
    }
    std::string mask_type(int bits, int lanes) { return vector_type(TypeCode::Int, bits, lanes); }
    std::string c_type(Type t) {
        internal_assert(!(t.is_bool() && t.is_vector())) << "bool vectors are masks";
        return t.is_scalar() ? scalar_c_type(t) : vector_type(t.code(), t.bits(), t.lanes());
    }
    // The C type of e's value, masks included.
    std::string c_type_of(const Expr &e) {
        Type t = e.type();
        if (t.is_bool() && t.is_vector()) return mask_type(mask_bits_or_default(e), t.lanes());
        return c_type(t);
    }
    // "<V>" or "<V, N>" when V is padded past N lanes.
    static bool padded(int lanes) { return (lanes & (lanes - 1)) != 0; }
    static std::string type_args(const std::string &v, int lanes) {
        return "<" + v + (padded(lanes) ? ", " + std::to_string(lanes) : "") + ">";
    }
    // "<N>" when the vector is padded past its N lanes.
    static std::string count_args(int lanes) { return padded(lanes) ? "<" + std::to_string(lanes) + ">" : ""; }

    // ---- bool vectors ----
    int mask_bits(const Expr &e);
    int mask_bits_or_default(const Expr &e) {
        int b = mask_bits(e);
        return b ? b : wanted_mask_bits;
    }
    int common_mask_bits(const Expr &a, const Expr &b) {
        int x = mask_bits(a);
        return x ? x : mask_bits(b);
    }
    std::string mask(const Expr &e, int bits);
    std::string print_binding(const std::string &name, const Expr &value);

    std::string arith(Type t, const std::string &a, const char *op, const std::string &b);
    std::string compare(const Expr &a, const Expr &b, const char *op, const char *flipped);
    std::string logical(const Expr &self, const Expr &a, const Expr &b, const char *scalar_op, const char *mask_op);
    std::string call(const std::string &fn, const std::vector<Expr> &args) {
        std::string s = fn + "(";
        for (size_t i = 0; i < args.size(); i++) s += (i ? ", " : "") + unparen(print(args[i]));
        return s + ")";
    }
    std::string load(Type t, const std::string &name, const Expr &index);
    int64_t table_lookup_bytes(const std::string &name) const;
    void emit_signature_and_checks();
    void emit_argv_wrapper();

#define KILN_VISIT_DECL(N) void visit(const N *) override;
    KILN_FOR_EACH_EXPR_NODE(KILN_VISIT_DECL)
    KILN_FOR_EACH_STMT_NODE(KILN_VISIT_DECL)
#undef KILN_VISIT_DECL
};

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
        result = "__builtin_convertvector(" + unparen(print(op->value)) + ", " + c_type(to) + ")";
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
    auto it = stack_bytes.find(name);
    if (it == stack_bytes.end()) return 0;
    return it->second % 128 == 0 && it->second <= 2048 ? it->second : 0;
}

// Loads: scalar, dense (ramp of stride 1), uniform (broadcast index),
// strided (a ramp of constant stride 2 to 4) or repeated lanes (f(x / D)),
// both from dense loads and shuffles, a byte table on the stack read with
// shuffles, or a gather (from the buffer plus its index's scalar offset,
// split_gather_index). Bool vectors are read as bytes and turned into
// 8-bit masks.
std::string CodeGen_C::load(Type t, const std::string &name, const Expr &index) {
    std::string buf = names.get(name);
    if (t.is_scalar()) return buf + "[" + unparen(print(index)) + "]";
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
    const bool own = op->type.bits() == 32 && (op->name == "exp" || op->name == "log" || op->name == "tanh");
    result = call(op->type.is_scalar() && !own ? std::string("kiln_libm_") + fn : "kiln_" + op->name, op->args);
}

// Let: a GCC statement expression.
void CodeGen_C::visit(const Let *op) {
    std::string type = c_type_of(op->value), value = print_binding(op->name, op->value);
    std::string body = print(op->body);
    result = "({ const " + type + " " + names.get(op->name) + " = " + unparen(value) + "; " + unparen(body) + "; })";
}

// ---- Statements ----

// The value bound to `name`; a mask keeps its natural width, remembered for
// the uses of `name`.
std::string CodeGen_C::print_binding(const std::string &name, const Expr &value) {
    if (!(value.type().is_bool() && value.type().is_vector())) return print(value);
    int bits = mask_bits_or_default(value);
    mask_bits_of[name] = bits;
    return mask(value, bits);
}

void CodeGen_C::visit(const LetStmt *op) {
    std::string type = c_type_of(op->value), value = print_binding(op->name, op->value);
    line() << "const " << type << " " << names.get(op->name) << " = " << unparen(value) << ";\n";
    include(op->body);
}

void CodeGen_C::visit(const AssertStmt *op) {
    if (target.has(Target::NoAsserts)) return;
    std::string call = assert_error_call(func.name, op->message, [&](const Expr &e) { return paren(print(e)); });
    line() << "if (!" << paren(print(op->condition)) << ") {\n";
    indent++;
    line() << call << "\n";
    emit_fail(std::to_string(op->error_code));
    indent--;
    line() << "}\n";
}

void CodeGen_C::visit(const ProducerConsumer *op) {
    line() << "// " << (op->is_producer ? "produce " : "consume ") << op->name << "\n";
    include(op->body);
}

void CodeGen_C::visit(const For *op) {
    internal_assert(op->for_type == ForType::Serial || op->for_type == ForType::Parallel ||
                    op->for_type == ForType::LaneFallback)
        << "loop " << op->name << " is vectorized or unrolled; lowering should have removed it";
    std::string var = names.get(op->name);
    std::string min_operand = print(op->min), extent = print(op->extent), min = unparen(min_operand);
    std::string end = is_zero(op->min) ? unparen(extent) : min_operand + " + " + extent;
    if (op->for_type != ForType::Parallel) {
        // A vectorized loop's per-lane tail runs once per loop nest: g++
        // -O3 would unroll it completely (a guarded copy of the body per
        // lane), a third of a row reduction's compile time for nothing.
        if (op->for_type == ForType::LaneFallback) line() << "#pragma GCC unroll 1\n";
        std::string end_var = names.fresh(var + "_end");
        line() << "for (int32_t " << var << " = " << min << ", " << end_var << " = " << end << "; " << var << " < "
               << end_var << "; ++" << var << ") {\n";
        print_body(op->body);
        line() << "}\n";
        return;
    }
    // A parallel body that may fail runs in a block of its own; a failure
    // records its code and jumps past the block (leaving its scopes frees
    // their heap blocks), and the code of a failing iteration is returned
    // after the loop. Not a lambda: a lambda captures the function's
    // variables by reference, so g++ reloads every float of them (a
    // parameter, 1 / r_sigma) after each store through a float pointer.
    MayReturn may_return(!target.has(Target::NoAsserts));
    may_return.include(op->body);
    std::string error, code;
    if (may_return.result) {
        error = names.fresh(var + "_error");
        code = names.fresh("err");
        line() << "int " << error << " = 0;\n";
    }
    line() << "#pragma omp parallel for num_threads(kiln_num_threads())\n";
    line() << "for (int32_t " << var << " = " << min << "; " << var << " < " << end << "; ++" << var << ") {\n";
    if (!may_return.result) {
        print_body(op->body);
        line() << "}\n";
        return;
    }
    indent++;
    std::string label = names.fresh(var + "_exit");
    line() << "int " << code << " = 0;\n";
    line() << "{\n";
    std::string outer_code = fail_code, outer_label = fail_label;
    fail_code = code;
    fail_label = label;
    print_body(op->body);
    fail_code = outer_code;
    fail_label = outer_label;
    line() << "}\n";
    line() << label << ":\n";
    line() << "if (" << code << " != 0) {\n";
    indent++;
    line() << "#pragma omp atomic write\n";
    line() << error << " = " << code << ";\n";
    indent--;
    line() << "}\n";
    indent--;
    line() << "}\n";
    line() << "if (" << error << " != 0) {\n";
    indent++;
    emit_fail(error);
    indent--;
    line() << "}\n";
}

void CodeGen_C::visit(const Store *op) {
    std::string buf = names.get(op->name);
    Type t = op->value.type();
    if (target.has(Target::Trace))
        line() << "kiln_trace_store(\"" << escape(op->name, false) << "\", " << t.lanes() << ");\n";
    if (t.is_scalar()) {
        line() << buf << "[" << unparen(print(op->index)) << "] = " << unparen(print(op->value)) << ";\n";
        return;
    }
    std::string value = t.is_bool() ? "__builtin_convertvector(" + mask(op->value, 8) + " & 1, " +
                                          vector_type(TypeCode::UInt, 8, t.lanes()) + ")"
                                    : unparen(print(op->value));
    const Ramp *ramp = op->index.as<Ramp>();
    if (slot_lanes.count(op->name)) {
        line() << buf << "[" << *as_const_int(ramp->base) / t.lanes() << "] = " << value << ";\n";
    } else if (ramp && is_one(ramp->stride)) {
        line() << "kiln_store" << count_args(t.lanes()) << "(" << buf << " + " << print(ramp->base) << ", "
               << value << ");\n";
    } else {
        line() << "kiln_scatter" << count_args(t.lanes()) << "(" << buf << ", "
               << unparen(print(op->index)) << ", " << value << ");\n";
    }
}

void CodeGen_C::visit(const Provide *op) {
    internal_error << "Provide to " << op->name << " reached codegen; storage flattening should have removed it";
}
void CodeGen_C::visit(const Realize *op) {
    internal_error << "Realize of " << op->name << " reached codegen; storage flattening should have removed it";
}

void CodeGen_C::visit(const Allocate *op) {
    std::string name = names.get(op->name), type = scalar_c_type(op->type.element_of());
    if (target.has(Target::Trace)) line() << "kiln_trace_realize(\"" << escape(op->name, false) << "\");\n";
    const int lanes = allocation_on_stack(op) ? vector_slot_lanes(op) : 0;
    if (lanes) {
        // Whole vectors at constant offsets only: an array of vectors, whose
        // slots g++ keeps in registers (VectorSlots.h).
        Type t = op->type.element_of();
        line() << "alignas(64) " << vector_type(t.code(), t.bits(), lanes) << " " << name << "["
               << *as_const_int(op->size) / lanes << "];\n";
        slot_lanes[op->name] = lanes;
    } else if (allocation_on_stack(op)) {
        int64_t n = std::max<int64_t>(*as_const_int(op->size), 1);
        line() << "alignas(64) " << type << " " << name << "[" << n << "];\n";
        stack_bytes[op->name] = n * op->type.bytes();
    } else {
        std::string heap = names.fresh(name + "_heap");
        // The size is a product of int32 extents: multiply in 64 bits, so
        // that kiln_heap sees (and refuses) a size past what int32 indexes.
        std::function<Expr(const Expr &)> widen = [&](const Expr &e) -> Expr {
            if (const Mul *m = e.as<Mul>()) return Mul::make(widen(m->a), widen(m->b));
            return e.type() == Int(64) ? e : Cast::make(Int(64), e);
        };
        line() << "kiln_heap " << heap << "(" << unparen(print(op->size.as<Mul>() ? widen(op->size) : op->size)) << ", sizeof(" << type << "));\n";
        line() << "if (!" << heap << ".ptr) {\n";
        indent++;
        line() << "kiln_error(\"" << escape(func.name + ": out of memory allocating ", true)
               << "%lld elements (%lld bytes) for '" << escape(op->name, true)
               << "'; a kernel allocates at most 2147483647 elements per Func\", " << heap << ".count, " << heap
               << ".bytes);\n";
        emit_fail("kiln_error_out_of_memory");
        indent--;
        line() << "}\n";
        line() << type << " *" << name << " = (" << type << " *)" << heap << ".ptr;\n";
    }
    include(op->body);
    slot_lanes.erase(op->name);
    stack_bytes.erase(op->name);
}

void CodeGen_C::visit(const Block *op) {
    if (declares(op->first)) {
        line() << "{\n";
        print_body(op->first);
        line() << "}\n";
    } else {
        include(op->first);
    }
    include(op->rest);
}

void CodeGen_C::visit(const IfThenElse *op) {
    line() << "if (" << unparen(print(op->condition)) << ") {\n";
    const IfThenElse *branch = op;
    while (true) {
        print_body(branch->then_case);
        const IfThenElse *next = branch->else_case.as<IfThenElse>();
        if (next) {
            line() << "} else if (" << unparen(print(next->condition)) << ") {\n";
            branch = next;
        } else {
            if (branch->else_case.defined()) {
                line() << "} else {\n";
                print_body(branch->else_case);
            }
            break;
        }
    }
    line() << "}\n";
}

void CodeGen_C::visit(const Evaluate *op) {
    if (is_const(op->value)) return;
    if (const Call *c = op->value.as<Call>(); c && c->name == "prefetch") {
        line() << print(op->value) << ";\n";
        return;
    }
    line() << "(void)" << paren(print(op->value)) << ";\n";
}

// ---- The function ----

void CodeGen_C::emit_signature_and_checks() {
    std::vector<std::string> params;
    for (const LoweredArgument &a : func.args) {
        if (a.is_buffer) params.push_back("halide_buffer_t *" + names.fresh(names.get(a.name) + "_buffer"));
        else params.push_back(scalar_c_type(a.type) + " " + names.get(a.name));
    }
    out << "extern \"C\" int " << func.name << "(";
    for (size_t i = 0; i < params.size(); i++) out << (i ? ", " : "") << params[i];
    out << ") {\n";
    indent = 1;
    // The C name of buffer argument i's halide_buffer_t pointer.
    auto buf_name = [&](size_t i) { return params[i].substr(std::string("halide_buffer_t *").size()); };
    for (size_t i = 0; i < func.args.size(); i++) {
        const LoweredArgument &a = func.args[i];
        if (!a.is_buffer) continue;
        std::string buf = buf_name(i);
        std::string host = names.get(a.name), type = scalar_c_type(a.type.element_of());
        std::string ptr = (a.is_output ? "" : "const ") + type + " *";
        line() << "if (int err = kiln_check_buffer(" << buf << ", \"" << func.name << "\", " << quoted(a.name)
               << ", " << halide_type_code_name(a.type.code()) << ", " << (int)a.type.bits() << ", " << a.dimensions << ")) return err;\n";
        line() << ptr << host << " = (" << ptr << ")" << buf << "->host;\n";
        for (int d = 0; d < a.dimensions; d++) {
            for (const char *field : {"min", "extent", "stride"}) {
                line() << "const int32_t " << names.get(a.name + "." + field + "." + std::to_string(d)) << " = " << buf
                       << "->dim[" << d << "]." << field << ";\n";
            }
        }
    }
    // A kernel reads its inputs while it writes its outputs (intermediates
    // and tiles in any order), so an output may share no memory with an input.
    for (size_t i = 0; i < func.args.size(); i++) {
        if (!func.args[i].is_buffer || !func.args[i].is_output) continue;
        for (size_t j = 0; j < func.args.size(); j++) {
            if (!func.args[j].is_buffer || func.args[j].is_output) continue;
            line() << "if (int err = kiln_check_no_overlap(" << buf_name(j) << ", " << buf_name(i) << ", \"" << func.name
                   << "\", " << quoted(func.args[j].name) << ", " << quoted(func.args[i].name) << ")) return err;\n";
        }
    }
    // Empty outputs (an extent of 0): nothing to compute, nothing to read.
    std::string all_empty;
    for (size_t i = 0; i < func.args.size(); i++) {
        if (!func.args[i].is_buffer || !func.args[i].is_output) continue;
        all_empty += (all_empty.empty() ? "" : " && ") + std::string("kiln_buffer_is_empty(") + buf_name(i) + ")";
    }
    if (!all_empty.empty()) line() << "if (" << all_empty << ") return 0;  // empty outputs: nothing to compute\n";
}

void CodeGen_C::emit_argv_wrapper() {
    out << "\nextern \"C\" int " << func.name << "_argv(void **args) {\n";
    out << "    return " << func.name << "(";
    for (size_t i = 0; i < func.args.size(); i++) {
        const LoweredArgument &a = func.args[i];
        out << (i ? ",\n        " : "");
        if (a.is_buffer) out << "(halide_buffer_t *)args[" << i << "]";
        else out << "*(const " << scalar_c_type(a.type) << " *)args[" << i << "]";
    }
    out << ");\n}\n";
}

std::string CodeGen_C::emit() {
    internal_assert(!func.name.empty() && !std::isdigit((unsigned char)func.name[0]) &&
                    func.name.find_first_not_of("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_") ==
                        std::string::npos)
        << "kernel name '" << func.name << "' is not a C identifier";
    emit_signature_and_checks();
    include(func.body);
    line() << "return 0;\n";
    out << "}\n";
    emit_argv_wrapper();

    std::ostringstream file;
    file << "// Generated by Kiln: kernel " << func.name << " for target " << target.to_string() << ".\n"
         << "// Every buffer field is unpacked, used or not.\n"
         << "#pragma GCC diagnostic ignored \"-Wunused-variable\"\n\n"
         << prologue_source_text() << (uses_float16 ? float16_source_text() : "");
    if (!vector_types.empty()) file << "// Vector types used below.\n";
    for (const auto &[code, bits, lanes] : vector_types) {
        int padded = 1;
        while (padded < lanes) padded *= 2;
        file << "typedef " << scalar_c_type(Type(code, bits)) << " " << Type(code, bits, lanes).to_string()
             << " __attribute__((vector_size(" << padded * Type(code, bits).bytes() << ")));\n";
    }
    file << "\n" << out.str();
    return file.str();
}

}  // namespace

std::string assert_error_call(const std::string &kernel, const std::vector<Expr> &message,
                              const std::function<std::string(const Expr &)> &print) {
    std::string format, args;
    for (const Expr &part : message) {
        if (const StringImm *s = part.as<StringImm>()) {
            format += escape(s->value, true);
            continue;
        }
        Type t = part.type();
        internal_assert(t.is_scalar()) << "vector in an assert message";
        const char *spec = t.is_float() ? "%g" : t.bits() == 64 ? (t.is_uint() ? "%llu" : "%lld") : t.is_uint() && !t.is_bool() ? "%u" : "%d";
        const char *cast = t.is_float() ? "(double)" : t.bits() == 64 ? (t.is_uint() ? "(unsigned long long)" : "(long long)") : t.is_uint() && !t.is_bool() ? "(unsigned)" : "(int)";
        format += spec;
        args += std::string(", ") + cast + print(part);
    }
    if (message.empty()) format = escape(kernel + ": check failed", true);
    // Every message names the kernel (the entry checks already start with it).
    std::string prefix = escape(kernel + ": ", true);
    if (format.compare(0, prefix.size(), prefix) != 0) format = prefix + format;
    return "kiln_error(\"" + format + "\"" + args + ");";
}

std::string codegen_cpp(const LoweredFunc &f, const Target &t) { return CodeGen_C(f, t).emit(); }

}  // namespace internal
}  // namespace kiln
