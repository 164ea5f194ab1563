// Each tile instruction against its reference semantics (npu_isa.h's element
// functions applied with plain loops), on a valid region smaller than the
// tile: the tail rows and columns must keep their previous contents.
#include <catch2/catch.hpp>

#include <functional>
#include <map>
#include <string>

#include "npu_helpers.h"

using namespace npu_test;

namespace {

constexpr uint32_t kRows = 8, kCols = 16, kValidRows = 5, kValidCols = 13;
constexpr float kSentinel = -777.0f;

using TileOp = std::function<void(Core &, const Tile &d, const Tile &a, const Tile &b)>;

// Loads a and b (kRows x kCols), fills the destination with kSentinel, runs
// `op` on kValidRows x kValidCols views (dst_rows x dst_cols for the
// destination when given), stores the whole destination tile.
std::vector<float> run_vector(const TileOp &op, std::vector<float> a, std::vector<float> b,
                              uint32_t dst_rows = kValidRows, uint32_t dst_cols = kValidCols) {
    std::vector<float> out(kRows * kCols);
    Device dev;
    GlobalTensor ga = dev.bind("a", DType::F32, a.data(), a.size()), gb = dev.bind("b", DType::F32, b.data(), b.size()),
                 go = dev.bind("out", DType::F32, out.data(), out.size());
    SimOptions opt;
    opt.races_are_errors = true;
    dev.run(1, [&](Core &c) {
        const uint32_t bytes = kRows * kCols * 4;
        Tile ta = c.tile(Mem::UB, 0, DType::F32, kRows, kCols), tb = c.tile(Mem::UB, bytes, DType::F32, kRows, kCols),
             td = c.tile(Mem::UB, 2 * bytes, DType::F32, kRows, kCols);
        c.TLOAD(ta, ga.at(0, kCols));
        c.TLOAD(tb, gb.at(0, kCols));
        c.TDUP(td, kSentinel);
        flag(c, Pipe::MTE2, Pipe::V);
        Tile va = ta, vb = tb, vd = td;
        va.set_valid(kValidRows, kValidCols);
        vb.set_valid(kValidRows, kValidCols);
        vd.set_valid(dst_rows, dst_cols);
        op(c, vd, va, vb);
        flag(c, Pipe::V, Pipe::MTE3);
        c.TSTORE(go.at(0, kCols), td);
    }, opt);
    return out;
}

// Checks out == f(r, c) inside rows x cols and the sentinel elsewhere.
void check_tile(const std::vector<float> &out, uint32_t rows, uint32_t cols, const std::function<float(int, int)> &f) {
    for (uint32_t r = 0; r < kRows; r++)
        for (uint32_t c = 0; c < kCols; c++) {
            float want = r < rows && c < cols ? f(r, c) : kSentinel;
            INFO("element (" << r << ", " << c << ")");
            CHECK(same_bits(out[r * kCols + c], want));
        }
}

}  // namespace

TEST_CASE("binary tile ops follow ref_binary over the valid region", "[npu][isa]") {
    auto a = ramp(kRows * kCols, -3, 3, 1), b = ramp(kRows * kCols, 0.5f, 4, 2);
    for (Op op : {Op::TADD, Op::TSUB, Op::TMUL, Op::TDIV, Op::TMAX, Op::TMIN}) {
        INFO(op_name(op));
        auto out = run_vector([&](Core &c, const Tile &d, const Tile &x, const Tile &y) {
            switch (op) {
            case Op::TADD: c.TADD(d, x, y); break;
            case Op::TSUB: c.TSUB(d, x, y); break;
            case Op::TMUL: c.TMUL(d, x, y); break;
            case Op::TDIV: c.TDIV(d, x, y); break;
            case Op::TMAX: c.TMAX(d, x, y); break;
            default: c.TMIN(d, x, y); break;
            }
        }, a, b);
        check_tile(out, kValidRows, kValidCols, [&](int r, int c) { return ref_binary(op, a[r * kCols + c], b[r * kCols + c]); });
    }
}

