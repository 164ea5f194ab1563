#include "ExprKey.h"

#include <sstream>
#include <memory>
#include <vector>

#include "IRPrinter.h"

namespace kiln {
namespace internal {

namespace {

const std::string &text(const Expr &e, size_t depth);

// An IRPrinter whose operands' text comes from their nodes (and is kept
// there).
class MemoPrinter : public IRPrinter {
public:
    MemoPrinter(std::ostream &os, size_t depth) : IRPrinter(os), depth(depth) {}
    using IRPrinter::include;
    void include(const Expr &e) override { os << text(e, depth + 1); }

private:
    size_t depth;
};

// The text of e, printed once per node: it is kept in the node
// (BaseExprNode::printed), so it lives exactly as long as the node, and
// each parent prints only its own part around its operands' texts. A miss
// prints into a stream kept per nesting depth (making a stream costs more
// than printing a small node). Two threads printing one node both print
// it; the first to store its text wins.
const std::string &text(const Expr &e, size_t depth) {
    const BaseExprNode *n = e.get();
    if (const std::string *known = n->printed.load(std::memory_order_acquire)) return *known;
    thread_local std::vector<std::unique_ptr<std::ostringstream>> streams;
    while (streams.size() <= depth) streams.push_back(std::make_unique<std::ostringstream>());
    std::ostringstream &ss = *streams[depth];
    ss.str(std::string());
    MemoPrinter printer(ss, depth);
    printer.IRVisitor::include(e);  // this node's own visit; operands via text()
    auto *mine = new std::string(ss.str());
    const std::string *expected = nullptr;
    if (n->printed.compare_exchange_strong(expected, mine, std::memory_order_acq_rel)) return *mine;
    delete mine;
    return *expected;
}

}  // namespace

ExprKey expr_key(const Expr &e) {
    static const ExprKey undefined = std::make_shared<const std::string>("(undefined)");
    if (!e.defined()) return undefined;
    // Shares ownership of the node, which owns the text.
    return ExprKey(e.shared(), &text(e, 0));
}

}  // namespace internal
}  // namespace kiln
