// The names a statement binds: its lets (LetStmt and Let), loops and
// allocations, in the order a visitor meets them (outer before inner, first
// statement of a block before the next).
//
//   bound_names(for (x, 0, n) { let t = x * 2 in allocate f[t] { ... } })
//     -> {"x", "t", "f"}
//
// A pass that moves code out of a statement uses it to leave alone what the
// statement defines itself (unswitch_dense_loads: a test that names a let of
// the loop body stays inside); the C code generator pairs two copies of a
// body position by position (named_as).
#pragma once
#include <string>
#include <vector>

#include "IR.h"

namespace kiln {
namespace internal {

std::vector<std::string> bound_names(const Stmt &s);

}  // namespace internal
}  // namespace kiln
