// CodeGen_C + JITModule: hand-built lowered statements are emitted as C++,
// compiled, run on Halide::Runtime::Buffers and checked; plus the readable
// shape of the emitted text and the entry checks of buffer arguments.
#include <HalideBuffer.h>

#include <catch2/catch.hpp>
#include <algorithm>
#include <climits>
#include <cmath>

#include "codegen/CNames.h"
#include "codegen/CodeGen_C.h"
#include "codegen/VectorSlots.h"
#include "driver/JIT.h"
#include "ir/IR.h"
#include "kiln_runtime.h"

using namespace kiln;
using namespace kiln::internal;

namespace {

Expr var(const std::string &name, Type t = Int(32)) { return Variable::make(t, name); }
LoweredArgument buffer(const std::string &name, Type t, int dims, bool output) {
    LoweredArgument a;
    a.name = name;
    a.is_buffer = true;
    a.is_output = output;
    a.type = t;
    a.dimensions = dims;
    return a;
}
LoweredArgument scalar(const std::string &name, Type t) {
    LoweredArgument a;
    a.name = name;
    a.type = t;
    return a;
}
Stmt loop(const std::string &name, Expr min, Expr extent, Stmt body, ForType t = ForType::Serial) {
    return For::make(name, std::move(min), std::move(extent), t, std::move(body));
}
Expr ramp(Expr base, int lanes, int stride = 1) { return Ramp::make(std::move(base), Expr(stride), lanes); }
Expr bcast(Expr e, int lanes) { return Broadcast::make(std::move(e), lanes); }

std::shared_ptr<JITModule> jit(const LoweredFunc &f, std::string *source = nullptr) {
    std::string text = codegen_cpp(f, Target::host());
    if (source) *source = text;
    return JITModule::compile(text, f.name, Target::host());
}

// Captures the messages of kernels while alive.
std::string last_message;
void capture(const char *m) { last_message = m; }
struct CaptureErrors {
    kiln_error_handler_t previous;
    CaptureErrors() : previous(kiln_set_error_handler(capture)) { last_message.clear(); }
    ~CaptureErrors() { kiln_set_error_handler(previous); }
};

// Euclidean division and remainder (the IR's semantics), in 64 bits.
int64_t euclid_div(int64_t a, int64_t b) {
    if (b == 0) return 0;
    int64_t q = a / b, r = a % b;
    return r < 0 ? (b > 0 ? q - 1 : q + 1) : q;
}
int64_t euclid_mod(int64_t a, int64_t b) { return b == 0 ? 0 : a - euclid_div(a, b) * b; }

// out[x] = in[x] * 2 + p over out's extent: a scalar loop.
LoweredFunc scale_kernel() {
    Expr x = var("f.s0.x");
    Stmt store = Store::make("out", Load::make(Float(32), "in", x - var("in.min.0")) * Expr(2.0f) + var("p", Float(32)),
                             x - var("out.min.0"));
    Stmt body = ProducerConsumer::make("f", true, loop("f.s0.x", var("out.min.0"), var("out.extent.0"), store));
    return {"scale", {buffer("in", Float(32), 1, false), scalar("p", Float(32)), buffer("out", Float(32), 1, true)}, body};
}

}  // namespace

TEST_CASE("codegen: a scalar loop reads like the IR and runs", "[codegen]") {
    std::string src;
    auto m = jit(scale_kernel(), &src);
    CHECK(src.find("extern \"C\" int scale(halide_buffer_t *in_buffer, float p, halide_buffer_t *out_buffer)") !=
          std::string::npos);
    CHECK(src.find("for (int32_t f_s0_x = out_min_0, f_s0_x_end = out_min_0 + out_extent_0; f_s0_x < f_s0_x_end; "
                   "++f_s0_x) {") != std::string::npos);
    CHECK(src.find("// produce f") != std::string::npos);
    CHECK(src.find("const float *in = (const float *)in_buffer->host;") != std::string::npos);
    CHECK(src.find("extern \"C\" int scale_argv(void **args)") != std::string::npos);

    Halide::Runtime::Buffer<float> in(10), out(10);
    in.set_min(-3);
    out.set_min(-3);
    in.for_each_element([&](int x) { in(x) = 0.5f * x; });
    float p = 1.25f;
    void *args[] = {in.raw_buffer(), &p, out.raw_buffer()};
    REQUIRE(m->run(args) == 0);
    out.for_each_element([&](int x) { CHECK(out(x) == 0.5f * x * 2 + 1.25f); });
}

TEST_CASE("codegen: a vector loop with dense and strided loads and stores", "[codegen]") {
    // out[8*xo + i] = in[8*xo + i] * 3 + in[2*(8*xo + i)] for xo in [0, n/8); lanes 8 and (padded) 3.
    for (int lanes : {8, 3}) {
        Expr xo = var("g.s0.x.xo"), base = xo * lanes;
        Expr dense = Load::make(Float(32, lanes), "in", ramp(base, lanes));
        Expr strided = Load::make(Float(32, lanes), "in", ramp(base * 2, lanes, 2));
        Stmt store = Store::make("out", dense * bcast(Expr(3.0f), lanes) + strided, ramp(base, lanes));
        Stmt body = loop("g.s0.x.xo", 0, Div::make(var("out.extent.0"), Expr(lanes)), store);
        LoweredFunc f{"vec" + std::to_string(lanes), {buffer("in", Float(32), 1, false), buffer("out", Float(32), 1, true)},
                      body};
        std::string src;
        auto m = jit(f, &src);
        std::string v = "float32x" + std::to_string(lanes);
        CHECK(src.find("typedef float " + v + " __attribute__((vector_size(" + (lanes == 8 ? "32" : "16") + ")));") !=
              std::string::npos);
        CHECK(src.find("kiln_load<" + v + (lanes == 3 ? ", 3" : "") + ">(in + ") != std::string::npos);
        // Stride 2 over whole vectors: dense loads and a shuffle; padded lanes gather.
        CHECK(src.find(lanes == 8 ? "kiln_load_stride<" + v + ", 2>(in + " : "kiln_gather<" + v) != std::string::npos);

        Halide::Runtime::Buffer<float> in(96), out(24);
        in.for_each_element([&](int x) { in(x) = (float)x; });
        out.fill(-1.0f);
        void *args[] = {in.raw_buffer(), out.raw_buffer()};
        REQUIRE(m->run(args) == 0);
        for (int x = 0; x < 24; x++) CHECK(out(x) == 3.0f * x + 2.0f * x);
    }
}

