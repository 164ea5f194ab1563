// Auto-scheduled pipelines compute what the same pipelines compute under
// the default schedule, bit for bit, on sizes that are not multiples of any
// tile or vector (kiln/Autoschedule.h).
#include "attention_fixture.h"
#include "channels_fixture.h"
#include "check.h"
#include "column_max_fixture.h"
#include "grid_fixture.h"
#include "iir_fixture.h"
#include "relu_product_fixture.h"

using namespace kiln;
using namespace kt;

namespace {

// Realizes out twice into buffers like `like`: with every Func inlined (with
// `unfused`, every Func but the output at the root instead: the default
// computes a Func with updates at each use, which recomputes a recursive
// filter's whole column per point), then auto-scheduled for these sizes;
// returns the number of differing points. `text` (if given) gets the
// schedule chosen; `machine` (if given) is the cost model's machine instead
// of this one's.
template<typename MakeOutput>
int auto_vs_default(MakeOutput make, const Buffer<float> &like, std::string *text = nullptr, bool unfused = false,
                    const MachineModel *machine = nullptr) {
    Func plain = make(), scheduled = make();
    Buffer<float> want = like.copy(), got = like.copy();
    if (unfused)
        for (auto &[name, f] : Pipeline(plain).functions())
            if (name != plain.name()) f.compute_root();
    Pipeline(plain).realize(want);
    std::vector<int> size;
    for (int d = 0; d < like.dimensions(); d++) size.push_back(like.dim(d).extent());
    AutoscheduleOptions o;
    o.time_limit_ms = 60000;  // every option evaluated, however busy the machine
    if (machine) o.machine = *machine;
    AutoscheduleResult r = autoschedule(Pipeline(scheduled), Target::host(), {{scheduled.name(), size}}, o);
    INFO(r.schedule_text);
    // Every option evaluated; what may be noted is only that a float sum
    // stays serial under the host target's exact float semantics.
    for (const std::string &why : r.skipped) CHECK(why.find("add fast_math to the target") != std::string::npos);
    if (text) *text = r.schedule_text;
    Pipeline(scheduled).realize(got);
    int bad = 0;
    got.for_each_element([&](const int *p) { bad += !(got(p) == want(p)); });
    return bad;
}

}  // namespace

TEST_CASE("autoschedule: a blur chain agrees with the default schedule", "[autoschedule]") {
    Buffer<float> input = random_image<float>(517, 101, 0, 0, -100, 100);
    auto make = [&] {
        ImageParam in(Float(32), 2, "in");
        in.set(input);
        Var x("x"), y("y");
        Func clamped = BoundaryConditions::repeat_edge(in);
        Func gray("gray"), bx("bx"), by("by");
        gray(x, y) = clamped(x, y) * 0.5f + 0.25f;
        bx(x, y) = gray(x - 2, y) + gray(x, y) + gray(x + 2, y);
        by(x, y) = bx(x, y - 1) + bx(x, y) * 2 + bx(x, y + 1);
        return by;
    };
    Buffer<float> out(517, 101);
    out.set_min(3, -5);
    CHECK(auto_vs_default(make, out) == 0);
}

TEST_CASE("autoschedule: a row reduction and its consumer agree with the default schedule", "[autoschedule]") {
    Buffer<float> input = random_image<float>(300, 77, 0, 0, -4, 4);
    auto make = [&] {
        ImageParam in(Float(32), 2, "in");
        in.set(input);
        Var x("x"), y("y");
        RDom r(0, 300, "r");
        Func row_max("row_max"), e("e"), row_sum("row_sum"), out("out");
        row_max(y) = -1e30f;
        row_max(y) = max(row_max(y), in(r, y));
        e(x, y) = exp(in(x, y) - row_max(y));
        row_sum(y) = 0.0f;
        row_sum(y) += e(r, y);
        out(x, y) = e(x, y) / row_sum(y);
        return out;
    };
    CHECK(auto_vs_default(make, Buffer<float>(300, 77)) == 0);
}

