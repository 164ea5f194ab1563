// Short names for casts, as Halide's ConciseCasts: u8(e) is cast(UInt(8), e)
// and u8_sat(e) is saturating_cast(UInt(8), e) (clamped to the type's range
// first; from a float, to the largest float not above its maximum). They
// keep e's lanes, so they also apply to the vectors lowering makes.
//
//   using namespace kiln::ConciseCasts;
//   out(x, y) = u8_sat(i16(in(x, y)) * 3 / 2);
//
// A pipeline that casts back and forth often reads better with a Func per
// width (the widened input, the narrowed output) than with these inline.
// (Each reads e's lanes before handing e on: the order in which a call's
// arguments are evaluated is unspecified.)
#pragma once
#include "IROperator.h"
#include "Type.h"

namespace kiln {
namespace ConciseCasts {

#define KILN_CONCISE_CAST(name, how, code, bits)                             \
    inline Expr name(Expr e) {                                               \
        const int lanes = e.type().lanes();                                  \
        return how(code(bits, lanes), std::move(e));                         \
    }
KILN_CONCISE_CAST(i8, cast, Int, 8)
KILN_CONCISE_CAST(i16, cast, Int, 16)
KILN_CONCISE_CAST(i32, cast, Int, 32)
KILN_CONCISE_CAST(i64, cast, Int, 64)
KILN_CONCISE_CAST(u8, cast, UInt, 8)
KILN_CONCISE_CAST(u16, cast, UInt, 16)
KILN_CONCISE_CAST(u32, cast, UInt, 32)
KILN_CONCISE_CAST(u64, cast, UInt, 64)
KILN_CONCISE_CAST(f16, cast, Float, 16)
KILN_CONCISE_CAST(bf16, cast, BFloat, 16)
KILN_CONCISE_CAST(f32, cast, Float, 32)
KILN_CONCISE_CAST(f64, cast, Float, 64)
KILN_CONCISE_CAST(i8_sat, saturating_cast, Int, 8)
KILN_CONCISE_CAST(i16_sat, saturating_cast, Int, 16)
KILN_CONCISE_CAST(i32_sat, saturating_cast, Int, 32)
KILN_CONCISE_CAST(i64_sat, saturating_cast, Int, 64)
KILN_CONCISE_CAST(u8_sat, saturating_cast, UInt, 8)
KILN_CONCISE_CAST(u16_sat, saturating_cast, UInt, 16)
KILN_CONCISE_CAST(u32_sat, saturating_cast, UInt, 32)
KILN_CONCISE_CAST(u64_sat, saturating_cast, UInt, 64)
#undef KILN_CONCISE_CAST

}  // namespace ConciseCasts
}  // namespace kiln