TEST_CASE("unary tile ops follow ref_unary over the valid region", "[npu][isa]") {
    auto pos = ramp(kRows * kCols, 0.1f, 5, 3), any = ramp(kRows * kCols, -3, 3, 4);
    struct U { Op op; void (Core::*fn)(const Tile &, const Tile &); bool positive; };
    const U ops[] = {{Op::TEXP, &Core::TEXP, false},   {Op::TLOG, &Core::TLOG, true},     {Op::TSQRT, &Core::TSQRT, true},
                     {Op::TRSQRT, &Core::TRSQRT, true}, {Op::TRECIP, &Core::TRECIP, false}, {Op::TRELU, &Core::TRELU, false},
                     {Op::TTANH, &Core::TTANH, false},  {Op::TABS, &Core::TABS, false},     {Op::TNEG, &Core::TNEG, false},
                     {Op::TCOPY, &Core::TCOPY, false}};
    for (const U &u : ops) {
        INFO(op_name(u.op));
        const std::vector<float> &a = u.positive ? pos : any;
        auto out = run_vector([&](Core &c, const Tile &d, const Tile &x, const Tile &) { (c.*u.fn)(d, x); }, a, a);
        check_tile(out, kValidRows, kValidCols, [&](int r, int c) { return ref_unary(u.op, a[r * kCols + c]); });
    }
    CHECK(ref_unary(Op::TRELU, -1.5f) == 0.0f);
    CHECK(ref_unary(Op::TRSQRT, 4.0f) == 0.5f);
}

TEST_CASE("tile-scalar ops and TDUP", "[npu][isa]") {
    auto a = ramp(kRows * kCols, -3, 3, 5);
    struct S { Op op; void (Core::*fn)(const Tile &, const Tile &, float); };
    const S ops[] = {{Op::TADDS, &Core::TADDS}, {Op::TSUBS, &Core::TSUBS}, {Op::TMULS, &Core::TMULS},
                     {Op::TDIVS, &Core::TDIVS}, {Op::TMAXS, &Core::TMAXS}, {Op::TMINS, &Core::TMINS}};
    for (const S &s : ops) {
        INFO(op_name(s.op));
        auto out = run_vector([&](Core &c, const Tile &d, const Tile &x, const Tile &) { (c.*s.fn)(d, x, 0.75f); }, a, a);
        check_tile(out, kValidRows, kValidCols, [&](int r, int c) { return ref_binary(s.op, a[r * kCols + c], 0.75f); });
    }
    auto out = run_vector([&](Core &c, const Tile &d, const Tile &, const Tile &) { c.TDUP(d, 2.5f); }, a, a);
    check_tile(out, kValidRows, kValidCols, [](int, int) { return 2.5f; });
}

TEST_CASE("row and column reductions and expansions", "[npu][isa]") {
    auto a = ramp(kRows * kCols, -3, 3, 6);
    auto at = [&](int r, int c) { return a[r * kCols + c]; };
    auto rowsum = run_vector([](Core &c, const Tile &d, const Tile &x, const Tile &) { c.TROWSUM(d, x); }, a, a, kValidRows, 1);
    check_tile(rowsum, kValidRows, 1, [&](int r, int) {
        float s = 0.0f;
        for (uint32_t c = 0; c < kValidCols; c++) s = ref_binary(Op::TROWSUM, s, at(r, c));
        return s;
    });
    auto rowmax = run_vector([](Core &c, const Tile &d, const Tile &x, const Tile &) { c.TROWMAX(d, x); }, a, a, kValidRows, 1);
    check_tile(rowmax, kValidRows, 1, [&](int r, int) {
        float s = at(r, 0);
        for (uint32_t c = 1; c < kValidCols; c++) s = ref_binary(Op::TROWMAX, s, at(r, c));
        return s;
    });
    auto colsum = run_vector([](Core &c, const Tile &d, const Tile &x, const Tile &) { c.TCOLSUM(d, x); }, a, a, 1, kValidCols);
    check_tile(colsum, 1, kValidCols, [&](int, int c) {
        float s = 0.0f;
        for (uint32_t r = 0; r < kValidRows; r++) s = s + at(r, c);
        return s;
    });
    auto colmax = run_vector([](Core &c, const Tile &d, const Tile &x, const Tile &) { c.TCOLMAX(d, x); }, a, a, 1, kValidCols);
    check_tile(colmax, 1, kValidCols, [&](int, int c) {
        float s = at(0, c);
        for (uint32_t r = 1; r < kValidRows; r++) s = s > at(r, c) ? s : at(r, c);
        return s;
    });
    // The accumulating sums continue from the destination's value, left to right (here: a's sums again).
    auto rowacc = run_vector([](Core &c, const Tile &d, const Tile &x, const Tile &) { c.TROWSUM(d, x); c.TROWSUM_ACC(d, x); },
                             a, a, kValidRows, 1);
    check_tile(rowacc, kValidRows, 1, [&](int r, int) {
        float s = 0.0f;
        for (uint32_t c = 0; c < kValidCols; c++) s = s + at(r, c);
        for (uint32_t c = 0; c < kValidCols; c++) s = ref_binary(Op::TROWSUM_ACC, s, at(r, c));
        return s;
    });
    auto colacc = run_vector([](Core &c, const Tile &d, const Tile &x, const Tile &) { c.TCOLSUM(d, x); c.TCOLSUM_ACC(d, x); },
                             a, a, 1, kValidCols);
    check_tile(colacc, 1, kValidCols, [&](int, int c) {
        float s = 0.0f;
        for (uint32_t r = 0; r < kValidRows; r++) s = s + at(r, c);
        for (uint32_t r = 0; r < kValidRows; r++) s = s + at(r, c);
        return s;
    });
    auto rowexp = run_vector([](Core &c, const Tile &d, const Tile &x, const Tile &) { c.TROWEXPAND(d, x); }, a, a);
    check_tile(rowexp, kValidRows, kValidCols, [&](int r, int) { return at(r, 0); });
    auto colexp = run_vector([](Core &c, const Tile &d, const Tile &x, const Tile &) { c.TCOLEXPAND(d, x); }, a, a);
    check_tile(colexp, kValidRows, kValidCols, [&](int, int c) { return at(0, c); });
}

