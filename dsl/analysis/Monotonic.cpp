#include "Monotonic.h"

#include "ir/Simplify.h"
#include "ir/Substitute.h"

namespace kiln {
namespace internal {

bool constant_step(const Expr &e, const std::string &v, int64_t &step) {
    Expr next = substitute(v, Variable::make(Int(32), v) + 1, e);
    Expr d = simplify(next - e);
    const int64_t *c = as_const_int(d);
    if (!c) return false;
    step = *c;
    return true;
}

}  // namespace internal
}  // namespace kiln
