// Saving forward Funcs for the backward pass (Func::save(),
// forward_with_residuals(), lower/SavedResiduals.h): the backward pass reads
// a saved Func from the buffer the forward pass wrote, whole or as one bit
// per point, and its gradients equal those of the backward pass that
// recomputes it, bit for bit.
#include "check.h"

#include <random>

using namespace kiln;

namespace {

Var x("x"), y("y");

Buffer<float> random_buffer(std::vector<int> sizes, uint32_t seed) {
    Buffer<float> b(sizes);
    std::mt19937 rng(seed);
    std::uniform_real_distribution<float> u(-1, 1);
    b.for_each_value([&](float &v) { v = u(rng); });
    return b;
}

// output = max(A B + bias, 0) over A (K x M) and B (N x K), with the
// adjoints of A, B and bias for a given d_output.
struct Gemm {
    static constexpr int M = 7, N = 13, K = 11;  // N not a multiple of 8: the last byte of the bits is partial
    ImageParam A{Float(32), 2, "A"}, B{Float(32), 2, "B"}, bias{Float(32), 1, "bias"}, d_out{Float(32), 2, "d_output"};
    Buffer<float> a = random_buffer({K, M}, 1), b = random_buffer({N, K}, 2), c = random_buffer({N}, 3),
                  d = random_buffer({N, M}, 4);
    Func matmul{"matmul"}, bias_add{"bias_add"}, output{"output"};
    Derivative grad;

    Gemm() {
        RDom k(0, K, "k");
        matmul(x, y) = 0.0f;
        matmul(x, y) += A(k, y) * B(x, k);
        bias_add(x, y) = matmul(x, y) + bias(x);
        output(x, y) = max(bias_add(x, y), 0.0f);
        matmul.compute_root();
        A.set(a);
        B.set(b);
        bias.set(c);
        d_out.set(d);
        grad = propagate_adjoints(output, d_out);
        for (const ImageParam *p : {&A, &B, &bias}) grad(*p).compute_root();
    }
    std::vector<Func> adjoints() const { return {grad(A), grad(B), grad(bias)}; }
    // The adjoints of A, B and bias.
    std::vector<Buffer<float>> backward() {
        return {grad(A).realize({K, M}), grad(B).realize({N, K}), grad(bias).realize({N})};
    }
};

void require_equal(const std::vector<Buffer<float>> &got, const std::vector<Buffer<float>> &want) {
    REQUIRE(got.size() == want.size());
    for (size_t i = 0; i < got.size(); i++) {
        int bad = 0;
        want[i].for_each_element([&](const int *pos) {
            std::vector<int> at(pos, pos + want[i].dimensions());
            bad += got[i](at.data()) != want[i](at.data());
        });
        CHECK(bad == 0);
    }
}

}  // namespace

TEST_CASE("A forward Func saved whole is read from its buffer, not computed", "[autodiff][residuals]") {
    Gemm g;
    std::vector<Buffer<float>> recomputed = g.backward();
    REQUIRE(Pipeline(g.adjoints()).lowered_stmt().find("matmul") != std::string::npos);

    g.bias_add.save();
    Pipeline forward = forward_with_residuals({g.output}, g.adjoints());
    REQUIRE(forward.outputs().size() == 2);
    CHECK(forward.outputs()[1].name() == "bias_add");
    Buffer<float> out_buf(Gemm::N, Gemm::M), saved_buf(Gemm::N, Gemm::M);
    Realization fwd({Buffer<>(out_buf), Buffer<>(saved_buf)});
    forward.realize(fwd);
    g.bias_add.saved_buffer().set(Buffer<float>(fwd[1]));

    // The backward pass no longer computes the product.
    std::string stmt = Pipeline(g.adjoints()).lowered_stmt();
    CHECK(stmt.find("matmul") == std::string::npos);
    require_equal(g.backward(), recomputed);

    // Its argument list has the saved buffer among the inputs.
    bool found = false;
    for (const Argument &a : Pipeline(g.adjoints()).infer_arguments()) found |= a.name == "bias_add" && a.is_buffer;
    CHECK(found);
}

