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
using KeyMap = std::unordered_map<const void *, std::pair<Expr, ExprKey>>;

// Two generations: new keys go into `young`; a key found in `old` is copied
// back into `young`. When `young` is full, it becomes `old` and the previous
// `old` is dropped, so what the last two generations printed stays cached
// and the memory stays bounded. The cache is small on purpose: each entry
// keeps its node alive and the text of its whole subtree, and bounds
// inference makes many large trees that are printed once; with 65536
// entries cleared at once, lowering camera_pipe took 40% more CPU
// (docs/performance.md, "Compile time (session 41)").
struct KeyCache {
    KeyMap young, old;
};

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
    auto it = cache.young.find(e.get());
    if (it != cache.young.end()) return it->second.second;
    auto was = cache.old.find(e.get());
    if (was != cache.old.end()) return cache.young.emplace(was->first, was->second).first->second.second;
    thread_local std::vector<std::unique_ptr<std::ostringstream>> streams;
    while (streams.size() <= depth) streams.push_back(std::make_unique<std::ostringstream>());
    std::ostringstream &ss = *streams[depth];
    ss.str(std::string());
    MemoPrinter printer(ss, cache, depth);
    printer.IRVisitor::include(e);  // this node's own visit; operands via text()
    return cache.young.emplace(e.get(), std::make_pair(e, std::make_shared<const std::string>(ss.str())))
        .first->second.second;
}

}  // namespace

ExprKey expr_key(const Expr &e) {
    thread_local KeyCache cache;
    static const ExprKey undefined = std::make_shared<const std::string>("(undefined)");
    if (!e.defined()) return undefined;
    // Generations turn only here, between top-level calls, never during a
    // print (text() returns references into both maps).
    if (cache.young.size() >= (1u << 10)) {
        cache.old = std::move(cache.young);
        cache.young.clear();
    }
    return text(e, cache, 0);
}

}  // namespace internal
}  // namespace kiln
