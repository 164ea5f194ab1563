// 16-bit floats on the tile-NPU: f16 and bf16 tiles in GM, UB and the
// matrix unit's memories, TCVT between them and f32 (rounding as the host's
// kiln::float16_t and kiln::bfloat16_t do), bf16 refused by the vector ops
// that compute, and TMATMUL on 16-bit operands summing in f32 at the
// machine's 16-bit rate.
#include <catch2/catch.hpp>

#include <kiln/Float16.h>

#include "npu_helpers.h"

using namespace npu_test;

namespace {

// Values whose bf16 and f16 roundings exercise ties, both directions, NaN,
// overflow and subnormals.
std::vector<float> awkward_values() {
    std::vector<float> v = {1.00390625f, 1.01171875f, -1.00390625f, 65520.0f, 3.0e38f, -0.0f, 1e-40f, 5.9604645e-8f,
                            1.0f / 3.0f, -2.5f, 0.1f, 1e-8f, 70000.0f, INFINITY, -INFINITY, NAN};
    auto r = ramp(128 - v.size(), -50, 50, 21);
    v.insert(v.end(), r.begin(), r.end());
    return v;
}

}  // namespace

TEST_CASE("bf16 and f16 GM tensors load, convert and store as the host's 16-bit types", "[npu][isa][f16]") {
    const std::vector<float> v = awkward_values();  // 128 values: a 4 x 32 tile
    for (DType t : {DType::BF16, DType::F16}) {
        INFO(dtype_name(t));
        const bool bf = t == DType::BF16;
        std::vector<uint16_t> narrow(v.size(), 0xdead), round_trip(v.size(), 0xdead);
        std::vector<float> wide(v.size());
        Device dev;
        GlobalTensor gv = dev.bind("v", DType::F32, (void *)v.data(), v.size()),
                     gn = dev.bind("narrow", t, narrow.data(), narrow.size()),
                     gw = dev.bind("wide", DType::F32, wide.data(), wide.size()),
                     gr = dev.bind("round_trip", t, round_trip.data(), round_trip.size());
        SimOptions opt;
        opt.races_are_errors = true;
        SimReport rep = dev.run(1, [&](Core &c) {
            Tile f = c.tile(Mem::UB, 0, DType::F32, 4, 32), h = c.tile(Mem::UB, 512, t, 4, 32),
                 h2 = c.tile(Mem::UB, 768, t, 4, 32), f2 = c.tile(Mem::UB, 1024, DType::F32, 4, 32);
            c.TLOAD(f, gv.at(0, 32));
            flag(c, Pipe::MTE2, Pipe::V);
            c.TCVT(h, f);  // f32 -> 16 bits, to nearest even
            flag(c, Pipe::V, Pipe::MTE3);
            c.TSTORE(gn.at(0, 32), h);
            flag(c, Pipe::MTE3, Pipe::MTE2);
            c.TLOAD(h2, gn.at(0, 32));  // a 16-bit GM tensor into UB
            flag(c, Pipe::MTE2, Pipe::V, 1);
            c.TCVT(f2, h2);  // 16 bits -> f32, exact
            flag(c, Pipe::V, Pipe::MTE3, 1);
            c.TSTORE(gw.at(0, 32), f2);
            c.TSTORE(gr.at(0, 32), h2);
        }, opt);
        for (size_t i = 0; i < v.size(); i++) {
            INFO("value " << v[i]);
            uint16_t host = bf ? kiln::bfloat16_t(v[i]).to_bits() : kiln::float16_t(v[i]).to_bits();
            CHECK(narrow[i] == host);
            CHECK(round_trip[i] == host);
            float back = bf ? (float)kiln::bfloat16_t::make_from_bits(host) : (float)kiln::float16_t::make_from_bits(host);
            CHECK(same_bits(wide[i], back));
        }
        CHECK(rep.dma_bytes["GM->UB"] == 512 + 256);  // 16-bit rows are half as many bytes
        CHECK(rep.dma_bytes["UB->GM"] == 256 + 512 + 256);
    }
    CHECK(float_to_bfloat16(1.00390625f) == 0x3f80);  // a tie: the kept part is even
    CHECK(float_to_bfloat16(1.01171875f) == 0x3f82);  // a tie: odd, rounds up
    CHECK(float_to_half(65520.0f) == 0x7c00);
}

