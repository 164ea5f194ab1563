#include "JIT.h"

#include <dlfcn.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <map>
#include <mutex>

#include "JITShared.h"
#include "codegen/CodeGen_C.h"
#include "ir/Error.h"
#include "kiln/Generator.h"
#include "kiln_runtime.h"

#ifndef KILN_HALIDE_INCLUDE_DIR
#define KILN_HALIDE_INCLUDE_DIR "/usr/include/halide14"
#endif

extern "C" void kiln_error_from_jit(const char *message);  // runtime/kiln_runtime.cpp

namespace kiln {
namespace internal {

namespace {

std::string env(const char *name) {
    const char *v = std::getenv(name);
    return v ? v : "";
}

bool make_dirs(const std::string &path) {
    for (size_t i = 1; i <= path.size(); i++) {
        if (i < path.size() && path[i] != '/') continue;
        std::string prefix = path.substr(0, i);
        if (mkdir(prefix.c_str(), 0755) != 0 && errno != EEXIST) return false;
    }
    return true;
}

// The cache directory, or "" when KILN_JIT_CACHE=0 or none can be created.
std::string cache_dir() {
    if (env("KILN_JIT_CACHE") == "0") return "";
    std::string base = env("XDG_CACHE_HOME");
    if (base.empty()) {
        if (env("HOME").empty()) return "";
        base = env("HOME") + "/.cache";
    }
    std::string dir = base + "/kiln";
    return make_dirs(dir) ? dir : "";
}

std::string temp_dir() {
    std::string base = env("TMPDIR").empty() ? "/tmp" : env("TMPDIR");
    std::string templ = base + "/kiln-jit-XXXXXX";
    internal_assert(mkdtemp(&templ[0])) << "cannot create a temporary directory under " << base;
    return templ;
}

bool file_exists(const std::string &path) { return access(path.c_str(), R_OK) == 0; }

// Compiles `text` into `so`, through temporary names renamed into place so
// that concurrent processes never see a partial file.
void build(const std::string &text, const std::string &cxx, const std::string &flags, const std::string &link_flags,
           const std::string &dir, const std::string &key, const std::string &fn_name) {
    static std::atomic<int> counter{0};
    std::string tmp = dir + "/" + key + ".tmp" + std::to_string(getpid()) + "_" + std::to_string(counter++);
    {
        std::ofstream f(tmp + ".cpp");
        f << text;
        internal_assert(f.good()) << "cannot write " << tmp << ".cpp";
    }
    std::string cmd = cxx + " " + flags + " -o " + shell_quote(tmp + ".so") + " " + shell_quote(tmp + ".cpp") + " " +
                      link_flags;
    std::string output;
    int status = run_command(cmd, output);
    if (status != 0 || !file_exists(tmp + ".so")) {
        std::remove((tmp + ".so").c_str());
        internal_error << "JIT compilation of kernel '" << fn_name << "' failed (exit status " << status << "):\n$ "
                       << cmd << "\n" << output << "The source is kept at " << tmp << ".cpp";
    }
    std::rename((tmp + ".cpp").c_str(), (dir + "/" + key + ".cpp").c_str());
    internal_assert(std::rename((tmp + ".so").c_str(), (dir + "/" + key + ".so").c_str()) == 0)
        << "cannot move the compiled kernel into " << dir;
}

// What the kernel links, with the library's modification time (an NPU
// kernel carries the simulator: a rebuilt simulator means a new module).
std::string link_stamp(const Target &t) {
    std::string lib = kernel_link_flags(t);
    struct stat st;
    if (lib.empty() || stat(lib.c_str(), &st) != 0) return lib + "\n";
    return lib + " " + std::to_string((long long)st.st_mtime) + "\n";
}

// " -fuse-ld=gold" when gold is on the PATH, else "": it links a kernel's
// shared object in about 22 ms of CPU where ld.bfd takes 30 (a third of a
// small kernel's fixed cost; docs/performance.md, "Compile time (session
// 5)"). It comes with binutils, as ld does.
const std::string &linker_flag() {
    static const std::string flag = [] {
        std::string path = env("PATH");
        for (size_t at = 0; at <= path.size();) {
            size_t end = path.find(':', at);
            if (end == std::string::npos) end = path.size();
            std::string dir = path.substr(at, end - at);
            if (!dir.empty() && access((dir + "/ld.gold").c_str(), X_OK) == 0) return std::string(" -fuse-ld=gold");
            at = end + 1;
        }
        return std::string();
    }();
    return flag;
}

// What a kernel's shared object links after its own objects, with
// -nodefaultlibs: the C libraries it may call (libgomp for parallel loops,
// libm, libgcc_s, libc), so that their symbols keep their versions, and
// not libstdc++. The few C++ ABI symbols a kernel can use
// (__gxx_personality_v0, __cxa_thread_atexit, std::terminate) bind at
// dlopen to the libstdc++ of the process, which links libkiln, a C++
// library. Reading libstdc++'s 5000 symbols was a third of the link:
// 22-24 ms of CPU per kernel with g++'s default libraries, 17-18 without
// (docs/performance.md, "Compile time (session 6)").
const char *const kernel_libraries = "-lgomp -lm -lgcc_s -lc";

// The handler installed in every module: hand the message to the process's
// runtime (libkiln), which records it and calls the user's handler.
void forward_to_process(const char *message) { kiln_error_from_jit(message); }

}  // namespace

std::shared_ptr<JITModule> JITModule::compile(const std::string &source, const std::string &fn_name,
                                              const Target &t) {
    std::string cxx = env("CXX").empty() ? "c++" : env("CXX");
    // The same flags as an AOT kernel (kernel_compiler_flags), as a shared object.
    const std::string compile_flags =
        "-std=c++17 -fPIC -I" + shell_quote(KILN_HALIDE_INCLUDE_DIR) + " " + kernel_compiler_flags(t);
    // A kernel that links a library (the NPU simulator, C++) keeps g++'s
    // default libraries.
    const bool own_objects_only = kernel_link_flags(t).empty();
    const std::string flags =
        compile_flags + " -shared" + (own_objects_only ? " -nodefaultlibs" : "") + linker_flag();
    const std::string runtime_text = "\n// ---- The Kiln runtime (runtime/kiln_runtime.cpp) ----\n";
    std::string text = source + runtime_text + runtime_source_text();
    char key[17];
    const std::string stamp = cxx + "\n" + flags + "\n" + kernel_libraries + "\n" + t.to_string() + "\n";
    std::snprintf(key, sizeof(key), "%016llx", (unsigned long long)fnv1a_64(stamp + link_stamp(t) + text));

    static std::mutex mutex;
    static std::map<std::string, std::shared_ptr<JITModule>> loaded;
    std::lock_guard<std::mutex> lock(mutex);
    auto it = loaded.find(key);
    if (it != loaded.end()) return it->second;

    std::string dir = cache_dir();
    bool cached = !dir.empty();
    if (!cached) dir = temp_dir();
    std::string so = dir + "/" + key + ".so";
    void *handle = cached && file_exists(so) ? dlopen(so.c_str(), RTLD_LOCAL | RTLD_NOW) : nullptr;
    if (!handle) {
        // In a cache directory, the prologue and the runtime are compiled
        // once for all modules (JITShared.h); the key above still covers
        // their text.
        JITShared shared;
        const std::string &prologue = prologue_source_text();
        const size_t at = cached ? source.find(prologue) : std::string::npos;
        if (at != std::string::npos) shared = jit_shared_parts(dir, cxx, compile_flags);
        std::string module_text = text, module_flags = flags;
        std::string link = own_objects_only ? kernel_libraries : kernel_link_flags(t);
        if (!shared.prologue_header.empty() && !shared.runtime_object.empty()) {
            module_text = source.substr(0, at) + "// (the prologue: -include " + shared.prologue_header + ")\n" +
                          source.substr(at + prologue.size());
            module_flags += " -include " + shell_quote(shared.prologue_header);
            link = shell_quote(shared.runtime_object) + (link.empty() ? "" : " " + link);
        }
        build(module_text, cxx, module_flags, link, dir, key, fn_name);
        handle = dlopen(so.c_str(), RTLD_LOCAL | RTLD_NOW);
    }
    if (!cached) {
        std::remove(so.c_str());
        std::remove((dir + "/" + key + ".cpp").c_str());
        rmdir(dir.c_str());
    }
    internal_assert(handle) << "cannot load the JIT-compiled kernel " << so << ": " << dlerror();

    auto m = std::make_shared<JITModule>();
    m->fn_name = fn_name;
    m->handle = handle;
    m->argv_fn = (int (*)(void **))dlsym(handle, (fn_name + "_argv").c_str());
    internal_assert(m->argv_fn) << "JIT module " << so << " has no function " << fn_name << "_argv";
    using SetHandler = kiln_error_handler_t (*)(kiln_error_handler_t);
    auto set_handler = (SetHandler)dlsym(handle, "kiln_set_error_handler");
    internal_assert(set_handler) << "JIT module " << so << " lacks the Kiln runtime";
    if (set_handler != &kiln_set_error_handler) set_handler(forward_to_process);  // its own copy
    // Trace events of the module's runtime copy go to this process's counters.
    using SetSink = void (*)(kiln_trace_sink_t);
    auto set_sink = (SetSink)dlsym(handle, "kiln_set_trace_sink");
    if (set_sink && set_sink != &kiln_set_trace_sink) set_sink(&kiln_trace_event);
    loaded[key] = m;
    return m;
}

void *JITModule::symbol(const std::string &name) const { return dlsym(handle, name.c_str()); }

void JITModule::run_or_throw(void **args) const {
    int code = run(args);
    if (code != 0) throw RuntimeError(code, kiln_last_error_message());
}

}  // namespace internal
}  // namespace kiln