TEST_CASE("codegen: a vectorized loop's per-lane fallback is printed not to be unrolled", "[codegen]") {
    // out[x] = in[x] * 2 by vectors of 8, guarded (GuardWithIf): the vector
    // when all 8 lanes are in out, else the LaneFallback loop over the lanes.
    Expr xo = var("g.s0.x.xo"), xi = var("g.s0.x.xi"), n = var("out.extent.0");
    Stmt vec = Store::make("out", Load::make(Float(32, 8), "in", ramp(xo * 8, 8)) * bcast(Expr(2.0f), 8), ramp(xo * 8, 8));
    Expr x = xo * 8 + xi;
    Stmt lane = IfThenElse::make(x < n, Store::make("out", Load::make(Float(32), "in", x) * Expr(2.0f), x));
    Stmt body = IfThenElse::make(xo * 8 + 7 < n, vec, loop("g.s0.x.xi", 0, 8, lane, ForType::LaneFallback));
    LoweredFunc f{"lanes", {buffer("in", Float(32), 1, false), buffer("out", Float(32), 1, true)},
                  loop("g.s0.x.xo", 0, Div::make(n + 7, Expr(8)), body)};
    std::string src;
    auto m = jit(f, &src);
    const std::string pragma = "#pragma GCC unroll 1\n";
    size_t at = src.find(pragma);
    REQUIRE(at != std::string::npos);
    CHECK(src.find(pragma, at + 1) == std::string::npos);  // the serial loop over xo has none
    size_t next = src.find_first_not_of(' ', at + pragma.size());
    CHECK(src.compare(next, 22, "for (int32_t g_s0_x_xi") == 0);
    CHECK(src.find("for (int32_t g_s0_x_xo") < at);

    for (int size : {5, 16, 21}) {
        Halide::Runtime::Buffer<float> in(size), out(size);
        in.for_each_element([&](int i) { in(i) = 0.5f * i; });
        out.fill(-1.0f);
        void *args[] = {in.raw_buffer(), out.raw_buffer()};
        REQUIRE(m->run(args) == 0);
        for (int i = 0; i < size; i++) CHECK(out(i) == float(i));
    }
}

TEST_CASE("codegen: gathers that differ by a scalar read from the buffer plus it, at the same lanes", "[codegen]") {
    // out[i] = in[ix[i] * s + k] + in[(ix[i] + 1) * s + (k - 1)], 8 lanes
    // (two corners of a slice, one row apart): the broadcasts move to a
    // pointer offset, and both gathers index by the same lanes ix * s.
    Expr xo = var("g.s0.x.xo"), base = xo * 8;
    Expr ix = Load::make(Int(32, 8), "ix", ramp(base, 8));
    Expr s = var("s"), k = var("k");
    Expr near = Load::make(Float(32, 8), "in", ix * bcast(s, 8) + bcast(k, 8));
    Expr far = Load::make(Float(32, 8), "in", (ix + bcast(Expr(1), 8)) * bcast(s, 8) + bcast(k - 1, 8));
    Stmt body = loop("g.s0.x.xo", 0, Div::make(var("out.extent.0"), Expr(8)),
                     Store::make("out", near + far, ramp(base, 8)));
    LoweredFunc f{"gather_offsets",
                  {buffer("ix", Int(32), 1, false), buffer("in", Float(32), 1, false), scalar("s", Int(32)),
                   scalar("k", Int(32)), buffer("out", Float(32), 1, true)},
                  body};
    std::string src;
    auto m = jit(f, &src);
    auto count = [&](const std::string &part) {
        int n = 0;
        for (size_t at = src.find(part); at != std::string::npos; at = src.find(part, at + 1)) n++;
        return n;
    };
    const std::string lanes = ", kiln_load<int32x8>(ix + (g_s0_x_xo * 8)) * kiln_broadcast<int32x8>(s))";
    CHECK(src.find("kiln_gather<float32x8>(in + k" + lanes) != std::string::npos);
    CHECK(count("kiln_gather<float32x8>(in + ") == 2);
    CHECK(count(lanes) == 2);

    Halide::Runtime::Buffer<int32_t> ix_buf(24);
    Halide::Runtime::Buffer<float> in(96), out(24);
    ix_buf.for_each_element([&](int x) { ix_buf(x) = (x * 3) % 10; });
    in.for_each_element([&](int x) { in(x) = (float)x; });
    int32_t sv = 7, kv = 2;
    void *args[] = {ix_buf.raw_buffer(), in.raw_buffer(), &sv, &kv, out.raw_buffer()};
    REQUIRE(m->run(args) == 0);
    for (int x = 0; x < 24; x++) CHECK(out(x) == (float)(ix_buf(x) * 7 + 2 + (ix_buf(x) + 1) * 7 + 1));
}

TEST_CASE("codegen: Euclidean division and modulo, scalar and vector", "[codegen]") {
    // Every int8 pair (a, b), and int32 pairs at the edges, through scalar
    // and 16-lane vector code and through division by constants.
    for (int bits : {8, 32}) {
        Type t = Int(bits);
        Expr i = var("d.s0.i");
        Expr a = Load::make(t, "a", i), b = Load::make(t, "b", i);
        Stmt scalar = Block::make({Store::make("q", Div::make(a, b), i), Store::make("r", Mod::make(a, b), i),
                                   Store::make("q4", Div::make(a, make_const(t, (int64_t)4)), i),
                                   Store::make("r4", Mod::make(a, make_const(t, (int64_t)4)), i),
                                   Store::make("r7", Mod::make(a, make_const(t, (int64_t)-7)), i)});
        Expr vi = ramp(i * 16, 16);
        Expr va = Load::make(t.with_lanes(16), "a", vi), vb = Load::make(t.with_lanes(16), "b", vi);
        Stmt vector = Block::make(
            {Store::make("vq", Div::make(va, vb), vi), Store::make("vr", Mod::make(va, vb), vi),
             Store::make("vq4", Div::make(va, bcast(make_const(t, (int64_t)4), 16)), vi),
             Store::make("vr4", Mod::make(va, bcast(make_const(t, (int64_t)4), 16)), vi),
             Store::make("vr7", Mod::make(va, bcast(make_const(t, (int64_t)-7), 16)), vi)});
        Stmt body = Block::make(loop("d.s0.i", 0, var("a.extent.0"), scalar),
                                loop("d.s0.i", 0, Div::make(var("a.extent.0"), Expr(16)), vector));
        std::vector<LoweredArgument> args = {buffer("a", t, 1, false), buffer("b", t, 1, false)};
        for (const char *o : {"q", "r", "q4", "r4", "r7", "vq", "vr", "vq4", "vr4", "vr7"}) args.push_back(buffer(o, t, 1, true));
        auto m = jit({"divmod" + std::to_string(bits), args, body});

        std::vector<int64_t> values;
        if (bits == 8) {
            for (int v = -128; v < 128; v++) values.push_back(v);
        } else {
            values = {INT32_MIN, INT32_MIN + 1, -1000000007, -65536, -7, -4, -3, -2, -1, 0, 1, 2, 3, 4, 7, 65536, 999999937, INT32_MAX};
        }
        int n = (int)(values.size() * values.size());
        n = (n + 15) / 16 * 16;
        Halide::Runtime::Buffer<void> bufs[12];
        for (auto &buf : bufs) buf = Halide::Runtime::Buffer<void>(halide_type_t(halide_type_int, bits), n);
        auto set = [&](Halide::Runtime::Buffer<void> &buf, int k, int64_t v) {
            if (bits == 8) ((int8_t *)buf.data())[k] = (int8_t)v;
            else ((int32_t *)buf.data())[k] = (int32_t)v;
        };
        auto get = [&](Halide::Runtime::Buffer<void> &buf, int k) -> int64_t {
            return bits == 8 ? ((int8_t *)buf.data())[k] : ((int32_t *)buf.data())[k];
        };
        for (int k = 0; k < n; k++) {
            set(bufs[0], k, values[(k / values.size()) % values.size()]);
            set(bufs[1], k, values[k % values.size()]);
        }
        void *argv[12];
        for (int k = 0; k < 12; k++) argv[k] = bufs[k].raw_buffer();
        REQUIRE(m->run(argv) == 0);
        auto wrap = [&](int64_t v) { return bits == 8 ? (int64_t)(int8_t)v : (int64_t)(int32_t)v; };
        int failures = 0;
        for (int k = 0; k < n && failures < 10; k++) {
            int64_t x = get(bufs[0], k), y = get(bufs[1], k);
            int64_t want[] = {wrap(euclid_div(x, y)), euclid_mod(x, y), euclid_div(x, 4), euclid_mod(x, 4), euclid_mod(x, -7)};
            for (int o = 0; o < 10; o++) {
                if (get(bufs[2 + o], k) != want[o % 5]) {
                    failures++;
                    FAIL_CHECK("int" << bits << " output " << o << ": " << x << " op " << y << " gave "
                                     << get(bufs[2 + o], k) << ", want " << want[o % 5]);
                }
            }
        }
        CHECK(failures == 0);
    }
}

