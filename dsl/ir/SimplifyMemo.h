// A memo of simplify(Expr) results for a search that lowers one pipeline
// many times (the autoscheduler lowers every candidate schedule to its loop
// nest). Most of a candidate's bounds are the same expressions as the last
// candidate's, simplified again: camera_pipe's search simplified about 2.2
// million expressions, 23 thousand of them different (7.8 MB of text; the
// process's peak 169 MB, 19 MB without the memo).
//
//   SimplifyMemo memo;                    // kept across the candidates
//   { SimplifyMemo::Use use(memo);        // simplify(e) on this thread looks e up first
//     lower(...); }
//
// An expression is keyed by its text (expr_key) and type: within one
// pipeline a name has one type. Not kept: float expressions, and those whose
// text shows a float constant (printed to 6 decimals, so two constants may
// print alike). Only the search's own lowerings use it; code generation
// never runs under a memo.
#pragma once
#include <string_view>
#include <unordered_map>

#include "ExprKey.h"
#include "IR.h"

namespace kiln {
namespace internal {

class SimplifyMemo {
public:
    // Makes `m` the memo simplify() uses on this thread while it lives (the
    // one before it again after).
    class Use {
    public:
        explicit Use(SimplifyMemo &m);
        ~Use();
        Use(const Use &) = delete;
        Use &operator=(const Use &) = delete;

    private:
        SimplifyMemo *outer;
    };
    int64_t hits = 0, misses = 0;

private:
    friend Expr simplify(const Expr &e);
    // The most characters of keys kept; past it the memo starts again (a
    // long search of a large pipeline would otherwise keep every bound it
    // ever built, and the expressions with them).
    static constexpr size_t max_text_bytes = 16 << 20;
    size_t text_bytes = 0;
    struct Entry {
        ExprKey text;  // keeps the key's characters
        Type type;
        Expr result;
    };
    std::unordered_map<std::string_view, Entry> results;  // by text
};

}  // namespace internal
}  // namespace kiln
