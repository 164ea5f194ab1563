// int8 on the tile-NPU's matrix unit: i8 tiles in GM, L1, L0A and L0B,
// TMATMUL summing i8 products in i32 in L0C at the machine's int8 rate, and
// the fix pipe's epilogue on the way out of L0C (per-column bias, ReLU,
// scale, requantization to i8 or conversion to f16 / f32); the vector unit
// refuses i8 tiles.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>

#include <kiln/Float16.h>

#include "npu_helpers.h"

using namespace npu_test;

TEST_CASE("TMATMUL on i8 operands sums in i32, the fix pipe adds the bias, applies ReLU and requantizes",
          "[npu][isa][int8]") {
    const uint32_t M = 32, K = 64, N = 32;
    const float scale = 1.0f / 256;
    std::vector<int8_t> A(M * K), B(K * N), Q(M * N, 99);
    for (size_t i = 0; i < A.size(); i++) A[i] = (int8_t)(int)((i * 37 + 11) % 256 - 128);
    for (size_t i = 0; i < B.size(); i++) B[i] = (int8_t)(int)((i * 53 + 7) % 256 - 128);
    std::vector<int32_t> bias(N), C(M * N);
    for (uint32_t j = 0; j < N; j++) bias[j] = ((int)j - 16) * 3000;
    std::vector<uint16_t> H(M * N);
    Device dev;
    GlobalTensor ga = dev.bind("A", DType::I8, A.data(), A.size()), gb = dev.bind("B", DType::I8, B.data(), B.size()),
                 gbias = dev.bind("bias", DType::I32, bias.data(), bias.size()),
                 gc = dev.bind("C", DType::I32, C.data(), C.size()), gq = dev.bind("Q", DType::I8, Q.data(), Q.size()),
                 gh = dev.bind("H", DType::F16, H.data(), H.size());
    SimOptions opt;
    opt.races_are_errors = true;
    SimReport rep = dev.run(1, [&](Core &c) {
        Product p = one_product(c, DType::I8, DType::I32, M, K, N, ga, gb, &gbias);
        c.TSTORE(gc.at(0, N), p.acc);
        c.TSTORE(gq.at(0, N), p.acc, Fix().bias(p.bias).relu().scale(scale));
        c.TSTORE(gh.at(0, N), p.acc, Fix().scale(scale));
    }, opt);
    for (uint32_t i = 0; i < M; i++)
        for (uint32_t j = 0; j < N; j++) {
            int32_t s = 0;
            for (uint32_t k = 0; k < K; k++) s += (int32_t)A[i * K + k] * (int32_t)B[k * N + j];
            INFO("C(" << i << ", " << j << ")");
            CHECK(C[i * N + j] == s);
            const float q = std::nearbyint((float)std::max(s + bias[j], 0) * scale);
            CHECK(Q[i * N + j] == (int8_t)std::min(127.0f, std::max(-128.0f, q)));
            CHECK(H[i * N + j] == kiln::float16_t((float)s * scale).to_bits());
        }
    // 2 x 2 blocks of 16 x 16, K = 64 in steps of 32: 8 cycles (f16 operands take 16), and the M pipe's
    // WAIT_FLAG and SET_FLAG.
    CHECK(rep.per_core[0].busy[(int)Pipe::M] == 8 + 2);
    // GM bytes of the stores are the GM types': i32, i8, f16.
    CHECK(rep.dma_bytes["L0C->GM"] == M * N * (4 + 1 + 2));
    // The fix pipe reads the i32 accumulator at 128 B/cycle whatever it writes: 32 cycles per store, plus its wait.
    CHECK(rep.per_core[0].busy[(int)Pipe::FIX] == 3 * 32 + 1);
    CHECK(default_machine().matrix_k(DType::I8) == 32);
}

TEST_CASE("int8 operand rules: an i32 accumulator, no vector op, a fix pipe that writes what it can",
          "[npu][isa][int8]") {
    Machine m = default_machine();
    Instr mm;
    mm.op = Op::TMATMUL;
    mm.dst = TileRef{Mem::L0C, 0, DType::F32, 32, 32, 32, 32};
    mm.a = TileRef{Mem::L0A, 0, DType::I8, 32, 64, 32, 64};
    mm.b = TileRef{Mem::L0B, 0, DType::I8, 64, 32, 64, 32};
    CHECK_THROWS_WITH(check_instr(mm, m, 0), Catch::Contains("the accumulator of i8 operands is i32"));
    mm.dst.type = DType::I32;
    CHECK_NOTHROW(check_instr(mm, m, 0));
    CHECK(instr_cost(mm, m).busy == 2 * 2 * 2);
    mm.b.type = DType::F16;
    CHECK_THROWS_WITH(check_instr(mm, m, 0), Catch::Contains("the operands have different types (i8, f16)"));

    TileRef i8{Mem::UB, 0, DType::I8, 8, 64, 8, 64};
    Instr add;
    add.op = Op::TADD, add.dst = add.a = add.b = i8;
    CHECK_THROWS_WITH(check_instr(add, m, 0), Catch::Contains("TADD does not take i8 tiles"));

    Instr mov;  // L0C -> UB through the fix pipe
    mov.op = Op::TMOV, mov.pipe = Pipe::FIX;
    mov.a = TileRef{Mem::L0C, 0, DType::I32, 8, 64, 8, 64};
    mov.dst = TileRef{Mem::UB, 0, DType::I32, 8, 64, 8, 64};
    CHECK_NOTHROW(check_instr(mov, m, 0));
    mov.has_scale = true;
    CHECK_THROWS_WITH(check_instr(mov, m, 0), Catch::Contains("the fix-pipe writes an i32 accumulator as i8 "
                                                              "(requantized), f32, f16, bf16 or i32 (without a scale)"));
    mov.a.type = DType::F32, mov.dst.type = DType::I8;
    CHECK_THROWS_WITH(check_instr(mov, m, 0), Catch::Contains("the fix-pipe writes an f32 accumulator as f32, f16 or "
                                                              "bf16, not i8"));
    Instr ub;  // the epilogue is the fix pipe's: not on a UB -> L1 move
    ub.op = Op::TMOV, ub.pipe = Pipe::MTE3, ub.has_scale = true;
    ub.a = TileRef{Mem::UB, 0, DType::F32, 8, 64, 8, 64};
    ub.dst = TileRef{Mem::L1, 0, DType::F32, 8, 64, 8, 64};
    CHECK_THROWS_WITH(check_instr(ub, m, 0), Catch::Contains("a bias or a scale on the way is a fix-pipe feature"));
    // Requantization rounds ties to even and saturates.
    CHECK(fix_requantize_i8(2.5f) == 2);
    CHECK(fix_requantize_i8(3.5f) == 4);
    CHECK(fix_requantize_i8(-2.5f) == -2);
    CHECK(fix_requantize_i8(1000.0f) == 127);
    CHECK(fix_requantize_i8(-1000.0f) == -128);
}