// Found by scripts/sanitize.sh: int8 vector lanes are not promoted, so a
// wrapping product was signed overflow in the emitted C++ (UBSan), in
// kiln_mod's a - q * b (-128 % 3: q * b = -129) and in plain vector + - *.
TEST_CASE("codegen: narrow signed vectors wrap in + - * and Euclidean %", "[codegen][regression]") {
    const int L = 16;
    Expr xo = var("w.s0.x.xo");
    Expr va = Load::make(Int(8, L), "a", ramp(xo * L, L)), vb = Load::make(Int(8, L), "b", ramp(xo * L, L));
    Stmt body = loop("w.s0.x.xo", 0, Div::make(var("a.extent.0"), Expr(L)),
                     Block::make(Store::make("s", va * vb + va - vb, ramp(xo * L, L)),
                                 Store::make("r", Mod::make(va, vb), ramp(xo * L, L))));
    std::string src;
    auto m = jit({"wrap8", {buffer("a", Int(8), 1, false), buffer("b", Int(8), 1, false), buffer("s", Int(8), 1, true),
                            buffer("r", Int(8), 1, true)},
                  body},
                 &src);
    CHECK(src.find("(int8x16)((uint8x16)") != std::string::npos);
    const int n = 256 * 256;
    Halide::Runtime::Buffer<int8_t> a(n), b(n), s(n), r(n);
    for (int k = 0; k < n; k++) a(k) = (int8_t)(k / 256 - 128), b(k) = (int8_t)(k % 256 - 128);
    void *args[] = {a.raw_buffer(), b.raw_buffer(), s.raw_buffer(), r.raw_buffer()};
    REQUIRE(m->run(args) == 0);
    int failures = 0;
    for (int k = 0; k < n && failures < 10; k++) {
        int8_t want = (int8_t)(uint8_t)(a(k) * b(k) + a(k) - b(k));
        int8_t want_r = b(k) == 0 ? 0 : (int8_t)euclid_mod(a(k), b(k));
        if (s(k) != want || r(k) != want_r) {
            failures++;
            FAIL_CHECK(+a(k) << ", " << +b(k) << ": got " << +s(k) << " and " << +r(k) << ", want " << +want << " and " << +want_r);
        }
    }
}

// 64 float lanes are wider than any vector register: the compares, selects,
// min and max split in halves (the prologue's kiln_lt, kiln_select, ...).
TEST_CASE("codegen: vector select, bool masks, min/max, casts, math and lets", "[codegen]") {
    const int L = GENERATE(8, 64);
    Expr xo = var("h.s0.x.xo");
    Expr v = Load::make(Float(32, L), "in", ramp(xo * L, L));
    Expr k = Load::make(Int(8, L), "k", ramp(xo * L, L));
    Expr p = var("p", Float(32));
    // in range: 0.5 < v < 2 (32-bit masks) or k odd (8-bit mask), or p < 0 (a broadcast)
    Expr in_range = And::make(LT::make(bcast(Expr(0.5f), L), v), LT::make(v, bcast(Expr(2.0f), L)));
    Expr k_odd = EQ::make(Mod::make(k, bcast(make_const(Int(8), (int64_t)2), L)), bcast(make_const(Int(8), (int64_t)1), L));
    Expr cond = Or::make(Or::make(in_range, k_odd), bcast(LT::make(p, Expr(0.0f)), L));
    Expr t = Let::make("t", Call::make(Float(32, L), "floor", {v * bcast(Expr(4.0f), L)}, Call::PureExtern),
                       Max::make(Min::make(var("t", Float(32, L)), bcast(Expr(10.0f), L)), bcast(Expr(-1.0f), L)));
    Expr as_int = Cast::make(Int(32, L), t);
    Expr chosen = Select::make(cond, Cast::make(Float(32, L), as_int), -v);
    Stmt body = loop("h.s0.x.xo", 0, Div::make(var("out.extent.0"), Expr(L)),
                     LetStmt::make("m", Not::make(cond),
                                   Block::make(Store::make("out", chosen, ramp(xo * L, L)),
                                               Store::make("flags", var("m", Bool(L)), ramp(xo * L, L)))));
    LoweredFunc f{"vsel",
                  {buffer("in", Float(32), 1, false), buffer("k", Int(8), 1, false), scalar("p", Float(32)),
                   buffer("out", Float(32), 1, true), buffer("flags", Bool(), 1, true)},
                  body};
    std::string src;
    auto m = jit(f, &src);
    CHECK_THAT(src, Catch::Contains("kiln_select(") && Catch::Contains("kiln_lt("));

    for (float pv : {1.0f, -1.0f}) {
        Halide::Runtime::Buffer<float> in(64), out(64);
        Halide::Runtime::Buffer<int8_t> kb(64);
        Halide::Runtime::Buffer<bool> flags(64);
        for (int x = 0; x < 64; x++) {
            in(x) = (x - 20) * 0.1f;
            kb(x) = (int8_t)(x * 3 - 50);
        }
        void *args[] = {in.raw_buffer(), kb.raw_buffer(), &pv, out.raw_buffer(), flags.raw_buffer()};
        REQUIRE(m->run(args) == 0);
        for (int x = 0; x < 64; x++) {
            float vx = in(x);
            bool c = (0.5f < vx && vx < 2.0f) || euclid_mod(kb(x), 2) == 1 || pv < 0;
            float tt = std::max(std::min(std::floor(vx * 4.0f), 10.0f), -1.0f);
            CHECK(out(x) == (c ? (float)(int)tt : -vx));
            CHECK(flags(x) == !c);
        }
    }
}