TEST_CASE("A wrapper of a saved Func reads its buffer", "[autodiff][residuals]") {
    Gemm g;
    std::vector<Buffer<float>> recomputed = g.backward();

    g.bias_add.save();
    Pipeline forward = forward_with_residuals({g.output}, g.adjoints());
    Buffer<float> out_buf(Gemm::N, Gemm::M), saved_buf(Gemm::N, Gemm::M);
    Realization fwd({Buffer<>(out_buf), Buffer<>(saved_buf)});
    forward.realize(fwd);
    g.bias_add.saved_buffer().set(Buffer<float>(fwd[1]));

    // The ReLU's adjoint reads bias_add through a copy made at the root: the
    // copy reads the saved buffer, and nothing computes the product.
    Func staged = g.bias_add.in(g.grad(g.bias_add));
    staged.compute_root();
    std::string stmt = Pipeline(g.adjoints()).lowered_stmt();
    CHECK(stmt.find("produce " + staged.name()) != std::string::npos);
    CHECK(stmt.find("matmul") == std::string::npos);
    require_equal(g.backward(), recomputed);

    // The forward pass computes bias_add, with no use for the wrapper.
    Realization again({Buffer<>(Buffer<float>(Gemm::N, Gemm::M)), Buffer<>(Buffer<float>(Gemm::N, Gemm::M))});
    forward_with_residuals({g.output}, g.adjoints()).realize(again);
    Buffer<float> a(again[1]), b(fwd[1]);
    int differ = 0;
    b.for_each_element([&](int i, int j) { differ += a(i, j) != b(i, j); });
    CHECK(differ == 0);
}

TEST_CASE("A forward Func saved as bits keeps the comparison the backward pass reads", "[autodiff][residuals]") {
    Gemm g;
    std::vector<Buffer<float>> recomputed = g.backward();

    g.bias_add.save(Residual::Bits);
    Pipeline forward = forward_with_residuals({g.output}, g.adjoints());
    REQUIRE(forward.outputs().size() == 2);
    CHECK(forward.outputs()[1].name() == "bias_add_bits");
    CHECK(forward.outputs()[1].type() == UInt(8));
    const int bytes = (Gemm::N + 7) / 8;
    Buffer<float> out_buf(Gemm::N, Gemm::M);
    Buffer<uint8_t> bits_buf(bytes, Gemm::M);
    Realization fwd({Buffer<>(out_buf), Buffer<>(bits_buf)});
    forward.realize(fwd);
    Buffer<float> out(fwd[0]);
    Buffer<uint8_t> bits(fwd[1]);
    // Bit x % 8 of byte x / 8 is output > 0 (bias_add >= 0, and ties are
    // measure zero); the padding bits repeat the last point.
    int positive = 0;
    for (int j = 0; j < Gemm::M; j++)
        for (int i = 0; i < bytes * 8; i++) {
            int at = std::min(i, Gemm::N - 1);
            bool bit = (bits(i / 8, j) >> (i % 8)) & 1;
            CHECK(bit == (out(at, j) > 0));
            positive += i < Gemm::N && bit;
        }
    CHECK(positive > 0);
    CHECK(positive < Gemm::N * Gemm::M);  // both branches of the ReLU are taken

    g.bias_add.saved_buffer().set(bits);
    std::string stmt = Pipeline(g.adjoints()).lowered_stmt();
    CHECK(stmt.find("matmul") == std::string::npos);
    CHECK(stmt.find("bias_add_bits") != std::string::npos);
    require_equal(g.backward(), recomputed);
}

TEST_CASE("saved_buffers sizes each residual for whoever runs the forward pass", "[autodiff][residuals]") {
    Gemm g;
    // Nothing saved: no buffers.
    CHECK(saved_buffers({g.output}, g.adjoints(), {{"output", {Gemm::N, Gemm::M}}}).empty());

    // Bits: the forward output's size, dimension 0 in bytes of 8 points; in
    // the order of forward_with_residuals()'s outputs after the forward one.
    g.bias_add.save(Residual::Bits);
    std::vector<SavedBuffer> bits = saved_buffers({g.output}, g.adjoints(), {{"output", {Gemm::N, Gemm::M}}});
    REQUIRE(bits.size() == 1);
    CHECK(bits[0].func == "bias_add");
    CHECK(bits[0].buffer.name() == "bias_add_bits");
    CHECK(bits[0].buffer.type() == UInt(8));
    CHECK(bits[0].extents == std::vector<int>{(Gemm::N + 7) / 8, Gemm::M});
    CHECK(!bits[0].forward_output);
    CHECK(forward_with_residuals({g.output}, g.adjoints()).outputs()[1].name() == bits[0].buffer.name());

    // No forward output's size given: the box the backward pass reads of it
    // at its outputs' (and inputs') sizes.
    g.bias_add.save();
    std::vector<Func> adjoints = g.adjoints();
    std::vector<SavedBuffer> whole = saved_buffers({g.output}, adjoints,
                                                   {{adjoints[0].name(), {Gemm::K, Gemm::M}},
                                                    {adjoints[1].name(), {Gemm::N, Gemm::K}},
                                                    {adjoints[2].name(), {Gemm::N}},
                                                    {"d_output", {Gemm::N, Gemm::M}}});
    REQUIRE(whole.size() == 1);
    CHECK(whole[0].buffer.name() == "bias_add");
    CHECK(whole[0].extents == std::vector<int>{Gemm::N, Gemm::M});
}

