// Where a schedule file set each Func's compute and store levels, so that
// the errors lowering finds in those levels (an illegal compute_at site,
// storage inside a parallel loop, store_root on an inlined Func) point at
// the directive responsible, as the parser's and apply()'s errors do:
//
//   late.sched:2:4: Func a is scheduled compute_at(c, y), but c does not use a ...
//
// ScheduleFile::apply() records a position with the level it set; a later
// change of that level (from C++, or another file) makes the record stale,
// and schedule_origin() then gives "". Records follow the Func's lifetime.
#pragma once
#include <memory>
#include <string>

#include "ir/Function.h"

namespace kiln {
namespace internal {

// `kind` is "compute" or "store"; `position` is "file:line:col".
void record_schedule_origin(const std::shared_ptr<FunctionContents> &f, const std::string &kind,
                            const std::string &position);

// Lowering works on copies of the Funcs (find_environment): a copy keeps the
// records of its original.
void copy_schedule_origins(const std::shared_ptr<FunctionContents> &from, const std::shared_ptr<FunctionContents> &to);

// "file:line:col: " if a schedule file set f's `kind` level to what it is
// now, else "".
std::string schedule_origin(const FunctionContents &f, const std::string &kind);

}  // namespace internal
}  // namespace kiln