TEST_CASE("codegen: a parallel loop over rows", "[codegen]") {
    Expr x = var("p.s0.x"), y = var("p.s0.y");
    Expr index = (x - var("out.min.0")) + (y - var("out.min.1")) * var("out.stride.1");
    Stmt body = loop("p.s0.y", var("out.min.1"), var("out.extent.1"),
                     loop("p.s0.x", var("out.min.0"), var("out.extent.0"), Store::make("out", x + y * 1000, index)),
                     ForType::Parallel);
    std::string src;
    auto m = jit({"rows", {buffer("out", Int(32), 2, true)}, body}, &src);
    CHECK(src.find("#pragma omp parallel for num_threads(kiln_num_threads())\n"
                   "    for (int32_t p_s0_y = out_min_1; p_s0_y < out_min_1 + out_extent_1; ++p_s0_y) {") !=
          std::string::npos);
    Halide::Runtime::Buffer<int32_t> out(37, 23);
    out.set_min(-5, 4);
    void *args[] = {out.raw_buffer()};
    REQUIRE(m->run(args) == 0);
    out.for_each_element([&](int x, int y) { CHECK(out(x, y) == x + y * 1000); });
}

// Two parallel loops directly nested, the inner one's range independent of
// the outer's variable: one OpenMP loop over both (collapse(2)), since
// OpenMP runs a nested parallel loop on one thread. An inner range that
// depends on the outer variable keeps two loops.
TEST_CASE("codegen: nested parallel loops collapse into one", "[codegen]") {
    Expr x = var("q.s0.x"), y = var("q.s0.y");
    Expr index = (x - var("out.min.0")) + (y - var("out.min.1")) * var("out.stride.1");
    auto nest = [&](Expr inner_extent) {
        return loop("q.s0.y", var("out.min.1"), var("out.extent.1"),
                    loop("q.s0.x", var("out.min.0"), inner_extent, Store::make("out", x * 3 + y * 1000, index),
                         ForType::Parallel),
                    ForType::Parallel);
    };
    std::string src;
    auto m = jit({"nest", {buffer("out", Int(32), 2, true)}, nest(var("out.extent.0"))}, &src);
    INFO(src);
    CHECK(src.find("#pragma omp parallel for collapse(2) num_threads(kiln_num_threads())\n"
                   "    for (int32_t q_s0_y = out_min_1; q_s0_y < out_min_1 + out_extent_1; ++q_s0_y)\n"
                   "    for (int32_t q_s0_x = out_min_0; q_s0_x < out_min_0 + out_extent_0; ++q_s0_x) {") !=
          std::string::npos);
    CHECK(src.find("omp parallel for num_threads") == std::string::npos);
    Halide::Runtime::Buffer<int32_t> out(37, 23);
    out.set_min(-5, 4);
    void *args[] = {out.raw_buffer()};
    REQUIRE(m->run(args) == 0);
    out.for_each_element([&](int x, int y) { CHECK(out(x, y) == x * 3 + y * 1000); });
    // A triangle: the inner extent names the outer variable.
    std::string tri;
    jit({"triangle", {buffer("out", Int(32), 2, true)}, nest(min(var("out.extent.0"), y - var("out.min.1") + 1))},
        &tri);
    CHECK(tri.find("collapse") == std::string::npos);
    CHECK(tri.find("#pragma omp parallel for num_threads(kiln_num_threads())") != std::string::npos);
}

TEST_CASE("codegen: allocations on the stack and on the heap", "[codegen]") {
    // tmp[i] = i * i over [0, n) (heap: n is not constant); small[j] = j (stack);
    // out[i] = tmp[i] + small[i % 16].
    Expr i = var("a.s0.i"), j = var("s.s0.j"), n = var("out.extent.0");
    Stmt produce = Block::make(loop("t.s0.i", 0, n, Store::make("tmp", var("t.s0.i") * var("t.s0.i"), var("t.s0.i"))),
                               loop("s.s0.j", 0, 16, Store::make("small", j, j)));
    Stmt consume = loop("a.s0.i", 0, n,
                        Store::make("out", Load::make(Int(32), "tmp", i) + Load::make(Int(32), "small", Mod::make(i, Expr(16))), i));
    Stmt body = Allocate::make("tmp", Int(32), n,
                               Allocate::make("small", Int(32), Expr(16),
                                              Block::make(ProducerConsumer::make("tmp", true, produce),
                                                          ProducerConsumer::make("tmp", false, consume))));
    std::string src;
    auto m = jit({"alloc", {buffer("out", Int(32), 1, true)}, body}, &src);
    CHECK(src.find("kiln_heap tmp_heap(out_extent_0, sizeof(int32_t));") != std::string::npos);
    CHECK(src.find("alignas(64) int32_t small[16];") != std::string::npos);
    Halide::Runtime::Buffer<int32_t> out(5000);
    void *args[] = {out.raw_buffer()};
    REQUIRE(m->run(args) == 0);
    for (int k = 0; k < 5000; k++) CHECK(out(k) == k * k + k % 16);
}

TEST_CASE("codegen: a register block of whole vectors is an array of vectors", "[codegen]") {
    // acc holds two 8-lane vectors, read and written only whole at constant
    // offsets (the accumulators of an unrolled, vectorized update): emitted as
    // `int32x8 acc[2]`, each slot a vector variable g++ keeps in a register
    // (codegen/VectorSlots.h). part is stored whole and one lane of it read
    // back: a slot, the lane read as part[0][3].
    auto slot = [](const std::string &buf, int base) { return Load::make(Int(32, 8), buf, ramp(Expr(base), 8)); };
    Expr k = var("k");
    Stmt init = Block::make(Store::make("acc", bcast(Expr(0), 8), ramp(Expr(0), 8)),
                            Store::make("acc", bcast(Expr(0), 8), ramp(Expr(8), 8)));
    Stmt update = loop("k", 0, 4,
                       Block::make(Store::make("acc", slot("acc", 0) + bcast(k, 8), ramp(Expr(0), 8)),
                                   Store::make("acc", slot("acc", 8) + bcast(k * 2, 8), ramp(Expr(8), 8))));
    Stmt part = Block::make(Store::make("part", slot("acc", 8), ramp(Expr(0), 8)),
                            Store::make("out", slot("acc", 0) + bcast(Load::make(Int(32), "part", Expr(3)), 8),
                                        ramp(Expr(0), 8)));
    Stmt body = Allocate::make("acc", Int(32), Expr(16),
                               Allocate::make("part", Int(32), Expr(8), Block::make(init, Block::make(update, part))));
    std::string src;
    auto m = jit({"slots", {buffer("out", Int(32), 1, true)}, body}, &src);
    CHECK(src.find("alignas(64) int32x8 acc[2];") != std::string::npos);
    CHECK(src.find("acc[1] = acc[1] + kiln_broadcast<int32x8>(k * 2);") != std::string::npos);
    // part: a whole vector stored, one lane read back at a constant index.
    CHECK(src.find("alignas(64) int32x8 part[1];") != std::string::npos);
    CHECK(src.find("part[0] = acc[1];") != std::string::npos);
    CHECK(src.find("kiln_broadcast<int32x8>(part[0][3])") != std::string::npos);
    Halide::Runtime::Buffer<int32_t> out(8);
    void *args[] = {out.raw_buffer()};
    REQUIRE(m->run(args) == 0);
    for (int i = 0; i < 8; i++) CHECK(out(i) == 6 + 12);

    // Not slots: an offset that is not constant, or not a multiple of the lanes, or two widths.
    auto lanes_of = [](Stmt s) {
        Stmt a = Allocate::make("acc", Int(32), Expr(16), std::move(s));
        return vector_slot_lanes(a.as<Allocate>());
    };
    CHECK(lanes_of(Store::make("acc", bcast(Expr(0), 8), ramp(Expr(8), 8))) == 8);
    CHECK(lanes_of(Store::make("acc", bcast(Expr(0), 8), ramp(k, 8))) == 0);
    CHECK(lanes_of(Store::make("acc", bcast(Expr(0), 8), ramp(Expr(4), 8))) == 0);
    CHECK(lanes_of(Block::make(Store::make("acc", bcast(Expr(0), 8), ramp(Expr(0), 8)),
                               Store::make("acc", bcast(Expr(0), 4), ramp(Expr(8), 4)))) == 0);
    // Lanes written one by one at constant indices and read as a vector
    // are slots too; at an index that is not constant, or with no vector
    // access at all, they are not.
    auto lanes_then_vector = [&](Expr index) {
        return lanes_of(Block::make({Store::make("acc", Expr(1), Expr(9)), Store::make("acc", Expr(2), index),
                                     Store::make("out", slot("acc", 8), ramp(Expr(0), 8))}));
    };
    CHECK(lanes_then_vector(Expr(15)) == 8);
    CHECK(lanes_then_vector(k) == 0);
    CHECK(lanes_of(Block::make(Store::make("acc", Expr(1), Expr(9)),
                               Store::make("out", Load::make(Int(32), "acc", Expr(9)), Expr(0)))) == 0);
}

