#include "kiln/Type.h"

namespace kiln {

bool Type::can_represent(const Type &o) const {
    if (lanes_ != o.lanes()) return false;
    // float16 and bfloat16 hold neither each other nor a 16-bit integer.
    if (is_float16_or_bfloat16()) return o.code() == code_ && o.bits() == 16;
    if (is_float()) return o.is_float() ? bits_ >= o.bits() : bits_ > o.bits() || (o.bits() <= 16 && bits_ == 32);
    if (o.is_float()) return false;
    if (is_int() && o.is_uint()) return bits_ > o.bits();
    if (is_uint() && o.is_int()) return false;
    return bits_ >= o.bits();
}

std::string Type::to_string() const {
    std::string s;
    if (is_bool()) s = "bool";
    else {
        s = is_int() ? "int" : is_uint() ? "uint" : is_bfloat() ? "bfloat" : "float";
        s += std::to_string(bits_);
    }
    if (lanes_ > 1) s += "x" + std::to_string(lanes_);
    return s;
}

}  // namespace kiln
