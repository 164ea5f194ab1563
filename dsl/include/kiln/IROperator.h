// Operators and functions that build expressions, with Halide's semantics.
//
// Type coercion (match_types): an int or float literal takes the other
// operand's type; int op float converts the int to float; two ints or two
// floats widen to the larger width (float16 with bfloat16: both to float32);
// mixed signedness becomes signed.
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
// min and max of three or more values.
template<typename... Rest> Expr min(Expr a, Expr b, Expr c, Rest &&...rest) {
    return min(min(std::move(a), std::move(b)), std::move(c), std::forward<Rest>(rest)...);
}
template<typename... Rest> Expr max(Expr a, Expr b, Expr c, Rest &&...rest) {
    return max(max(std::move(a), std::move(b)), std::move(c), std::forward<Rest>(rest)...);
}
// zero * (1 - weight) + one * weight, as Halide computes it: a float weight
// in [0, 1], or an unsigned one as a fraction of its type's maximum; integer
// values are interpolated in fixed point and rounded to nearest.
Expr lerp(Expr zero, Expr one, Expr weight);
// |a - b| without overflow: of integers, in the unsigned type of their width.
Expr absd(Expr a, Expr b);
// values[id]: values[0] for id <= 0, the last value for id >= values.size() - 1
// (a channel packed into one definition: mux(c, {r, g, b})).
Expr mux(Expr id, const std::vector<Expr> &values);
// A cast that clamps to the range of t first (to its largest value below
// for a float source): saturating_cast<uint8_t>(x * 1.5f).
Expr saturating_cast(Type t, Expr e);
template<typename T> Expr saturating_cast(Expr e) { return saturating_cast(type_of<T>(), std::move(e)); }

// Bitwise operators and shifts of integers (& | ^ ~ of bools are the logical
// ones). a << b and a >> b have a's type (b is converted to a's width,
// keeping its signedness): >> of a signed a is arithmetic, a negative b
// shifts the other way, and |b| of a's width or more shifts every bit out (a
// negative a >> 40 is -1). An int literal takes the other side's
// type.
Expr operator&(Expr a, Expr b);
Expr operator|(Expr a, Expr b);
Expr operator^(Expr a, Expr b);
Expr operator~(Expr a);
Expr operator<<(Expr a, Expr b);
Expr operator>>(Expr a, Expr b);
Expr operator&(Expr a, int b);
Expr operator&(int a, Expr b);
Expr operator|(Expr a, int b);
Expr operator|(int a, Expr b);
Expr operator^(Expr a, int b);
Expr operator^(int a, Expr b);
Expr operator<<(Expr a, int b);
Expr operator>>(Expr a, int b);
// No value: the whole right-hand side of a pure definition that the updates
// overwrite everywhere (nothing is computed for it), or a Tuple element an
// update leaves unchanged. Reading a point no definition wrote gives garbage.
Expr undef(Type t);
template<typename T> Expr undef() { return undef(type_of<T>()); }

// x, through which reverse-mode autodiff (propagate_adjoints) passes no
// gradient: the derivative treats it as a constant (PyTorch's detach(),
// JAX's stop_gradient). Lowering removes it, so it costs nothing. For a
// value the output does not depend on in exact arithmetic, e.g. the row
// maximum a softmax subtracts for range: its adjoint is zero up to rounding,
// yet computing it needs the argmax of every row.
Expr stop_gradient(Expr x);

// Bit counts of an integer in its own width, of its type; leading and
// trailing zeros of 0 are the width.
Expr count_leading_zeros(Expr x);
Expr count_trailing_zeros(Expr x);
Expr popcount(Expr x);

// Float math (an integer operand is cast to float32 first), with the C
// library's results: float32 exp, log and tanh are Kiln's own vectorized
// ones (runtime/kiln_vector_math.h), the others the C library's per lane.
Expr exp(Expr x);
Expr log(Expr x);
Expr sqrt(Expr x);
Expr pow(Expr x, Expr y);
Expr sin(Expr x);
Expr cos(Expr x);
Expr tan(Expr x);
Expr asin(Expr x);
Expr acos(Expr x);
Expr atan(Expr x);
Expr atan2(Expr y, Expr x);  // the angle of (x, y), in [-pi, pi]
Expr sinh(Expr x);
Expr cosh(Expr x);
Expr tanh(Expr x);
Expr asinh(Expr x);
Expr acosh(Expr x);
Expr atanh(Expr x);
Expr hypot(Expr x, Expr y);  // sqrt(x * x + y * y), as Halide computes it
Expr floor(Expr x);
Expr ceil(Expr x);
Expr round(Expr x);  // to nearest, ties to even
Expr trunc(Expr x);  // towards zero

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