TEST_CASE("saved_buffers sizes a residual by what the backward pass reads, not by the output",
          "[autodiff][residuals]") {
    // tr is the transpose of the input, H x W where the output is W x H:
    // the forward output's size would be the wrong one.
    const int W = 5, H = 3;
    ImageParam in(Float(32), 2, "in"), d(Float(32), 2, "d");
    Func tr("tr"), out("out");
    tr(x, y) = in(y, x) + 1.0f;
    out(x, y) = tr(y, x) * tr(y, x);
    tr.compute_root();
    Derivative grad = propagate_adjoints(out, d);
    Func d_in = grad(in);
    tr.save();
    std::vector<SavedBuffer> saved =
        saved_buffers({out}, {d_in}, {{"out", {W, H}}, {"d", {W, H}}, {"in", {W, H}}, {d_in.name(), {W, H}}});
    REQUIRE(saved.size() == 1);
    CHECK(saved[0].buffer.name() == "tr");
    CHECK(saved[0].extents == std::vector<int>{H, W});
    // Without the backward outputs' sizes, the guess.
    CHECK(saved_buffers({out}, {d_in}, {{"out", {W, H}}})[0].extents == std::vector<int>{W, H});
}

TEST_CASE("saved_buffers gives a saved forward output its own buffer", "[autodiff][residuals]") {
    // exp's derivative reads its value: the output, which the forward pass
    // writes anyway.
    ImageParam in(Float(32), 1, "in"), d(Float(32), 1, "d");
    Func out("out");
    out(x) = exp(in(x));
    Derivative grad = propagate_adjoints(out, d);
    Func d_in = grad(in);
    out.save();
    std::vector<SavedBuffer> saved = saved_buffers({out}, {d_in}, {{"out", {8}}});
    REQUIRE(saved.size() == 1);
    CHECK(saved[0].func == "out");
    CHECK(saved[0].forward_output);
    CHECK(saved[0].extents == std::vector<int>{8});
    CHECK(forward_with_residuals({out}, {d_in}).outputs().size() == 1);
}

TEST_CASE("A saved Func that the pipeline outputs is computed, not read", "[autodiff][residuals]") {
    Gemm g;
    g.bias_add.save();
    Buffer<float> want = g.bias_add.realize({Gemm::N, Gemm::M});  // an output: computed
    g.bias_add.save(Residual::None);
    Buffer<float> again = g.bias_add.realize({Gemm::N, Gemm::M});
    require_equal({want}, {again});
}

TEST_CASE("save(bits) of a Func read by value is an error naming it", "[autodiff][residuals][errors]") {
    ImageParam in(Float(32), 1, "in"), d(Float(32), 1, "d");
    Func sq("sq"), out("out");
    sq(x) = in(x) * in(x);
    out(x) = sq(x) * 3.0f + sin(sq(x));  // the backward pass reads cos(sq(x))
    Derivative grad = propagate_adjoints(out, d);
    sq.save(Residual::Bits);
    Func din = grad(in);
    CHECK_THROWS_WITH(din.lowered_stmt(), Catch::Contains("Func sq is saved as bits (save(bits)), but") &&
                                              Catch::Contains("reads its value") && Catch::Contains("save() it whole"));
    sq.save();
    CHECK_NOTHROW(din.lowered_stmt());
}