TEST_CASE("bf16 is a storage type of the vector unit: converted, never computed", "[npu][isa][f16]") {
    Machine m = default_machine();
    TileRef bf{Mem::UB, 0, DType::BF16, 8, 64, 8, 64}, f{Mem::UB, 1024, DType::F32, 8, 64, 8, 64},
        h{Mem::UB, 4096, DType::F16, 8, 64, 8, 64};
    Instr add;
    add.op = Op::TADD, add.dst = add.a = add.b = bf;
    CHECK_THROWS_WITH(check_instr(add, m, 3),
                      Catch::Contains("instruction #3 TADD") && Catch::Contains("does not take bf16 tiles; TCVT them to f32"));
    Instr exp;
    exp.op = Op::TEXP, exp.dst = exp.a = bf;
    CHECK_THROWS_WITH(check_instr(exp, m, 0), Catch::Contains("TEXP does not take bf16 tiles"));
    Instr sum;
    sum.op = Op::TROWSUM, sum.dst = bf, sum.a = bf;
    sum.dst.valid_cols = 1;
    CHECK_THROWS_WITH(check_instr(sum, m, 0), Catch::Contains("TROWSUM does not take bf16 tiles"));
    Instr cvt;
    cvt.op = Op::TCVT, cvt.dst = f, cvt.a = bf;
    CHECK_NOTHROW(check_instr(cvt, m, 0));
    std::swap(cvt.dst, cvt.a);
    CHECK_NOTHROW(check_instr(cvt, m, 0));
    // f16 tiles compute (in float, rounded to half), as before.
    Instr hadd;
    hadd.op = Op::TADD, hadd.dst = hadd.a = hadd.b = h;
    CHECK_NOTHROW(check_instr(hadd, m, 0));
    // A conversion costs what its wider side moves: 8 x 64 f32 = 2048 bytes.
    CHECK(instr_cost(cvt, m).busy == 8);
}

TEST_CASE("TMATMUL on bf16 and f16 operands sums in f32 at the 16-bit rate", "[npu][isa][f16]") {
    const uint32_t M = 32, K = 48, N = 32;
    auto Af = ramp(M * K, -4, 4, 31), Bf = ramp(K * N, -4, 4, 32);
    for (DType t : {DType::BF16, DType::F16}) {
        INFO(dtype_name(t));
        const bool bf = t == DType::BF16;
        auto narrow = [&](float x) { return bf ? float_to_bfloat16(x) : float_to_half(x); };
        auto widen = [&](uint16_t x) { return bf ? bfloat16_to_float(x) : half_to_float(x); };
        std::vector<uint16_t> A(M * K), B(K * N), C16(M * N, 0xdead);
        for (size_t i = 0; i < A.size(); i++) A[i] = narrow(Af[i]);
        for (size_t i = 0; i < B.size(); i++) B[i] = narrow(Bf[i]);
        std::vector<float> C(M * N);
        Device dev;
        GlobalTensor ga = dev.bind("A", t, A.data(), A.size()), gb = dev.bind("B", t, B.data(), B.size()),
                     gc = dev.bind("C", DType::F32, C.data(), C.size()), gc16 = dev.bind("C16", t, C16.data(), C16.size());
        SimOptions opt;
        opt.races_are_errors = true;
        SimReport rep = dev.run(1, [&](Core &c) {
            Tile acc = one_product(c, t, DType::F32, M, K, N, ga, gb).acc;
            c.TSTORE(gc.at(0, N), acc);
            c.TSTORE(gc16.at(0, N), acc);  // the fix-pipe narrows f32 -> 16 bits on the way
        }, opt);
        for (uint32_t i = 0; i < M; i++)
            for (uint32_t j = 0; j < N; j++) {
                float want = 0.0f;
                for (uint32_t k = 0; k < K; k++) want = want + widen(A[i * K + k]) * widen(B[k * N + j]);
                INFO("C(" << i << ", " << j << ")");
                CHECK(same_bits(C[i * N + j], want));
                CHECK(C16[i * N + j] == narrow(want));
            }
        // 2 x 2 blocks of 16 x 16, K = 48 in steps of 16: 12 cycles (f32 operands take 24), and the
        // WAIT_FLAG and SET_FLAG of the M pipe one each.
        CHECK(rep.per_core[0].busy[(int)Pipe::M] == 12 + 2);
    }
    // The rate is the machine file's: a machine giving bf16 the f32 rate doubles the cycles.
    Machine slow = default_machine();
    slow.matrix_k_elements[(int)DType::BF16] = 8;
    Instr mm;
    mm.op = Op::TMATMUL;
    mm.dst = TileRef{Mem::L0C, 0, DType::F32, 32, 32, 32, 32};
    mm.a = TileRef{Mem::L0A, 0, DType::BF16, 32, 48, 32, 48};
    mm.b = TileRef{Mem::L0B, 0, DType::BF16, 48, 32, 48, 32};
    CHECK(instr_cost(mm, default_machine()).busy == 12);
    CHECK(instr_cost(mm, slow).busy == 24);
    CHECK(default_machine().matrix_k(DType::BF16) == 16);
    CHECK(default_machine().matrix_k(DType::F32) == 8);
    mm.b.type = DType::F16;
    CHECK_THROWS_WITH(check_instr(mm, default_machine(), 0), Catch::Contains("the operands have different types (bf16, f16)"));
}

