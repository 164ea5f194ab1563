// What Func::lowered_stmt(t) prints, less hoist_loop_invariants, the last
// pass: for tests of the passes before it, which look for their own
// output's text (loop invariant code motion would name parts of it
// licm.<n> and move them out of their loops).
#pragma once
#include <string>

#include "ir/IRPrinter.h"
#include "kiln/kiln.h"
#include "lower/Lower.h"

inline std::string stmt_before_licm(const kiln::Func &f, const kiln::Target &t) {
    kiln::internal::LowerOptions o;
    o.stop_after = "common subexpressions";
    return kiln::to_string(kiln::internal::lower({f.contents()}, f.name(), {}, t, o).body);
}
