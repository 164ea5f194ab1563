#include "IRPrinter.h"

#include <cmath>
#include <iomanip>
#include <sstream>

#include "Function.h"

namespace kiln {

std::ostream &operator<<(std::ostream &os, const Expr &e) {
    if (!e.defined()) return os << "(undefined)";
    internal::IRPrinter(os).print(e);
    return os;
}
std::ostream &operator<<(std::ostream &os, const Stmt &s) {
    if (!s.defined()) return os << "(undefined)\n";
    internal::IRPrinter(os).print(s);
    return os;
}
std::string to_string(const Expr &e) {
    std::ostringstream ss;
    ss << e;
    return ss.str();
}
std::string to_string(const Stmt &s) {
    std::ostringstream ss;
    ss << s;
    return ss.str();
}

namespace internal {

void IRPrinter::do_indent() {
    for (int i = 0; i < indent; i++) os << ' ';
}
void IRPrinter::print_list(const std::vector<Expr> &v) {
    for (size_t i = 0; i < v.size(); i++) {
        if (i) os << ", ";
        include(v[i]);
    }
}
void IRPrinter::call(const std::string &name, const std::vector<Expr> &args) {
    os << name << '(';
    print_list(args);
    os << ')';
}
void IRPrinter::braced(const Stmt &body) {
    os << " {\n";
    indent++;
    include(body);
    indent--;
    do_indent();
    os << "}\n";
}
void IRPrinter::binary(const Expr &a, const Expr &b, const char *op) {
    os << '(';
    include(a);
    os << ' ' << op << ' ';
    include(b);
    os << ')';
}

void IRPrinter::visit(const IntImm *op) {
    if (op->type == Int(32)) os << op->value;
    else os << '(' << op->type.to_string() << ')' << op->value;
}
void IRPrinter::visit(const UIntImm *op) {
    if (op->type.is_bool()) os << (op->value ? "true" : "false");
    else os << '(' << op->type.to_string() << ')' << op->value;
}
void IRPrinter::visit(const FloatImm *op) {
    if (op->type.bits() == 16) os << op->type.to_string() << '(';  // float16(0.099976)
    if (std::isinf(op->value)) os << (op->value > 0 ? "inf" : "-inf");
    else if (std::isnan(op->value)) os << "nan";
    else os << std::fixed << std::setprecision(6) << op->value << std::defaultfloat;
    if (op->type.bits() == 32) os << 'f';
    if (op->type.bits() == 16) os << ')';
}
void IRPrinter::visit(const StringImm *op) { os << '"' << op->value << '"'; }
void IRPrinter::visit(const Cast *op) {
    os << op->type.to_string() << '(';
    include(op->value);
    os << ')';
}
void IRPrinter::visit(const Variable *op) { os << op->name; }
void IRPrinter::visit(const Add *op) { binary(op->a, op->b, "+"); }
void IRPrinter::visit(const Sub *op) { binary(op->a, op->b, "-"); }
void IRPrinter::visit(const Mul *op) { binary(op->a, op->b, "*"); }
void IRPrinter::visit(const Div *op) { binary(op->a, op->b, "/"); }
void IRPrinter::visit(const Mod *op) { binary(op->a, op->b, "%"); }
void IRPrinter::visit(const Min *op) { call("min", {op->a, op->b}); }
void IRPrinter::visit(const Max *op) { call("max", {op->a, op->b}); }
void IRPrinter::visit(const EQ *op) { binary(op->a, op->b, "=="); }
void IRPrinter::visit(const NE *op) { binary(op->a, op->b, "!="); }
void IRPrinter::visit(const LT *op) { binary(op->a, op->b, "<"); }
void IRPrinter::visit(const LE *op) { binary(op->a, op->b, "<="); }
void IRPrinter::visit(const GT *op) { binary(op->a, op->b, ">"); }
void IRPrinter::visit(const GE *op) { binary(op->a, op->b, ">="); }
void IRPrinter::visit(const And *op) { binary(op->a, op->b, "&&"); }
void IRPrinter::visit(const Or *op) { binary(op->a, op->b, "||"); }
void IRPrinter::visit(const Not *op) {
    os << '!';
    include(op->a);
}
void IRPrinter::visit(const Select *op) { call("select", {op->condition, op->true_value, op->false_value}); }
void IRPrinter::visit(const Load *op) {
    os << op->name << '[';
    include(op->index);
    os << ']';
}
void IRPrinter::visit(const Ramp *op) {
    os << "ramp(";
    include(op->base);
    os << ", ";
    include(op->stride);
    os << ", " << op->lanes << ')';
}
void IRPrinter::visit(const Broadcast *op) {
    os << 'x' << op->lanes << '(';
    include(op->value);
    os << ')';
}
void IRPrinter::visit(const Call *op) {
    call(op->name, op->args);
    // Element i of a Tuple: f(x)[i] (a self-call knows only a nonzero index).
    if (op->value_index > 0 || (op->func && op->func->types.size() > 1)) os << '[' << op->value_index << ']';
}
void IRPrinter::visit(const Let *op) {
    os << "(let " << op->name << " = ";
    include(op->value);
    os << " in ";
    include(op->body);
    os << ')';
}

void IRPrinter::visit(const LetStmt *op) {
    do_indent();
    os << "let " << op->name << " = ";
    include(op->value);
    os << '\n';
    include(op->body);
}
void IRPrinter::visit(const AssertStmt *op) {
    do_indent();
    os << "assert(";
    include(op->condition);
    os << ", " << op->error_code << ", ";
    print_list(op->message);
    os << ")\n";
}
void IRPrinter::visit(const ProducerConsumer *op) {
    do_indent();
    os << (op->is_producer ? "produce " : "consume ") << op->name;
    braced(op->body);
}
void IRPrinter::visit(const For *op) {
    do_indent();
    switch (op->for_type) {
    case ForType::Parallel: os << "parallel "; break;
    case ForType::Vectorized: os << "vectorized "; break;
    case ForType::Unrolled: os << "unrolled "; break;
    case ForType::LaneFallback: os << "lanes "; break;
    default: break;
    }
    os << "for (" << op->name << ", ";
    include(op->min);
    os << ", ";
    include(op->extent);
    os << ')';
    braced(op->body);
}
void IRPrinter::visit(const Store *op) {
    do_indent();
    os << op->name << '[';
    include(op->index);
    os << "] = ";
    include(op->value);
    os << '\n';
}
void IRPrinter::visit(const Provide *op) {
    do_indent();
    os << op->name << '(';
    print_list(op->args);
    os << ") = ";
    if (op->values.size() == 1) {
        include(op->values[0]);
    } else {
        os << '{';
        print_list(op->values);
        os << '}';
    }
    os << '\n';
}
// " in out if (cond)": storage that is an output's buffer when cond holds.
void IRPrinter::print_in_output(const std::string &output, const Expr &in_place) {
    if (output.empty()) return;
    os << " in " << output << " if (";
    include(in_place);
    os << ')';
}
void IRPrinter::visit(const Allocate *op) {
    do_indent();
    os << "allocate " << op->name << '[' << op->type.to_string() << " * ";
    include(op->size);
    os << ']';
    print_in_output(op->in_output, op->in_place);
    os << '\n';
    include(op->body);
    do_indent();
    os << "free " << op->name << '\n';
}
void IRPrinter::visit(const Realize *op) {
    do_indent();
    os << "realize " << op->name << '(';
    for (size_t i = 0; i < op->bounds.size(); i++) {
        if (i) os << ", ";
        os << '[';
        include(op->bounds[i].min);
        os << ", ";
        include(op->bounds[i].extent);
        os << ']';
        if (op->fold_factors[i].defined()) {
            os << " folded by ";
            include(op->fold_factors[i]);
        }
    }
    os << ')';
    print_in_output(op->in_output, op->in_place);
    braced(op->body);
}
void IRPrinter::visit(const Block *op) {
    include(op->first);
    include(op->rest);
}
void IRPrinter::visit(const IfThenElse *op) {
    do_indent();
    os << "if (";
    include(op->condition);
    os << ") {\n";
    indent++;
    include(op->then_case);
    indent--;
    if (op->else_case.defined()) {
        do_indent();
        os << "} else {\n";
        indent++;
        include(op->else_case);
        indent--;
    }
    do_indent();
    os << "}\n";
}
void IRPrinter::visit(const Evaluate *op) {
    do_indent();
    include(op->value);
    os << '\n';
}

}  // namespace internal
}  // namespace kiln
