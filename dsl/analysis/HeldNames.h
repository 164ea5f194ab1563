// Which of a few names each statement holds: the Funcs it produces or
// realizes, and the loops and lets it defines. For a pass that asks these
// questions of one statement again and again while it rewrites parts of it
// (bounds inference asks, for every Func, which statements produce it and
// which split loops its consumers define): the answers are kept by node,
// so after a rewrite along one path only that path's new nodes are visited,
// where a walk of the whole statement per question made the pass quadratic
// in the number of Funcs.
//
//   HeldNames held({"f", "g"}, {"g.s0.x.xo"});
//   held.produces(s, "f")                   ->  s holds produce f or realize f
//   held.defines(s, {"g.s0.x.xo"}).loops    ->  {"g.s0.x.xo"} if s holds that loop
//
// Expressions are not looked into: a name is held only where a statement
// (ProducerConsumer, Realize, For, LetStmt) names it. The index keeps
// every node it has answered for alive while it lives, so a node's
// address cannot be reused by another.
#pragma once
#include <cstdint>
#include <set>
#include <string>
#include <unordered_map>
#include <vector>

#include "ir/IR.h"

namespace kiln {
namespace internal {

class HeldNames {
public:
    // `funcs`: the Funcs that produces() is asked about; `defined`: the
    // loop and let names that defines() is asked about.
    HeldNames(const std::set<std::string> &funcs, const std::set<std::string> &defined);

    // Does s hold a ProducerConsumer or a Realize of f (s itself included)?
    bool produces(const Stmt &s, const std::string &f);

    // The names of `wanted` (by default, all those asked about) that s
    // defines (s itself included), as a loop or a let (`any`) and as a let
    // (`lets`).
    struct Defined {
        std::set<std::string> any, lets;
    };
    Defined defines(const Stmt &s, const std::set<std::string> &wanted);
    Defined defines(const Stmt &s);

private:
    using Bits = std::vector<uint64_t>;
    struct Held {
        Stmt node;  // kept alive, so that its address stays its own
        Bits funcs, any, lets;
    };
    std::unordered_map<std::string, size_t> func_index, name_index;
    std::unordered_map<const void *, Held> held;
    const Held &of(const Stmt &s);
    static bool test(const Bits &b, size_t i) { return (b[i / 64] >> (i % 64)) & 1; }
};

}  // namespace internal
}  // namespace kiln
