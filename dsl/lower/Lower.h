// lower(): algorithm + schedule -> one imperative statement ready for codegen.
#pragma once
#include <chrono>
#include <functional>
#include <iostream>
#include <string>
#include <vector>

#include "BoundsInference.h"
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

// A signature (inputs, then the last `num_outputs` arguments as outputs) as
// codegen's arguments.
std::vector<LoweredArgument> lowered_args(const std::vector<Argument> &args, size_t num_outputs);

// Where lower() stops.
enum class LowerStop {
    // After bounds inference, sliding window, storage folding and a
    // simplification, without entry checks: the loop nest still has a
    // Realize/Provide/Call per Func (for analyses such as the fusion report,
    // stmt_html's loop nest, and the NPU target's own passes).
    LoopNest,
    // Every pass: what the host code generator receives.
    Final,
};

struct LowerOptions {
    LowerStop stop = LowerStop::Final;
    // Applied to the lowering's own copies of the Funcs first (the fusion
    // report's unfused baseline moves every Func to the root).
    std::function<void(Environment &)> rewrite;
    // If given, what became of each Func stored outside the loop it is
    // computed in (slid, folded, or why not).
    SlidingReports *sliding = nullptr;
    // Stop after the first pass of this name, as KILN_DEBUG prints it
    // ("schedule functions", "bounds inference", "sliding window", "storage
    // folding", ...), without entry checks: what the lowering tests look at.
    std::string stop_after;
    // If given, the lowering's copies of the Funcs (inlined, rewritten) and
    // the regions bounds inference found for the inputs and outputs.
    Environment *env = nullptr;
    PipelineRegions *regions = nullptr;
};

// Runs one pass of lower() or of a target's own passes after it (the NPU's,
// CodeGen_NPU.cpp): with KILN_DEBUG set prints what the pass returns (any
// type with an operator<<) after "kiln: after <name>:", with
// KILN_TIME_PASSES set the pass's time.
class PassLog {
public:
    PassLog() : debug(env_on("KILN_DEBUG")), timing(env_on("KILN_TIME_PASSES")) {}

    template<typename Fn>
    auto run(const char *name, Fn fn) {
        auto t0 = std::chrono::steady_clock::now();
        auto s = fn();
        double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
        if (timing) std::cerr << "kiln: " << name << ": " << ms << " ms\n";
        if (debug) std::cerr << "kiln: after " << name << ":\n" << s << "\n";
        return s;
    }

private:
    static bool env_on(const char *v);
    bool debug, timing;
};

// Lower the pipeline computing `outputs`: the one pipeline of passes, for
// every target and every use. `args` gives the signature order (inputs then
// outputs); it must list every input the pipeline reads (with
// LowerStop::LoopNest it may be empty).
LoweredFunc lower(const std::vector<std::shared_ptr<FunctionContents>> &outputs, const std::string &name,
                  const std::vector<LoweredArgument> &args, const Target &target,
                  const LowerOptions &options = LowerOptions());

}  // namespace internal
}  // namespace kiln