TEST_CASE("fused row and column broadcast ops against a scalar reference, their cost is a binary op's",
          "[npu][isa][fused]") {
    auto a = ramp(kRows * kCols, -3, 3, 11), b = ramp(kRows * kCols, 0.5f, 3, 12);
    auto at = [](const std::vector<float> &v, int r, int c) { return v[r * kCols + c]; };
    using Method = void (Core::*)(const Tile &, const Tile &, const Tile &);
    struct Case {
        Op op;
        Method method;
        float (*f)(float, float);  // the plain C of the element
    };
    auto add = [](float x, float y) { return x + y; };
    auto sub = [](float x, float y) { return x - y; };
    auto mul = [](float x, float y) { return x * y; };
    auto div = [](float x, float y) { return x / y; };
    auto max = [](float x, float y) { return x > y ? x : y; };
    auto min = [](float x, float y) { return x < y ? x : y; };
    const Case cases[] = {{Op::TROWEXPANDADD, &Core::TROWEXPANDADD, add}, {Op::TROWEXPANDSUB, &Core::TROWEXPANDSUB, sub},
                          {Op::TROWEXPANDMUL, &Core::TROWEXPANDMUL, mul}, {Op::TROWEXPANDDIV, &Core::TROWEXPANDDIV, div},
                          {Op::TROWEXPANDMAX, &Core::TROWEXPANDMAX, max}, {Op::TROWEXPANDMIN, &Core::TROWEXPANDMIN, min},
                          {Op::TCOLEXPANDADD, &Core::TCOLEXPANDADD, add}, {Op::TCOLEXPANDSUB, &Core::TCOLEXPANDSUB, sub},
                          {Op::TCOLEXPANDMUL, &Core::TCOLEXPANDMUL, mul}, {Op::TCOLEXPANDDIV, &Core::TCOLEXPANDDIV, div},
                          {Op::TCOLEXPANDMAX, &Core::TCOLEXPANDMAX, max}, {Op::TCOLEXPANDMIN, &Core::TCOLEXPANDMIN, min}};
    for (const Case &k : cases) {
        INFO(op_name(k.op));
        REQUIRE(op_kind(k.op) == Kind::ExpandBinary);
        const bool rows = expands_rows(k.op);
        // b as the column (valid rows x 1) or row (1 x valid columns) it is in a kernel.
        auto out = run_vector([&](Core &c, const Tile &d, const Tile &x, const Tile &y) {
            Tile line = y;
            line.set_valid(rows ? kValidRows : 1, rows ? 1 : kValidCols);
            (c.*k.method)(d, x, line);
        }, a, b);
        check_tile(out, kValidRows, kValidCols,
                   [&](int r, int c) { return k.f(at(a, r, c), rows ? at(b, r, 0) : at(b, 0, c)); });
    }
    // ceil(bytes / 256) over the larger operand, as TSUB: the column adds nothing.
    Machine m = default_machine();
    Instr plain, fused;
    TileRef big{Mem::UB, 0, DType::F32, 8, 1024, 8, 1024}, col{Mem::UB, 32768, DType::F32, 8, 8, 8, 1};
    plain.op = Op::TSUB, plain.dst = plain.a = plain.b = big;
    fused.op = Op::TROWEXPANDSUB, fused.dst = fused.a = big, fused.b = col;
    CHECK(instr_cost(fused, m).busy == instr_cost(plain, m).busy);
    CHECK(instr_cost(fused, m).busy == 128);
    CHECK_NOTHROW(check_instr(fused, m, 0));
    fused.b.valid_rows = 4;  // a column that does not cover the tile's rows
    CHECK_THROWS_WITH(check_instr(fused, m, 0), Catch::Contains("source b (one value per row)"));
}

