// Functional execution: one instruction's effect on a core's memories and
// GM, built from the element semantics of npu_isa.h over the valid region.
#include <cstring>
#include <utility>

#include "npu_sim.h"

namespace kiln {
namespace npu {

namespace {

// A 2-D window of elements: in a core memory or a GM buffer.
struct View {
    uint8_t *base = nullptr;
    DType type = DType::F32;
    uint64_t row_stride = 0;  // elements

    uint8_t *ptr(uint32_t r, uint32_t c) const { return base + ((uint64_t)r * row_stride + c) * dtype_size(type); }
    float get(uint32_t r, uint32_t c) const {
        const uint8_t *p = ptr(r, c);
        switch (type) {
        case DType::F32: { float f; std::memcpy(&f, p, 4); return f; }
        case DType::F16: { uint16_t h; std::memcpy(&h, p, 2); return half_to_float(h); }
        case DType::BF16: { uint16_t h; std::memcpy(&h, p, 2); return bfloat16_to_float(h); }
        case DType::I32: { int32_t i; std::memcpy(&i, p, 4); return (float)i; }
        case DType::U8: return (float)*p;
        case DType::I8: return (float)(int8_t)*p;
        }
        return 0;
    }
    int32_t get_i32(uint32_t r, uint32_t c) const {
        if (type == DType::I8) return (int8_t)*ptr(r, c);
        int32_t i;
        std::memcpy(&i, ptr(r, c), 4);
        return i;
    }
    // C conversion of a float to the element type (truncation for integers; f16 and bf16 round to nearest even).
    void set(uint32_t r, uint32_t c, float v) const {
        uint8_t *p = ptr(r, c);
        switch (type) {
        case DType::F32: std::memcpy(p, &v, 4); break;
        case DType::F16: { uint16_t h = float_to_half(v); std::memcpy(p, &h, 2); break; }
        case DType::BF16: { uint16_t h = float_to_bfloat16(v); std::memcpy(p, &h, 2); break; }
        case DType::I32: { int32_t i = (int32_t)v; std::memcpy(p, &i, 4); break; }
        case DType::U8: *p = (uint8_t)v; break;
        case DType::I8: *p = (uint8_t)(int8_t)v; break;
        }
    }
    void set_i32(uint32_t r, uint32_t c, int32_t v) const { std::memcpy(ptr(r, c), &v, 4); }
};

View tile_view(const TileRef &t, std::vector<uint8_t> (&mems)[kNumMems]) {
    return View{mems[(int)t.mem].data() + t.addr, t.type, t.cols};
}

View gm_view(const GmRef &g, DType type, const std::vector<GmBuffer> &buffers) {
    const GmBuffer &b = buffers.at(g.buffer);
    return View{(uint8_t *)b.host + g.offset * dtype_size(b.type), b.type, (uint64_t)g.row_stride};
}

// dst = src element by element over rows x cols, with the fix-pipe's ReLU.
void copy(const View &dst, const View &src, uint32_t rows, uint32_t cols, bool relu) {
    for (uint32_t r = 0; r < rows; r++) {
        if (dst.type == src.type && !relu) {
            std::memmove(dst.ptr(r, 0), src.ptr(r, 0), (size_t)cols * dtype_size(src.type));
            continue;
        }
        for (uint32_t c = 0; c < cols; c++) {
            float v = src.get(r, c);
            dst.set(r, c, relu && !(v > 0.0f) ? 0.0f : v);
        }
    }
}

// The fix pipe: L0C -> dst over rows x cols with its epilogue (bias from
// row 0 of `bias`, ReLU, scale, conversion; fix_element in npu_isa.cpp).
void fix_copy(const Instr &in, const View &dst, const View &src, const View &bias, uint32_t rows, uint32_t cols) {
    const bool is_int = src.type == DType::I32;
    for (uint32_t r = 0; r < rows; r++)
        for (uint32_t c = 0; c < cols; c++) {
            FixValue v{is_int, is_int ? src.get_i32(r, c) : 0, is_int ? 0.0f : src.get(r, c)}, b{is_int, 0, 0.0f};
            if (in.has_bias) b.iv = is_int ? bias.get_i32(0, c) : 0, b.fv = is_int ? 0.0f : bias.get(0, c);
            v = fix_element(in, v, b);
            if (v.is_int && dst.type == DType::I32) dst.set_i32(r, c, v.iv);
            else if (dst.type == DType::I8) dst.ptr(r, c)[0] = (uint8_t)fix_requantize_i8(v.is_int ? (float)v.iv : v.fv);
            else dst.set(r, c, v.is_int ? (float)v.iv : v.fv);
        }
}

}  // namespace

void execute(const Instr &in, std::vector<uint8_t> (&mems)[kNumMems], const std::vector<GmBuffer> &buffers) {
    const uint32_t R = in.dst.valid_rows, C = in.dst.valid_cols;
    switch (in.op) {
    case Op::TLOAD:
        if (in.gm.clamped()) {  // every element from its clamped row and column, or the fill outside them
            View d = tile_view(in.dst, mems), g = gm_view(in.gm, in.dst.type, buffers);
            const size_t es = dtype_size(in.dst.type);
            for (uint32_t r = 0; r < R; r++)
                for (uint32_t c = 0; c < C; c++) {
                    if (in.gm.fill && !in.gm.inside(r, c)) d.set(r, c, in.gm.fill_value);
                    else std::memcpy(d.ptr(r, c), g.base + (in.gm.row(r) * (int64_t)g.row_stride + in.gm.col(c)) * (int64_t)es, es);
                }
            return;
        }
        copy(tile_view(in.dst, mems), gm_view(in.gm, in.dst.type, buffers), R, C, false);
        return;
    case Op::TSTORE:
        if (in.a.mem == Mem::L0C) {
            fix_copy(in, gm_view(in.gm, in.a.type, buffers), tile_view(in.a, mems), tile_view(in.c, mems),
                     in.a.valid_rows, in.a.valid_cols);
            return;
        }
        copy(gm_view(in.gm, in.a.type, buffers), tile_view(in.a, mems), in.a.valid_rows, in.a.valid_cols, in.relu);
        return;
    case Op::TMOV:
        if (in.transpose) {  // dst[i][j] = src[j][i]
            View d = tile_view(in.dst, mems), s = tile_view(in.a, mems);
            const size_t es = dtype_size(in.dst.type);
            for (uint32_t r = 0; r < R; r++)
                for (uint32_t c = 0; c < C; c++) std::memcpy(d.ptr(r, c), s.ptr(c, r), es);
            return;
        }
        if (in.a.mem == Mem::L0C) {
            fix_copy(in, tile_view(in.dst, mems), tile_view(in.a, mems), tile_view(in.c, mems), R, C);
            return;
        }
        copy(tile_view(in.dst, mems), tile_view(in.a, mems), R, C, in.relu); return;
    case Op::TEXTRACT: {  // dst[i][j] = a[index_row + i][index_col + j]
        View d = tile_view(in.dst, mems), s = tile_view(in.a, mems);
        const size_t es = dtype_size(in.dst.type);
        for (uint32_t r = 0; r < R; r++)
            std::memmove(d.ptr(r, 0), s.ptr(in.index_row + r, in.index_col), es * C);
        return;
    }
    case Op::SET_FLAG:
    case Op::WAIT_FLAG:
    case Op::PIPE_BARRIER:
    case Op::SET_CROSS:
    case Op::WAIT_CROSS: return;
    default: break;
    }
    View d = tile_view(in.dst, mems), a = tile_view(in.a, mems), b = tile_view(in.b, mems), c = tile_view(in.c, mems);
    const bool i32 = in.dst.type == DType::I32;
    switch (in.op) {
    case Op::TMATMUL:
    case Op::TMATMUL_ACC: {
        const uint32_t K = in.a.valid_cols;
        if (in.a.type == DType::I8) {  // i8 x i8 summed in i32 (wrapping), k in order
            for (uint32_t i = 0; i < R; i++)
                for (uint32_t j = 0; j < C; j++) {
                    uint32_t acc = in.op == Op::TMATMUL_ACC ? (uint32_t)d.get_i32(i, j) : 0u;
                    for (uint32_t k = 0; k < K; k++) acc += (uint32_t)(a.get_i32(i, k) * b.get_i32(k, j));
                    d.set_i32(i, j, (int32_t)acc);
                }
            return;
        }
        for (uint32_t i = 0; i < R; i++)
            for (uint32_t j = 0; j < C; j++) {
                float acc = in.op == Op::TMATMUL_ACC ? d.get(i, j) : in.has_bias ? c.get(0, j) : 0.0f;
                for (uint32_t k = 0; k < K; k++) acc = acc + a.get(i, k) * b.get(k, j);
                d.set(i, j, acc);
            }
        return;
    }
    case Op::TROWSUM: case Op::TROWMAX: case Op::TCOLSUM: case Op::TCOLMAX: case Op::TROWSUM_ACC: case Op::TCOLSUM_ACC: {
        // Line l of the result reduces n elements of a: row l (TROW*) or column l (TCOL*); a sum starts
        // from 0, or for the _ACC forms from the destination's value, and adds left to right.
        const bool rows = in.op == Op::TROWSUM || in.op == Op::TROWMAX || in.op == Op::TROWSUM_ACC;
        const bool sum = in.op != Op::TROWMAX && in.op != Op::TCOLMAX, acc = accumulates(in.op);
        const uint32_t lines = rows ? R : C, n = rows ? in.a.valid_cols : in.a.valid_rows;
        for (uint32_t l = 0; l < lines; l++) {
            auto at = [&](uint32_t k) { return rows ? std::make_pair(l, k) : std::make_pair(k, l); };
            auto out = at(0);
            if (i32) {
                int32_t v = acc ? d.get_i32(out.first, out.second) : sum ? 0 : a.get_i32(at(0).first, at(0).second);
                for (uint32_t k = sum ? 0 : 1; k < n; k++) v = ref_binary_i32(in.op, v, a.get_i32(at(k).first, at(k).second));
                d.set_i32(out.first, out.second, v);
            } else {
                float v = acc ? d.get(out.first, out.second) : sum ? 0.0f : a.get(at(0).first, at(0).second);
                for (uint32_t k = sum ? 0 : 1; k < n; k++) v = ref_binary(in.op, v, a.get(at(k).first, at(k).second));
                d.set(out.first, out.second, v);
            }
        }
        return;
    }
    default: break;
    }
    // Elementwise over the destination's valid region. Row/column expansion
    // reads the source at column 0 / row 0 (the fused forms their source b);
    // all other sources at (i, j).
    const bool rows = expands_rows(in.op);
    for (uint32_t i = 0; i < R; i++)
        for (uint32_t j = 0; j < C; j++) {
            const uint32_t bi = rows ? i : 0, bj = rows ? 0 : j;
            switch (in.op) {
            case Op::TROWEXPAND: std::memcpy(d.ptr(i, j), a.ptr(i, 0), dtype_size(in.dst.type)); break;
            case Op::TCOLEXPAND: std::memcpy(d.ptr(i, j), a.ptr(0, j), dtype_size(in.dst.type)); break;
            case Op::TCVT: d.set(i, j, in.a.type == DType::I32 ? (float)a.get_i32(i, j) : a.get(i, j)); break;
            case Op::TCMP: {
                bool t = in.a.type == DType::I32 ? ref_compare(in.cmp, a.get_i32(i, j), b.get_i32(i, j))
                                                 : ref_compare(in.cmp, a.get(i, j), b.get(i, j));
                d.set(i, j, t ? 1.0f : 0.0f);
                break;
            }
            case Op::TSEL: {
                const View &src = *a.ptr(i, j) ? b : c;
                std::memcpy(d.ptr(i, j), src.ptr(i, j), dtype_size(in.dst.type));
                break;
            }
            case Op::TDUP:
                if (i32) d.set_i32(i, j, (int32_t)in.scalar);
                else d.set(i, j, in.scalar);
                break;
            default:
                if (i32) {
                    int32_t x = a.get_i32(i, j);
                    int32_t v = is_binary(in.op)        ? ref_binary_i32(in.op, x, b.get_i32(i, j))
                                : is_expand_binary(in.op) ? ref_binary_i32(in.op, x, b.get_i32(bi, bj))
                                : is_tile_scalar(in.op) ? ref_binary_i32(in.op, x, (int32_t)in.scalar)
                                                        : ref_unary_i32(in.op, x);
                    d.set_i32(i, j, v);
                } else {
                    float x = a.get(i, j);
                    float v = is_binary(in.op)        ? ref_binary(in.op, x, b.get(i, j))
                              : is_expand_binary(in.op) ? ref_binary(in.op, x, b.get(bi, bj))
                              : is_tile_scalar(in.op) ? ref_binary(in.op, x, in.scalar)
                                                      : ref_unary(in.op, x);
                    d.set(i, j, v);
                }
            }
        }
}

}  // namespace npu
}  // namespace kiln
