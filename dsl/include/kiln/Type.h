// Scalar and vector types of Kiln expressions.
//
// A Type is a code (signed int, unsigned int, float), a bit width and a lane
// count. Booleans are UInt(1). Vector types only appear after vectorization.
#pragma once
#include <cstdint>
#include <string>

namespace kiln {

enum class TypeCode : uint8_t { Int, UInt, Float };

struct Type {
    TypeCode code = TypeCode::Int;
    uint8_t bits = 32;
    uint16_t lanes = 1;

    Type() = default;
    Type(TypeCode c, int b, int l = 1) : code(c), bits((uint8_t)b), lanes((uint16_t)l) {}

    bool is_int() const { return code == TypeCode::Int; }
    bool is_uint() const { return code == TypeCode::UInt; }
    bool is_float() const { return code == TypeCode::Float; }
    bool is_bool() const { return code == TypeCode::UInt && bits == 1; }
    bool is_scalar() const { return lanes == 1; }
    bool is_vector() const { return lanes > 1; }
    int bytes() const { return (bits + 7) / 8; }
    Type with_lanes(int l) const { return Type(code, bits, l); }
    Type element_of() const { return with_lanes(1); }
    Type with_bits(int b) const { return Type(code, b, lanes); }
    bool operator==(const Type &o) const { return code == o.code && bits == o.bits && lanes == o.lanes; }
    bool operator!=(const Type &o) const { return !(*this == o); }
    // Can every value of this type be represented in `o`?
    bool can_represent(const Type &o) const;
    std::string to_string() const;  // "int32", "float32x8", "bool"
};

inline Type Int(int bits, int lanes = 1) { return Type(TypeCode::Int, bits, lanes); }
inline Type UInt(int bits, int lanes = 1) { return Type(TypeCode::UInt, bits, lanes); }
inline Type Float(int bits, int lanes = 1) { return Type(TypeCode::Float, bits, lanes); }
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
