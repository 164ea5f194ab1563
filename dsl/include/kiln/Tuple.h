// Tuple: several values that one Func computes together, and Realization:
// the buffers a Tuple-valued Func is realized into, one per element.
//
//   Func arg_max("arg_max");
//   arg_max() = Tuple(in(0), 0);                                   // element types may differ
//   arg_max() = select(in(r) > arg_max()[0], Tuple(in(r), r), arg_max());   // an update
//   Realization out = arg_max.realize({});   // out[0]: the max (float), out[1]: its index (int)
//
// Every element of a Tuple is evaluated before any is stored, so an update
// reads the old values of all elements.
#pragma once
#include <string>
#include <vector>

#include "Buffer.h"
#include "Error.h"
#include "Expr.h"

namespace kiln {

class FuncRef;

class Tuple {
public:
    explicit Tuple(const std::vector<Expr> &values);
    template<typename... Args>
    Tuple(const Expr &a, const Expr &b, Args &&...rest) : Tuple(std::vector<Expr>{a, b, Expr(rest)...}) {}
    // Every element of a call to a Tuple-valued Func: Tuple(f(x)).
    explicit Tuple(const FuncRef &call);

    size_t size() const { return values_.size(); }
    const Expr &operator[](size_t i) const;
    Expr &operator[](size_t i);
    const std::vector<Expr> &as_vector() const { return values_; }

private:
    std::vector<Expr> values_;
};

// Element-wise select between two Tuples of the same size (tuple_select is
// Halide 14's name).
Tuple select(const Expr &condition, const Tuple &true_value, const Tuple &false_value);
inline Tuple tuple_select(const Expr &condition, const Tuple &true_value, const Tuple &false_value) {
    return select(condition, true_value, false_value);
}

// The output buffers of a realize(), one per Tuple element (a single one for
// a Func with one value, convertible to a Buffer).
class Realization {
public:
    explicit Realization(std::vector<Buffer<>> buffers);
    size_t size() const { return buffers_.size(); }
    Buffer<> &operator[](size_t i);
    const Buffer<> &operator[](size_t i) const;
    template<typename T, int D> operator Buffer<T, D>() const {
        if (buffers_.size() != 1)
            throw CompileError("A Realization of " + std::to_string(buffers_.size()) +
                               " buffers (a Tuple) cannot be converted to one Buffer; pick an element with [i]");
        return Buffer<T, D>(buffers_[0]);
    }

private:
    std::vector<Buffer<>> buffers_;
};

}  // namespace kiln
