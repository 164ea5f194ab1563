// What every JIT module compiled into one cache directory shares, built
// once there instead of once per module: the prologue every kernel starts
// with (kiln_runtime.h + kiln_prologue.h + ...) as a GCC precompiled header, and
// the runtime (kiln_runtime.cpp) as an object file each module links.
// Parsing the one and compiling the other were about a third of a small
// kernel's compile time.
//
//   JITShared s = jit_shared_parts(dir, cxx, compile_flags);
//   emitted text:  <comments> <prologue text> <kernel>
//   compiled text: <comments> <kernel>, with "-include s.prologue_header"
//                  and s.runtime_object on the link line
//
// Both are keyed by a hash of the compiler, the flags and their text, built
// under temporary names and renamed into place, so concurrent processes
// share them safely. A part that fails to build is left out (empty), and
// the module then compiles the text itself, as it did without the cache.
#pragma once
#include <cstdint>
#include <string>

namespace kiln {
namespace internal {

struct JITShared {
    std::string prologue_header;  // "" if none: -include it (its .gch sits beside it)
    std::string runtime_object;   // "" if none: link it
};

JITShared jit_shared_parts(const std::string &dir, const std::string &cxx, const std::string &compile_flags);

// Helpers of the JIT (dsl/driver/JIT.cpp) and of the above.
uint64_t fnv1a_64(const std::string &s);
std::string shell_quote(const std::string &s);
// Runs cmd; returns its exit status and appends its output (stdout+stderr).
int run_command(const std::string &cmd, std::string &output);

}  // namespace internal
}  // namespace kiln
