// The forward pipeline as autodiff sees it: the Funcs an output depends on,
// in an order where every Func comes after the Funcs it reads (producers
// first), the images and Params they read, and the region of each Func that
// the output's region needs (interval arithmetic over every read, as
// Halide's autodiff does; unbounded where the output's region is not given
// or a read is data dependent).
//
//   out region [0, 9] x [0, 9];  out(x, y) = bx(x, y - 1) + bx(x, y + 1);  bx(x, y) = in(x - 1, y)
//     ->  order: bx, out;  regions: out [0, 9] x [0, 9],  bx [0, 9] x [-1, 10],  in [-1, 8] x [-1, 10]
//
// The adjoint of a Func is zero outside its region; the region bounds the
// sums and scatters that need one (Gather.h) and clamps the forward reads
// inside adjoint definitions, so they never leave what the forward read.
#pragma once
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "analysis/Bounds.h"
#include "ir/Function.h"

namespace kiln {
namespace internal {

struct ForwardPipeline {
    std::vector<std::shared_ptr<FunctionContents>> funcs;  // producers first; the output last
    std::map<std::string, std::shared_ptr<ParameterContents>> images, params;
    std::map<std::string, Box> regions;  // per Func and image
};

// `output_region` has one interval per dimension of output (undefined ends:
// unbounded).
ForwardPipeline find_forward_pipeline(const std::shared_ptr<FunctionContents> &output, const Box &output_region);

// The calls to Funcs and images in e, and in the arguments of those calls.
std::vector<const Call *> calls_in(const Expr &e);

}  // namespace internal
}  // namespace kiln
