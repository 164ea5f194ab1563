// The page behind kiln::stmt_html (kiln/StmtHTML.h), from its parts, so that
// it can be built (and tested) from hand-made statements too.
//
// Layout: the loop nest on the left; the fusion report and the emitted C++
// on the right. Loops, lets, stores and loads take the colour of the Func
// they belong to (a name "f.s0.x" or "f.min.0" belongs to f). Vectorized and
// unrolled loops no longer exist in the final nest; they are shown as badges
// on the loop that encloses them in `loop_nest`. Each `for` of the nest is
// linked to the C++ line `for (int32_t f_s0_x = ...` (the IR name with every
// character outside [A-Za-z0-9_] replaced by '_', possibly with a '_'
// suffix), matched in order of appearance.
#pragma once
#include <string>

#include "kiln/Report.h"
#include "lower/Lower.h"

namespace kiln {
namespace internal {

struct StmtHTMLInputs {
    LoweredFunc func;       // the final loop nest, as codegen saw it
    Stmt loop_nest;         // lower() stopped at LowerStop::LoopNest: loop kinds before vectorize/unroll
    PipelineReport report;  // Pipeline::report
    std::string cpp;        // codegen_cpp(func, target)
    std::string target;     // Target::to_string()
    std::string explanation;  // the autoscheduler's (AutoscheduleResult::explanation), or "": its panel
};

std::string stmt_html(const StmtHTMLInputs &in);

}  // namespace internal
}  // namespace kiln