TEST_CASE("the fix pipe's epilogue on an f32 accumulator: a 16-bit bias widened, ReLU, the 16-bit store",
          "[npu][isa][f16]") {
    // C = relu(A B + bias) stored as bf16 (f16) by one TSTORE from L0C: the
    // bias row in L1 is bf16 (f16) and widened exactly on the way, so each
    // element is narrow(max(acc + float(bias[j]), 0)), the host's steps.
    const uint32_t M = 32, K = 32, N = 64;
    auto Af = ramp(M * K, -4, 4, 31), Bf = ramp(K * N, -4, 4, 32), biasf = ramp(N, -20, 20, 7);
    for (DType t : {DType::BF16, DType::F16}) {
        INFO(dtype_name(t));
        const bool bf = t == DType::BF16;
        auto narrow = [&](float x) { return bf ? float_to_bfloat16(x) : float_to_half(x); };
        auto widen = [&](uint16_t x) { return bf ? bfloat16_to_float(x) : half_to_float(x); };
        std::vector<uint16_t> A(M * K), B(K * N), bias(N), C16(M * N, 0xdead);
        for (size_t i = 0; i < A.size(); i++) A[i] = narrow(Af[i]);
        for (size_t i = 0; i < B.size(); i++) B[i] = narrow(Bf[i]);
        for (size_t i = 0; i < bias.size(); i++) bias[i] = narrow(biasf[i]);
        Device dev;
        GlobalTensor ga = dev.bind("A", t, A.data(), A.size()), gb = dev.bind("B", t, B.data(), B.size()),
                     gbias = dev.bind("bias", t, bias.data(), bias.size()),
                     gc16 = dev.bind("C16", t, C16.data(), C16.size());
        SimOptions opt;
        opt.races_are_errors = true;
        SimReport rep = dev.run(1, [&](Core &c) {
            Product p = one_product(c, t, DType::F32, M, K, N, ga, gb, &gbias);
            c.TSTORE(gc16.at(0, N), p.acc, Fix().bias(p.bias).relu());
        }, opt);
        int negative = 0;
        for (uint32_t i = 0; i < M; i++)
            for (uint32_t j = 0; j < N; j++) {
                float s = 0.0f;
                for (uint32_t k = 0; k < K; k++) s = s + widen(A[i * K + k]) * widen(B[k * N + j]);
                const float v = s + widen(bias[j]);
                negative += v < 0;
                INFO("C(" << i << ", " << j << ")");
                CHECK(C16[i * N + j] == narrow(v > 0.0f ? v : 0.0f));
            }
        CHECK(negative > 0);  // ReLU had something to do
        // The fix pipe reads the f32 accumulator at 128 B/cycle (8 KiB: 64 cycles), plus its wait; GM gets 2 bytes
        // an element.
        CHECK(rep.per_core[0].busy[(int)Pipe::FIX] == 64 + 1);
        CHECK(rep.dma_bytes["L0C->GM"] == M * N * 2);
    }
    // An f32 accumulator takes an f32, f16 or bf16 bias; an i32 accumulator an i32 one.
    Machine m = default_machine();
    Instr st;
    st.op = Op::TSTORE, st.pipe = Pipe::FIX, st.has_bias = true, st.relu = true;
    st.a = TileRef{Mem::L0C, 0, DType::F32, 32, 64, 32, 64};
    st.gm.type = DType::BF16;
    st.c = TileRef{Mem::L1, 0, DType::BF16, 1, 64, 1, 64};
    CHECK_NOTHROW(check_instr(st, m, 0));
    st.c.type = DType::I32;
    CHECK_THROWS_WITH(check_instr(st, m, 0), Catch::Contains("the bias of an f32 accumulator is f32, f16 or bf16, not i32"));
    st.a.type = DType::I32, st.c.type = DType::BF16;
    CHECK_THROWS_WITH(check_instr(st, m, 0), Catch::Contains("the bias and the accumulator have different types (bf16, i32)"));
}
