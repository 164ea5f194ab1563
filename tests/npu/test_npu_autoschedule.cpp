// The autoscheduler on the tile-NPU target (docs/autoschedule.md, "The NPU
// search"): its schedules compile, run on the simulator with the host's
// results, take no more cycles than the hand schedules, and its cost model
// (the simulator's timing rules on the instruction stream, without
// executing) predicts the simulated cycles.
#include <catch2/catch.hpp>

#include <cstdio>
#include <cstdlib>
#include <fstream>

#include "analysis/ConcreteSizes.h"
#include "autoschedule/NpuCost.h"
#include "lower/RealizationOrder.h"
#include "npu_machine.h"
#include "npu_pipelines.h"

using namespace npu_pipelines;

namespace {

std::map<std::string, int64_t> sizes_of(const Func &out) {
    std::vector<std::shared_ptr<internal::FunctionContents>> outs{out.contents()};
    return internal::concrete_sizes(outs, {{out.name(), {W, H}}}, "test").values;
}

double predicted(const Func &out) {
    return internal::npu_predict({out.contents()}, Target("npu"), sizes_of(out)).cycles;
}

}  // namespace

TEST_CASE("npu autoschedule: softmax in row tiles, double-buffered across cores, the host's results",
          "[npu][autoschedule]") {
    Buffer<float, 2> in = make_input(), host(W, H), npu(W, H);
    Softmax hand;
    hand.fused(8, true);  // schedules/softmax/npu.sched, one core
    hand.input.set(in);
    hand.output.realize(host);
    json rh = run_npu(Pipeline(hand.output), in, npu, "softmax_hand");

    Softmax s;
    AutoscheduleResult a =
        autoschedule(Pipeline(s.output), Target("npu"), {{"output", {W, H}}}, AutoscheduleOptions::reproducible());
    INFO(a.explanation);
    CHECK_THAT(a.schedule_text, Catch::Contains("output: bound(x, 0, 1024) split(y, yo, yi, ") &&
                                    Catch::Contains("double_buffer() parallel(yo)") &&
                                    Catch::Contains("row_max: compute_at(output, yo) double_buffer()"));
    CHECK_THAT(a.explanation, Catch::Contains("machine: NPU kiln-npu-default, 8 cores, UB 192.0 KiB") &&
                                  Catch::Contains("shown as ns (1 cycle = 1 ns)"));
    json r = run_npu(Pipeline(s.output), in, npu, "softmax_auto");
    check_same(host, npu);
    CHECK(r["race_count"] == 0);
    // The cost model runs the simulator's timing on the instruction stream: the same cycles.
    CHECK(a.predicted.total() == Approx(r["cycles"].get<double>()).epsilon(0.001));
    // 8 cores against the hand schedule's one, bound by the GM bandwidth
    // they share: 1 MiB of traffic over 256 B/cycle is 4096 cycles.
    CHECK(r["cycles"].get<double>() >= 4096);
    CHECK(r["cycles"].get<double>() * 3.5 < rh["cycles"].get<double>());
}

TEST_CASE("npu autoschedule: on a machine of one core, as fast as the hand schedule", "[npu][autoschedule]") {
    OneCoreMachine machine;
    Buffer<float, 2> in = make_input(), npu(W, H);
    Softmax hand, s;
    hand.fused(8, true);  // schedules/softmax/npu.sched
    json rh = run_npu(Pipeline(hand.output), in, npu, "softmax_hand_one_core");
    AutoscheduleResult a =
        autoschedule(Pipeline(s.output), Target("npu"), {{"output", {W, H}}}, AutoscheduleOptions::reproducible());
    json r = run_npu(Pipeline(s.output), in, npu, "softmax_auto_one_core");
    INFO(a.explanation);
    CHECK(r["cores"] == 1);
    CHECK(a.predicted.total() == Approx(r["cycles"].get<double>()).epsilon(0.02));
    CHECK(r["cycles"].get<double>() <= 1.02 * rh["cycles"].get<double>());
}

TEST_CASE("npu autoschedule: the softplus chain in 2-D tiles, and layernorm, compute what the host does",
          "[npu][autoschedule]") {
    Buffer<float, 2> in = make_input(), host(W, H), npu(W, H);
    {
        Chain ref, c;
        ref.input.set(in);
        ref.output.realize(host);
        AutoscheduleResult a =
        autoschedule(Pipeline(c.output), Target("npu"), {{"output", {W, H}}}, AutoscheduleOptions::reproducible());
        INFO(a.explanation);
        CHECK_THAT(a.schedule_text, Catch::Contains("output: tile(x, y, xo, yo, xi, yi, "));
        json r = run_npu(Pipeline(c.output), in, npu, "chain_auto");
        check_same(host, npu);
        CHECK(a.predicted.total() == Approx(r["cycles"].get<double>()).epsilon(0.001));
    }
    Buffer<float, 1> gamma = make_row(0.5f, 1.0f), beta = make_row(0.25f, 0.0f);
    LayerNorm ref, l;
    ref.input.set(in);
    ref.gamma.set(gamma);
    ref.beta.set(beta);
    ref.output.realize(host);
    AutoscheduleResult a =
        autoschedule(Pipeline(l.output), Target("npu"), {{"output", {W, H}}}, AutoscheduleOptions::reproducible());
    INFO(a.explanation);
    Buffer<float, 2> out(W, H);
    json r = run_npu_args(Pipeline(l.output), {{"input", in}, {"gamma", gamma}, {"beta", beta}, {"output", out}},
                          "layernorm_auto");
    check_same(host, out);
    CHECK(r["race_count"] == 0);
    CHECK(a.predicted.total() == Approx(r["cycles"].get<double>()).epsilon(0.001));
}

