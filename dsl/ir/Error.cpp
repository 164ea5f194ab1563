#include "Error.h"

#include <cstdlib>
#include <iostream>
#include <string>

namespace kiln {
namespace internal {

ErrorReport::ErrorReport(Kind k, const char *file, int line, const char *cond) : kind(k) {
    if (k == Internal) {
        msg << "Internal error at " << file << ":" << line;
        if (cond) msg << " (condition failed: " << cond << ")";
        msg << ": ";
    }
}

ErrorReport::~ErrorReport() noexcept(false) {
    if (std::uncaught_exceptions() > 0) return;  // already unwinding
    if (kind == User) throw CompileError(msg.str());
    throw InternalError(msg.str());
}

WarningReport::~WarningReport() {
    const char *off = std::getenv("KILN_NO_WARNINGS");
    if (off && *off && std::string(off) != "0") return;
    std::string text = msg.str();
    for (char &c : text)
        if (c == '\n') c = ' ';  // one line, whatever the parts were
    std::cerr << "kiln: warning: " << text << "\n";
}

}  // namespace internal
}  // namespace kiln
