// Sliding window: when a Func is stored outside the loop it is computed in,
// values computed in earlier iterations of that loop are still there, so
// each iteration computes only what is new.
//
//   blur_x.store_root().compute_at(out, y):  out row y needs blur_x rows [y-1, y+1]
//     for (out.s0.y, ...) {
//       let blur_x.s0.y.min = out.s0.y - 1          ->   select(out.s0.y > out.s0.y.loop_min,
//                                                              max(out.s0.y - 1, (out.s0.y - 1) + 1 + 1) ...
//       let blur_x.s0.y.max = out.s0.y + 1               i.e. only row y+1 after the first iteration
//
// Applies when the compute loop is serial, the Func has no update
// definitions, and exactly one dimension of its region moves with the loop,
// monotonically (min and max both non-decreasing). Precondition: bounds
// inference has defined the region lets right inside the compute loop.
#pragma once
#include "RealizationOrder.h"

namespace kiln {
namespace internal {

Stmt sliding_window(const Stmt &s, const Environment &env);

// Shared with storage folding: the loop a Func is computed in (directly
// holding its region lets) and the dimension that slides along it, if any.
struct SlidingDim {
    std::string loop;  // the compute loop
    int dim = -1;      // the dimension whose region moves with the loop
    Expr min, max;     // that dimension's region before sliding
};
// Found by scanning `s` for For loops whose body starts with f's region lets.
bool find_sliding_dim(const Stmt &s, const FunctionContents &f, SlidingDim &out);

}  // namespace internal
}  // namespace kiln