// The number of times `what` occurs in `text`.
size_t occurrences(const std::string &text, const std::string &what) {
    size_t n = 0;
    for (size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) n++;
    return n;
}

// A loop as partition_loops leaves it, over the columns x of two rows
// c (the inner loop): out[c * n + x] = in[c * n + x - 1] + 2 * in[c * n +
// x + 1], x clamped to [0, n) in the prologue and the epilogue (`edge`),
// not in the steady state. `epilogue` is the epilogue's body, `edge` by
// default; `rows` false leaves the inner loop out (one row).
Stmt partitioned_stencil(Stmt epilogue = Stmt(), bool rows = true) {
    Expr x = var("f.s0.x"), c = var("f.s0.c"), n = var("n");
    Expr smin = var("f.s0.x.steady_min"), smax = var("f.s0.x.steady_max");
    auto in = [&](Expr i) { return Load::make(Float(32), "in", c * n + i); };
    auto row = [&](Stmt s) { return rows ? loop("f.s0.c", 0, 2, s) : LetStmt::make("f.s0.c", 0, s); };
    Stmt edge = row(LetStmt::make("f.s0.x.left", max(x - 1, 0),
                                  Store::make("out", in(var("f.s0.x.left")) + in(min(x + 1, n - 1)) * Expr(2.0f),
                                              c * n + x)));
    Stmt fast = row(Store::make("out", in(x - 1) + in(x + 1) * Expr(2.0f), c * n + x));
    Stmt loops = Block::make({loop("f.s0.x", 0, smin, edge), loop("f.s0.x", smin, smax - smin + 1, fast),
                              loop("f.s0.x", smax + 1, n - (smax + 1), epilogue.defined() ? epilogue : edge)});
    return LetStmt::make("f.s0.x.steady_min", min(n, 1),
                         LetStmt::make("f.s0.x.steady_max", max(n - 2, smin - 1), loops));
}

std::vector<LoweredArgument> stencil_args() {
    return {buffer("in", Float(32), 1, false), scalar("n", Int(32)), buffer("out", Float(32), 1, true)};
}

// Runs a kernel of stencil_args() on 2 rows of 1, 2, 3 and 17 columns:
// out = (in[x - 1] + in[x + 1] * 2) * scale per row, the taps clamped to it.
void check_stencil_rows(JITModule &m, float scale) {
    for (int size : {1, 2, 3, 17}) {
        Halide::Runtime::Buffer<float> in(2 * size), out(2 * size);
        in.for_each_element([&](int i) { in(i) = 0.25f * i * i - i; });
        out.fill(-1.0f);
        void *args[] = {in.raw_buffer(), &size, out.raw_buffer()};
        REQUIRE(m.run(args) == 0);
        for (int r = 0; r < 2; r++)
            for (int i = 0; i < size; i++)
                CHECK(out(r * size + i) ==
                      (in(r * size + std::max(i - 1, 0)) + in(r * size + std::min(i + 1, size - 1)) * 2.0f) * scale);
    }
}

// The loop f.s0.x's prologue and epilogue emitted as one lambda, called
// before and after the steady state's loop.
void check_shared_edges(const std::string &src) {
    CHECK(occurrences(src, "auto f_s0_x_edges = [=](int32_t f_s0_x_from, int32_t f_s0_x_to) "
                           "__attribute__((noinline)) {") == 1);
    CHECK(occurrences(src, "for (int32_t f_s0_x = f_s0_x_from; f_s0_x < f_s0_x_to; ++f_s0_x) {") == 1);
    CHECK(occurrences(src, "if (0 < f_s0_x_steady_min) f_s0_x_edges(0, f_s0_x_steady_min);") == 1);
    CHECK(occurrences(src, "f_s0_x_edges(f_s0_x_steady_max + 1, ") == 1);
    // The steady state's loop between the calls, as without them.
    size_t steady = src.find("for (int32_t f_s0_x = f_s0_x_steady_min, f_s0_x_end = ");
    REQUIRE(steady != std::string::npos);
    CHECK(src.find("f_s0_x_edges(0, ") < steady);
    CHECK(steady < src.find("f_s0_x_edges(f_s0_x_steady_max + 1, "));
}

TEST_CASE("codegen: a partitioned loop's prologue and epilogue share one function", "[codegen][partition]") {
    std::string src;
    auto m = jit({"edges", stencil_args(), partitioned_stencil()}, &src);
    INFO(src);
    check_shared_edges(src);
    CHECK(occurrences(src, "const int32_t f_s0_x_left = ") == 1);  // the edges' body, once
    check_stencil_rows(*m, 1.0f);
}

