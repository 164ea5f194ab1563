// Kiln's two error channels.
//
// User misuse (a bad schedule, a malformed definition) throws CompileError;
// the message names the Func, the directive, what is wrong and how to fix it.
// Compiler bugs throw InternalError through internal_assert. A generated
// kernel that rejects its arguments at run time surfaces as RuntimeError
// when called through the JIT.
#pragma once
#include <stdexcept>
#include <string>

namespace kiln {

struct CompileError : std::runtime_error {
    explicit CompileError(const std::string &m) : std::runtime_error(m) {}
};
struct InternalError : std::logic_error {
    explicit InternalError(const std::string &m) : std::logic_error(m) {}
};
struct RuntimeError : std::runtime_error {
    int code;
    RuntimeError(int c, const std::string &m) : std::runtime_error(m), code(c) {}
};

}  // namespace kiln

