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
// monotonically (min and max both non-decreasing, by any step: a clamped
// last strip is fine), and its producer writes no row past the region's
// max in that dimension (or below its min), or does so only through a
// RoundUp (ShiftInwards) split of it: the new rows then start a whole
// number of tiles from the window's min (at least one tile below its max),
// so the producer writes only where the unslid window did. A
// Func stored outside its compute loop that does not slide is recorded with
// the reason, for the fusion report and lower()'s warning:
//
//   g(x, y) += 1; g.store_root().compute_at(out, y)  ->  not slid over out.y: it has update definitions
//
// Precondition: bounds inference has defined the region lets right inside
// the compute loop.
#pragma once
#include <map>
#include <set>
#include <string>
#include <vector>

#include "RealizationOrder.h"
#include "analysis/Bounds.h"

namespace kiln {
namespace internal {

// What became of a Func stored outside the loop it is computed in.
struct SlidingReport {
    std::string loop;           // the compute loop as scheduled ("out.y")
    int dim = -1;               // the dimension that slides; -1: not slid
    Expr window;                // that dimension's extent in one iteration, before sliding
    std::string not_slid;       // why it does not slide, if it does not
    std::map<int, Expr> folds;  // dimension -> fold factor (storage folding)
    std::set<int> fold_storage; // the dimensions folded as fold_storage() asked
    std::string not_folded;     // why the sliding dimension is not folded, if it slides and is not
    // "slides over out.y in y, window of 3, folded to 4", or
    // "not slid over out.y: it has update definitions"
    std::string describe(const FunctionContents &f) const;
};
using SlidingReports = std::map<std::string, SlidingReport>;  // by Func name

Stmt sliding_window(const Stmt &s, const Environment &env, SlidingReports *reports = nullptr);

// Shared with storage folding.

// The loops between the top of `realize_body` (f's storage) and f's
// producer, outermost first; empty if f is computed where it is stored.
std::vector<const For *> loops_to_producer(const Stmt &realize_body, const std::string &f);

// f's region at the top of the body of `loop`, as one [min, max] per
// dimension: the window one iteration needs (before sliding), in terms of
// the loop's variable. False if the body does not start with f's region
// lets. `lets` (if given) gets the values of those lets (after sliding).
bool region_at(const For *loop, const FunctionContents &f, std::vector<std::pair<Expr, Expr>> &region,
               std::map<std::string, Expr> *lets = nullptr);

// The rows of dimension d that f's producer writes in one iteration of
// `loop` (the loop it is computed in), in terms of f's region lets
// (f.s0.y.min, ...), and whether they reach below the region's min or above
// its max (a split's tail may). False if not known.
bool rows_written(const For *loop, const FunctionContents &f, int d, Interval &rows, bool &below, bool &above);

// How e moves as the variable v steps up: 0 not at all, 1 never down, -1
// never up, 2 not known (e.g. both ways: min(y, 30 - y)).
int step_sign(const Expr &e, const std::string &v);

// The loop a Func is computed in (directly holding its region lets) and the
// dimension that moves with it, never down, if exactly one does. Updates
// are not considered (sliding skips such Funcs, folding checks their
// writes).
struct SlidingDim {
    std::string loop;  // the compute loop
    int dim = -1;      // the dimension whose region moves with the loop
    Expr min, max;     // that dimension's region before sliding
    int64_t tile = 1;  // the factor of a split of the dimension whose tail writes past the region
    TailStrategy tail = TailStrategy::Auto;  // that split's: RoundUp or ShiftInwards
};
bool find_sliding_dim(const Stmt &realize_body, const Environment &env, const FunctionContents &f, SlidingDim &out);

}  // namespace internal
}  // namespace kiln