// One row of a (2r + 1)-tap stencil as partition_loops leaves it, an
// innermost loop: out[x] = sum over k of in[x + k] * (k + r + 1), each tap
// clamped to [0, n) in the prologue and the epilogue, not in the steady
// state. The taps are added left to right.
Stmt partitioned_taps(int r) {
    Expr x = var("f.s0.x"), n = var("n");
    Expr smin = var("f.s0.x.steady_min"), smax = var("f.s0.x.steady_max");
    Expr edge, fast;
    for (int k = -r; k <= r; k++) {
        Expr w((float)(k + r + 1));
        Expr e = Load::make(Float(32), "in", max(min(x + k, n - 1), 0)) * w;
        Expr f = Load::make(Float(32), "in", x + k) * w;
        edge = edge.defined() ? edge + e : e;
        fast = fast.defined() ? fast + f : f;
    }
    Stmt loops = Block::make({loop("f.s0.x", 0, smin, Store::make("out", edge, x)),
                              loop("f.s0.x", smin, smax - smin + 1, Store::make("out", fast, x)),
                              loop("f.s0.x", smax + 1, n - (smax + 1), Store::make("out", edge, x))});
    return LetStmt::make("f.s0.x.steady_min", min(n, r),
                         LetStmt::make("f.s0.x.steady_max", max(n - r - 1, smin - 1), loops));
}

TEST_CASE("codegen: an innermost loop's edges of 2 KB or more share one function", "[codegen][partition]") {
    const int r = 24;  // 49 clamped taps: about 3 KB of C++
    std::string src;
    auto m = jit({"taps", stencil_args(), partitioned_taps(r)}, &src);
    INFO(src);
    check_shared_edges(src);
    CHECK(occurrences(src, "in[kiln_max(kiln_min(f_s0_x + ") == 2 * r + 1);  // the clamped taps, once
    // Shorter than the reach (only the prologue runs), one steady point,
    // both edges and a steady state.
    for (int size : {1, 7, 2 * r + 1, 2 * r + 2, 120}) {
        Halide::Runtime::Buffer<float> in(size), out(size);
        in.for_each_element([&](int i) { in(i) = 0.25f * i * i - i; });
        out.fill(-1.0f);
        void *args[] = {in.raw_buffer(), &size, out.raw_buffer()};
        REQUIRE(m->run(args) == 0);
        for (int i = 0; i < size; i++) {
            float sum = 0.0f;
            for (int k = -r; k <= r; k++) {
                float tap = in(std::max(std::min(i + k, size - 1), 0)) * (float)(k + r + 1);
                sum = k == -r ? tap : sum + tap;
            }
            CHECK(out(i) == sum);
        }
    }
}

TEST_CASE("codegen: small innermost edges, edges that differ or use large outer stack arrays keep their loops",
          "[codegen][partition]") {
    auto unshared = [](const std::string &src) {
        CHECK(src.find("_edges") == std::string::npos);
        CHECK(occurrences(src, "for (int32_t f_s0_x = ") == 3);
    };
    // An innermost loop of a small body: its edges are a vector or two per
    // run of it, where a call would cost about as much as their work.
    unshared(codegen_cpp({"innermost", stencil_args(), partitioned_stencil(Stmt(), false)}, Target::host()));
    // An epilogue of another body.
    Expr x = var("f.s0.x");
    Stmt other = loop("f.s0.c", 0, 2, Store::make("out", Load::make(Float(32), "in", x) * Expr(3.0f), x));
    unshared(codegen_cpp({"differ", stencil_args(), partitioned_stencil(other)}, Target::host()));
    // Edges that use more stack arrays declared around them than a call
    // may copy.
    Stmt fill = loop("t.s0.i", 0, 512, Store::make("in", Expr(1.0f), var("t.s0.i")));
    Stmt body = Allocate::make("in", Float(32), Expr(512), Block::make(fill, partitioned_stencil()));
    std::string src = codegen_cpp({"stack", {scalar("n", Int(32)), buffer("out", Float(32), 1, true)}, body},
                                  Target::host());
    CHECK(src.find("alignas(64) float in[512];") != std::string::npos);
    unshared(src);
}

TEST_CASE("codegen: edges that use a stack array declared around them take a copy of it", "[codegen][partition]") {
    // acc[c] += in[c * n + x - 1] + in[c * n + x + 1] * 2 over the row x,
    // the loads clamped to the row in the prologue and the epilogue: the
    // lambda takes acc as a parameter, each call a copy of it, copied back,
    // so that acc's own address does not escape.
    Expr x = var("f.s0.x"), c = var("f.s0.c"), n = var("n");
    Expr smin = var("f.s0.x.steady_min"), smax = var("f.s0.x.steady_max");
    auto add = [&](Expr left, Expr right) {
        Expr in_l = Load::make(Float(32), "in", c * n + left), in_r = Load::make(Float(32), "in", c * n + right);
        return loop("f.s0.c", 0, 2, Store::make("acc", Load::make(Float(32), "acc", c) + (in_l + in_r * Expr(2.0f)), c));
    };
    Stmt edge = add(max(x - 1, 0), min(x + 1, n - 1)), fast = add(x - 1, x + 1);
    Stmt loops = Block::make({loop("f.s0.x", 0, smin, edge), loop("f.s0.x", smin, smax - smin + 1, fast),
                              loop("f.s0.x", smax + 1, n - (smax + 1), edge)});
    Stmt row = LetStmt::make("f.s0.x.steady_min", min(n, 1),
                             LetStmt::make("f.s0.x.steady_max", max(n - 2, smin - 1), loops));
    Stmt init = loop("f.s0.c", 0, 2, Store::make("acc", Expr(0.0f), c));
    Stmt copy_out = loop("f.s0.c", 0, 2, Store::make("out", Load::make(Float(32), "acc", c), c));
    Stmt body = Allocate::make("acc", Float(32), Expr(2), Block::make({init, row, copy_out}));
    std::string src;
    auto m = jit({"acc_edges", stencil_args(), body}, &src);
    INFO(src);
    CHECK(src.find("alignas(64) float acc[2];") != std::string::npos);
    CHECK(occurrences(src, "auto f_s0_x_edges = [=](int32_t f_s0_x_from, int32_t f_s0_x_to, float *acc) "
                           "__attribute__((noinline)) {") == 1);
    CHECK(occurrences(src, "alignas(64) float acc_copy[2];") == 2);
    CHECK(occurrences(src, "__builtin_memcpy(acc_copy, acc, sizeof(acc_copy));") == 2);
    CHECK(occurrences(src, "__builtin_memcpy(acc, acc_copy, sizeof(acc_copy));") == 2);
    CHECK(occurrences(src, "f_s0_x_edges(0, f_s0_x_steady_min, acc_copy);") == 1);
    CHECK(occurrences(src, "f_s0_x_edges(f_s0_x_steady_max + 1, ") == 1);
    for (int size : {1, 2, 3, 17}) {
        Halide::Runtime::Buffer<float> in(2 * size), out(2);
        in.for_each_element([&](int i) { in(i) = 0.25f * i * i - i; });
        out.fill(-1.0f);
        void *args[] = {in.raw_buffer(), &size, out.raw_buffer()};
        REQUIRE(m->run(args) == 0);
        for (int r = 0; r < 2; r++) {
            float sum = 0.0f;
            for (int i = 0; i < size; i++)
                sum = sum + (in(r * size + std::max(i - 1, 0)) + in(r * size + std::min(i + 1, size - 1)) * 2.0f);
            CHECK(out(r) == sum);
        }
    }
}

