// String helpers shared by the compiler's files (messages, loop names).
#pragma once
#include <string>
#include <vector>

namespace kiln {
namespace internal {

// {"a", "b", "c"}  ->  "a, b, c"
inline std::string join(const std::vector<std::string> &v) {
    std::string r;
    for (const auto &s : v) r += (r.empty() ? "" : ", ") + s;
    return r;
}

// The last part of a dotted name: "f.s0.x.xi"  ->  "xi".
inline std::string last_component(const std::string &name) {
    size_t p = name.rfind('.');
    return p == std::string::npos ? name : name.substr(p + 1);
}

}  // namespace internal
}  // namespace kiln