TEST_CASE("autoschedule: a 1-D pipeline with a histogram-like update agrees", "[autoschedule]") {
    Buffer<float> input(10000);
    for (int i = 0; i < 10000; i++) input(i) = (float)noise(i, 0, -50, 50);
    auto make = [&] {
        ImageParam in(Float(32), 1, "in");
        in.set(input);
        Var x("x");
        Func sq("sq"), acc("acc"), out("out");
        sq(x) = in(x) * in(x);
        acc(x) = 0.0f;
        RDom r(0, 3, "r");
        acc(x) += sq(clamp(x + r - 1, 0, 9999));
        out(x) = acc(x) + sq(x);
        return out;
    };
    Buffer<float> out(9973);
    CHECK(auto_vs_default(make, out) == 0);
}

TEST_CASE("autoschedule: a matrix product in register blocks agrees with the default schedule", "[autoschedule]") {
    Buffer<float> a = random_image<float>(29, 37, 0, 0, -8, 8), b = random_image<float>(61, 29, 0, 0, -8, 8, 2);
    auto make = [&] {
        ImageParam A(Float(32), 2, "A"), B(Float(32), 2, "B");
        A.set(a);
        B.set(b);
        Var x("x"), y("y");
        RDom k(0, 29, "k");
        Func matmul("matmul"), out("out");
        matmul(x, y) = 0.0f;
        matmul(x, y) += A(k, y) * B(x, k);
        out(x, y) = matmul(x, y) * 0.5f;
        return out;
    };
    CHECK(auto_vs_default(make, Buffer<float>(61, 37)) == 0);
}

TEST_CASE("autoschedule: a product with its operand packed per column panel agrees with the default schedule",
          "[autoschedule]") {
    // B's rows 1024 floats (4 KiB) apart: a pass of k (601 iterations of
    // 2 vectors) does not stay in the few sets of L1 and L2 it reaches, and
    // 13 row blocks read each panel, so B is packed.
    const int n = 1024, m = 149, k = 601;
    Buffer<float> a = random_image<float>(k, m, 0, 0, -8, 8), b = random_image<float>(n, k, 0, 0, -8, 8, 2);
    auto make = [&] {
        ReluProductFixture p(k);
        p.A.set(a);
        p.B.set(b);
        return p.out;
    };
    std::string text;
    CHECK(auto_vs_default(make, Buffer<float>(n, m), &text) == 0);
    INFO(text);
    CHECK(text.find("B.in(matmul): compute_at(out, xo)") != std::string::npos);
}

TEST_CASE("autoschedule: attention's products in register blocks of a wrapper agree with the default schedule",
          "[autoschedule]") {
    // Sizes that are no multiple of a block: 45 keys, 35 features, 29 queries.
    Buffer<float> q = random_image<float>(13, 29, 0, 0, -1, 1), k = random_image<float>(13, 45, 0, 0, -1, 1, 2),
                  v = random_image<float>(35, 45, 0, 0, -1, 1, 3);
    std::string text;
    auto make = [&] {
        AttentionFixture at(13, 45);
        at.Q.set(q);
        at.K.set(k);
        at.V.set(v);
        return at.out;
    };
    CHECK(auto_vs_default(make, Buffer<float>(35, 29), &text) == 0);
    CHECK(text.find("scores.in():") != std::string::npos);  // the case under test
}

TEST_CASE("autoschedule: a histogram's serial update with its channels unrolled agrees with the default schedule",
          "[autoschedule]") {
    Buffer<float> in = random_image<float>(203, 150, 0, 0, -1, 2);
    std::string text;
    auto make = [&] {
        GridFixture g;
        g.input.set(in);
        return g.out;
    };
    CHECK(auto_vs_default(make, Buffer<float>(26, 19), &text) == 0);
    CHECK(text.find("histogram.update(0): reorder(c, r.x, r.y, x, y) unroll(c, 2, GuardWithIf)") != std::string::npos);
}

