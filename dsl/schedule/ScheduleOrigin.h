// Where a schedule file set each Func's compute and store levels, its
// storage folds and the type of each loop it made vectorized, unrolled or
// parallel, so that the errors lowering finds later (an illegal compute_at
// site, storage inside a parallel loop, store_root on an inlined Func, a
// vectorized or unrolled loop of non-constant extent, a fold_storage too
// small) point at the directive responsible, as the parser's and apply()'s
// errors do:
//
//   late.sched:2:4: Func a is scheduled compute_at(c, y), but c does not use a ...
//   late.sched:3:9: Loop c.s0.x is scheduled vectorize(), but its extent ...
//
// ScheduleFile::apply() records a position with the level or loop type it
// set, in the Func's schedule (FuncSchedule::origins), so copies of the Func
// keep it; a later change of the level (from C++, or another file) makes
// the record stale, and schedule_origin() / loop_origin() then give "".
#pragma once
#include <string>

#include "ir/Function.h"

namespace kiln {
namespace internal {

// `kind` is "compute" or "store", "fold.<var>" for a fold_storage of
// dimension var, or "s<stage>.<loop>" for the type of a loop (Dim::var) of a
// stage; `position` is "file:line:col".
void record_schedule_origin(FunctionContents &f, const std::string &kind, const std::string &position);

// "file:line:col: " if a schedule file set f's `kind` level to what it is
// now, else "".
std::string schedule_origin(const FunctionContents &f, const std::string &kind);

// The same for the type of loop `dim` (Dim::var) of stage `stage`.
void record_loop_origin(FunctionContents &f, int stage, const std::string &dim, const std::string &position);
std::string loop_origin(const FunctionContents &f, int stage, const std::string &dim);

}  // namespace internal
}  // namespace kiln
