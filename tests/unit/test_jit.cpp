// JITModule (dsl/driver/JIT.cpp): what a cache directory holds after a
// compile, what a kernel's shared object links, that a changed source is a
// new module, and that a compiler error names the kernel and keeps its
// source.
#include <HalideBuffer.h>
#include <stdlib.h>

#include <catch2/catch.hpp>
#include <cstdio>
#include <filesystem>
#include <set>
#include <string>

#include "codegen/CodeGen_C.h"
#include "driver/JIT.h"
#include "ir/IR.h"
#include "kiln/Error.h"
#include "kiln_runtime.h"

using namespace kiln;
using namespace kiln::internal;
namespace fs = std::filesystem;

namespace {

Expr var(const std::string &name) { return Variable::make(Int(32), name); }

// A kernel with a parallel loop whose body may fail (an assert: the failing
// iteration jumps to its end, and the loop returns the code afterwards):
// out[y] = y * 3 for y < 100, else the assert's message.
LoweredFunc parallel_kernel(const std::string &name) {
    LoweredArgument out;
    out.name = "out";
    out.is_buffer = true;
    out.is_output = true;
    out.type = Int(32);
    out.dimensions = 1;
    Expr y = var(name + ".s0.y");
    Stmt body = Block::make(AssertStmt::make(LT::make(y, Expr(100)), kiln_error_generic,
                                             {StringImm::make("row "), y, StringImm::make(" is too far")}),
                            Store::make("out", y * 3, y - var("out.min.0")));
    Stmt loop = For::make(name + ".s0.y", var("out.min.0"), var("out.extent.0"), ForType::Parallel, body);
    return {name, {out}, loop};
}

// Compiles parallel_kernel(name) with the JIT.
std::shared_ptr<JITModule> compile_kernel(const std::string &name) {
    return JITModule::compile(codegen_cpp(parallel_kernel(name), Target::host()), name, Target::host());
}

// Runs the JIT with $XDG_CACHE_HOME set to a fresh directory, restored and
// removed at the end.
struct FreshCache {
    std::string old, base;
    bool had_old;
    FreshCache() {
        const char *v = std::getenv("XDG_CACHE_HOME");
        had_old = v != nullptr;
        if (v) old = v;
        std::string templ = (fs::temp_directory_path() / "kiln-test-jit-XXXXXX").string();
        REQUIRE(mkdtemp(&templ[0]));
        base = templ;
        setenv("XDG_CACHE_HOME", base.c_str(), 1);
        unsetenv("KILN_JIT_CACHE");
    }
    ~FreshCache() {
        if (had_old) setenv("XDG_CACHE_HOME", old.c_str(), 1);
        else unsetenv("XDG_CACHE_HOME");
        std::error_code ec;
        fs::remove_all(base, ec);
    }
    std::string dir() const { return base + "/kiln"; }
    // The names in the cache directory ending with `suffix`.
    std::set<std::string> files(const std::string &suffix) const {
        std::set<std::string> r;
        for (const auto &e : fs::directory_iterator(dir())) {
            std::string n = e.path().filename().string();
            if (n.size() >= suffix.size() && n.compare(n.size() - suffix.size(), suffix.size(), suffix) == 0)
                r.insert(n);
        }
        return r;
    }
};

// The DT_NEEDED entries of a shared object, from `readelf -d` (binutils,
// which the JIT's compiler needs anyway).
std::set<std::string> needed_libraries(const std::string &so) {
    std::set<std::string> r;
    FILE *p = popen(("readelf -d '" + so + "' 2>&1").c_str(), "r");
    REQUIRE(p);
    char line[1024];
    while (std::fgets(line, sizeof line, p)) {
        std::string l = line;
        size_t at = l.find("(NEEDED)");
        if (at == std::string::npos) continue;
        size_t open = l.find('[', at), close = l.find(']', at);
        if (open != std::string::npos && close != std::string::npos) r.insert(l.substr(open + 1, close - open - 1));
    }
    pclose(p);
    return r;
}

}  // namespace

TEST_CASE("jit: a cache directory holds the module, its source and the shared prologue and runtime", "[jit]") {
    FreshCache cache;
    auto m = compile_kernel("jit_cached");
    const auto so = cache.files(".so");
    REQUIRE(so.size() == 1);
    const std::string key = so.begin()->substr(0, so.begin()->size() - 3);
    CHECK(key.size() == 16);
    CHECK(cache.files(key + ".cpp").size() == 1);  // the compiled text, kept beside it
    CHECK(cache.files(".h.gch").size() == 1);      // the prologue, precompiled once
    CHECK(cache.files(".o").size() == 1);          // the runtime, compiled once

    Halide::Runtime::Buffer<int32_t> out(64);
    void *args[] = {out.raw_buffer()};
    REQUIRE(m->run(args) == 0);
    for (int y = 0; y < 64; y++) CHECK(out(y) == y * 3);
    Halide::Runtime::Buffer<int32_t> long_out(120);
    void *long_args[] = {long_out.raw_buffer()};
    CHECK(m->run(long_args) == kiln_error_generic);
    CHECK(std::string(kiln_last_error_message()).find(" is too far") != std::string::npos);

    // The same text is the same module; another text is another module,
    // with the shared parts reused.
    CHECK(compile_kernel("jit_cached") == m);
    auto other = compile_kernel("jit_cached_other");
    CHECK(other != m);
    CHECK(cache.files(".so").size() == 2);
    CHECK(cache.files(".h.gch").size() == 1);
    CHECK(cache.files(".o").size() == 1);
}

TEST_CASE("jit: a kernel links libgomp and libc, not libstdc++", "[jit]") {
    // -nodefaultlibs: the linker does not read libstdc++'s symbols (a third
    // of the link); the kernel's few C++ ABI symbols come from the process.
    FreshCache cache;
    auto m = compile_kernel("jit_libs");
    const auto so = cache.files(".so");
    REQUIRE(so.size() == 1);
    const auto needed = needed_libraries(cache.dir() + "/" + *so.begin());
    CHECK(needed.count("libgomp.so.1") == 1);
    CHECK(needed.count("libc.so.6") == 1);
    CHECK(needed.count("libstdc++.so.6") == 0);
    Halide::Runtime::Buffer<int32_t> out(1000);
    void *args[] = {out.raw_buffer()};
    CHECK(m->run(args) == kiln_error_generic);  // row 100 fails inside the parallel loop
    for (int y = 0; y < 100; y++) CHECK(out(y) == y * 3);
}

TEST_CASE("jit: a compiler error names the kernel, shows the command and keeps the source", "[jit][error]") {
    FreshCache cache;
    std::string source = codegen_cpp(parallel_kernel("jit_broken"), Target::host());
    const std::string body = "extern \"C\" int jit_broken(";
    const size_t at = source.find(body);
    REQUIRE(at != std::string::npos);
    source.insert(at, "this is not C++;\n");
    try {
        JITModule::compile(source, "jit_broken", Target::host());
        FAIL("the broken kernel compiled");
    } catch (const InternalError &e) {
        const std::string what = e.what();
        CHECK(what.find("JIT compilation of kernel 'jit_broken' failed") != std::string::npos);
        CHECK(what.find("this is not C++") != std::string::npos);  // the compiler's own message
        CHECK(what.find("-nodefaultlibs") != std::string::npos);   // the command
        const size_t kept = what.find("The source is kept at ");
        REQUIRE(kept != std::string::npos);
        std::string path = what.substr(kept + std::string("The source is kept at ").size());
        path = path.substr(0, path.find_first_of(" \n"));
        CHECK(fs::exists(path));
    }
    CHECK(cache.files(".so").empty());
}