TEST_CASE("codegen: edges copy an array named at constant indices element by element", "[codegen][partition]") {
    // out[c * n + x] = (in[c * n + x - 1] + in[c * n + x + 1] * 2) * s[0],
    // s a one-element array written before the row: every access names
    // s[0], so g++ keeps it in a register; a memcpy of it would take its
    // address. The edges only read it: copied in, not back.
    Expr x = var("f.s0.x"), c = var("f.s0.c"), n = var("n");
    Expr smin = var("f.s0.x.steady_min"), smax = var("f.s0.x.steady_max");
    auto tap = [&](Expr left, Expr right) {
        Expr in_l = Load::make(Float(32), "in", c * n + left), in_r = Load::make(Float(32), "in", c * n + right);
        return loop("f.s0.c", 0, 2,
                    Store::make("out", (in_l + in_r * Expr(2.0f)) * Load::make(Float(32), "s", 0), c * n + x));
    };
    Stmt edge = tap(max(x - 1, 0), min(x + 1, n - 1)), fast = tap(x - 1, x + 1);
    Stmt loops = Block::make({loop("f.s0.x", 0, smin, edge), loop("f.s0.x", smin, smax - smin + 1, fast),
                              loop("f.s0.x", smax + 1, n - (smax + 1), edge)});
    Stmt row = LetStmt::make("f.s0.x.steady_min", min(n, 1),
                             LetStmt::make("f.s0.x.steady_max", max(n - 2, smin - 1), loops));
    Stmt body = Allocate::make("s", Float(32), Expr(1), Block::make(Store::make("s", Expr(0.5f), 0), row));
    std::string src;
    auto m = jit({"scalar_edges", stencil_args(), body}, &src);
    INFO(src);
    CHECK(occurrences(src, "auto f_s0_x_edges = [=](int32_t f_s0_x_from, int32_t f_s0_x_to, float *s) "
                           "__attribute__((noinline)) {") == 1);
    CHECK(occurrences(src, "alignas(64) float s_copy[1];") == 2);
    CHECK(occurrences(src, "s_copy[0] = s[0];") == 2);
    CHECK(src.find("s[0] = s_copy[0];") == std::string::npos);
    CHECK(src.find("__builtin_memcpy") == std::string::npos);
    check_stencil_rows(*m, 0.5f);
    // More elements than a call copies one by one: the edges keep their loops.
    Stmt fill = Block::make(Store::make("s", Expr(0.5f), 0), Store::make("s", Expr(0.0f), 16));
    Stmt wide = Allocate::make("s", Float(32), Expr(17), Block::make(fill, row));
    std::string unshared = codegen_cpp({"wide", stencil_args(), wide}, Target::host());
    CHECK(unshared.find("_edges") == std::string::npos);
}

TEST_CASE("codegen: a failing assert returns its code with its message", "[codegen][error]") {
    Stmt check = AssertStmt::make(LE::make(Expr(10), var("out.extent.0")), kiln_error_output_too_small,
                                  {StringImm::make("guard: output 'out' has extent "), var("out.extent.0"),
                                   StringImm::make(" (100% needs >= 10)")});
    Stmt body = Block::make(check, Store::make("out", Expr(1), Expr(0)));
    auto m = jit({"guard", {buffer("out", Int(32), 1, true)}, body});
    CaptureErrors capture;
    Halide::Runtime::Buffer<int32_t> small(4);
    void *args[] = {small.raw_buffer()};
    CHECK(m->run(args) == kiln_error_output_too_small);
    CHECK(last_message == "guard: output 'out' has extent 4 (100% needs >= 10)");
    CHECK(std::string(kiln_last_error_message()) == last_message);
    CHECK_THROWS_AS(m->run_or_throw(args), RuntimeError);

    // The same check inside a parallel loop: the failing iteration records
    // its code and jumps to its end (no lambda, which would capture the
    // function's variables by reference), and the loop returns the code.
    Stmt par = loop("g.s0.y", 0, 8,
                    Block::make(AssertStmt::make(LT::make(var("g.s0.y"), Expr(5)), kiln_error_generic,
                                                 {StringImm::make("row "), var("g.s0.y"), StringImm::make(" too far")}),
                                Store::make("out", var("g.s0.y"), var("g.s0.y"))),
                    ForType::Parallel);
    std::string src;
    auto mp = jit({"guard_par", {buffer("out", Int(32), 1, true)}, par}, &src);
    CHECK(src.find("[&]") == std::string::npos);
    CHECK(src.find("        int err = 0;\n"
                   "        {\n"
                   "            if (!(g_s0_y < 5)) {\n") != std::string::npos);
    CHECK(src.find("                err = -1;\n"
                   "                goto g_s0_y_exit;\n") != std::string::npos);
    CHECK(src.find("        g_s0_y_exit:\n"
                   "        if (err != 0) {\n") != std::string::npos);
    Halide::Runtime::Buffer<int32_t> out(8);
    void *pargs[] = {out.raw_buffer()};
    CHECK(mp->run(pargs) == kiln_error_generic);
    CHECK(last_message.find(" too far") != std::string::npos);
    for (int y = 0; y < 5; y++) CHECK(out(y) == y);
}

TEST_CASE("codegen: buffer arguments are checked on entry", "[codegen][error]") {
    auto m = jit(scale_kernel());
    CaptureErrors capture;
    Halide::Runtime::Buffer<float> in(10), out(10);
    float p = 0;
    void *args[] = {nullptr, &p, out.raw_buffer()};
    CHECK(m->run(args) == kiln_error_buffer_is_null);
    CHECK(last_message == "scale: buffer argument 'in' is null");

    Halide::Runtime::Buffer<uint8_t> bytes(10);
    args[0] = bytes.raw_buffer();
    CHECK(m->run(args) == kiln_error_bad_type);
    CHECK(last_message == "scale: buffer argument 'in' has the wrong element type: expected float32, got uint8");

    Halide::Runtime::Buffer<float> plane(10, 2);
    args[0] = plane.raw_buffer();
    CHECK(m->run(args) == kiln_error_bad_dimensions);
    CHECK(last_message == "scale: buffer argument 'in' has 2 dimensions, expected 1");

    halide_buffer_t no_host = *in.raw_buffer();
    no_host.host = nullptr;
    args[0] = &no_host;
    CHECK(m->run(args) == kiln_error_host_is_null);
    CHECK(last_message == "scale: buffer argument 'in' has no host memory (host is null)");

    halide_dimension_t dim = in.raw_buffer()->dim[0];
    dim.stride = 2;
    dim.extent = 5;
    halide_buffer_t strided = *in.raw_buffer();
    strided.dim = &dim;
    args[0] = &strided;
    CHECK(m->run(args) == kiln_error_bad_stride);
    CHECK(last_message == "scale: buffer argument 'in' has stride 2 in dimension 0, expected 1 (dimension 0 must be dense)");

    args[0] = in.raw_buffer();
    args[2] = nullptr;
    CHECK(m->run(args) == kiln_error_buffer_is_null);
    CHECK(last_message == "scale: buffer argument 'out' is null");
}