TEST_CASE("convert, compare and select", "[npu][isa]") {
    auto a = ramp(kRows * kCols, -3, 3, 7), b = ramp(kRows * kCols, -3, 3, 8);
    // f32 -> f16 -> f32 rounds to half precision; f32 -> i32 -> f32 truncates.
    auto half = run_vector([](Core &c, const Tile &d, const Tile &x, const Tile &) {
        Tile h = c.tile(Mem::UB, 4 * kRows * kCols * 4, DType::F16, kRows, kCols);
        h.set_valid(x.valid_rows, x.valid_cols);
        c.TCVT(h, x);
        c.TCVT(d, h);
    }, a, a);
    check_tile(half, kValidRows, kValidCols, [&](int r, int c) { return half_to_float(float_to_half(a[r * kCols + c])); });
    auto ints = run_vector([](Core &c, const Tile &d, const Tile &x, const Tile &) {
        Tile i = c.tile(Mem::UB, 4 * kRows * kCols * 4, DType::I32, kRows, kCols);
        i.set_valid(x.valid_rows, x.valid_cols);
        c.TCVT(i, x);
        c.TCVT(d, i);
    }, a, a);
    check_tile(ints, kValidRows, kValidCols, [&](int r, int c) { return (float)(int32_t)a[r * kCols + c]; });
    for (Cmp cmp : {Cmp::LT, Cmp::GE, Cmp::EQ}) {
        auto sel = run_vector([&](Core &c, const Tile &d, const Tile &x, const Tile &y) {
            Tile m = c.tile(Mem::UB, 4 * kRows * kCols * 4, DType::U8, kRows, 32);
            m.set_valid(x.valid_rows, x.valid_cols);
            c.TCMP(m, x, y, cmp);
            c.TSEL(d, m, x, y);
        }, a, cmp == Cmp::EQ ? a : b);
        const std::vector<float> &bb = cmp == Cmp::EQ ? a : b;
        check_tile(sel, kValidRows, kValidCols, [&](int r, int c) {
            float x = a[r * kCols + c], y = bb[r * kCols + c];
            return ref_compare(cmp, x, y) ? x : y;
        });
    }
    CHECK(half_to_float(float_to_half(1.0f / 3.0f)) == 0.333251953125f);
    CHECK(float_to_half(65520.0f) == 0x7c00);  // rounds to infinity
    CHECK(half_to_float(0x0001) == std::ldexp(1.0f, -24));
}

