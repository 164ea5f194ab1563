// Including Halide.h next to Kiln: both define user_error, user_assert,
// internal_error and internal_assert. The bench uses none of them.
#pragma once
#include <kiln/kiln.h>
#undef user_error
#undef user_assert
#undef internal_error
#undef internal_assert
#include <Halide.h>
