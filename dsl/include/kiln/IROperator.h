// Operators and functions that build expressions, with Halide's semantics.
//
// Type coercion (match_types): an int or float literal takes the other
// operand's type; int op float converts the int to float; two ints or two
// floats widen to the larger width; mixed signedness becomes signed.
// Integer division and modulo are Euclidean: the remainder is never negative
// (a == (a/b)*b + a%b, 0 <= a%b < |b|), so for positive divisors division
// rounds toward negative infinity; division by zero yields zero. Float math is IEEE with no reassociation.
#pragma once
#include <vector>

#include "Expr.h"

namespace kiln {

Expr operator+(Expr a, Expr b);
Expr operator-(Expr a, Expr b);
Expr operator*(Expr a, Expr b);
Expr operator/(Expr a, Expr b);
Expr operator%(Expr a, Expr b);
Expr operator-(Expr a);
Expr operator==(Expr a, Expr b);
Expr operator!=(Expr a, Expr b);
Expr operator<(Expr a, Expr b);
Expr operator<=(Expr a, Expr b);
Expr operator>(Expr a, Expr b);
Expr operator>=(Expr a, Expr b);
Expr operator&&(Expr a, Expr b);
Expr operator||(Expr a, Expr b);
Expr operator!(Expr a);

// Literal on one side: the literal takes the Expr's type (checked for range).
#define KILN_LITERAL_OPS(OP)             \
    Expr operator OP(Expr a, int b);     \
    Expr operator OP(int a, Expr b);     \
    Expr operator OP(Expr a, float b);   \
    Expr operator OP(float a, Expr b);   \
    Expr operator OP(Expr a, double b);  \
    Expr operator OP(double a, Expr b);
KILN_LITERAL_OPS(+)
KILN_LITERAL_OPS(-)
KILN_LITERAL_OPS(*)
KILN_LITERAL_OPS(/)
KILN_LITERAL_OPS(%)
KILN_LITERAL_OPS(==)
KILN_LITERAL_OPS(!=)
KILN_LITERAL_OPS(<)
KILN_LITERAL_OPS(<=)
KILN_LITERAL_OPS(>)
KILN_LITERAL_OPS(>=)
#undef KILN_LITERAL_OPS

Expr &operator+=(Expr &a, Expr b);
Expr &operator-=(Expr &a, Expr b);
Expr &operator*=(Expr &a, Expr b);
Expr &operator/=(Expr &a, Expr b);

Expr select(Expr cond, Expr t, Expr f);
// select(c0, v0, c1, v1, ..., default)
template<typename... Rest>
Expr select(Expr c0, Expr v0, Expr c1, Expr v1, Rest &&...rest) {
    return select(c0, v0, select(c1, v1, std::forward<Rest>(rest)...));
}
Expr min(Expr a, Expr b);
Expr max(Expr a, Expr b);
Expr clamp(Expr x, Expr lo, Expr hi);
Expr abs(Expr a);  // of a signed int: the unsigned type of the same width
Expr cast(Type t, Expr a);
template<typename T> Expr cast(Expr a) { return cast(type_of<T>(), std::move(a)); }

Expr exp(Expr x);
Expr log(Expr x);
Expr sqrt(Expr x);
Expr pow(Expr x, Expr y);
Expr sin(Expr x);
Expr cos(Expr x);
Expr tanh(Expr x);
Expr floor(Expr x);
Expr ceil(Expr x);
Expr round(Expr x);  // to nearest, ties to even

// Constants and queries.
Expr make_const(Type t, int64_t v);
Expr make_const(Type t, double v);
Expr make_zero(Type t);
Expr make_one(Type t);
Expr make_bool(bool b, int lanes = 1);
Expr type_max(Type t);
Expr type_min(Type t);
bool is_const(const Expr &e);
bool is_const(const Expr &e, int64_t v);
bool is_zero(const Expr &e);
bool is_one(const Expr &e);
// The value of an integer constant, if e is one.
const int64_t *as_const_int(const Expr &e);
const double *as_const_float(const Expr &e);

}  // namespace kiln
