#include "Error.h"

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

}  // namespace internal
}  // namespace kiln
