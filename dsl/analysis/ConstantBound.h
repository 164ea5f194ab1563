// Constant bounds of integer expressions whose values are known only at run
// time: a proof, from the definitions of the lets an expression names and
// the ranges of the loops around it, that the expression never passes a
// constant. Interval arithmetic alone loses the correlation between the two
// sides of a difference; this analysis keeps several symbolic candidates
// for each side's bound and lets the simplifier cancel them:
//
//   let hi = min(base + 1, region.max)       // a clamped tile of 2 rows
//   let lo = max(base, region.min)
//   upper bound of (hi - lo) + 1  ->  2      // hi <= base + 1, lo >= base
//   upper bound of y * 4, y a loop over [0, 16)  ->  60
//   upper bound of n, a parameter             ->  none
//
// Each candidate is a symbolic expression that is >= (upper) or <= (lower)
// the expression for every value of the variables it still names; the
// bound is the smallest (largest) candidate that is a constant. Rules, with
// U(e) the upper and L(e) the lower candidates (e itself is always one):
//   U(a + b) = U(a) + U(b)     U(a - b) = U(a) - L(b)    U(a * c) = U(a) * c (c > 0)
//   U(min(a, b)) = U(a) and U(b)    U(max(a, b)) = max(U(a), U(b))
//   U(a / c) = U(a) / c (c > 0)     U(a % c) = c - 1 (c > 0)
//   U(select(c, a, b)) = max(U(a), U(b))    U(v) = U(v's let value)
//   U(a * b) = U(a) * U(b) when both are constants and L(a), L(b) >= 0
//   U(loop variable) = U(min + extent - 1), L(loop variable) = L(min)
//   a + min(b, c) = min(a + b, a + c), a - min(b, c) = max(a - b, a - c)  (so d - min(d - 1, 0) <= 1)
// and the mirror images for L. Candidates are kept in a linear normal form
// (equal sums compare equal, terms cancel); a candidate's min and max atoms
// are split the same way, and a pair (x + r) / c - x / c is bounded by
// ceil(r / c). Only small definitions are looked through, at most two lets
// or loops deep, with a few candidates per expression and a budget of work
// per query: the analysis may miss a bound but never claims a false one.
// Integer arithmetic is assumed not to overflow, as the simplifier assumes.
#pragma once
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "ir/IR.h"

namespace kiln {
namespace internal {

// What is known about the names an expression uses at one point of a
// statement: the lets around it and the loops it is inside (whose bodies
// run only with the variable in [min, min + extent - 1]).
class BoundFacts {
public:
    void push_let(const std::string &name, const Expr &value) { lets[name].push_back(value); }
    void push_loop(const std::string &name, const Expr &min, const Expr &extent) {
        loops[name].push_back({min, extent});
    }
    void pop_let(const std::string &name) { pop(lets, name); }
    void pop_loop(const std::string &name) { pop(loops, name); }
    const Expr *let(const std::string &name) const;
    const std::pair<Expr, Expr> *loop(const std::string &name) const;

private:
    template<typename T>
    static void pop(std::map<std::string, std::vector<T>> &m, const std::string &name) {
        auto it = m.find(name);
        it->second.pop_back();
        if (it->second.empty()) m.erase(it);
    }
    std::map<std::string, std::vector<Expr>> lets;
    std::map<std::string, std::vector<std::pair<Expr, Expr>>> loops;
};

// A constant c with e <= c (e >= c) wherever the facts hold, if one is
// proven.
std::optional<int64_t> constant_upper_bound(const Expr &e, const BoundFacts &facts);
std::optional<int64_t> constant_lower_bound(const Expr &e, const BoundFacts &facts);

}  // namespace internal
}  // namespace kiln
