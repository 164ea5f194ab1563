// Prints IR as indented pseudo-code, the form KILN_DEBUG=1 shows after each
// pass and the form the lowering tests compare against:
//
//   produce blur_x {
//    for (blur_x.s0.y, blur_x.s0.y.loop_min, blur_x.s0.y.loop_extent) {
//     blur_x(blur_x.s0.x, blur_x.s0.y) = ((input(...) + ...) / 3.000000f)
//    }
//   }
#pragma once
#include <ostream>
#include <string>

#include "IRVisitor.h"

namespace kiln {
namespace internal {

class IRPrinter : public IRVisitor {
public:
    explicit IRPrinter(std::ostream &s) : os(s) {}
    void print(const Expr &e) { include(e); }
    void print(const Stmt &s) { include(s); }

protected:
    std::ostream &os;
    int indent = 0;
    void do_indent();
    void print_list(const std::vector<Expr> &v);
    void call(const std::string &name, const std::vector<Expr> &args);  // name(a, b, ...)
    void braced(const Stmt &body);  // " {", the body indented, "}"
    void print_in_output(const std::string &output, const Expr &in_place);
    void binary(const Expr &a, const Expr &b, const char *op);
#define KILN_VISIT_DECL(N) void visit(const N *) override;
    KILN_FOR_EACH_EXPR_NODE(KILN_VISIT_DECL)
    KILN_FOR_EACH_STMT_NODE(KILN_VISIT_DECL)
#undef KILN_VISIT_DECL
};

}  // namespace internal
}  // namespace kiln
