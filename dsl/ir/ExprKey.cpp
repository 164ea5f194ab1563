#include "ExprKey.h"

#include <sstream>
#include <memory>
#include <unordered_map>
#include <vector>

#include "IRPrinter.h"

namespace kiln {
namespace internal {

namespace {

// Each entry holds its node, so a cached address is never reused by
// another node while the entry lives.
using KeyCache = std::unordered_map<const void *, std::pair<Expr, ExprKey>>;

const ExprKey &text(const Expr &e, KeyCache &cache, size_t depth);

// An IRPrinter whose operands come from the cache (and go into it).
class MemoPrinter : public IRPrinter {
public:
    MemoPrinter(std::ostream &os, KeyCache &cache, size_t depth) : IRPrinter(os), cache(cache), depth(depth) {}
    using IRPrinter::include;
    void include(const Expr &e) override { os << *text(e, cache, depth + 1); }

private:
    KeyCache &cache;
    size_t depth;
};

// The text of e. References into an unordered_map stay valid when it grows,
// so nested calls may insert while a caller holds one. A miss prints the
// node into a stream kept per nesting depth (making a stream costs more
// than printing a small node).
const ExprKey &text(const Expr &e, KeyCache &cache, size_t depth) {
    auto it = cache.find(e.get());
    if (it != cache.end()) return it->second.second;
    thread_local std::vector<std::unique_ptr<std::ostringstream>> streams;
    while (streams.size() <= depth) streams.push_back(std::make_unique<std::ostringstream>());
    std::ostringstream &ss = *streams[depth];
    ss.str(std::string());
    MemoPrinter printer(ss, cache, depth);
    printer.IRVisitor::include(e);  // this node's own visit; operands via text()
    return cache.emplace(e.get(), std::make_pair(e, std::make_shared<const std::string>(ss.str()))).first->second.second;
}

}  // namespace

ExprKey expr_key(const Expr &e) {
    thread_local KeyCache cache;
    static const ExprKey undefined = std::make_shared<const std::string>("(undefined)");
    if (!e.defined()) return undefined;
    // Cleared only here, between top-level calls, never during a print.
    if (cache.size() >= (1u << 16)) cache.clear();
    return text(e, cache, 0);
}

}  // namespace internal
}  // namespace kiln
