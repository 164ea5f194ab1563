#include "BoundNames.h"

#include "IRVisitor.h"

namespace kiln {
namespace internal {

namespace {

class Collect : public IRVisitor {
public:
    std::vector<std::string> names;

private:
    using IRVisitor::visit;
    void visit(const Let *op) override {
        names.push_back(op->name);
        IRVisitor::visit(op);
    }
    void visit(const LetStmt *op) override {
        names.push_back(op->name);
        IRVisitor::visit(op);
    }
    void visit(const For *op) override {
        names.push_back(op->name);
        IRVisitor::visit(op);
    }
    void visit(const Allocate *op) override {
        names.push_back(op->name);
        IRVisitor::visit(op);
    }
};

}  // namespace

std::vector<std::string> bound_names(const Stmt &s) {
    Collect c;
    c.include(s);
    return c.names;
}

}  // namespace internal
}  // namespace kiln
