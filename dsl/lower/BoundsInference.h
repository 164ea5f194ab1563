// Bounds inference: define the region each stage of each Func computes and
// the box each Realize allocates.
//
// For a Func f computed at some site, the region of the last stage is the box
// of f that the consumers read inside that site (interval arithmetic over the
// loops inside it; loops outside stay symbolic). Each earlier stage also
// covers what the later stages read or write of f. The region becomes lets at
// the top of the loop body (or branch, or statement) holding the producer,
// after the lets already there; consumers are visited first, so a
// producer's region names its consumers' lets instead of copying their
// values, and a fused group's lets stand together where the sliding window
// looks for them:
//
//   for (out.s0.y, ...) { ... consume blur_x { for (out.s0.x, ...) { out(...) = blur_x(x-1, y) + blur_x(x+1, y) } } }
//     ->  for (out.s0.y, ...) {
//           let blur_x.s0.x.min = out.s0.x.loop_min - 1
//           let blur_x.s0.x.max = out.s0.x.loop_max + 1   ... realize blur_x { produce blur_x { ... } ... }
//
// A Realize gets the box its stages write, in the names of those lets.
// Outputs compute the region of their output buffer (or their bound()). An
// intermediate with a bound() computes that region instead, and an assertion
// before its producer (error -13; a CompileError when decided by constants)
// checks that it covers what the consumers read.
// Precondition: schedule_functions has run. Postcondition: every Realize has
// its bounds; `input_regions` holds the box each input image is read over.
#pragma once
#include "RealizationOrder.h"
#include "analysis/Bounds.h"

namespace kiln {
namespace internal {

struct PipelineRegions {
    std::map<std::string, Box> inputs;   // image name -> box read
    std::map<std::string, Box> outputs;  // output buffer ("f", or "f.0", "f.1" for a Tuple) -> box written
    // Outputs other Funcs of the pipeline read (multi-output pipelines): box read.
    std::map<std::string, Box> output_reads;
    // Outputs computed at a loop of another output (computed_within_output):
    // buffer -> that loop ("output, y"); the box written must cover the buffer.
    std::map<std::string, std::string> written_within;
};

Stmt bounds_inference(const Stmt &s, const std::vector<std::string> &outputs, const std::vector<std::string> &order,
                      const Environment &env, PipelineRegions &regions);

}  // namespace internal
}  // namespace kiln