TEST_CASE("save() of a Tuple is an error naming the Func", "[autodiff][residuals][errors]") {
    Func t("t");
    t(x) = Tuple(x, x + 1);
    CHECK_THROWS_WITH(t.save(), Catch::Contains("Func t: save(): it has 2 values (a Tuple)"));
    Func s("s");
    s(x) = x;
    CHECK_THROWS_WITH(s.saved_buffer(), Catch::Contains("s is not saved; call s.save() first"));
}

TEST_CASE("choose_saves keeps the ReLU's bit and drops the product from the backward pass",
          "[autodiff][residuals][autoschedule]") {
    Gemm g;
    // The cost model at the sizes of a 256^3 product; the test then runs the small one.
    std::map<std::string, std::vector<int>> sizes = {{"output", {256, 256}},   {"A", {256, 256}},
                                                     {"B", {256, 256}},        {"bias", {256}},
                                                     {"d_output", {256, 256}}, {"A_adjoint", {256, 256}},
                                                     {"B_adjoint", {256, 256}}, {"bias_adjoint", {256}}};
    {  // Like autoschedule(), choose_saves() takes Funcs not scheduled yet: a pipeline of its own.
        Gemm h;
        SaveChoices tight = choose_saves(Pipeline(h.adjoints()), {h.output}, Target::host(), sizes, 1024,
                                         AutoscheduleOptions::reproducible());
        CHECK(tight.bytes == 0);
        CHECK_THROWS(h.bias_add.saved_buffer());  // not saved
        CHECK_THAT(tight.explanation,
                   Catch::Contains("bias_add: recompute -- saving it (8.0 KiB) would exceed the budget"));
    }
    Pipeline backward(g.adjoints());

    // A budget of schedules, not of time: the same choice on a loaded machine.
    SaveChoices c = choose_saves(backward, {g.output}, Target::host(), sizes, 0, AutoscheduleOptions::reproducible());
    INFO(c.explanation);
    REQUIRE(!c.decisions.empty());
    CHECK(c.decisions[0].func == "bias_add");
    CHECK(c.decisions[0].how == Residual::Bits);
    CHECK(c.decisions[0].bytes == 256 * 256 / 8);
    CHECK(c.predicted.total() < c.recompute_all.total());
    CHECK(g.bias_add.saved_buffer().name() == "bias_add_bits");
    CHECK_THAT(c.schedule_text(), Catch::Contains("bias_add: save(bits)"));
    CHECK_THAT(c.explanation, Catch::Contains("matmul: recompute -- the backward pass no longer computes it"));

    // tests/generator/test_gradients.cpp runs such a choice (gemm_relu_grad_auto).
}

TEST_CASE("choose_saves takes a lower-precision copy only where the caller allows it",
          "[autodiff][residuals][autoschedule]") {
    // e is costly to recompute (three transcendentals a point, which its
    // gradient, stopped, does not need) and read by value (no comparison:
    // no bits): saved, whole by default, a float16
    // copy when allowed (half the bytes to write and to read); a budget
    // that only the copy fits leaves the copy to the default only. The
    // default machine (16 MiB of L3, not this host's caches), 16 MiB planes.
    const int W = 2048, H = 2048;
    AutoscheduleOptions options = AutoscheduleOptions::reproducible();
    options.machine = MachineModel();
    struct Chain {
        ImageParam in{Float(32), 2, "in"}, d{Float(32), 2, "d"};
        Func e{"e"}, out{"out"};
        Func d_in;
        Chain() {
            e(x, y) = stop_gradient(exp(sin(in(x, y)) * tanh(in(x, y))));
            out(x, y) = e(x, y) * in(x, y);
            d_in = propagate_adjoints(out, d)(in);
        }
    };
    std::map<std::string, std::vector<int>> sizes = {{"out", {W, H}}, {"in", {W, H}}, {"d", {W, H}}};
    auto choose = [&](int64_t budget, Residual narrow) {
        Chain c;
        sizes[c.d_in.name()] = {W, H};
        SaveChoices r = choose_saves(Pipeline(c.d_in), {c.out}, Target::host(), sizes, budget, options, narrow);
        for (const SaveDecision &s : r.decisions)
            if (s.func == "e") return std::make_pair(s, r.explanation);
        FAIL("no decision for e:\n" << r.explanation);
        return std::make_pair(SaveDecision(), r.explanation);
    };
    auto [whole, why_whole] = choose(0, Residual::None);
    INFO(why_whole);
    REQUIRE(whole.how == Residual::Whole);
    CHECK(whole.bytes == int64_t(W) * H * 4);
    auto [copy, why_copy] = choose(0, Residual::Float16);
    INFO(why_copy);
    CHECK(copy.how == Residual::Float16);
    CHECK(copy.bytes == int64_t(W) * H * 2);
    CHECK(copy.saved.total() + copy.write_ns < whole.saved.total() + whole.write_ns);
    CHECK_THAT(why_copy, Catch::Contains("float16 copies allowed") && Catch::Contains("e: save(float16)"));
    // A budget of the copy's bytes: whole does not fit, the copy does.
    auto [tight, why_tight] = choose(int64_t(W) * H * 2, Residual::BFloat16);
    INFO(why_tight);
    CHECK(tight.how == Residual::BFloat16);
    CHECK(choose(int64_t(W) * H * 2, Residual::None).first.how == Residual::None);
    CHECK_THROWS_WITH(choose(0, Residual::Bits),
                      Catch::Contains("choose_saves: the lower-precision copy allowed must be float16 or bfloat16"));
}