TEST_CASE("TMATMUL, with bias and accumulating, through L1, L0A/L0B, L0C and the fix-pipe", "[npu][isa]") {
    const uint32_t M = 32, K = 24, N = 16, VM = 19;
    auto A = ramp(M * K, -1, 1, 9), B = ramp(K * N, -1, 1, 10), bias = ramp(N, -1, 1, 11);
    for (int variant = 0; variant < 3; variant++) {  // plain, bias + ReLU, bias then accumulate again
        INFO("variant " << variant);
        std::vector<float> C(M * N, kSentinel);
        Device dev;
        GlobalTensor ga = dev.bind("A", DType::F32, A.data(), A.size()), gb = dev.bind("B", DType::F32, B.data(), B.size()),
                     gbias = dev.bind("bias", DType::F32, bias.data(), bias.size()),
                     gc = dev.bind("C", DType::F32, C.data(), C.size());
        SimOptions opt;
        opt.races_are_errors = true;
        SimReport rep = dev.run(1, [&](Core &c) {
            Tile la = c.tile(Mem::L1, 0, DType::F32, M, K), lb = c.tile(Mem::L1, M * K * 4, DType::F32, K, N),
                 lbias = c.tile(Mem::L1, (M * K + K * N) * 4, DType::F32, 1, N);
            Tile a0 = c.tile(Mem::L0A, 0, DType::F32, M, K), b0 = c.tile(Mem::L0B, 0, DType::F32, K, N),
                 acc = c.tile(Mem::L0C, 0, DType::F32, M, N);
            la.set_valid(VM, K);
            a0.set_valid(VM, K);
            acc.set_valid(VM, N);
            c.TLOAD(la, ga.at(0, K));
            c.TLOAD(lb, gb.at(0, N));
            c.TLOAD(lbias, gbias.at(0, N));
            flag(c, Pipe::MTE2, Pipe::MTE1);
            c.TMOV(a0, la);
            c.TMOV(b0, lb);
            flag(c, Pipe::MTE1, Pipe::M);
            flag(c, Pipe::MTE2, Pipe::M);  // the bias is read from L1 by the matrix pipe
            if (variant == 0) c.TMATMUL(acc, a0, b0);
            else c.TMATMUL_BIAS(acc, a0, b0, lbias);
            if (variant == 2) c.TMATMUL_ACC(acc, a0, b0);
            flag(c, Pipe::M, Pipe::FIX);
            c.TSTORE(gc.at(0, N), acc, /*relu=*/variant == 1);
        }, opt);
        for (uint32_t i = 0; i < M; i++)
            for (uint32_t j = 0; j < N; j++) {
                float want = kSentinel;
                if (i < VM) {
                    float acc = variant == 0 ? 0.0f : bias[j];
                    for (uint32_t k = 0; k < K; k++) acc = acc + A[i * K + k] * B[k * N + j];
                    if (variant == 2)
                        for (uint32_t k = 0; k < K; k++) acc = acc + A[i * K + k] * B[k * N + j];
                    if (variant == 1 && !(acc > 0)) acc = 0.0f;
                    want = acc;
                }
                INFO("C(" << i << ", " << j << ")");
                CHECK(same_bits(C[i * N + j], want));
            }
        CHECK(rep.op_counts["TMATMUL"] == 1);
        CHECK(rep.dma_bytes["L1->L0A"] == VM * K * 4);
        CHECK(rep.dma_bytes["L0C->GM"] == VM * N * 4);
    }
}

TEST_CASE("i32 tiles wrap and divide with Kiln's Euclidean rule", "[npu][isa]") {
    CHECK(ref_binary_i32(Op::TDIV, -7, 2) == -4);
    CHECK(ref_binary_i32(Op::TDIV, -7, -2) == 4);
    CHECK(ref_binary_i32(Op::TDIV, 7, 0) == 0);
    CHECK(ref_binary_i32(Op::TADD, INT32_MAX, 1) == INT32_MIN);
    std::vector<int32_t> a(64), out(64, 0);
    for (int i = 0; i < 64; i++) a[i] = i * 37 - 1000;
    Device dev;
    GlobalTensor ga = dev.bind("a", DType::I32, a.data(), 64), go = dev.bind("out", DType::I32, out.data(), 64);
    dev.run(1, [&](Core &c) {
        Tile t = c.tile(Mem::UB, 0, DType::I32, 8, 8), u = c.tile(Mem::UB, 256, DType::I32, 8, 8);
        c.TLOAD(t, ga.at(0, 8));
        flag(c, Pipe::MTE2, Pipe::V);
        c.TDIVS(u, t, 3.0f);
        flag(c, Pipe::V, Pipe::MTE3);
        c.TSTORE(go.at(0, 8), u);
    });
    for (int i = 0; i < 64; i++) CHECK(out[i] == ref_binary_i32(Op::TDIV, a[i], 3));
}

