// Evaluates a scalar expression to a number, given the values of the
// variables it names (LoopCounts' walk: loop bounds, guards and
// realization bounds at the sizes being counted). Integers as Kiln computes
// them (division and modulo rounding toward negative infinity), floats in
// their type's precision; false where a variable's value is not known or an
// operation is not evaluated (a call other than floor, ceil, round, trunc
// and sqrt, a float narrower than 32 bits).
//
//   values {n: 100}:  eval((n + 7) / 8 * 8, r)          -> true, r = 104
//                     eval(select(n > 64, 1, 2), r)     -> true, r = 1
//                     eval(n * m, r)                    -> false (m unknown)
#pragma once
#include <cstdint>
#include <map>
#include <string>
#include <unordered_map>

#include "kiln/Expr.h"

namespace kiln {
namespace internal {

class ExprEvaluator {
public:
    // `floats`: float-valued variables, as FloatImm constants.
    ExprEvaluator(const std::unordered_map<std::string, int64_t> &v, const std::map<std::string, Expr> &f)
        : values(v), floats(f) {}
    const std::unordered_map<std::string, int64_t> &values;
    const std::map<std::string, Expr> &floats;

    // A float expression in its type's precision (float32 rounds each
    // operation, as the kernel does); other types through eval.
    bool eval_float(const Expr &e, double &r);
    bool eval(const Expr &e, int64_t &r);

private:
    // A comparison, of floats in their precision or of integers: whether
    // `holds` of the operands' values.
    template<typename Node, typename Holds>
    bool compare(const Node *op, int64_t &r, Holds holds);
};

}  // namespace internal
}  // namespace kiln
