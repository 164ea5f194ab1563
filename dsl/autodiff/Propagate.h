// The backward walk: from the output's adjoint, one adjoint Func per stage
// of every float Func the output depends on, and one per float image and
// Param, defined consumers first.
//
// For each Func f (consumers before producers), its final adjoint
// "<f>_adjoint" is the sum of what its readers contributed (Gather.h): a
// pure definition for the gathers, an update for each sum or scatter. Then
// its stages, last first, send the adjoint of their value to what they read
// (ReverseAccumulate.h) and define the adjoint of the stage before:
//
//   pure or overwriting update     the previous stage's adjoint is zero where the update wrote
//   f(L) = f(L) + e  (sums, -=)    unchanged; e receives f's adjoint at L
//   f(x) = h(f(x), ...) (no RDom)  times dh/df, with f before the update read from stage_value()
//   f(x) = max(f(x), e)  (min)     only the winning point receives it (winner(), ForwardCopies.h)
//
// Any other update that reads f (a product or another non-sum over an RDom,
// a read of f at other points: a scan) is a CompileError naming the stage.
#pragma once
#include <map>
#include <string>
#include <vector>

#include "analysis/Bounds.h"
#include "ir/Function.h"
#include "kiln/Func.h"

namespace kiln {
namespace internal {

// `seed` is the output's adjoint as an expression of the output's Vars
// (already zero outside output_region where that is given).
std::map<std::string, std::vector<Func>> propagate(const std::shared_ptr<FunctionContents> &output, const Expr &seed,
                                                   const Box &output_region);

}  // namespace internal
}  // namespace kiln
