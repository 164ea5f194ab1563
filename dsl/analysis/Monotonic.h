// How an expression changes when a loop variable steps by one, or grows.
//
//   step of (y + 1) in y        ->  1     (increasing)
//   step of (y*2 - 1) in y      ->  2
//   step of (y % 4) in y        ->  unknown
//   monotonic(min(y*8 + 7, n) + ((n - y*8) / -2), y)  ->  Increasing
#pragma once
#include <string>

#include "ir/IR.h"

namespace kiln {
namespace internal {

// True, with the step in `step`, if e[v + 1] - e[v] is a constant.
bool constant_step(const Expr &e, const std::string &v, int64_t &step);

enum class Monotonic { Constant, Increasing, Decreasing, Unknown };

// Whether e never decreases (or never increases) as the variable v grows,
// from its structure: sums, differences, products and Euclidean quotients by
// constants, min, max, and selects whose condition does not name v. Int32
// and wider signed expressions only (they do not overflow, IR.h).
Monotonic monotonic(const Expr &e, const std::string &v);

}  // namespace internal
}  // namespace kiln
