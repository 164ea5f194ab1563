// The printer behind codegen_cpp() (CodeGen_C.h), shared by its two files:
// CodeGen_C.cpp holds the text helpers and prints expressions;
// CodeGen_CStmt.cpp prints statements and the whole function.
#pragma once
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <tuple>

#include "codegen/CNames.h"
#include "codegen/CodeGen_C.h"
#include "ir/IRVisitor.h"

namespace kiln {
namespace internal {
namespace codegen_c {

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

// ---- Text helpers (CodeGen_C.cpp) ----

// s in parentheses unless it is already one operand.
std::string paren(const std::string &s);
// Drops one pair of parentheses around the whole of s (not those of a
// statement expression "({ ... })").
std::string unparen(const std::string &s);
// s escaped for a C string literal (and for a printf format, '%' doubled).
std::string escape(const std::string &s, bool printf_format);
std::string quoted(const std::string &s);
std::string scalar_c_type(Type t);

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
    // Every stack array in scope: its C element type, element count and
    // bytes, and whether every access names its element by a constant (g++
    // then keeps its elements in registers: a copy must not take its
    // address, emit_shared_edges).
    struct StackArray {
        std::string type;
        int64_t count, bytes;
        bool constant_indices;
    };
    std::map<std::string, StackArray> stack_arrays;
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
    // The subscript of one element of buffer `name`: "[index]", or of a
    // vector slot's lane, "[slot][lane]" (VectorSlots.h).
    std::string slot_or_element(const std::string &name, const Expr &index);
    int64_t table_lookup_bytes(const std::string &name) const;
    void emit_signature_and_checks();
    void emit_argv_wrapper();
    bool emit_shared_edges(const Stmt &first, const Stmt &steady, const Stmt &last);

#define KILN_VISIT_DECL(N) void visit(const N *) override;
    KILN_FOR_EACH_EXPR_NODE(KILN_VISIT_DECL)
    KILN_FOR_EACH_STMT_NODE(KILN_VISIT_DECL)
#undef KILN_VISIT_DECL
};

}  // namespace codegen_c
}  // namespace internal
}  // namespace kiln
