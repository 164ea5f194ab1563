// Helpers of the npu tier: GM buffers of floats, a one-tile kernel harness,
// and the double-buffered elementwise kernel the timing and race tests share.
#ifndef KILN_TESTS_NPU_HELPERS_H
#define KILN_TESTS_NPU_HELPERS_H

#include <cmath>
#include <cstdint>
#include <cstring>
#include <vector>

#include "kiln_npu.h"

namespace npu_test {

using namespace kiln::npu;

// Deterministic values in [lo, hi).
inline std::vector<float> ramp(size_t n, float lo = -2.0f, float hi = 2.0f, uint32_t seed = 1) {
    std::vector<float> v(n);
    uint32_t s = seed * 2654435761u + 12345u;
    for (float &x : v) {
        s = s * 1664525u + 1013904223u;
        x = lo + (hi - lo) * (float)(s >> 8) / (float)(1u << 24);
    }
    return v;
}

inline void flag(Core &c, Pipe src, Pipe dst, int event = 0) {
    c.SET_FLAG(src, dst, event);
    c.WAIT_FLAG(src, dst, event);
}

inline bool same_bits(float a, float b) { return std::memcmp(&a, &b, 4) == 0 || (std::isnan(a) && std::isnan(b)); }

// One product into L0C, as the matrix tests compute it: A (M x K) and B
// (K x N) of type t loaded GM -> L1 and moved to L0A / L0B, one TMATMUL into
// an accumulator of type acc_t, then the flag M -> FIX (after MTE2 -> MTE1 ->
// M: the bias has arrived too). A bias row (1 x N of its GM tensor's type),
// when given, is loaded into L1 beside A and B. Returns the accumulator and
// the bias's tile.
struct Product {
    Tile acc, bias;
};
inline Product one_product(Core &c, DType t, DType acc_t, uint32_t M, uint32_t K, uint32_t N, GlobalTensor a,
                           GlobalTensor b, const GlobalTensor *bias = nullptr) {
    const uint32_t es = dtype_size(t);
    Tile la = c.tile(Mem::L1, 0, t, M, K), lb = c.tile(Mem::L1, M * K * es, t, K, N);
    Tile a0 = c.tile(Mem::L0A, 0, t, M, K), b0 = c.tile(Mem::L0B, 0, t, K, N);
    Product p{c.tile(Mem::L0C, 0, acc_t, M, N), Tile()};
    c.TLOAD(la, a.at(0, K));
    c.TLOAD(lb, b.at(0, N));
    if (bias) {
        p.bias = c.tile(Mem::L1, (M * K + K * N) * es, bias->type, 1, N);
        c.TLOAD(p.bias, bias->at(0, 0));
    }
    flag(c, Pipe::MTE2, Pipe::MTE1);
    c.TMOV(a0, la);
    c.TMOV(b0, lb);
    flag(c, Pipe::MTE1, Pipe::M);
    c.TMATMUL(p.acc, a0, b0);
    flag(c, Pipe::M, Pipe::FIX);
    return p;
}

// Streams `tiles` tiles of rows x cols floats from `in` to `out`, adding 1,
// with ping-pong buffers when `double_buffer`. `skip` >= 0 leaves out that
// flag pair: 0 the load -> vector flag, 1 vector -> store, 2 the buffer
// release vector -> load, 3 the release store -> vector.
inline void stream_kernel(Core &c, GlobalTensor in, GlobalTensor out, int tiles, uint32_t rows, uint32_t cols,
                          bool double_buffer, int skip = -1) {
    const uint32_t bytes = rows * cols * 4;
    const int nbuf = double_buffer ? 2 : 1;
    Tile src[2], dst[2];
    for (int b = 0; b < nbuf; b++) {
        src[b] = c.tile(Mem::UB, 2 * b * bytes, DType::F32, rows, cols, "in");
        dst[b] = c.tile(Mem::UB, (2 * b + 1) * bytes, DType::F32, rows, cols, "out");
        if (skip != 2) c.SET_FLAG(Pipe::V, Pipe::MTE2, b);
        if (skip != 3) c.SET_FLAG(Pipe::MTE3, Pipe::V, b);
    }
    for (int i = 0; i < tiles; i++) {
        int b = i % nbuf;
        int64_t off = (int64_t)i * rows * cols;
        if (skip != 2) c.WAIT_FLAG(Pipe::V, Pipe::MTE2, b);
        c.TLOAD(src[b], in.at(off, cols));
        if (skip != 0) flag(c, Pipe::MTE2, Pipe::V, b);
        if (skip != 3) c.WAIT_FLAG(Pipe::MTE3, Pipe::V, b);
        c.TADDS(dst[b], src[b], 1.0f);
        if (skip != 2) c.SET_FLAG(Pipe::V, Pipe::MTE2, b);
        if (skip != 1) flag(c, Pipe::V, Pipe::MTE3, b);
        c.TSTORE(out.at(off, cols), dst[b]);
        if (skip != 3) c.SET_FLAG(Pipe::MTE3, Pipe::V, b);
    }
    for (int b = 0; b < nbuf; b++) {
        if (skip != 2) c.WAIT_FLAG(Pipe::V, Pipe::MTE2, b);
        if (skip != 3) c.WAIT_FLAG(Pipe::MTE3, Pipe::V, b);
    }
}

}  // namespace npu_test

#endif