TEST_CASE("the ISA table's kind column: every Binary, Unary, TileScalar and Reduce op has its semantics",
          "[npu][isa][kind]") {
    std::map<Kind, int> count;
    for (int i = 0; i < kNumOps; i++) {
        Op op = Op(i);
        INFO(op_name(op));
        Kind k = op_kind(op);
        count[k]++;
        CHECK(is_binary(op) == (k == Kind::Binary));
        CHECK(is_unary(op) == (k == Kind::Unary));
        CHECK(is_tile_scalar(op) == (k == Kind::TileScalar));
        if (k == Kind::Binary || k == Kind::TileScalar || k == Kind::Reduce || k == Kind::ExpandBinary) {
            CHECK_NOTHROW(ref_binary(op, 1.0f, 2.0f));
            CHECK_NOTHROW(ref_binary_i32(op, 1, 2));
        }
        if (k == Kind::Unary) CHECK_NOTHROW(ref_unary(op, 0.5f));
        if (k != Kind::Special) CHECK(op_family(op) == Family::Vector);
    }
    CHECK(count[Kind::Binary] == 6);
    CHECK(count[Kind::Unary] == 10);
    CHECK(count[Kind::TileScalar] == 6);
    CHECK(count[Kind::Reduce] == 6);
    CHECK(count[Kind::Expand] == 2);
    CHECK(count[Kind::ExpandBinary] == 12);
    // int32 unary semantics (the simulator's i32 path) are ref_unary_i32's.
    CHECK(ref_unary_i32(Op::TABS, INT32_MIN) == INT32_MIN);
    CHECK(ref_unary_i32(Op::TNEG, 5) == -5);
    CHECK(ref_unary_i32(Op::TRELU, -5) == 0);
    CHECK_THROWS_AS(ref_unary_i32(Op::TEXP, 1), NpuError);
    CHECK(std::string(cmp_name(Cmp::LE)) == "LE");
}

TEST_CASE("TEXTRACT reads the sub-tile at an element offset, it costs its rows plus one 32-byte block each",
          "[npu][isa][textract]") {
    // The 4 x 9 sub-tile at (2, 3) of a 7 x 13 valid region: the rest of the destination keeps its bytes.
    std::vector<float> a = ramp(kRows * kCols), b(kRows * kCols, 0.0f);
    std::vector<float> out = run_vector(
        [](Core &c, const Tile &d, const Tile &ta, const Tile &) {
            Tile src = ta;
            src.set_valid(7, 13);
            c.TEXTRACT(d, src, 2, 3);
        },
        a, b, 4, 9);
    check_tile(out, 4, 9, [&](int r, int c) { return a[(r + 2) * kCols + c + 3]; });

    // Cost: 34 rows of 64 f32 (256 bytes each) plus a block per row: ceil(34 * 288 / 256) = 39 cycles.
    Device dev;
    SimReport r = dev.run(1, [&](Core &c) {
        Tile src = c.tile(Mem::UB, 0, DType::F32, 34, 72), dst = c.tile(Mem::UB, 34 * 72 * 4, DType::F32, 34, 64);
        src.set_valid(34, 66);
        c.TEXTRACT(dst, src, 0, 1);
    });
    CHECK(r.pipes[(int)Pipe::V].busy == 39);
    CHECK(r.op_counts.at("TEXTRACT") == 1);

    // The window must lie inside the source's valid region; the types must agree.
    try {
        dev.run(1, [&](Core &c) {
            Tile src = c.tile(Mem::UB, 0, DType::F32, 34, 72), dst = c.tile(Mem::UB, 34 * 72 * 4, DType::F32, 34, 64);
            src.set_valid(34, 66);
            c.TEXTRACT(dst, src, 1, 2);
        });
        FAIL("no error");
    } catch (const NpuError &e) {
        CHECK(std::string(e.what()).find("source a (from row 1, column 2)'s valid region 34x66 does not cover the "
                                         "35x66 it must supply") != std::string::npos);
    }
    try {
        dev.run(1, [&](Core &c) {
            Tile src = c.tile(Mem::UB, 0, DType::F32, 8, 16), dst = c.tile(Mem::UB, 512, DType::F16, 8, 16);
            dst.set_valid(8, 8);
            c.TEXTRACT(dst, src, 0, 1);
        });
        FAIL("no error");
    } catch (const NpuError &e) {
        CHECK(std::string(e.what()).find("destination and source have different types") != std::string::npos);
    }
}