TEST_CASE("autoschedule: a histogram per channel of its input, its channels unrolled, agrees with the default schedule",
          "[autoschedule]") {
    // The channels follow the output's (3 at these sizes, not a constant of
    // the algorithm): unroll(c) alone would not lower; unroll(c, 3,
    // GuardWithIf) does, at any number of channels.
    Buffer<float> in(203, 150, 3);
    in.for_each_element([&](const int *p) { in(p) = (float)noise(p[0] + 211 * p[2], p[1], -1, 2, 1); });
    std::string text;
    auto make = [&] {
        ImageParam input(Float(32), 3, "in");
        input.set(in);
        Var x("x"), y("y"), z("z"), c("c");
        Func clamped = BoundaryConditions::repeat_edge(input);
        Func histogram("histogram"), out("out");
        RDom r(0, 8, 0, 8, "r");
        Expr v = clamp(clamped(x * 8 + r.x, y * 8 + r.y, c), 0.0f, 1.0f);
        histogram(x, y, z, c) = 0.0f;
        histogram(x, y, cast<int>(v * 10.0f + 0.5f), c) += v;
        out(x, y, c) = histogram(x, y, 3, c) + histogram(x, y, 4, c) * 2.0f;
        return out;
    };
    CHECK(auto_vs_default(make, Buffer<float>(26, 19, 3), &text) == 0);
    CHECK(text.find("unroll(c, 3, GuardWithIf)") != std::string::npos);  // the case under test
}

TEST_CASE("autoschedule: autotune runs its candidates and the one kept agrees with the default schedule",
          "[autoschedule][autotune]") {
    // No boundary condition: the candidates read the input past the output's
    // sizes, so the random inputs autotune makes must cover more.
    Buffer<uint8_t> input = random_image<uint8_t>(203, 67, -1, -1, 0, 255);
    Param<float> gain("gain", 0.5f);
    auto make = [&](ImageParam &in) {
        in.set(input);
        Var x("x"), y("y");
        Func bx("bx"), by("by");
        bx(x, y) = cast<float>(in(x - 1, y)) + in(x, y) + in(x + 1, y);
        by(x, y) = (bx(x, y - 1) + bx(x, y) + bx(x, y + 1)) * gain;
        return by;
    };
    ImageParam in_plain(UInt(8), 2, "in"), in_tuned(UInt(8), 2, "in");
    Func plain = make(in_plain), tuned = make(in_tuned);
    Buffer<float> want(201, 65), got(201, 65);
    Pipeline(plain).realize(want);
    AutoscheduleOptions o;
    o.time_limit_ms = 60000;
    o.autotune = 3;
    AutoscheduleResult r = autoschedule(Pipeline(tuned), Target::host(), {{"by", {201, 65}}}, o);
    INFO(r.explanation);
    REQUIRE(r.autotuned.size() == 3);
    for (const AutotuneCandidate &c : r.autotuned) {
        CHECK(c.error == "");
        CHECK(c.measured_ms >= 0);
    }
    CHECK(r.schedule == ScheduleFile::parse(r.autotuned[r.autotune_chosen].schedule));
    // The input bound before autotuning is bound again: the kernel reads it.
    Pipeline(tuned).realize(got);
    int bad = 0;
    got.for_each_element([&](const int *p) { bad += !(got(p) == want(p)); });
    CHECK(bad == 0);
}

