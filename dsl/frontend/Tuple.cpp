// Tuple and Realization: several values of one Func, and their buffers.
#include "kiln/Tuple.h"

#include "ir/Error.h"
#include "kiln/Func.h"

namespace kiln {

Tuple::Tuple(const std::vector<Expr> &values) : values_(values) {
    user_assert(!values_.empty()) << "A Tuple needs at least one value";
    for (size_t i = 0; i < values_.size(); i++)
        user_assert(values_[i].defined()) << "Element " << i << " of a Tuple is undefined";
}

Tuple::Tuple(const FuncRef &call) {
    if (call.size() <= 1) {
        values_.push_back(Expr(call));  // an undefined Func is reported here
        return;
    }
    for (size_t i = 0; i < call.size(); i++) values_.push_back(call[(int)i]);
}

const Expr &Tuple::operator[](size_t i) const {
    user_assert(i < values_.size()) << "Element " << i << " of a Tuple of " << values_.size() << " values does not exist";
    return values_[i];
}
Expr &Tuple::operator[](size_t i) { return const_cast<Expr &>(static_cast<const Tuple &>(*this)[i]); }

Tuple select(const Expr &condition, const Tuple &true_value, const Tuple &false_value) {
    user_assert(true_value.size() == false_value.size())
        << "select() between Tuples of " << true_value.size() << " and " << false_value.size()
        << " values; both sides need the same number of elements";
    std::vector<Expr> r;
    for (size_t i = 0; i < true_value.size(); i++) r.push_back(select(condition, true_value[i], false_value[i]));
    return Tuple(r);
}

Realization::Realization(std::vector<Buffer<>> buffers) : buffers_(std::move(buffers)) {
    user_assert(!buffers_.empty()) << "A Realization needs at least one buffer";
}
const Buffer<> &Realization::operator[](size_t i) const {
    user_assert(i < buffers_.size()) << "Buffer " << i << " of a Realization of " << buffers_.size()
                                     << " does not exist";
    return buffers_[i];
}
Buffer<> &Realization::operator[](size_t i) { return const_cast<Buffer<> &>(static_cast<const Realization &>(*this)[i]); }

}  // namespace kiln