// A 6 x 10 image loaded through `window` (the window starting one row above
// and one column left of it: a stencil's halo at the top-left corner) into an
// 8 x 16 tile of 8 x 12 valid elements, stored to `out` (8 x 16); the report.
constexpr int kImgW = 10, kImgH = 6;
static SimReport load_corner_window(const std::vector<float> &img, std::vector<float> &out,
                                    const std::function<GmRef(const GmRef &)> &window) {
    Device dev;
    GlobalTensor gi = dev.bind("img", DType::F32, const_cast<float *>(img.data()), img.size()),
                 go = dev.bind("out", DType::F32, out.data(), out.size());
    SimOptions opt;
    opt.races_are_errors = true;
    return dev.run(1, [&](Core &c) {
        Tile t = c.tile(Mem::UB, 0, DType::F32, 8, 16);
        t.set_valid(8, 12);
        c.TLOAD(t, window(gi.at(-1 - kImgW, kImgW)));  // origin (-1, -1)
        flag(c, Pipe::MTE2, Pipe::MTE3);
        c.TSTORE(go.at(0, 16), t);
    }, opt);
}

TEST_CASE("TLOAD with replicated edges reads every element from its clamped row and column", "[npu][isa][edge]") {
    constexpr int IW = kImgW, IH = kImgH;
    std::vector<float> img = ramp(IW * IH), out(8 * 16, kSentinel);
    // Rows -1.. and columns -1.. clamp to 0..IH-1, 0..IW-1 (window rows and columns 1..IH, 1..IW).
    SimReport r = load_corner_window(img, out, [&](const GmRef &g) { return g.edge(1, IH, 1, IW); });
    auto clampi = [](int v, int lo, int hi) { return v < lo ? lo : v > hi ? hi : v; };
    for (int r0 = 0; r0 < 8; r0++)
        for (int c0 = 0; c0 < 16; c0++) {
            float want = c0 < 12 ? img[clampi(r0 - 1, 0, IH - 1) * IW + clampi(c0 - 1, 0, IW - 1)] : kSentinel;
            INFO("row " << r0 << " col " << c0);
            CHECK(same_bits(out[r0 * 16 + c0], want));
        }
    CHECK(r.dma_bytes.at("GM->UB") == 8 * 64);  // the valid region, rows rounded up to 32 bytes

    // Padded with a constant instead (a constant_exterior boundary): the same
    // rows and columns read, the others -2.5, at the same price.
    std::fill(out.begin(), out.end(), kSentinel);
    r = load_corner_window(img, out, [&](const GmRef &g) { return g.padded(1, IH, 1, IW, -2.5f); });
    for (int r0 = 0; r0 < 8; r0++)
        for (int c0 = 0; c0 < 16; c0++) {
            bool inside = r0 >= 1 && r0 <= IH && c0 >= 1 && c0 <= IW;
            float want = c0 >= 12 ? kSentinel : inside ? img[(r0 - 1) * IW + c0 - 1] : -2.5f;
            INFO("padded: row " << r0 << " col " << c0);
            CHECK(same_bits(out[r0 * 16 + c0], want));
        }
    CHECK(r.dma_bytes.at("GM->UB") == 8 * 64);

    // Without the clamp the same window starts before the buffer: an error naming the span.
    const int64_t off = -1 - IW;
    Device dev2;
    GlobalTensor g2 = dev2.bind("img", DType::F32, img.data(), img.size());
    try {
        dev2.run(1, [&](Core &c) {
            Tile t = c.tile(Mem::UB, 0, DType::F32, 8, 16);
            c.TLOAD(t, g2.at(off, IW));
        });
        FAIL("no error");
    } catch (const NpuError &e) {
        CHECK(std::string(e.what()).find("GM buffer 'img' has 60 elements") != std::string::npos);
    }
    // Edges and padding are TLOAD features.
    for (bool pad : {false, true}) {
        try {
            dev2.run(1, [&](Core &c) {
                Tile t = c.tile(Mem::UB, 0, DType::F32, 8, 16);
                c.TSTORE(pad ? g2.at(0, IW).padded(0, 1, 0, 1, 0.0f) : g2.at(0, IW).edge(0, 1, 0, 1), t);
            });
            FAIL("no error");
        } catch (const NpuError &e) {
            CHECK(std::string(e.what()).find("replicated edges and padding are TLOAD features") != std::string::npos);
        }
    }
}