TEST_CASE("codegen: names are C identifiers, constants exact", "[codegen]") {
    // An IR name that is a C++ keyword, and float/int64 constants.
    Stmt body = LetStmt::make(
        "int", Expr(3),
        LetStmt::make("big", make_const(Int(64), (int64_t)1 << 40),
                      Store::make("out", Cast::make(Float(32), var("big", Int(64)) + Cast::make(Int(64), var("int"))) +
                                             Expr(0.1f),
                                  Expr(0))));
    std::string src;
    auto m = jit({"names", {buffer("out", Float(32), 1, true)}, body}, &src);
    CHECK(src.find("const int32_t int_ = 3;") != std::string::npos);
    CHECK(src.find("INT64_C(1099511627776)") != std::string::npos);
    CHECK(src.find("0.100000001f") != std::string::npos);
    Halide::Runtime::Buffer<float> out(1);
    void *args[] = {out.raw_buffer()};
    REQUIRE(m->run(args) == 0);
    CHECK(out(0) == (float)((1ll << 40) + 3) + 0.1f);
}

TEST_CASE("codegen: c_mangle makes IR names C identifier characters", "[codegen]") {
    CHECK(c_mangle("f.s0.x.xo") == "f_s0_x_xo");
    CHECK(c_mangle("blur_y") == "blur_y");
    CHECK(c_mangle("a-b c") == "a_b_c");
    CHECK(c_mangle("blur$1.s0.x") == "blur__1_s0_x");  // a renamed Func (lower/UniqueNames.h)
    CHECK(c_mangle("0.min") == "0_min");  // a leading digit stays: callers prefix "v_"
    CHECK(c_mangle("") == "");
    CHECK(is_c_identifier("blur_x"));
    CHECK_FALSE(is_c_identifier("blur.x"));
    CHECK_FALSE(is_c_identifier("3x"));
    CHECK_FALSE(is_c_identifier(""));
}

TEST_CASE("codegen: scalar uint8 wrapping, float64 math, if/else chains, sibling lets", "[codegen]") {
    Expr x = var("s.s0.x");
    Expr a = Load::make(UInt(8), "a", x);
    Expr narrow = Div::make(Add::make(a, a), make_const(UInt(8), (int64_t)3));  // wraps before dividing
    Expr xd = Cast::make(Float(64), x);
    Expr math = Call::make(Float(64), "pow", {xd, FloatImm::make(Float(64), 0.5)},
                           Call::PureExtern) +
                Call::make(Float(64), "round", {FloatImm::make(Float(64), 2.5)}, Call::PureExtern);
    Stmt chain = IfThenElse::make(LT::make(x, Expr(2)), Store::make("c", Expr(10), x),
                                  IfThenElse::make(LT::make(x, Expr(4)), Store::make("c", Expr(20), x),
                                                   Store::make("c", Expr(30), x)));
    // Two sibling LetStmts binding the same name must both compile.
    Stmt lets = Block::make(LetStmt::make("t", x * 2, Store::make("d", var("t"), x)),
                            LetStmt::make("t", Expr(true), Evaluate::make(var("t", Bool()))));
    Stmt body = loop("s.s0.x", 0, 8,
                     Block::make({Store::make("u", narrow, x), Store::make("m", math, x), chain, lets}));
    std::string src;
    auto m = jit({"scalars",
                  {buffer("a", UInt(8), 1, false), buffer("u", UInt(8), 1, true), buffer("m", Float(64), 1, true),
                   buffer("c", Int(32), 1, true), buffer("d", Int(32), 1, true)},
                  body},
                 &src);
    CHECK(src.find("} else if (s_s0_x < 4) {") != std::string::npos);
    CHECK(src.find("kiln_div((uint8_t)(a[s_s0_x] + a[s_s0_x]), (uint8_t)3)") != std::string::npos);
    Halide::Runtime::Buffer<uint8_t> in(8), u(8);
    Halide::Runtime::Buffer<double> mb(8);
    Halide::Runtime::Buffer<int32_t> c(8), d(8);
    for (int k = 0; k < 8; k++) in(k) = (uint8_t)(100 + 20 * k);
    void *args[] = {in.raw_buffer(), u.raw_buffer(), mb.raw_buffer(), c.raw_buffer(), d.raw_buffer()};
    REQUIRE(m->run(args) == 0);
    for (int k = 0; k < 8; k++) {
        CHECK(u(k) == (uint8_t)(in(k) + in(k)) / 3);
        CHECK(mb(k) == std::pow((double)k, 0.5) + 2.0);
        CHECK(c(k) == (k < 2 ? 10 : k < 4 ? 20 : 30));
        CHECK(d(k) == 2 * k);
    }
}

TEST_CASE("codegen: Target strings", "[codegen][target]") {
    CHECK(Target("x86-64-linux-avx2-fma").to_string() == "x86-64-linux-avx2-fma");
    CHECK(Target("x86-64-linux-avx2").vector_bytes() == 32);
    CHECK(Target("x86-64-linux").vector_bytes() == 16);
    CHECK(Target("x86-64-linux-sse41").compiler_flags().find("-msse4.1") != std::string::npos);
    CHECK(Target("host").compiler_flags() == "-march=native");
    CHECK(Target("host-fast_math").has(Target::FastMath));
    CHECK_THROWS_WITH(Target("x86-64-linux-avx3"), Catch::Contains("Unknown feature \"avx3\"") && Catch::Contains("avx512"));
    CHECK_THROWS_AS(Target("gpu"), CompileError);
}

TEST_CASE("codegen: float32 tanh is the prologue's cheaper one under fast_math only", "[codegen][math]") {
    // out[x] = tanh(in[x]), scalar and 8 lanes; float64 stays on the C library.
    Expr x = var("f.s0.x");
    Expr s = Call::make(Float(32), "tanh", {Load::make(Float(32), "in", x)}, Call::PureExtern);
    Expr v = Call::make(Float(32, 8), "tanh", {Load::make(Float(32, 8), "in", ramp(x * 8, 8))}, Call::PureExtern);
    Expr d = Call::make(Float(64), "tanh", {Cast::make(Float(64), Load::make(Float(32), "in", x))}, Call::PureExtern);
    Stmt body = Block::make({Store::make("out", s, x), Store::make("out", v, ramp(x * 8, 8)),
                             Store::make("out", Cast::make(Float(32), d), x)});
    LoweredFunc f{"th", {buffer("in", Float(32), 1, false), buffer("out", Float(32), 1, true)},
                  loop("f.s0.x", 0, 1, body)};
    const std::string fast = codegen_cpp(f, Target::host().with(Target::FastMath));
    const std::string exact = codegen_cpp(f, Target::host());
    CHECK_THAT(fast, Catch::Contains("kiln_tanh_fast(") && Catch::Contains("kiln_libm_tanh("));
    CHECK_THAT(exact, Catch::Contains("kiln_tanh(") && Catch::Contains("kiln_libm_tanh(") &&
                          !Catch::Contains("kiln_tanh_fast("));
}
