// Helpers of the runtime tier: a kernel JIT-compiled from a Kiln pipeline and
// called directly with raw halide_buffer_t arguments (as an application
// calls an AOT kernel), so that each bad argument reaches the kernel's own
// entry checks.
#pragma once
#include <HalideBuffer.h>
#include <kiln/kiln.h>
#include <kiln_runtime.h>

#include <catch2/catch.hpp>
#include <map>
#include <memory>
#include <string>

#include "driver/JIT.h"

namespace rt {

using namespace kiln;

// A compiled pipeline whose arguments are set by name.
class Kernel {
public:
    Kernel(const Pipeline &p, const std::string &name, const Target &t = Target::host())
        : name_(name), args_(p.infer_arguments()) {
        module_ = internal::JITModule::compile(p.compile_to_cpp_source(name, args_, t), name, t);
        slots_.assign(args_.size(), nullptr);
    }
    const std::string &name() const { return name_; }
    void set(const std::string &arg, void *value) { slots_.at(index(arg)) = value; }
    // Calls the kernel; returns its code, `message` the one line it reported.
    int run(std::string &message) {
        kiln_set_error_handler(&Kernel::capture);
        last().clear();
        int r = module_->run(slots_.data());
        kiln_set_error_handler(nullptr);
        message = last();
        return r;
    }

private:
    size_t index(const std::string &arg) const {
        for (size_t i = 0; i < args_.size(); i++)
            if (args_[i].name == arg) return i;
        FAIL("kernel " << name_ << " has no argument " << arg);
        return 0;
    }
    static std::string &last() {
        static std::string s;
        return s;
    }
    static void capture(const char *m) { last() = m; }
    std::string name_;
    std::vector<Argument> args_;
    std::shared_ptr<internal::JITModule> module_;
    std::vector<void *> slots_;
};

// The kernel fails with `code`, reports one line containing each of `parts`,
// and leaves `out` (filled with a canary value) as it was.
template<typename T>
void expect_rejected(Kernel &k, int code, const std::vector<std::string> &parts, const Halide::Runtime::Buffer<T> &out,
                     T canary) {
    std::string message;
    int r = k.run(message);
    INFO("message: " << message);
    CHECK(r == code);
    CHECK(message.find('\n') == std::string::npos);
    CHECK(message.rfind(k.name() + ": ", 0) == 0);
    for (const std::string &p : parts) CHECK_THAT(message, Catch::Contains(p));
    int changed = 0;
    out.for_each_value([&](T v) { changed += !(v == canary); });
    CHECK(changed == 0);
}

}  // namespace rt
