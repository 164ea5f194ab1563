// lower(): algorithm + schedule -> one imperative statement ready for codegen.
#pragma once
#include <string>
#include <vector>

#include "SlidingWindow.h"
#include "ir/Function.h"
#include "kiln/Pipeline.h"
#include "kiln/Target.h"

namespace kiln {
namespace internal {

struct LoweredArgument {
    std::string name;
    bool is_buffer = false;
    bool is_output = false;
    Type type;       // element type for buffers
    int dimensions = 0;
};

// What codegen receives. Conventions of `body`:
//  - Buffer arguments are referred to by name in Load/Store (flat index in
//    elements, relative to the host pointer), and through the Int(32)
//    variables "<name>.min.<d>", "<name>.extent.<d>", "<name>.stride.<d>";
//    codegen unpacks those from the halide_buffer_t after checking the
//    buffer is non-null, has host memory, the declared type and
//    dimensionality, and stride 1 in dimension 0.
//  - Scalar arguments are Variables named after the argument.
//  - Only Int(32) loop variables; For loops are Serial or Parallel (vector
//    and unrolled loops are gone); no Provide or Realize (flattened).
//  - Names a For or Allocate introduces are unique; a LetStmt name may be
//    reused by sibling statements (unrolled copies), never shadowed.
struct LoweredFunc {
    std::string name;
    std::vector<LoweredArgument> args;  // signature order
    Stmt body;
};

// The loop nest after bounds inference, sliding window, storage folding and
// simplification, still with Realize/Provide/Call per Func (for analyses
// such as the fusion report). `unfused`: every computed Func is moved to
// compute_root/store_root first (the baseline the report compares against);
// with `materialize_inlined` the inlined Funcs too (the distinct points each
// needs); both drop the fold_storage() directives. `sliding` (if given) gets
// what became of each Func stored outside the loop it is computed in.
Stmt lower_loop_nest(const std::vector<std::shared_ptr<FunctionContents>> &outputs, const Target &target,
                     bool unfused, bool materialize_inlined = false, SlidingReports *sliding = nullptr);

// A signature (inputs, then the last `num_outputs` arguments as outputs) as
// codegen's arguments.
std::vector<LoweredArgument> lowered_args(const std::vector<Argument> &args, size_t num_outputs);

// Lower the pipeline computing `outputs`. `args` gives the signature order
// (inputs then outputs); it must list every input the pipeline reads.
LoweredFunc lower(const std::vector<std::shared_ptr<FunctionContents>> &outputs, const std::string &name,
                  const std::vector<LoweredArgument> &args, const Target &target);

}  // namespace internal
}  // namespace kiln