TEST_CASE("autoschedule: an output read by another output is computed in that output's row loop",
          "[autoschedule][outputs]") {
    // mean(y), a row's mean, is an output that out reads: the search places
    // it at out's row loop (written to its buffer there) when that costs
    // less than a pass of its own, and says why in its comment.
    const int w = 1000, h = 1000;
    Buffer<float> input = random_image<float>(w, h, 0, 0, -100, 100);
    struct RowMean {
        ImageParam in{Float(32), 2, "in"};
        Var x{"x"}, y{"y"};
        Func sum{"sum"}, mean{"mean"}, out{"out"};
        RDom r{0, 1000, "r"};
        explicit RowMean(const Buffer<float> &im) {
            in.set(im);
            sum(y) = 0.0f;
            sum(y) += in(r, y);
            mean(y) = sum(y) / 1000.0f;
            out(x, y) = in(x, y) - mean(y);
        }
    };
    RowMean plain(input), tuned(input);
    plain.sum.compute_root();  // every Func at the root, as the baseline
    Buffer<float> want_out(w, h), want_mean(h), got_out(w, h), got_mean(h);
    Pipeline({plain.out, plain.mean}).realize_raw({want_out.raw_buffer(), want_mean.raw_buffer()});
    AutoscheduleOptions o;
    o.time_limit_ms = 60000;
    AutoscheduleResult r = autoschedule(Pipeline({tuned.out, tuned.mean}), Target::host(),
                                        {{"out", {w, h}}, {"mean", {h}}}, o);
    INFO(r.schedule_text);
    CHECK(r.schedule_text.find("\nmean: compute_at(out, yi)\n") != std::string::npos);
    // The comment of the placement: the option, its prediction, the next best.
    CHECK(r.schedule_text.find("# mean: compute_at(out, yi); predicted ") != std::string::npos);
    CHECK(r.schedule_text.find("next best compute_root costs") != std::string::npos);
    CHECK(r.schedule_text.find("# mean: no tiling") == std::string::npos);  // its root loops' comment went with them
    bool explained = false;
    for (const AutoscheduleDecision &d : r.decisions) {
        if (d.func != "mean") continue;
        explained = d.chosen == "compute_at(out, yi)";
        for (const AutoscheduleAlternative &a : d.alternatives)  // a pass of its own was costed too
            if (a.option == "compute_root") CHECK(a.legal);
    }
    CHECK(explained);
    Pipeline({tuned.out, tuned.mean}).realize_raw({got_out.raw_buffer(), got_mean.raw_buffer()});
    int bad = 0;
    got_out.for_each_element([&](const int *p) { bad += !(got_out(p) == want_out(p)); });
    got_mean.for_each_element([&](const int *p) { bad += !(got_mean(p) == want_mean(p)); });
    CHECK(bad == 0);
}

TEST_CASE("autoschedule: a transpose at the root with its recursive filter per strip agrees with the default schedule",
          "[autoschedule]") {
    // Sizes that no strip or vector divides; the search puts each filter
    // in its transpose's (or the output's) strips of rows.
    Buffer<float> input = random_image<float>(333, 517, 0, 0, -10, 10);
    auto make = [&] {
        IirFixture f;
        f.in.set(input);
        return f.out;
    };
    std::string text;
    CHECK(auto_vs_default(make, Buffer<float>(333, 517), &text, /*unfused=*/true) == 0);
    CHECK(text.find("blur_a: compute_at(trans_a, ") != std::string::npos);
}

TEST_CASE("autoschedule: a Func whose updates run down the rows, per strip of columns, agrees with the default "
          "schedule",
          "[autoschedule]") {
    // A width no strip of columns or vector divides; the search computes
    // levels per strip of out's columns on a machine of 16 MiB of L3, where
    // its levels at the root (33 MiB) would be in DRAM.
    Buffer<float> input = random_image<float>(1037, 2051, 0, 0, -10, 10);
    auto make = [&] {
        ColumnMaxFixture f;
        f.in.set(input);
        return f.out;
    };
    std::string text;
    MachineModel m = MachineModel::host();
    m.l2_bytes = 1 << 20, m.l3_bytes = 16 << 20;
    CHECK(auto_vs_default(make, Buffer<float>(1037, 2051), &text, /*unfused=*/true, &m) == 0);
    CHECK(text.find("levels: compute_at(out, xo)") != std::string::npos);
    CHECK(text.find("reorder(xi, y, xo)") != std::string::npos);
}

TEST_CASE("autoschedule: channels computed together, shared values per vector, agree with the default schedule",
          "[autoschedule]") {
    // Sizes that no vector or strip divides; the search runs out's three
    // channels innermost, unrolled.
    Buffer<float> input(333, 101, 3);
    input.for_each_element([&](const int *p) { input(p) = (float)noise(p[0] + 7 * p[2], p[1], 0, 255, 5); });
    auto make = [&] {
        ChannelsFixture f;
        f.in.set(input);
        return f.out;
    };
    std::string text;
    CHECK(auto_vs_default(make, Buffer<float>(333, 101, 3), &text) == 0);
    CHECK(text.find("unroll(c, 3, GuardWithIf)") != std::string::npos);
}