TEST_CASE("npu cost model: trips past the cap are extrapolated within 2% of the simulator",
          "[npu][autoschedule]") {
    Buffer<float, 2> in = make_input(), npu(W, H);
    for (int rows : {2, 4}) {
        for (bool db : {false, true}) {
            Softmax s;
            s.fused(rows, db);  // one core: H / rows = 64 or 32 trips, the model runs 8 and 4
            json r = run_npu(Pipeline(s.output), in, npu, "softmax_rows" + std::to_string(rows) + (db ? "_db" : ""));
            INFO(rows << " rows, double buffer " << db);
            CHECK(predicted(s.output) == Approx(r["cycles"].get<double>()).epsilon(0.02));
        }
    }
    // Two nests of 16 and 64 trips (exps through GM, then the output): unrolled whole, the simulated cycles.
    Softmax u;
    u.output.bound(u.x, 0, W).split(u.y, u.yo, u.yi, 2);
    u.exps.compute_root().bound(u.x, 0, W).split(u.y, u.yo, u.yi, 8);
    u.row_max.compute_at(u.exps, u.yo);
    u.row_sum.compute_at(u.output, u.yo);
    json r = run_npu(Pipeline(u.output), in, npu, "softmax_two_nests");
    CHECK(predicted(u.output) == Approx(r["cycles"].get<double>()).epsilon(0.001));
}

TEST_CASE("npu autoschedule: autotune simulates the best candidates and keeps the fewest cycles",
          "[npu][autoschedule]") {
    Softmax s;
    AutoscheduleOptions o = AutoscheduleOptions::reproducible();
    o.autotune = 3;
    AutoscheduleResult a = autoschedule(Pipeline(s.output), Target("npu"), {{"output", {W, H}}}, o);
    INFO(a.explanation);
    REQUIRE(a.autotuned.size() == 3);
    size_t fewest = 0;
    for (size_t i = 0; i < a.autotuned.size(); i++) {
        REQUIRE(a.autotuned[i].error.empty());
        // ms at a nominal 1 GHz: cycles / 1e6, as the model predicted them.
        CHECK(a.autotuned[i].measured_ms * 1e6 == Approx(a.autotuned[i].predicted.total()).epsilon(0.001));
        if (a.autotuned[i].measured_ms < a.autotuned[fewest].measured_ms) fewest = i;
    }
    CHECK(a.autotune_chosen == (int)fewest);
    CHECK_THAT(a.explanation, Catch::Contains("autotune: ran the 3 best candidates"));
}

TEST_CASE("npu autoschedule: a pipeline no tile shape fits is an error naming the reason", "[npu][autoschedule][error]") {
    ImageParam rgb(Float(32), 3, "rgb");
    Var x("x"), y("y"), c("c");
    Func output("output");
    output(x, y) = rgb(y, x, 0) * 2.0f;  // a transposed window: no tile reads it
    CHECK_THROWS_WITH(autoschedule(Pipeline(output), Target("npu"), {{"output", {256, 256}}}),
                      Catch::Contains("autoschedule: no schedule of output that the search tries compiles for the NPU: "
                                      "no tile shape of the output compiles for the NPU (first: ") &&
                          Catch::Contains("a tile instruction reads a window that moves with the tile") &&
                          Catch::Contains("Write a schedule by hand"));
    Func three("three");
    three(x, y, c) = rgb(x, y, c) + 1.0f;
    CHECK_THROWS_WITH(autoschedule(Pipeline(three), Target("npu"), {{"three", {64, 64, 3}}}),
                      Catch::Contains("the NPU search tiles one 2-D output without updates, but its output three is "
                                      "not 2-D"));
}

