// The error-reporting macros used inside libkiln (not exported to users,
// whose code may also include Halide.h, which has macros of the same names).
//
//   user_assert(cond) << "Func " << name << " ... how to fix it";   // throws CompileError
//   internal_assert(cond) << "what invariant broke";                 // throws InternalError
//   user_warning << "Func " << name << " ... what happens instead";  // one line on stderr
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

// Collects a warning with operator<< and prints it as one line,
// "kiln: warning: <message>", to std::cerr when it goes out of scope, unless
// the environment variable KILN_NO_WARNINGS is set (and not "0").
class WarningReport {
public:
    WarningReport() = default;
    WarningReport(const WarningReport &) = delete;
    template<typename T> WarningReport &operator<<(const T &x) {
        msg << x;
        return *this;
    }
    ~WarningReport();

private:
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
#define user_warning ::kiln::internal::WarningReport()
