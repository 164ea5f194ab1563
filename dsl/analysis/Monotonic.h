// How an expression changes when a loop variable steps by one.
//
//   step of (y + 1) in y        ->  1     (increasing)
//   step of (y*2 - 1) in y      ->  2
//   step of (y % 4) in y        ->  unknown
#pragma once
#include <string>

#include "ir/IR.h"

namespace kiln {
namespace internal {

// True, with the step in `step`, if e[v + 1] - e[v] is a constant.
bool constant_step(const Expr &e, const std::string &v, int64_t &step);

}  // namespace internal
}  // namespace kiln