TEST_CASE("npu cost model: a stencil's halo load and its TEXTRACTs cost what the simulator counts",
          "[npu][autoschedule][stencil]") {
    Buffer<float, 2> in = make_input(), npu(W, H);
    ImageParam input(Float(32), 2, "input");
    Var x("x"), y("y"), xo("xo"), yo("yo"), xi("xi"), yi("yi");
    Func clamped = BoundaryConditions::repeat_edge(input);
    Func blur_x("blur_x"), output("output");
    blur_x(x, y) = (clamped(x - 1, y) + clamped(x, y) + clamped(x + 1, y)) / 3;
    output(x, y) = (blur_x(x, y - 1) + blur_x(x, y) + blur_x(x, y + 1)) / 3;
    output.tile(x, y, xo, yo, xi, yi, 64, 32).double_buffer();
    blur_x.compute_at(output, xo).double_buffer();
    json r = run_npu(Pipeline(output), in, npu, "blur_cost");
    REQUIRE(r["instructions_by_op"]["TEXTRACT"] == 2 * (W / 64) * (H / 32));
    CHECK(predicted(output) == Approx(r["cycles"].get<double>()).epsilon(0.02));
}

TEST_CASE("npu cost model: a software-pipelined loop costs what the simulator counts", "[npu][autoschedule][software_pipeline]") {
    using A = Attention;
    Buffer<float, 2> q(A::D, A::S), k(A::D, A::S), v(A::D, A::S), npu(A::D, A::S);
    for (int rows : {16, 32}) {
        for (bool pipeline : {false, true}) {
            Attention a;
            a.npu(rows, true, pipeline);  // one core: 8 or 4 tiles, one trip more pipelined
            const std::string fn = "attention_cost" + std::to_string(rows) + (pipeline ? "_sp" : "");
            json r = run_npu_args(Pipeline(a.output), {{"Q", q}, {"K", k}, {"V", v}, {"output", npu}}, fn);
            std::vector<std::shared_ptr<internal::FunctionContents>> outs{a.output.contents()};
            const double model =
                internal::npu_predict(outs, Target("npu"),
                                      internal::concrete_sizes(outs, {{"output", {A::D, A::S}}}, "test").values)
                    .cycles;
            INFO(rows << " rows, pipelined " << pipeline << ": simulated " << r["cycles"] << ", predicted " << model);
            CHECK(model == Approx(r["cycles"].get<double>()).epsilon(0.02));
        }
    }
}

TEST_CASE("npu autoschedule: software_pipeline() where the model predicts fewer cycles, with its reason",
          "[npu][autoschedule][software_pipeline]") {
    using A = Attention;
    constexpr int queries = 1024;
    Buffer<float, 2> q(A::D, queries), k(A::D, A::S), v(A::D, A::S), host(A::D, queries), npu(A::D, queries);
    A::fill(q, k, v);
    Attention a;
    AutoscheduleResult s = autoschedule(Pipeline(a.output), Target("npu"),
                                        {{"output", {A::D, queries}}, {"Q", {A::D, queries}}, {"K", {A::D, A::S}},
                                         {"V", {A::D, A::S}}},
                                        AutoscheduleOptions::reproducible());
    INFO(s.schedule_text << "\n" << s.explanation);
    // Two-pass attention's tile loop rotated at weighted (as schedules/attention/npu.sched does by hand):
    // tile i + 1's S and softmax before tile i's P V and division.
    CHECK_THAT(s.schedule_text, Catch::Contains("# output: software_pipeline() on weighted; predicted ") &&
                                    Catch::Contains("weighted: compute_at(output, io) store_in(L0C) double_buffer() "
                                                    "software_pipeline()\n"));
    const AutoscheduleDecision *d = nullptr;
    for (const AutoscheduleDecision &x : s.decisions)
        if (x.chosen == "software_pipeline() on weighted") d = &x;
    REQUIRE(d);
    double chosen = 0, plain = 0;
    for (const AutoscheduleAlternative &alt : d->alternatives) {
        if (alt.option == d->chosen) chosen = alt.cost.total();
        if (alt.option == "not pipelined") plain = alt.cost.total();
    }
    CHECK(plain > chosen);
    CHECK(chosen > 0);
    a.Q.set(q);
    a.K.set(k);
    a.V.set(v);
    a.output.realize(host);
    json r = run_npu_args(Pipeline(a.output), {{"Q", q}, {"K", k}, {"V", v}, {"output", npu}}, "attention_auto_sp");
    CHECK(r["race_count"] == 0);
    int bad = 0;
    for (int t = 0; t < queries; t++)
        for (int f = 0; f < A::D; f++) bad += host(f, t) != npu(f, t);
    CHECK(bad == 0);
    CHECK(s.predicted.total() == Approx(r["cycles"].get<double>()).epsilon(0.001));

    // Softmax's stage after any split waits on nothing long, while the next row tile's first stage waits for
    // its own load: the search leaves the loop as written and says why.
    Softmax m;
    AutoscheduleResult sm = autoschedule(Pipeline(m.output), Target("npu"), {{"output", {W, H}}},
                                         AutoscheduleOptions::reproducible());
    INFO(sm.schedule_text);
    CHECK_THAT(sm.schedule_text, Catch::Contains("# output: not pipelined; predicted ") &&
                                     Catch::Contains("next best software_pipeline() on "));
    CHECK_THAT(sm.schedule_text, !Catch::Contains("double_buffer() software_pipeline()"));
}
