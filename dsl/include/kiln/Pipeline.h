// Pipeline: one or more output Funcs, compiled together.
//
// realize() JIT-compiles the pipeline for the host (emitted C++ -> system
// compiler -> shared object, cached by content hash under
// $XDG_CACHE_HOME/kiln) and runs it into the caller's buffers. Inputs are the
// buffers bound to ImageParams with set(), scalars the values of Params.
#pragma once
#include <map>
#include <string>
#include <vector>

#include "Buffer.h"
#include "Func.h"
#include "Report.h"
#include "Target.h"

namespace kiln {

// One argument of a compiled function, in signature order.
struct Argument {
    std::string name;
    bool is_buffer = false;
    Type type;
    int dimensions = 0;
};

namespace internal {
struct JITCache;
}

class Pipeline {
public:
    Pipeline() = default;
    Pipeline(const Func &output) : outputs_{output} {}
    Pipeline(const std::vector<Func> &outputs) : outputs_(outputs) {}

    const std::vector<Func> &outputs() const { return outputs_; }

    template<typename T, int D> void realize(Halide::Runtime::Buffer<T, D> &out, const Target &t = Target::host()) {
        realize_raw({out.raw_buffer()}, t);
    }
    // Every output's buffers in order, one per Tuple element.
    void realize(Realization &outs, const Target &t = Target::host());
    void realize_raw(const std::vector<halide_buffer_t *> &outs, const Target &t = Target::host());
    // Compile the kernel for `t` now (lowering, the C++ compiler, loading it),
    // as realize() does on its first call; realize() for the same target then
    // runs it without compiling again, until a Func is redefined or
    // rescheduled. Needs no buffers.
    void compile_jit(const Target &t = Target::host());

    // Every Func of the pipeline by name (handles to the same Funcs, so
    // scheduling them schedules the pipeline).
    std::map<std::string, Func> functions() const;
    // The inputs (images and scalars, sorted by name) then the outputs; an
    // output returning a Tuple has one buffer per element, "f.0", "f.1", ...
    std::vector<Argument> infer_arguments() const;
    // Readable C++ of the whole kernel; the function is `fn_name`.
    std::string compile_to_cpp_source(const std::string &fn_name, const Target &t = Target::host()) const;
    // The same with the signature given explicitly (generators declare it):
    // the inputs in any order, every one the pipeline reads and possibly some
    // it does not, then the outputs in the pipeline's order.
    std::string compile_to_cpp_source(const std::string &fn_name, const std::vector<Argument> &args,
                                      const Target &t) const;
    void compile_to_cpp(const std::string &path, const std::string &fn_name, const Target &t = Target::host()) const;
    // The fusion report for buffers of the given sizes (by output or input
    // name, e.g. {{"blur_y", {4096, 4096}}}); see Report.h.
    PipelineReport report(const std::map<std::string, std::vector<int>> &sizes,
                          const Target &t = Target::host(), int64_t cache_bytes = 1 << 20) const;
    // The loop nest after all lowering passes, as text (for the NPU target,
    // the loop nest its own passes start from; KILN_DEBUG prints those passes).
    std::string lowered_stmt(const Target &t = Target::host()) const;
    // The same for the kernel `fn_name` with an explicit signature (as above).
    std::string lowered_stmt(const std::string &fn_name, const std::vector<Argument> &args, const Target &t) const;

private:
    friend class Func;
    std::vector<Func> outputs_;
    // The compiled kernel of the last realize(), reused while no Func has
    // been redefined or rescheduled since (see internal::definition_epoch).
    std::shared_ptr<internal::JITCache> jit_cache_;
};

}  // namespace kiln