TEST_CASE("choose_saves sizes a residual by the region the backward pass reads of it", "[autodiff][residuals][autoschedule]") {
    // No forward Func's size given: the bits of bias_add are the box the
    // backward pass reads of them (13 columns in 2 bytes, 7 rows), not a
    // residual of no size that any budget admits and the forward pass writes
    // for free.
    Gemm g;
    std::map<std::string, std::vector<int>> sizes = {{"A_adjoint", {Gemm::K, Gemm::M}},
                                                     {"B_adjoint", {Gemm::N, Gemm::K}},
                                                     {"bias_adjoint", {Gemm::N}},
                                                     {"d_output", {Gemm::N, Gemm::M}}};
    SaveChoices c = choose_saves(Pipeline(g.adjoints()), {g.output}, Target::host(), sizes, 0,
                                 AutoscheduleOptions::reproducible());
    INFO(c.explanation);
    REQUIRE(!c.decisions.empty());
    CHECK(c.decisions[0].func == "bias_add");
    REQUIRE(c.decisions[0].how == Residual::Bits);
    CHECK(c.decisions[0].bytes == 2 * Gemm::M);
    CHECK(c.bytes == 2 * Gemm::M);
    CHECK(c.decisions[0].write_ns > 0);
}

TEST_CASE("choose_saves applies its last round's search again, as searching again would choose",
          "[autodiff][residuals][autoschedule]") {
    std::map<std::string, std::vector<int>> sizes = {{"output", {256, 256}},   {"A", {256, 256}},
                                                     {"B", {256, 256}},        {"bias", {256}},
                                                     {"d_output", {256, 256}}, {"A_adjoint", {256, 256}},
                                                     {"B_adjoint", {256, 256}}, {"bias_adjoint", {256}}};
    Gemm g;
    SaveChoices c = choose_saves(Pipeline(g.adjoints()), {g.output}, Target::host(), sizes, 0,
                                 AutoscheduleOptions::reproducible());
    INFO(c.explanation);
    REQUIRE(!c.decisions.empty());
    REQUIRE(c.decisions[0].how == Residual::Bits);
    // Rounds: recompute everything, bias_add saved (chosen), then nothing
    // left that it still computes; the final schedule is round one's.
    CHECK_THAT(c.explanation, Catch::Contains("1 search with the same saves applied again"));

    // The same saves searched afresh, on Funcs of their own.
    Gemm h;
    h.bias_add.save(Residual::Bits);
    std::map<std::string, std::vector<int>> with_bits = sizes;
    with_bits["bias_add_bits"] = {256 / 8, 256};  // dimension 0 in bytes of 8 points
    AutoscheduleResult fresh =
        autoschedule(Pipeline(h.adjoints()), Target::host(), with_bits, AutoscheduleOptions::reproducible());
    CHECK(fresh.schedule_text == c.backward.schedule_text);
    CHECK(fresh.predicted.total() == c.predicted.total());
    CHECK(fresh.states_evaluated == c.backward.states_evaluated);
    // And the schedule applied to g's Funcs is the one applied to h's.
    CHECK(Pipeline(g.adjoints()).lowered_stmt() == Pipeline(h.adjoints()).lowered_stmt());
}
