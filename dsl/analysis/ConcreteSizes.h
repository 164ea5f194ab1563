// Concrete values for counting a pipeline's loop nest (LoopCounts.h):
// every buffer's min, extent and stride from sizes given by name, and the
// current values of the scalar Params. The fusion report and the
// autoscheduler count with these.
//
//   concrete_sizes(outs, {{"blur_y", {4096, 4096}}}, "Pipeline::report")
//     -> values: blur_y.min.0 = 0, blur_y.extent.0 = 4096, blur_y.stride.1 = 4096, ...,
//        input.extent.0 = 4096 (an input not given is as large as the largest output)
#pragma once
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "lower/RealizationOrder.h"

namespace kiln {
namespace internal {

struct ConcreteSizes {
    std::map<std::string, int64_t> values;       // integer and bool scalars, buffer fields
    std::map<std::string, Expr> float_values;    // float scalars, as constants of their type
    std::map<std::string, std::vector<int>> sizes;  // of every output and input buffer, by name
    std::vector<std::string> assumed;  // inputs whose size was not given: as large as the largest
                                       // output, 1 in the dimensions the outputs lack
    int64_t input_bytes = 0;           // every input buffer, once
};

// values and float_values as constants to substitute into Exprs.
std::map<std::string, Expr> substitutions(const ConcreteSizes &c);

// e at the concrete values: `values` (substitutions()) and then `lets`, the
// values of lets e may name (a loop nest's, in terms of each other),
// substituted until e simplifies to an integer constant; nullopt if it
// does not.
//
//   constant_value(out.extent.0 - 1, {out.extent.0: 512})        -> 511
//   constant_value(f.s0.x.max + 1, values, {f.s0.x.max: out.extent.0 - 1}) -> 512
std::optional<int64_t> constant_value(const Expr &e, const std::map<std::string, Expr> &values,
                                      const std::map<std::string, Expr> &lets = {});

// A CompileError, for `caller`, if an output's size is missing.
ConcreteSizes concrete_sizes(const std::vector<std::shared_ptr<FunctionContents>> &outs,
                             const std::map<std::string, std::vector<int>> &sizes, const std::string &caller);

}  // namespace internal
}  // namespace kiln
