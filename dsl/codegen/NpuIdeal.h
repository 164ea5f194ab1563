// The ideal instruction stream of a pipeline's *algorithm* on the tile-NPU:
// the least any schedule must move and compute, so that a kernel's cycles
// can be set against a roofline that does not grow with what the code
// generator adds (halo reloads, extractions, conversions per tile, padded
// rows). It counts, with concrete buffer sizes:
//
// - GM: every input read once (the elements the algorithm reads of it, not
//   the whole buffer when it is larger) and every output written once,
//   over the machine's MTE2 and MTE3 rates;
// - vector work: each Func's values computed once per point (the fusion
//   report's baseline, inlined Funcs materialized), each operation of its
//   definitions one f32 element-op of the vector unit (a broadcast operand
//   is the fused expand op's, so one op; a read, a constant initial value
//   and a scalar that reads nothing, 1 / sqrt(64.0f), are none; a repeated
//   subexpression counts once; a transcendental weighs the machine's
//   transcendental factor; a Tuple value that does not vary along x, flash
//   attention's m and l, once per row (npu_select::tuple_column_values);
//   the accumulation of a reduction over an RDom is
//   one reduce op per point, weighed by the reduce factor; the widening of
//   a 16-bit input, one conversion per element of the input however many
//   Funcs read it), over the vector unit's bytes per cycle;
// - matrix work: an update C(x, y) += A(k, y) * B(x, k) is M * N * K MACs
//   at the matrix unit's rate for its operands' type.
//
//   softmax, 1024 x 128 f32: reads 524288 bytes, writes 524288 (8192 cycles
//   each); row_max 1 op, exps 2 (sub, exp x 4), row_sum 1, output 1 per
//   point of 1024 x 128: (1 + 5 + 1 + 1) x 131072 / 64 = 16384 vector cycles.
//
// One core; the epilogue of a product (bias, ReLU) counts as vector work
// even where the fix pipe does it for free.
#pragma once
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "kiln/Pipeline.h"
#include "npu_machine.h"

namespace kiln {
namespace internal {

struct NpuIdealStream {
    int64_t gm_read_bytes = 0, gm_write_bytes = 0;
    double read_cycles = 0, write_cycles = 0, vector_cycles = 0, matrix_cycles = 0;
    std::map<std::string, double> vector_cycles_of;  // per Func
    double roofline_cycles() const;  // the largest of the four
};

// `sizes`: the extents of every buffer argument (as Pipeline::report takes them).
NpuIdealStream npu_ideal_stream(const Pipeline &p, const std::map<std::string, std::vector<int>> &sizes,
                                const npu::Machine &m);

}  // namespace internal
}  // namespace kiln
