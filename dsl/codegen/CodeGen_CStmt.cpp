// codegen_cpp()'s printer (CodeGen_CPrinter.h), part two: the statements
// and the whole function (its signature, entry checks, argv wrapper and the
// vector typedefs it uses); the expressions are printed by CodeGen_C.cpp.
#include <algorithm>
#include <cstdio>
#include <functional>
#include <map>
#include <set>
#include <sstream>
#include <tuple>

#include "codegen/CodeGen_C.h"
#include "codegen/CodeGen_CPrinter.h"
#include "codegen/CodeGen_Float16.h"
#include "codegen/VectorSlots.h"
#include "ir/BoundNames.h"
#include "ir/IRVisitor.h"
#include "ir/Simplify.h"
#include "ir/Substitute.h"
#include "lower/BoundAllocations.h"

namespace kiln {
namespace internal {
namespace codegen_c {

namespace {

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

// A statement with the names it binds renamed, and their uses: the
// epilogue's body named as the prologue's, whose lets the passes after
// partition_loops named apart (cse.7 there, cse.15 here).
class Rename : public IRMutator {
public:
    explicit Rename(std::map<std::string, std::string> to) : to(std::move(to)) {}

private:
    std::map<std::string, std::string> to;
    using IRMutator::visit;
    std::string name(const std::string &n) const {
        auto it = to.find(n);
        return it == to.end() ? n : it->second;
    }
    Expr visit(const Variable *op) override {
        return to.count(op->name) ? Variable::make(op->type, name(op->name), op->param, op->rdom) : Expr(op);
    }
    Expr visit(const Let *op) override { return Let::make(name(op->name), mutate(op->value), mutate(op->body)); }
    Stmt visit(const LetStmt *op) override {
        return LetStmt::make(name(op->name), mutate(op->value), mutate(op->body));
    }
    Stmt visit(const For *op) override {
        return For::make(name(op->name), mutate(op->min), mutate(op->extent), op->for_type, mutate(op->body));
    }
    Stmt visit(const Allocate *op) override {
        return Allocate::make(name(op->name), op->type, mutate(op->size), mutate(op->body), name(op->in_output),
                              op->in_place.defined() ? mutate(op->in_place) : Expr());
    }
    Expr visit(const Load *op) override { return Load::make(op->type, name(op->name), mutate(op->index)); }
    Stmt visit(const Store *op) override { return Store::make(name(op->name), mutate(op->value), mutate(op->index)); }
};

// `of` with the names it binds renamed as `as` binds its own, position by
// position; undefined if they bind different numbers of names.
Stmt named_as(const Stmt &of, const Stmt &as) {
    std::vector<std::string> from = bound_names(of), to = bound_names(as);
    if (from.size() != to.size()) return Stmt();
    std::map<std::string, std::string> map;
    for (size_t i = 0; i < from.size(); i++)
        if (from[i] != to[i]) map[from[i]] = to[i];
    return map.empty() ? of : Rename(std::move(map)).mutate(of);
}

}  // namespace

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
    //
    // A parallel loop whose body is another parallel loop over a range that
    // does not depend on it (iir_blur's channels, then strips of rows) is
    // one OpenMP loop over both (collapse(2)): OpenMP runs a parallel loop
    // nested in another on one thread, so 3 channels on 2 threads left one
    // idle for a third of the time.
    const For *inner = op->body.as<For>();
    if (inner && (inner->for_type != ForType::Parallel || expr_uses_var(inner->min, op->name) ||
                  expr_uses_var(inner->extent, op->name)))
        inner = nullptr;
    std::string inner_var, inner_min, inner_end;
    if (inner) {
        inner_var = names.get(inner->name);
        std::string inner_min_operand = print(inner->min), inner_extent = print(inner->extent);
        inner_min = unparen(inner_min_operand);
        inner_end = is_zero(inner->min) ? unparen(inner_extent) : inner_min_operand + " + " + inner_extent;
    }
    const Stmt &body = inner ? inner->body : op->body;
    MayReturn may_return(!target.has(Target::NoAsserts));
    may_return.include(body);
    std::string error, code;
    if (may_return.result) {
        error = names.fresh((inner ? inner_var : var) + "_error");
        code = names.fresh("err");
        line() << "int " << error << " = 0;\n";
    }
    line() << "#pragma omp parallel for " << (inner ? "collapse(2) " : "") << "num_threads(kiln_num_threads())\n";
    line() << "for (int32_t " << var << " = " << min << "; " << var << " < " << end << "; ++" << var << ")"
           << (inner ? "\n" : " {\n");
    if (inner)
        line() << "for (int32_t " << inner_var << " = " << inner_min << "; " << inner_var << " < " << inner_end
               << "; ++" << inner_var << ") {\n";
    if (!may_return.result) {
        print_body(body);
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
    print_body(body);
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
        line() << buf << slot_or_element(op->name, op->index) << " = " << unparen(print(op->value)) << ";\n";
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
        stack_arrays[op->name] = {vector_type(t.code(), t.bits(), lanes), *as_const_int(op->size) / lanes,
                                  *as_const_int(op->size) * t.bytes(), true};
    } else if (allocation_on_stack(op)) {
        int64_t n = std::max<int64_t>(*as_const_int(op->size), 1);
        line() << "alignas(64) " << type << " " << name << "[" << n << "];\n";
        stack_arrays[op->name] = {type, n, n * op->type.bytes(), scalars_at_constant_indices(op)};
    } else {
        std::string heap = names.fresh(name + "_heap");
        // The size is a product of int32 extents: multiply in 64 bits, so
        // that kiln_heap sees (and refuses) a size past what int32 indexes.
        std::function<Expr(const Expr &)> widen = [&](const Expr &e) -> Expr {
            if (const Mul *m = e.as<Mul>()) return Mul::make(widen(m->a), widen(m->b));
            return e.type() == Int(64) ? e : Cast::make(Int(64), e);
        };
        std::string size = unparen(print(op->size.as<Mul>() ? widen(op->size) : op->size)), in_place;
        // An output's buffer when in_place holds: nothing to allocate then.
        if (!op->owns_memory()) {
            in_place = print(op->in_place);
            size = in_place + " ? 0 : " + paren(size);
        }
        line() << "kiln_heap " << heap << "(" << size << ", sizeof(" << type << "));\n";
        line() << "if (" << (in_place.empty() ? "" : "!" + in_place + " && ") << "!" << heap << ".ptr) {\n";
        indent++;
        line() << "kiln_error(\"" << escape(func.name + ": out of memory allocating ", true)
               << "%lld elements (%lld bytes) for '" << escape(op->name, true)
               << "'; a kernel allocates at most 2147483647 elements per Func\", " << heap << ".count, " << heap
               << ".bytes);\n";
        emit_fail("kiln_error_out_of_memory");
        indent--;
        line() << "}\n";
        line() << type << " *" << name << " = " << (in_place.empty() ? "" : in_place + " ? " + names.get(op->in_output) + " : ")
               << "(" << type << " *)" << heap << ".ptr;\n";
    }
    include(op->body);
    slot_lanes.erase(op->name);
    stack_arrays.erase(op->name);
}

void CodeGen_C::visit(const Block *op) {
    // The statements along the block's spine (a Block in `first` is one
    // statement: its names are scoped).
    std::vector<Stmt> stmts;
    Stmt s(op);
    for (const Block *b; (b = s.as<Block>()); s = b->rest) stmts.push_back(b->first);
    if (s.defined()) stmts.push_back(s);
    for (size_t i = 0; i < stmts.size(); i++) {
        if (i + 2 < stmts.size() && emit_shared_edges(stmts[i], stmts[i + 1], stmts[i + 2])) {
            i += 2;
        } else if (i + 1 < stmts.size() && declares(stmts[i])) {
            line() << "{\n";
            print_body(stmts[i]);
            line() << "}\n";
        } else {
            include(stmts[i]);
        }
    }
}

// The least C++ an innermost loop's edges print to for one function to
// run both (emit_shared_edges).
constexpr size_t kMinInnermostEdgeBytes = 2048;
// The most bytes of stack arrays the edges' function may take copies of,
// and the most elements (or vector slots) of an array copied one by one.
constexpr int64_t kMaxEdgeArrayBytes = 1024;
constexpr int64_t kMaxElementCopies = 16;

// A partitioned loop's prologue and epilogue (partition_loops: the loops
// before and after its steady state, of the same name and body) run one
// local function, so that the C++ compiler optimizes their body once; the
// steady state's loop is printed as it is:
//
//   for (x, 0, x.steady_min) { B }
//   for (x, x.steady_min, x.steady_max - x.steady_min + 1) { F }
//   for (x, x.steady_max + 1, n - x.steady_max - 1) { B }
//     ->
//   auto x_edges = [=](int32_t x_from, int32_t x_to) __attribute__((noinline)) {
//       for (int32_t x = x_from; x < x_to; ++x) { B }
//   };
//   if (0 < x_steady_min) x_edges(0, x_steady_min);
//   for (int32_t x = x_steady_min, ...) { F }
//   if (0 < (n - x_steady_max - 1)) x_edges(x_steady_max + 1, n);
//
// (a row whose edges are empty makes no call: a call saves and restores
// the vector registers the steady state keeps).
//
// The edges of an innermost loop are a vector or two per run of it, so
// their calls are paid on every run where the copies are compiled once:
// they share a body only when it prints to at least kMinInnermostEdgeBytes
// of C++ (the taps of a stencil's adjoint, each clamped and tested against
// a region: blur3x3_grad's backward kernel, whose rows all run both edges
// of a 16 KB body, compiled in a fifth less g++ time and kept its run
// time), not for a load or two under a select, whose copies cost g++
// little and whose calls would cost about as much as their work.
// The lambda captures by value: a variable captured by reference has its
// address escape, and g++ then assumes that a store through any pointer
// may change it, in the steady state too. A stack array declared outside
// the loop (an rfactor intermediate's accumulators) is a parameter named
// as the array, and each call passes a copy, copied back after it if the
// edges write it: with the array's own address passed, g++ no longer kept
// its slots in registers anywhere (softmax_grad's backward row sum took
// twice the time). An array named at constant indices only is copied
// element by element, as a memcpy would take its address too; one of more
// than kMaxElementCopies elements keeps the copies. Not for arrays of more
// than kMaxEdgeArrayBytes together, a body that can fail (its `return`
// would leave the lambda only), or one whose two copies print differently
// up to the names they bind (the simplifier specialized one on its
// constant range).
//
//   alignas(64) float acc[16];
//   ...
//   auto x_edges = [=](int32_t x_from, int32_t x_to, float *acc) __attribute__((noinline)) { ... };
//   if (0 < x_steady_min) {
//       alignas(64) float acc_copy[16];
//       __builtin_memcpy(acc_copy, acc, sizeof(acc_copy));
//       x_edges(0, x_steady_min, acc_copy);
//       __builtin_memcpy(acc, acc_copy, sizeof(acc_copy));
//   }
bool CodeGen_C::emit_shared_edges(const Stmt &first, const Stmt &steady, const Stmt &last) {
    const For *pro = first.as<For>(), *mid = steady.as<For>(), *epi = last.as<For>();
    if (!pro || !mid || !epi || pro->name != mid->name || epi->name != mid->name ||
        pro->for_type != ForType::Serial || epi->for_type != ForType::Serial)
        return false;
    class HasLoop : public IRVisitor {
    public:
        bool found = false;
        using IRVisitor::include;
        void include(const Expr &) override {}  // statements only

    private:
        using IRVisitor::visit;
        void visit(const For *) override { found = true; }
    } nest;
    nest.include(pro->body);
    MayReturn may_return(!target.has(Target::NoAsserts));
    may_return.include(pro->body);
    if (may_return.result) return false;
    // The stack arrays declared around the loop that its edges use.
    class OuterArrays : public IRVisitor {
    public:
        explicit OuterArrays(const CodeGen_C &cg) : cg(cg) {}
        std::set<std::string> found, written;

    private:
        const CodeGen_C &cg;
        using IRVisitor::visit;
        void check(const std::string &n) {
            if (cg.stack_arrays.count(n)) found.insert(n);
        }
        void visit(const Load *op) override {
            check(op->name);
            IRVisitor::visit(op);
        }
        void visit(const Store *op) override {
            check(op->name);
            if (cg.stack_arrays.count(op->name)) written.insert(op->name);
            IRVisitor::visit(op);
        }
    } arrays(*this);
    arrays.include(pro->body);
    int64_t array_bytes = 0;
    for (const std::string &a : arrays.found) {
        const StackArray &s = stack_arrays.at(a);
        if (s.constant_indices && s.count > kMaxElementCopies) return false;
        array_bytes += s.bytes;
    }
    if (array_bytes > kMaxEdgeArrayBytes) return false;
    // Each body printed from the same names: identical text, one body.
    const Names before = names;
    auto render = [&](const Stmt &body) {
        std::ostringstream text;
        std::swap(text, out);
        indent += 2;
        include(body);
        indent -= 2;
        std::swap(text, out);
        return text.str();
    };
    const std::string body = render(pro->body);
    const Names after = names;
    names = before;
    if (!nest.found && body.size() < kMinInnermostEdgeBytes) return false;
    bool same = epi->body.same_as(pro->body);
    if (!same) {
        Stmt renamed = named_as(epi->body, pro->body);
        same = renamed.defined() && render(renamed) == body;
    }
    names = same ? after : before;
    if (!same) return false;
    std::string var = names.get(pro->name), fn = names.fresh(var + "_edges");
    std::string lo = names.fresh(var + "_from"), hi = names.fresh(var + "_to");
    // Each stack array the edges use is a parameter of the lambda, named as
    // the array, and a call passes a copy of it, copied back after if the
    // edges write it: the array's own address does not escape.
    std::string params, copies;
    std::map<std::string, std::string> copy;
    for (const std::string &a : arrays.found) {
        const std::string &c = names.get(a);
        copy[a] = names.fresh(c + "_copy");
        params += ", " + stack_arrays.at(a).type + " *" + c;
        copies += ", " + copy[a];
    }
    auto call = [&](const For *loop) {
        std::string min_operand = print(loop->min), extent = print(loop->extent);
        std::string end = is_zero(loop->min) ? unparen(extent) : min_operand + " + " + extent;
        std::string args = unparen(min_operand) + ", " + end;
        if (arrays.found.empty()) {
            line() << "if (0 < " << extent << ") " << fn << "(" << args << ");\n";
            return;
        }
        line() << "if (0 < " << extent << ") {\n";
        indent++;
        // from -> to, element by element where `array` lives in registers.
        auto copy_array = [&](const std::string &array, const std::string &to, const std::string &from) {
            const StackArray &s = stack_arrays.at(array);
            if (!s.constant_indices) {
                line() << "__builtin_memcpy(" << to << ", " << from << ", sizeof(" << copy[array] << "));\n";
                return;
            }
            for (int64_t i = 0; i < s.count; i++)
                line() << to << "[" << i << "] = " << from << "[" << i << "];\n";
        };
        for (const std::string &a : arrays.found) {
            line() << "alignas(64) " << stack_arrays.at(a).type << " " << copy[a] << "[" << stack_arrays.at(a).count
                   << "];\n";
            copy_array(a, copy[a], names.get(a));
        }
        line() << fn << "(" << args << copies << ");\n";
        for (const std::string &a : arrays.written) copy_array(a, names.get(a), copy[a]);
        indent--;
        line() << "}\n";
    };
    line() << "// " << pro->name << "'s first and last iterations, outside its steady state\n";
    line() << "auto " << fn << " = [=](int32_t " << lo << ", int32_t " << hi << params << ") __attribute__((noinline)) {\n";
    indent++;
    line() << "for (int32_t " << var << " = " << lo << "; " << var << " < " << hi << "; ++" << var << ") {\n";
    out << body;
    line() << "}\n";
    indent--;
    line() << "};\n";
    call(pro);
    include(steady);
    call(epi);
    return true;
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

}  // namespace codegen_c

std::string assert_error_call(const std::string &kernel, const std::vector<Expr> &message,
                              const std::function<std::string(const Expr &)> &print) {
    std::string format, args;
    for (const Expr &part : message) {
        if (const StringImm *s = part.as<StringImm>()) {
            format += codegen_c::escape(s->value, true);
            continue;
        }
        Type t = part.type();
        internal_assert(t.is_scalar()) << "vector in an assert message";
        const char *spec = t.is_float() ? "%g" : t.bits() == 64 ? (t.is_uint() ? "%llu" : "%lld") : t.is_uint() && !t.is_bool() ? "%u" : "%d";
        const char *cast = t.is_float() ? "(double)" : t.bits() == 64 ? (t.is_uint() ? "(unsigned long long)" : "(long long)") : t.is_uint() && !t.is_bool() ? "(unsigned)" : "(int)";
        format += spec;
        args += std::string(", ") + cast + print(part);
    }
    if (message.empty()) format = codegen_c::escape(kernel + ": check failed", true);
    // Every message names the kernel (the entry checks already start with it).
    std::string prefix = codegen_c::escape(kernel + ": ", true);
    if (format.compare(0, prefix.size(), prefix) != 0) format = prefix + format;
    return "kiln_error(\"" + format + "\"" + args + ");";
}

std::string codegen_cpp(const LoweredFunc &f, const Target &t) { return codegen_c::CodeGen_C(f, t).emit(); }

}  // namespace internal
}  // namespace kiln

