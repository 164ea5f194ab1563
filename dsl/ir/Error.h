// The error-reporting macros used inside libkiln (not exported to users,
// whose code may also include Halide.h, which has macros of the same names).
//
//   user_assert(cond) << "Func " << name << " ... how to fix it";   // throws CompileError
//   internal_assert(cond) << "what invariant broke";                 // throws InternalError
#pragma once
#include <sstream>

#include "kiln/Error.h"

namespace kiln {
namespace internal {

// Collects a message with operator<< and throws when it goes out of scope.
class ErrorReport {
public:
    enum Kind { User, Internal };
    ErrorReport(Kind k, const char *file, int line, const char *cond);
    ErrorReport(const ErrorReport &) = delete;
    template<typename T> ErrorReport &operator<<(const T &x) {
        msg << x;
        return *this;
    }
    ~ErrorReport() noexcept(false);

private:
    Kind kind;
    std::ostringstream msg;
};

}  // namespace internal
}  // namespace kiln

#define user_error ::kiln::internal::ErrorReport(::kiln::internal::ErrorReport::User, __FILE__, __LINE__, nullptr)
#define user_assert(c) \
    if (c) {           \
    } else             \
        ::kiln::internal::ErrorReport(::kiln::internal::ErrorReport::User, __FILE__, __LINE__, #c)
#define internal_error \
    ::kiln::internal::ErrorReport(::kiln::internal::ErrorReport::Internal, __FILE__, __LINE__, nullptr)
#define internal_assert(c) \
    if (c) {               \
    } else                 \
        ::kiln::internal::ErrorReport(::kiln::internal::ErrorReport::Internal, __FILE__, __LINE__, #c)
