// JIT: compile emitted C++ into a shared object with the system compiler,
// dlopen it and call `NAME_argv`.
//
//   auto m = JITModule::compile(codegen_cpp(f, t), f.name, t);
//   void *args[] = {in.raw_buffer(), &scale, out.raw_buffer()};  // LoweredFunc::args order
//   m->run_or_throw(args);  // or: int code = m->run(args);
//
// The shared object is cached under $XDG_CACHE_HOME/kiln (else
// $HOME/.cache/kiln) as <hash>.so, the hash covering the source, the compiler
// and its flags; KILN_JIT_CACHE=0 compiles into a temporary directory instead.
// The compiler is $CXX, else c++. Each module carries its own copy of the
// runtime; its error handler forwards to this process's kiln_error, so a
// handler set with kiln_set_error_handler() sees the kernels' messages.
// Loaded modules stay loaded for the life of the process.
#pragma once
#include <memory>
#include <string>

#include "kiln/Target.h"

// The latest message reported through kiln_error by any thread
// (runtime/kiln_runtime.cpp); "" if none.
extern "C" const char *kiln_last_error_message(void);

namespace kiln {
namespace internal {

class JITModule {
public:
    // Throws InternalError with the compiler's output if compilation fails.
    static std::shared_ptr<JITModule> compile(const std::string &source, const std::string &fn_name, const Target &t);

    // Calls NAME_argv(args): 0 on success, else a negative kiln_error_code.
    int run(void **args) const { return argv_fn(args); }
    // run(), turning a failure into kiln::RuntimeError(code, last message).
    void run_or_throw(void **args) const;

    const std::string &name() const { return fn_name; }
    // Another symbol of the module (e.g. NAME_npu_report of an NPU kernel); null if absent.
    void *symbol(const std::string &name) const;

private:
    std::string fn_name;
    void *handle = nullptr;
    int (*argv_fn)(void **) = nullptr;
};

}  // namespace internal
}  // namespace kiln
