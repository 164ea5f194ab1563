// A chain of 3x3 box stencils on a uint16 image, under the CPU schedule of
// Halide's apps/stencil_chain generator, for measuring how lowering scales
// with the depth of fused groups. Header-only: lowering-bench and
// tests/lower/test_region_growth.cpp build the same pipeline.
//
//   stage_0(x, y) = u16((sum of the 3x3 neighbours of repeat_edge(input), as u32) + 4) / 9)
//   stage_s(x, y) = the same of stage_{s-1};   output(x, y) = stage_{depth-1}(x, y)
//
// Halide's app sums a weighted 5x5 window; the chain here uses a 3x3 box, so
// a stage widens its consumer's region by 1 pixel on each side, not 2.
#pragma once
#include <kiln/kiln.h>

#include <algorithm>
#include <string>
#include <vector>

namespace kiln_lowering {

// Halide's stencil_chain schedules groups of this many stages: the last of a
// group compute_root and tiled, the others stored per tile and computed per row.
constexpr int stencil_group_size = 11;

struct StencilChain {
    kiln::ImageParam input{kiln::UInt(16), 2, "input"};
    kiln::Func output{"output"};
    kiln::Pipeline pipeline;
};

// The chain of `depth` stencils (depth >= 1), scheduled for target `t`.
inline StencilChain make_stencil_chain(int depth, const kiln::Target &t) {
    using namespace kiln;
    StencilChain c;
    Var x("x"), y("y");
    std::vector<Func> stages{BoundaryConditions::repeat_edge(c.input)};
    for (int s = 0; s < depth; s++) {
        Func f("stage_" + std::to_string(s));
        Expr sum = cast<uint32_t>(0);
        for (int dy = -1; dy <= 1; dy++)
            for (int dx = -1; dx <= 1; dx++) sum += cast<uint32_t>(stages.back()(x + dx, y + dy));
        f(x, y) = cast<uint16_t>((sum + 4) / 9);
        stages.push_back(f);
    }
    c.output(x, y) = stages.back()(x, y);

    // The CPU schedule of Halide's stencil_chain, directive for directive:
    // walking back from the output, every group_size-th stage is computed at
    // root in 4x4 = 16 tiles (one per thread) of the 1536x2560 image grown by
    // the stencils after it, tiles fused and parallel, vectorized; the stages
    // between two roots are stored per tile and computed per row of it.
    const int vec = t.natural_vector_size(UInt(16));
    Var xo("xo"), yo("yo"), xi("xi"), yi("yi"), tile("t");
    const int last = (int)stages.size() - 1;
    for (int j = last; j > 0; j -= stencil_group_size) {
        Func out = j == last ? c.output : stages[j];
        const int expansion = 2 * (last - j);  // Halide: 4 per stage of its 5x5 window
        const int w = 1536 + expansion, h = 2560 + expansion;
        out.compute_root()
            .tile(x, y, xo, yo, xi, yi, w / 4, h / 4)
            .fuse(xo, yo, tile)
            .parallel(tile)
            .vectorize(xi, vec);
        for (int i = std::max(0, j - stencil_group_size + 1); i < j; i++)
            stages[i].store_at(out, tile).compute_at(out, yi).vectorize(stages[i].args()[0], vec);
    }
    c.pipeline = Pipeline(c.output);
    return c;
}

}  // namespace kiln_lowering
