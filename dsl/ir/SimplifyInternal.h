// The simplifier's class, shared by its files; other passes call Simplify.h.
//
//   Simplify.cpp         entry points; linear forms and constant bounds
//   SimplifyArith.cpp    constant folding, + - * / %, casts and vectors
//   SimplifyMinMax.cpp   min and max
//   SimplifyLogic.cpp    comparisons, && || !, select
//   SimplifyStmt.cpp     lets and statements
//
// Each rule returns as soon as it applies, so the order of the rules in a
// visit is part of what the simplifier computes.
#pragma once
#include <algorithm>
#include <map>
#include <string>
#include <vector>

#include "ExprKey.h"
#include "IRVisitor.h"
#include "Substitute.h"

namespace kiln {
namespace internal {
namespace simplifier {

// Euclidean division (IR.h): the remainder is never negative; x / 0 == 0.
inline int64_t floor_div(int64_t a, int64_t b) {
    if (b == 0) return 0;
    if (b == -1) return (int64_t)(0 - (uint64_t)a);
    int64_t q = a / b, r = a % b;
    if (r < 0) q += b > 0 ? -1 : 1;
    return q;
}
inline int64_t floor_mod(int64_t a, int64_t b) {
    if (b == 0 || b == -1) return 0;
    int64_t r = a % b;
    if (r < 0) r += b > 0 ? b : -b;
    return r;
}

// Signed integer types where the no-overflow assumption holds.
inline bool is_index_type(Type t) { return t.is_int() && t.bits() >= 32; }

// A sum of terms coeff*atom plus a constant, for canonicalizing int sums.
// Atoms are compared and ordered by their printed text (expr_key).
struct Linear {
    struct Term {
        Expr first;        // the atom
        int64_t second;    // its coefficient
        ExprKey key;       // to_string(first)
    };
    std::vector<Term> terms;  // sorted by key after normalize()
    int64_t constant = 0;

    void add_term(const Expr &atom, int64_t c, ExprKey key = nullptr) {
        if (!key) key = expr_key(atom);
        for (auto &t : terms) {
            if (t.key == key || *t.key == *key) {
                t.second += c;
                return;
            }
        }
        terms.push_back({atom, c, std::move(key)});
    }
    void scale(int64_t c) {
        for (auto &t : terms) t.second *= c;
        constant *= c;
    }
    void add(const Linear &o, int64_t sign) {
        for (const auto &t : o.terms) add_term(t.first, t.second * sign, t.key);
        constant += o.constant * sign;
    }
    void normalize() {
        terms.erase(std::remove_if(terms.begin(), terms.end(), [](auto &t) { return t.second == 0; }), terms.end());
        std::stable_sort(terms.begin(), terms.end(), [](auto &a, auto &b) { return *a.key < *b.key; });
    }
};

// x + 2*y - 3  <->  {x: 1, y: 2; -3}. Products by a constant are scaled;
// anything else is an atom. delinearize() normalizes and writes the positive
// terms first, then the negative ones, then the constant.
Linear linearize(const Expr &e);
Expr delinearize(Linear l, Type t);

// The constant a k b, if a and b are constants (k: + - * / % min max).
bool try_fold(Type t, const Expr &a, const Expr &b, IRNodeType k, Expr &out);

// e == remainder (mod modulus); modulus 0: e is the constant remainder.
struct ModRem {
    int64_t modulus, remainder;
};

class Simplifier : public IRMutator {
public:
    std::map<std::string, std::vector<std::pair<int64_t, int64_t>>> ranges;  // constant bounds of variables in scope
    std::map<std::string, std::vector<Expr>> let_values;  // int lets in scope, for cancelling differences
    std::map<std::string, std::vector<ModRem>> alignment;  // int lets in scope: their residues
    // Trivial lets in scope (constants, variables): the value each name
    // stands for, put in where the name is met; an undefined entry is a
    // name bound again inside (a let or loop that is not trivial).
    std::map<std::string, std::vector<Expr>> replacements;

    // Simplify.cpp: what the rules ask.
    Linear linearize_expanded(const Expr &e, int depth = 0);
    bool constant_difference(const Expr &a, const Expr &b, int64_t &d);
    bool const_bounds(const Expr &e, int64_t &lo, int64_t &hi, int depth = 0);
    bool const_bound(const Expr &e, bool upper, int64_t &end, int depth = 0);
    bool diff_bounds(const Expr &a, const Expr &b, int64_t &lo, int64_t &hi);
    bool rounded_diff_bounds(Linear l, int64_t &lo, int64_t &hi);
    ModRem modulus_remainder(const Expr &e, int depth = 0);

protected:
    // SimplifyArith.cpp
    bool vector_rule(const Expr &a, const Expr &b, IRNodeType k, Expr &out);
    template<typename Op> Expr visit_sum(const Expr &orig, const Expr &a, const Expr &b);
    Expr visit(const Add *op) override;
    Expr visit(const Sub *op) override;
    Expr visit(const Mul *op) override;
    Expr visit(const Div *op) override;
    Expr visit(const Mod *op) override;
    Expr visit(const Cast *op) override;
    Expr visit(const Ramp *op) override;
    Expr visit(const Call *op) override;

    // SimplifyMinMax.cpp
    template<typename Op> Expr visit_minmax(const Expr &orig, Expr a, Expr b);
    template<typename Op> Expr prune_chain(const Expr &a, const Expr &b);
    Expr visit(const Min *op) override;
    Expr visit(const Max *op) override;

    // SimplifyLogic.cpp
    template<typename Op> Expr visit_cmp(const Expr &orig, Expr a, Expr b);
    Expr visit(const EQ *op) override;
    Expr visit(const NE *op) override;
    Expr visit(const LT *op) override;
    Expr visit(const LE *op) override;
    Expr visit(const GT *op) override;
    Expr visit(const GE *op) override;
    Expr visit(const And *op) override;
    Expr visit(const Or *op) override;
    Expr visit(const Not *op) override;
    Expr visit(const Select *op) override;

    // SimplifyStmt.cpp
    template<typename T, typename Body> Body visit_let(const T *op, const Body &body);
    Expr visit(const Variable *op) override;
    // Entries live only while their lets or loops are in scope.
    void push_replacement(const std::string &n, const Expr &v) { replacements[n].push_back(v); }
    void pop_replacement(const std::string &n) {
        auto it = replacements.find(n);
        it->second.pop_back();
        if (it->second.empty()) replacements.erase(it);
    }
    // While a name is bound again inside a trivial let's body, it is itself.
    bool shadows(const std::string &n) const { return replacements.count(n) > 0; }
    Expr visit(const Let *op) override;
    Stmt visit(const LetStmt *op) override;
    Stmt visit(const For *op) override;
    Stmt visit(const IfThenElse *op) override;
    Stmt visit(const AssertStmt *op) override;
    Stmt visit(const ProducerConsumer *op) override;
    Stmt visit(const Realize *op) override;
    Stmt visit(const Allocate *op) override;
};

}  // namespace simplifier
}  // namespace internal
}  // namespace kiln
