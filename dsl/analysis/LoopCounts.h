// Dynamic counts of a loop nest, found by walking it with concrete values
// for its free variables (buffer sizes, parameters) instead of running it.
//
//   for (y, 0, 4) { realize f([0, 10]) { for (x, 0, 10) { f(x) = g(x) + g(x + 1) } } }
//     ->  f: 4 realizations of 10 points, 40 stores; g: 80 loads
//
// A store belongs to an update (stage k >= 1) of f when the innermost loop
// around it that belongs to f is named f.s<k>.*; any other store of f is
// its pure definition's.
//
// A loop whose body has no loops, guards or realizations is counted by
// multiplying; so is one whose first and last iterations count the same when
// its guards and realizations do not depend on its variable; others are
// stepped through one iteration at a time.
#pragma once
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "ir/IR.h"

namespace kiln {
namespace internal {

struct FuncCounts {
    int64_t stores = 0;           // Provide executions
    std::vector<int64_t> stage_stores;  // stores by stage (0: the pure definition)
    int64_t pure_stores = 0;      // those of the pure definition (stage 0): the points defined
    int64_t loads = 0;            // Call executions (reads of its values)
    int64_t realizations = 0;     // Realize executions
    std::vector<int64_t> largest; // extents of the largest realization
    int64_t largest_points = 0;
};

struct LoopCounts {
    std::map<std::string, FuncCounts> funcs;
    bool exact = true;  // false if some bound could not be evaluated
};

// `values`: every free Int variable the loop bounds need.
LoopCounts count_loop_nest(const Stmt &s, const std::map<std::string, int64_t> &values);

}  // namespace internal
}  // namespace kiln
