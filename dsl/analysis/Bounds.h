// Interval arithmetic over symbolic expressions, and the boxes of a Func
// that a statement reads or writes. Analyses only; the passes that use them
// are lower/BoundsInference.cpp and friends.
//
//   bounds of (x + 1) * 2 with x in [a, b]            ->  [(a + 1)*2, (b + 1)*2]
//   box of f read by  for (y, 0, 4) { g(y) = f(y - 1) + f(y + 1) }  ->  [-1, 4]
//
// A missing min or max means unbounded on that side. The interval
// arithmetic is Bounds.cpp, the boxes BoxTouched.cpp.
#pragma once
#include <map>
#include <set>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "analysis/TextMemo.h"
#include "ir/IR.h"
#include "ir/IRVisitor.h"

namespace kiln {
namespace internal {

struct Interval {
    Expr min, max;  // undefined = unbounded
    Interval() = default;
    Interval(Expr a, Expr b) : min(std::move(a)), max(std::move(b)) {}
    static Interval point(const Expr &e) { return Interval(e, e); }
    bool has_lower() const { return min.defined(); }
    bool has_upper() const { return max.defined(); }
    bool bounded() const { return has_lower() && has_upper(); }
    bool is_empty_marker = false;  // the union identity: nothing yet
    static Interval nothing() {
        Interval i;
        i.is_empty_marker = true;
        return i;
    }
};

// min(a, b) and max(a, b), simplified.
Expr smin(const Expr &a, const Expr &b);
Expr smax(const Expr &a, const Expr &b);

// The union of two intervals (simplified).
Interval interval_union(const Interval &a, const Interval &b);

// Variables with known ranges; inner bindings shadow outer ones.
class Scope {
public:
    void push(const std::string &n, const Interval &i) { m[n].push_back(i); }
    void pop(const std::string &n) {
        m[n].pop_back();
        if (m[n].empty()) m.erase(n);
    }
    const Interval *find(const std::string &n) const {
        auto it = m.find(n);
        return it == m.end() ? nullptr : &it->second.back();
    }
    // Known ranges of sums (a guard "r.xo*8 + u < n" bounds the index
    // r.xo*8 + u it protects, which no single variable carries).
    void push_sum(const Expr &e, const Interval &i) { sums.emplace_back(e, i); }
    void pop_sum() { sums.pop_back(); }
    const Interval *find_sum(const Expr &e) const;
    bool has_sums() const { return !sums.empty(); }
    // The bindings of the names `within` shows and every sum, printed: what
    // bounds of expressions of that text see of the scope.
    std::string text(const std::string &within) const;

private:
    std::map<std::string, std::vector<Interval>> m;
    std::vector<std::pair<Expr, Interval>> sums;
};

Interval bounds_of_expr_in_scope(const Expr &e, const Scope &scope);

using Box = std::vector<Interval>;
using LetList = std::vector<std::pair<std::string, Expr>>;

// The box of Func (or image) `name` touched within s: calls (reads) and/or
// Provides (writes). Loops and lets inside s are ranged over; variables
// defined outside s stay symbolic. `found` tells whether any access exists.
//
// A let of s is substituted into the box where it is used. With `kept`, a
// let whose value is the same over all of s's loops and large stays a name
// instead, and `kept` receives the definitions (in terms of names defined
// outside s) of those the box names, in order; the caller defines them
// where it puts the box. Substituting such a let would repeat it at every
// use, and the lets of a pyramid's levels each use the last level's twice:
//   let up_1.x.min = (w.min + min((w.max - w.min) - 15, 0)) / 2   // and up_2 of up_1 ...
//   box of up_3, kept:   [up_3.x.min, up_3.x.max], kept = {up_1.x.min = ..., up_2.x.min = ..., ...}
//
// A let named in `required` (a stage's pure variable, f.s0.x, bound from its
// split loops) is taken only over its stage's region, the lets f.s0.x.min
// and f.s0.x.max, which must be defined where s is: what a stage computes
// past its region (a RoundUp split's last tile) is never used, so neither
// is what it reads there.
//   for (f.s0.x.xo, 0, 2) for (f.s0.x.xi, 0, 8) { let f.s0.x = f.s0.x.xo*8 + f.s0.x.xi  f(f.s0.x) = g(f.s0.x) }
//   box of g, f.s0.x.min = 0, f.s0.x.max = 9:  [0, 15]; with f.s0.x required: [0, 9]
// A let named in `required_min` is taken only at or above its region's min
// (a ShiftInwards split, whose one tile over a region smaller than the
// factor starts below the min, never passes the max).
Box box_touched(const Stmt &s, const std::string &name, bool reads, bool writes, bool *found = nullptr,
                const Scope &outer = Scope(), LetList *kept = nullptr,
                const std::set<std::string> *required = nullptr,
                const std::set<std::string> *required_min = nullptr);

// A memo of box_touched() results for a search that lowers one pipeline
// many times (the autoscheduler lowers every candidate schedule; most of a
// candidate's Funcs are read by the same statements as in the last one).
//
//   BoxMemo memo;                      // kept across the candidates
//   { BoxMemo::Use use(memo);          // box_touched on this thread looks its call up first
//     lower(...); }
//
// A call is keyed by its arguments and the text of what box_touched walks
// of s: the statements that access the Func, each loop, let, guard and
// realization around them as a header, the accesses' statements whole.
// Within one pipeline a name has one type, and a float constant's text
// (printed to 6 decimals) one value: its Funcs' definitions are the same in
// every candidate. Only the search's own lowerings use it; code generation
// never runs under a memo.
class BoxMemo {
public:
    // Makes `m` the memo box_touched() uses on this thread while it lives
    // (the one before it again after).
    class Use {
    public:
        explicit Use(BoxMemo &m);
        ~Use();
        Use(const Use &) = delete;
        Use &operator=(const Use &) = delete;

    private:
        BoxMemo *outer, &memo;
    };
    int64_t hits = 0, misses = 0;
    // While a Use lives (one lowering): the Funcs and images each
    // expression calls, by its node (the expression kept, so that the node
    // stays the same), for finding the statements that read a Func without
    // walking every expression again for each Func.
    using Called = std::unordered_map<const void *, std::pair<Expr, std::set<std::string>>>;
    Called called;

    struct Entry {
        bool found = false;
        Box box;
        LetList kept;
        bool conflict = false;  // `kept` not given back (two lets of one name)
    };
    const Entry *find(const std::string &key) const { return results.find(key); }
    void keep(const std::string &key, Entry e) { results.keep(key, std::move(e)); }

private:
    TextMemo<Entry> results;
};

// A visitor that records the statements inside which a subclass's visits
// called mark(): the statements holding what it looks for.
class MarkHolders : public IRVisitor {
public:
    explicit MarkHolders(std::unordered_set<const void *> &out) : holders(out) {}
    using IRVisitor::include;
    void include(const Stmt &s) override;

protected:
    void mark() { hit = true; }

private:
    std::unordered_set<const void *> &holders;
    bool hit = false;
};

// Does e have at most `budget` nodes?
bool small_expr(const Expr &e, int budget);

// The first access to `name` in s whose box is unbounded, printed (for errors).
std::string describe_unbounded_access(const Stmt &s, const std::string &name);

}  // namespace internal
}  // namespace kiln
