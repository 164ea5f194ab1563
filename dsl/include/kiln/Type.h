// Scalar and vector types of Kiln expressions.
//
// A Type is a code (signed int, unsigned int, float, bfloat), a bit width
// and a lane count, read through code(), bits() and lanes(). Booleans are
// UInt(1). Vector types only appear after vectorization. The codes are
// halide_type_code_t's (3, handle, is not a Kiln type), so that a buffer's
// halide_type_t reads as a Type. Float(16) is IEEE half precision and
// BFloat(16) the top half of a float32 (kiln/Float16.h); both are floats
// (is_float()), computed in float32 and rounded after every operation
// (lower/EmulateFloat16.h).
#pragma once
#include <cstdint>
#include <string>

namespace kiln {

class Expr;

enum class TypeCode : uint8_t { Int = 0, UInt = 1, Float = 2, BFloat = 4 };

struct Type {
    Type() = default;
    Type(TypeCode c, int b, int l = 1) : code_(c), bits_((uint8_t)b), lanes_((uint16_t)l) {}

    TypeCode code() const { return code_; }
    int bits() const { return bits_; }
    int lanes() const { return lanes_; }
    int bytes() const { return (bits_ + 7) / 8; }

    bool is_int() const { return code_ == TypeCode::Int; }
    bool is_uint() const { return code_ == TypeCode::UInt; }
    bool is_int_or_uint() const { return is_int() || is_uint(); }
    bool is_float() const { return code_ == TypeCode::Float || code_ == TypeCode::BFloat; }
    bool is_bfloat() const { return code_ == TypeCode::BFloat; }
    // Float(16) or BFloat(16): stored as 16 bits, computed in float32.
    bool is_float16_or_bfloat16() const { return is_float() && bits_ == 16; }
    bool is_bool() const { return code_ == TypeCode::UInt && bits_ == 1; }
    bool is_scalar() const { return lanes_ == 1; }
    bool is_vector() const { return lanes_ > 1; }

    Type with_code(TypeCode c) const { return Type(c, bits_, lanes_); }
    Type with_bits(int b) const { return Type(code_, b, lanes_); }
    Type with_lanes(int l) const { return Type(code_, bits_, l); }
    Type element_of() const { return with_lanes(1); }

    bool operator==(const Type &o) const { return code_ == o.code_ && bits_ == o.bits_ && lanes_ == o.lanes_; }
    bool operator!=(const Type &o) const { return !(*this == o); }
    // Can every value of this type be represented in `o`?
    bool can_represent(const Type &o) const;
    std::string to_string() const;  // "int32", "float32x8", "bool", "bfloat16"
    // The largest and smallest values of the type (infinities for floats);
    // the same as type_max(t) and type_min(t).
    Expr max() const;
    Expr min() const;

private:
    TypeCode code_ = TypeCode::Int;
    uint8_t bits_ = 32;
    uint16_t lanes_ = 1;
};

inline Type Int(int bits, int lanes = 1) { return Type(TypeCode::Int, bits, lanes); }
inline Type UInt(int bits, int lanes = 1) { return Type(TypeCode::UInt, bits, lanes); }
inline Type Float(int bits, int lanes = 1) { return Type(TypeCode::Float, bits, lanes); }
inline Type BFloat(int bits, int lanes = 1) { return Type(TypeCode::BFloat, bits, lanes); }
inline Type Bool(int lanes = 1) { return UInt(1, lanes); }

template<typename T> struct TypeOf;
template<> struct TypeOf<bool> { static Type get() { return Bool(); } };
template<> struct TypeOf<int8_t> { static Type get() { return Int(8); } };
template<> struct TypeOf<int16_t> { static Type get() { return Int(16); } };
template<> struct TypeOf<int32_t> { static Type get() { return Int(32); } };
template<> struct TypeOf<int64_t> { static Type get() { return Int(64); } };
template<> struct TypeOf<uint8_t> { static Type get() { return UInt(8); } };
template<> struct TypeOf<uint16_t> { static Type get() { return UInt(16); } };
template<> struct TypeOf<uint32_t> { static Type get() { return UInt(32); } };
template<> struct TypeOf<uint64_t> { static Type get() { return UInt(64); } };
template<> struct TypeOf<float> { static Type get() { return Float(32); } };
template<> struct TypeOf<double> { static Type get() { return Float(64); } };

template<typename T> Type type_of() { return TypeOf<T>::get(); }

}  // namespace kiln
