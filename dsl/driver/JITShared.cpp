#include "JITShared.h"

#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <fstream>

#include "codegen/CodeGen_C.h"

namespace kiln {
namespace internal {

uint64_t fnv1a_64(const std::string &s) {
    uint64_t h = 14695981039346656037ull;
    for (unsigned char c : s) {
        h ^= c;
        h *= 1099511628211ull;
    }
    return h;
}

std::string shell_quote(const std::string &s) {
    std::string r = "'";
    for (char c : s) r += c == '\'' ? std::string("'\\''") : std::string(1, c);
    return r + "'";
}

int run_command(const std::string &cmd, std::string &output) {
    FILE *p = popen((cmd + " 2>&1").c_str(), "r");
    if (!p) return -1;
    char buf[4096];
    for (size_t n; (n = fread(buf, 1, sizeof(buf), p)) > 0;) output.append(buf, n);
    int status = pclose(p);
    return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

namespace {

bool readable(const std::string &path) { return access(path.c_str(), R_OK) == 0; }

std::string hex(uint64_t h) {
    char key[17];
    std::snprintf(key, sizeof(key), "%016llx", (unsigned long long)h);
    return key;
}

// Writes `text` to `source` (if not there yet) and runs `cxx flags -o OUT
// source` into `product`, through a temporary name; true if `product` exists.
bool build_once(const std::string &text, const std::string &source, const std::string &product,
                const std::string &cxx, const std::string &flags) {
    if (readable(product) && readable(source)) return true;
    const std::string tmp = product + ".tmp" + std::to_string(getpid());
    {
        std::ofstream f(tmp + ".src");
        f << text;
        if (!f.good()) return false;
    }
    // The header must be in place under its own name before its .gch is
    // built: -include looks the .gch up beside it.
    if (std::rename((tmp + ".src").c_str(), source.c_str()) != 0) return false;
    std::string output;
    if (run_command(cxx + " " + flags + " -o " + shell_quote(tmp) + " " + shell_quote(source), output) != 0 ||
        std::rename(tmp.c_str(), product.c_str()) != 0) {
        std::remove(tmp.c_str());
        return false;
    }
    return true;
}

}  // namespace

JITShared jit_shared_parts(const std::string &dir, const std::string &cxx, const std::string &compile_flags) {
    JITShared s;
    const std::string stamp = cxx + "\n" + compile_flags + "\n";
    const std::string &prologue = prologue_source_text();
    const std::string header = dir + "/kiln_prologue_" + hex(fnv1a_64(stamp + prologue)) + ".h";
    if (build_once(prologue, header, header + ".gch", cxx, compile_flags + " -x c++-header")) s.prologue_header = header;

    const std::string runtime = runtime_header_text() + ("\n" + runtime_source_text());
    const std::string base = dir + "/kiln_runtime_" + hex(fnv1a_64(stamp + runtime));
    if (build_once(runtime, base + ".cpp", base + ".o", cxx, compile_flags + " -c -x c++")) s.runtime_object = base + ".o";
    return s;
}

}  // namespace internal
}  // namespace kiln
