// An interpreter of lowered IR: the fuzz tier's cheap stand-in for the JIT.
//
// interpret(f, args) runs a LoweredFunc (what codegen receives, see
// lower/Lower.h) on the same argument vector a compiled kernel's `_argv`
// entry takes: a halide_buffer_t * per buffer, a pointer to the value per
// scalar. It returns 0, or the error code of the first failing AssertStmt
// (its message in `message`), as the kernel would.
//
// It is stricter than the compiled kernel, which is the point of a test
// oracle: every Load and Store is checked against the memory of its buffer
// (an input or output's whole allocation, an Allocate's size), and a
// Parallel loop runs its iterations last to first, so that a loop made
// parallel over a dependence gives a different answer. Allocations start
// filled with a pattern (not zeros), so reading an element nobody wrote
// shows as a wrong value. An out-of-bounds access throws InterpreterError
// naming the buffer, the index and the valid range.
//
// Semantics are those of ir/IR.h: integers wrap at their width, / and %
// round toward negative infinity (0 for a zero divisor), float32 results
// are rounded to float. Math calls use the C library, so float32
// exp/log/tanh may differ from the kernels' own in the last bits.
#pragma once
#include <HalideRuntime.h>

#include <stdexcept>
#include <string>

#include "lower/Lower.h"

namespace kiln_fuzz {

struct InterpreterError : std::runtime_error {
    using std::runtime_error::runtime_error;
};

int interpret(const kiln::internal::LoweredFunc &f, void **args, std::string *message = nullptr);

}  // namespace kiln_fuzz
