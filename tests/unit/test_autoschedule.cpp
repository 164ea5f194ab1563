// The autoscheduler's decisions and explanations on small pipelines
// (kiln/Autoschedule.h), without running the kernels: the correctness tier
// runs them (tests/correctness/test_autoschedule.cpp).
#include <kiln/kiln.h>

#include "attention_fixture.h"
#include "channels_fixture.h"
#include "column_max_fixture.h"
#include "grid_fixture.h"
#include "iir_fixture.h"
#include "relu_product_fixture.h"

#include <cmath>
#include <stdexcept>

#include <catch2/catch.hpp>

using namespace kiln;

namespace {

// A fixed machine, so decisions do not depend on the machine running the tests.
AutoscheduleOptions fixed_machine() {
    AutoscheduleOptions o;
    o.machine = MachineModel();
    o.machine.threads = 2;
    o.time_limit_ms = 60000;  // decisions, not the time bound, are under test
    return o;
}

const Target avx2("x86-64-linux-avx2-fma");

// The stanza of f in a schedule text ("" if none).
std::string stanza(const std::string &text, const std::string &f) {
    size_t at = 0;
    while ((at = text.find(f + ": ", at)) != std::string::npos) {
        if ((at == 0 || text[at - 1] == '\n')) return text.substr(at, text.find('\n', at) - at);
        at++;
    }
    return "";
}

const AutoscheduleDecision *decision(const AutoscheduleResult &r, const std::string &f) {
    for (const auto &d : r.decisions)
        if (d.func == f && d.chosen.find("strips") == std::string::npos && d.chosen.find("tiles") == std::string::npos)
            return &d;
    return nullptr;
}

struct Blur {
    ImageParam in{Float(32), 2, "in"};
    Var x{"x"}, y{"y"};
    Func clamped = BoundaryConditions::repeat_edge(in);
    Func blur_x{"blur_x"}, blur_y{"blur_y"};
    Blur() {
        blur_x(x, y) = (clamped(x - 1, y) + clamped(x, y) + clamped(x + 1, y)) / 3;
        blur_y(x, y) = (blur_x(x, y - 1) + blur_x(x, y) + blur_x(x, y + 1)) / 3;
    }
};

}  // namespace

TEST_CASE("autoschedule: a blur is fused, vectorized and parallel, the rejected options say why", "[autoschedule]") {
    Blur b;
    AutoscheduleResult r = autoschedule(Pipeline(b.blur_y), avx2, {{"blur_y", {4096, 4096}}}, fixed_machine());
    INFO(r.explanation);
    const std::string out = stanza(r.schedule_text, "blur_y"), bx = stanza(r.schedule_text, "blur_x");
    CHECK(out.find("vectorize(") != std::string::npos);
    CHECK(out.find("parallel(") != std::string::npos);
    // blur_x is computed inside blur_y's loops (not at the root: 64 MiB to DRAM and back).
    CHECK(bx.find("compute_at(blur_y, ") != std::string::npos);
    const AutoscheduleDecision *d = decision(r, "blur_x");
    REQUIRE(d);
    bool saw_root = false, saw_inline = false;
    for (const auto &a : d->alternatives) {
        CHECK(a.legal);
        if (a.option == "compute_root") {
            saw_root = true;
            CHECK(a.note.find("DRAM") != std::string::npos);  // the constraint that bound
            CHECK(a.cost.memory > 0);
        }
        saw_inline |= a.option == "inline";
    }
    CHECK(saw_root);
    CHECK(saw_inline);
    CHECK(d->reason.find("next best") != std::string::npos);
    // The schedule text is what was applied, with a comment per decision.
    CHECK(ScheduleFile::parse(r.schedule_text) == r.schedule);
    CHECK(r.schedule_text.find("# blur_x: compute_at(blur_y") != std::string::npos);
    CHECK(r.explanation.find("machine: L1 32 KiB, L2 1024 KiB") != std::string::npos);
    CHECK(r.states_evaluated > 5);
    CHECK(r.predicted.total() > 0);
    CHECK(r.explanation_json.find("\"alternatives\"") != std::string::npos);
}

TEST_CASE("autoschedule: the same pipeline and sizes give the same schedule", "[autoschedule]") {
    Blur a, b;
    AutoscheduleResult ra = autoschedule(Pipeline(a.blur_y), avx2, {{"blur_y", {1000, 700}}}, fixed_machine());
    AutoscheduleResult rb = autoschedule(Pipeline(b.blur_y), avx2, {{"blur_y", {1000, 700}}}, fixed_machine());
    CHECK(ra.schedule == rb.schedule);
}

TEST_CASE("autoschedule: an elementwise chain is inlined without search", "[autoschedule]") {
    ImageParam in(Float(32), 2, "in");
    Var x("x"), y("y");
    std::vector<Func> chain;
    Func prev = in;
    for (int i = 0; i < 12; i++) {
        Func f("f" + std::to_string(i));
        f(x, y) = prev(x, y) * 1.5f + (float)i;
        chain.push_back(f);
        prev = f;
    }
    AutoscheduleResult r = autoschedule(Pipeline(prev), avx2, {{prev.name(), {2048, 2048}}}, fixed_machine());
    INFO(r.schedule_text);
    for (int i = 0; i < 11; i++) CHECK(stanza(r.schedule_text, "f" + std::to_string(i)).empty());
    CHECK(r.schedule_text.find("# f3: inline; read once, at the same point, by its only consumer f4") !=
          std::string::npos);
    // Near-linear: the chain costs a few structure evaluations, not one per Func and option.
    CHECK(r.states_evaluated < 12);
}

TEST_CASE("autoschedule: a Func with an update stays out of line, a huge one goes to the root", "[autoschedule]") {
    ImageParam in(Float(32), 2, "in");
    Var x("x"), y("y");
    RDom r(0, 1024, "r");
    Func row_max("row_max"), out("out");
    row_max(y) = -1e30f;
    row_max(y) = max(row_max(y), in(r, y));
    out(x, y) = in(x, y) - row_max(y);
    AutoscheduleResult res = autoschedule(Pipeline(out), avx2, {{"out", {1024, 1024}}}, fixed_machine());
    INFO(res.explanation);
    const AutoscheduleDecision *d = decision(res, "row_max");
    REQUIRE(d);
    for (const auto &a : d->alternatives) CHECK(a.option != "inline");  // updates cannot be inlined
    CHECK(!stanza(res.schedule_text, "row_max").empty());
}

TEST_CASE("autoschedule: out of time, the choices made so far are kept and the rest named", "[autoschedule]") {
    Blur b;
    AutoscheduleOptions o = fixed_machine();
    o.time_limit_ms = 0;
    AutoscheduleResult r = autoschedule(Pipeline(b.blur_y), avx2, {{"blur_y", {512, 512}}}, o);
    // The limit, then each Func and group it left to the default rule.
    REQUIRE(r.skipped.size() == 4);
    CHECK(r.skipped[0].find("time limit (0 ms)") != std::string::npos);
    CHECK(r.skipped[1] == "blur_x: compute_at(blur_y, yi) store_at(blur_y, yo), not evaluated: the default rule");
    CHECK(r.skipped[2].rfind("in_im_repeat_edge: ", 0) == 0);
    CHECK(r.skipped[3] == "blur_y: loops strips of 16 rows, not evaluated: the default rule");
    CHECK(r.stopped_by == "time limit");
    CHECK(r.explanation.find("skipped: the search stopped at its time limit") != std::string::npos);
    CHECK(ScheduleFile::parse(r.schedule_text) == r.schedule);

    // Generator builds count the limit in the search's CPU time, which a
    // busy machine does not stretch (the clock's time it does).
    CHECK(AutoscheduleOptions::reproducible().time_limit_is_cpu);
    CHECK(!AutoscheduleOptions().time_limit_is_cpu);
    o.time_limit_is_cpu = true;
    Blur fresh;  // (b's Funcs carry the first search's loops)
    AutoscheduleResult cpu = autoschedule(Pipeline(fresh.blur_y), avx2, {{"blur_y", {512, 512}}}, o);
    CHECK(cpu.stopped_by == "time limit");
    CHECK(cpu.skipped[0].find("time limit (0 ms of CPU time)") != std::string::npos);
    CHECK(cpu.explanation.find(", 0 ms of CPU time); predicted") != std::string::npos);
}

TEST_CASE("autoschedule: out of time, a Func whose region is the same in every row goes to the root",
          "[autoschedule]") {
    // Weights folded per output channel, read by every pixel: per strip of
    // rows (the default rule for a Func its consumers read per row) they
    // would be computed again in every strip.
    ImageParam in(Float(32), 2, "in"), w(Float(32), 2, "w");
    Param<float> s("s");
    Var x("x"), y("y"), c("c");
    RDom r(0, 16, "r");
    Func folded("folded"), mixed("mixed"), out("out");
    folded(c, x) = w(c, x) * s;
    mixed(x, y) = 0.0f;
    mixed(x, y) += folded(x, r) * in(r, y);
    out(x, y) = max(mixed(x, y), 0.0f) + mixed(x, y);
    AutoscheduleOptions o = fixed_machine();
    o.time_limit_ms = 0;
    AutoscheduleResult res = autoschedule(Pipeline(out), avx2, {{"out", {256, 256}}}, o);
    INFO(res.explanation);
    CHECK(std::count(res.skipped.begin(), res.skipped.end(), "folded: compute_root, not evaluated: the default rule") == 1);
    CHECK(stanza(res.schedule_text, "folded").find("compute_root()") != std::string::npos);
    // mixed follows the output's rows: per strip, as before.
    CHECK(stanza(res.schedule_text, "mixed").find("compute_at(out, ") != std::string::npos);
}

TEST_CASE("autoschedule: out of time, a Func of a coarser scale or read through a table goes to the root",
          "[autoschedule]") {
    // A pyramid's level two (a quarter of the output's rows: 4 of them in
    // a strip of 16, with as many again of halo) and a lookup table indexed
    // by pixel values (every strip may read all of it) are computed once at
    // the root; a Func at the output's scale slides in its strips.
    ImageParam in(Float(32), 2, "in");
    Var x("x"), y("y"), i("i");
    Func same("same"), quarter("quarter"), lut("lut"), out("out");
    same(x, y) = in(x, y) * 2.0f + in(x + 1, y);
    quarter(x, y) = in(4 * x, 4 * y) + in(4 * x + 1, 4 * y + 1);
    lut(i) = cast<float>(i) * 0.5f;
    out(x, y) = same(x, y - 1) + same(x, y + 1) + quarter(x / 4, y / 4 - 1) + quarter(x / 4, y / 4 + 1) +
                lut(clamp(cast<int>(in(x, y) * 255.0f), 0, 255));
    AutoscheduleOptions o = fixed_machine();
    o.time_limit_ms = 0;
    AutoscheduleResult res = autoschedule(Pipeline(out), avx2, {{"out", {512, 512}}}, o);
    INFO(res.explanation);
    CHECK(stanza(res.schedule_text, "same").find("compute_at(out, yi) store_at(out, yo)") != std::string::npos);
    CHECK(stanza(res.schedule_text, "quarter").find("compute_root()") != std::string::npos);
    CHECK(stanza(res.schedule_text, "lut").find("compute_root()") != std::string::npos);
    CHECK(std::count(res.skipped.begin(), res.skipped.end(), "quarter: compute_root, not evaluated: the default rule") == 1);
    CHECK(std::count(res.skipped.begin(), res.skipped.end(), "lut: compute_root, not evaluated: the default rule") == 1);
}

TEST_CASE("autoschedule: the time limit grows with the pipeline's Funcs", "[autoschedule]") {
    AutoscheduleOptions o;
    CHECK(o.time_limit_ms == 1000);
    CHECK(o.time_limit_for(1) == 1000);
    CHECK(o.time_limit_for(AutoscheduleOptions::time_limit_funcs) == 1000);
    CHECK(o.time_limit_for(60) == 2000);
    CHECK(o.time_limit_for(101) == Approx(1000.0 * 101 / 30));
    // A chain of 45 blurs: half as long again as 30 Funcs, so 1.5 times
    // the limit, which the search reports and stops at.
    ImageParam in(Float(32), 2, "in");
    Var x("x"), y("y");
    std::vector<Func> chain;
    Func prev = BoundaryConditions::repeat_edge(in);
    for (int k = 0; k < 44; k++) {
        Func f("stage" + std::to_string(k));
        f(x, y) = prev(x, y - 1) + prev(x, y + 1);
        chain.push_back(f);
        prev = f;
    }
    AutoscheduleOptions limited = fixed_machine();
    limited.time_limit_ms = 2;
    limited.time_limit_is_cpu = true;
    AutoscheduleResult r = autoschedule(Pipeline(prev), avx2, {{prev.name(), {256, 256}}}, limited);
    CHECK(r.time_limit_ms == Approx(3.0));
    CHECK(r.stopped_by == "time limit");
    REQUIRE(!r.skipped.empty());
    CHECK(r.skipped[0].find("time limit (3 ms of CPU time)") != std::string::npos);
    CHECK(r.explanation.find(", 3 ms of CPU time); predicted") != std::string::npos);
}

TEST_CASE("autoschedule: a budget of schedules stops the search at the same point on every run", "[autoschedule]") {
    // The time limit (60 s) is not reached: only the budget stops the search.
    for (int budget : {1, 3}) {
        INFO("max_states " << budget);
        AutoscheduleOptions o = fixed_machine();
        o.max_states = budget;
        auto search = [&] {
            Blur b;
            return autoschedule(Pipeline(b.blur_y), avx2, {{"blur_y", {512, 512}}}, o);
        };
        AutoscheduleResult first = search(), second = search();
        INFO(first.explanation);
        CHECK(first.stopped_by == "state budget");
        CHECK(first.schedule_text == second.schedule_text);
        CHECK(first.skipped == second.skipped);
        REQUIRE(!first.skipped.empty());
        CHECK(first.skipped[0] == "the search stopped at its budget of " + std::to_string(budget) +
                                      " evaluated schedules; later options kept their defaults");
        // The group's loops were never compared: named, with the rule that chose them.
        CHECK(std::count(first.skipped.begin(), first.skipped.end(),
                         "blur_y: loops strips of 16 rows, not evaluated: the default rule") == 1);
        CHECK(first.explanation.find("(budget: " + std::to_string(budget) + " schedules, 60000 ms)") !=
              std::string::npos);
        CHECK(first.schedule_text.find("schedules in ") == std::string::npos);  // no search time in the file
        CHECK(ScheduleFile::parse(first.schedule_text) == first.schedule);
    }
    // With a budget of one schedule (the all-root baseline), blur_x is placed
    // by the default rule too, and the .sched comment says so.
    AutoscheduleOptions o = fixed_machine();
    o.max_states = 1;
    Blur b;
    AutoscheduleResult r = autoschedule(Pipeline(b.blur_y), avx2, {{"blur_y", {512, 512}}}, o);
    INFO(r.explanation);
    CHECK(r.states_evaluated == 2);  // the baseline, then the chosen schedule's own check
    CHECK(std::count_if(r.skipped.begin(), r.skipped.end(), [](const std::string &s) {
              return s.rfind("blur_x: ", 0) == 0 && s.find(", not evaluated: the default rule") != std::string::npos;
          }) == 1);
    CHECK(r.schedule_text.find("not evaluated (state budget): the default rule") != std::string::npos);
    // Without a budget the same search goes further: the budget is what stopped it.
    o.max_states = 0;
    Blur full;
    AutoscheduleResult all = autoschedule(Pipeline(full.blur_y), avx2, {{"blur_y", {512, 512}}}, o);
    CHECK(all.stopped_by.empty());
    CHECK(all.skipped.empty());
    CHECK(all.states_evaluated > 3);
}

TEST_CASE("autoschedule: the options of generator builds are a budget of schedules", "[autoschedule]") {
    AutoscheduleOptions o = AutoscheduleOptions::reproducible();
    CHECK(o.max_states == AutoscheduleOptions::generator_max_states);
    // And the interactive time limit (per 30 Funcs), in CPU time.
    CHECK(o.time_limit_ms == AutoscheduleOptions().time_limit_ms);
    CHECK(o.time_limit_is_cpu);
    CHECK(AutoscheduleOptions::reproducible(7).max_states == 7);
    CHECK_THROWS_WITH(AutoscheduleOptions::reproducible(0),
                      Catch::Contains("the budget of schedules must be positive, not 0"));
}

TEST_CASE("autoschedule: autotune 1 runs the cost model's choice and keeps it", "[autoschedule][autotune]") {
    Blur plain_blur, tuned_blur;
    AutoscheduleResult plain = autoschedule(Pipeline(plain_blur.blur_y), avx2, {{"blur_y", {512, 512}}}, fixed_machine());
    AutoscheduleOptions o = fixed_machine();
    o.autotune = 1;
    int runs = 0;
    o.measure = [&](const Pipeline &) { return 2.5 + runs++; };  // no timing in tests
    AutoscheduleResult tuned = autoschedule(Pipeline(tuned_blur.blur_y), avx2, {{"blur_y", {512, 512}}}, o);
    INFO(tuned.explanation);
    CHECK(runs == 1);
    CHECK(tuned.schedule == plain.schedule);
    CHECK(tuned.predicted.total() == plain.predicted.total());
    REQUIRE(tuned.autotuned.size() == 1);
    CHECK(tuned.autotune_chosen == 0);
    CHECK(ScheduleFile::parse(tuned.autotuned[0].schedule) == plain.schedule);
    CHECK(tuned.autotuned[0].measured_ms == 2.5);
    CHECK(tuned.schedule_text.find("# autotune: ran the 1 best candidate by predicted cost; the model's choice "
                                   "measured fastest\n#   1 (the model's choice) predicted ") != std::string::npos);
    CHECK(plain.autotuned.empty());
    CHECK(plain.autotune_chosen == -1);
    CHECK(ScheduleFile::parse(tuned.schedule_text) == tuned.schedule);
}

TEST_CASE("autoschedule: autotune N keeps the candidate measured fastest", "[autoschedule][autotune]") {
    Blur plain_blur, b;
    AutoscheduleResult plain = autoschedule(Pipeline(plain_blur.blur_y), avx2, {{"blur_y", {512, 512}}}, fixed_machine());
    AutoscheduleOptions o = fixed_machine();
    o.autotune = 4;
    // Candidate 2 does not run, candidate 3 is the fastest.
    const std::vector<double> times = {3.0, -1, 1.0, 4.0};
    std::vector<std::string> seen;  // each candidate's loop nest, as measure saw it applied
    o.measure = [&](const Pipeline &p) {
        seen.push_back(p.lowered_stmt(avx2));
        double ms = times.at(seen.size() - 1);
        if (ms < 0) throw std::runtime_error("it crashed");
        return ms;
    };
    AutoscheduleResult r = autoschedule(Pipeline(b.blur_y), avx2, {{"blur_y", {512, 512}}}, o);
    INFO(r.explanation);
    REQUIRE(r.autotuned.size() == 4);
    CHECK(seen.size() == 4);
    CHECK(r.autotune_chosen == 2);
    // The model's choice first, then the others by predicted cost.
    CHECK(ScheduleFile::parse(r.autotuned[0].schedule) == plain.schedule);
    for (size_t i = 2; i < r.autotuned.size(); i++)
        CHECK(r.autotuned[i - 1].predicted.total() <= r.autotuned[i].predicted.total());
    CHECK(r.autotuned[1].error == "it crashed");
    CHECK(r.autotuned[1].measured_ms == -1);
    // The fastest is what was applied, and what the schedule text says.
    CHECK(r.schedule == ScheduleFile::parse(r.autotuned[2].schedule));
    CHECK(ScheduleFile::parse(r.schedule_text) == r.schedule);
    CHECK(r.predicted.total() == r.autotuned[2].predicted.total());
    CHECK(Pipeline(b.blur_y).lowered_stmt(avx2) == seen[2]);
    CHECK(r.schedule_text.find("candidate 3 measured fastest") != std::string::npos);
    CHECK(r.schedule_text.find("#   2 predicted ") != std::string::npos);
    CHECK(r.schedule_text.find("did not run: it crashed") != std::string::npos);
    CHECK(r.schedule_text.find("measured 1.000 ms   <- chosen") != std::string::npos);
    // A stanza that differs from the model's choice says why it is there.
    CHECK(r.schedule_text.find("; autotune: candidate 3 ran fastest (1.000 ms; the model's choice 3.000 ms), the "
                               "cost model chose ") != std::string::npos);
    CHECK(r.explanation.find("autotune candidate 3:\n  ") != std::string::npos);
    CHECK(r.explanation_json.find("\"measured_ms\": 1.0") != std::string::npos);
}

TEST_CASE("autoschedule: autotune with no candidate that runs keeps the model's choice", "[autoschedule][autotune]") {
    Blur plain_blur, b;
    AutoscheduleResult plain = autoschedule(Pipeline(plain_blur.blur_y), avx2, {{"blur_y", {512, 512}}}, fixed_machine());
    AutoscheduleOptions o = fixed_machine();
    o.autotune = 3;
    o.measure = [](const Pipeline &) { return std::nan(""); };
    AutoscheduleResult r = autoschedule(Pipeline(b.blur_y), avx2, {{"blur_y", {512, 512}}}, o);
    CHECK(r.schedule == plain.schedule);
    CHECK(r.autotune_chosen == 0);
    REQUIRE(!r.skipped.empty());
    CHECK(r.skipped.back() == "autotune: no candidate ran (candidate 1: the measure function returned nan, not a "
                              "time in ms); the cost model's choice is kept");
}

TEST_CASE("autoschedule: a bad autotune count or an NPU target is an error that says what to do",
          "[autoschedule][autotune]") {
    for (int n : {-1, AutoscheduleOptions::max_autotune + 1}) {
        Blur b;
        AutoscheduleOptions o = fixed_machine();
        o.autotune = n;
        CHECK_THROWS_WITH(autoschedule(Pipeline(b.blur_y), avx2, {{"blur_y", {64, 64}}}, o),
                          Catch::Contains("autoschedule: autotune " + std::to_string(n) +
                                          " is not a number of candidates to run; use 0 (the cost model alone) or 1 "
                                          "to 64 (each candidate is compiled and run)"));
    }
}

TEST_CASE("autoschedule: the search's memo of simplifications predicts what a lowering without it does",
          "[autoschedule]") {
    // Its candidates are lowered with a memo of simplify() (ir/SimplifyMemo.h);
    // predicted_time lowers the schedule chosen, applied to the Funcs, without one.
    Blur b;
    Func sharp("sharp"), out("out");
    sharp(b.x, b.y) = 2.0f * b.blur_y(b.x, b.y) - b.blur_x(b.x, b.y);
    out(b.x, b.y) = sharp(b.x - 1, b.y) + sharp(b.x + 1, b.y + 1) + b.clamped(b.x, b.y + 2);
    std::map<std::string, std::vector<int>> sizes = {{"out", {1000, 600}}};
    AutoscheduleResult r = autoschedule(Pipeline(out), avx2, sizes, fixed_machine());
    INFO(r.schedule_text);
    REQUIRE(r.skipped.empty());
    REQUIRE(r.states_evaluated > 10);
    CostTerms again = predicted_time(Pipeline(out), avx2, sizes, fixed_machine().machine);
    CHECK(again.compute == r.predicted.compute);
    CHECK(again.memory == r.predicted.memory);
    CHECK(again.overhead == r.predicted.overhead);
}

TEST_CASE("autoschedule: predicted_time ranks a fused blur above the unfused one", "[autoschedule]") {
    Blur fused, unfused;
    fused.blur_y.split(fused.y, Var("yo"), Var("yi"), 16).vectorize(fused.x, 8).parallel(Var("yo"));
    fused.blur_x.store_at(fused.blur_y, Var("yo")).compute_at(fused.blur_y, Var("yi")).vectorize(fused.x, 8);
    unfused.blur_y.vectorize(unfused.x, 8).parallel(unfused.y);
    unfused.blur_x.compute_root().vectorize(unfused.x, 8).parallel(unfused.y);
    std::map<std::string, std::vector<int>> sizes = {{"blur_y", {4096, 4096}}};
    CostTerms f = predicted_time(Pipeline(fused.blur_y), avx2, sizes, fixed_machine().machine);
    CostTerms u = predicted_time(Pipeline(unfused.blur_y), avx2, sizes, fixed_machine().machine);
    CHECK(f.memory < u.memory);
    CHECK(f.total() < u.total());
    CHECK(u.to_string().find(" ms (compute ") != std::string::npos);
}

TEST_CASE("autoschedule: predicted_time counts a vector load whose lanes are not adjacent once per lane",
          "[autoschedule]") {
    // The same copy, vectorized along the input's rows (adjacent lanes),
    // along its columns (a gather: one load per lane) and every 2nd
    // element (two dense loads deinterleaved).
    ImageParam in(Float(32), 2, "in");
    Var x("x"), y("y");
    Func dense("dense"), gathered("gathered"), strided("strided");
    dense(x, y) = in(x, y) * 2;
    gathered(x, y) = in(y, x) * 2;
    strided(x, y) = in(2 * x, y) * 2;
    for (Func *f : {&dense, &gathered, &strided}) f->vectorize(x, 8).parallel(y);
    auto predict = [&](Func &f) {
        return predicted_time(Pipeline(f), avx2, {{f.name(), {1024, 1024}}}, fixed_machine().machine);
    };
    CostTerms d = predict(dense), g = predict(gathered), s = predict(strided);
    CHECK(g.compute > 3 * d.compute);  // one scalar load per lane against one vector load per 8
    CHECK(s.compute > d.compute);
    CHECK(s.compute < g.compute);
}

TEST_CASE("autoschedule: a transpose read along a vectorized loop is computed once, not inlined",
          "[autoschedule]") {
    // Inlined, key_t would make every vector of out load K's lanes one by
    // one, four times; computed, it gathers each point once and out reads
    // it in dense vectors.
    ImageParam K(Float(32), 2, "K");
    Var i("i"), j("j");
    Func key_t("key_t"), out("out");
    key_t(j, i) = K(i, j);
    out(j, i) = key_t(j, i - 1) + key_t(j, i) + key_t(j, i + 1) + key_t(j, i + 2);
    AutoscheduleResult a = autoschedule(Pipeline(out), avx2, {{"out", {1024, 1024}}}, fixed_machine());
    INFO(a.explanation);
    CHECK(stanza(a.schedule_text, "key_t") != "");
    const AutoscheduleDecision *d = decision(a, "key_t");
    REQUIRE(d);
    CHECK(d->chosen != "inline");
    bool inline_seen = false;
    for (const auto &alt : d->alternatives)
        if (alt.option == "inline") {
            inline_seen = true;
            CHECK_THAT(alt.note, Catch::Contains("out gathers 4.00 loads per point lane by lane"));
        }
    CHECK(inline_seen);
}

TEST_CASE("autoschedule: an output of the wrong rank in the estimates names the output", "[autoschedule]") {
    Blur b;
    CHECK_THROWS_WITH(autoschedule(Pipeline(b.blur_y), avx2, {{"blur_y", {64}}}, fixed_machine()),
                      Catch::Contains("autoschedule: give the size of output blur_y (2 dimensions)"));
}

TEST_CASE("autoschedule: a row's max is split into vector lanes, a float sum only where reassociation is allowed",
          "[autoschedule]") {
    auto make = [] {
        ImageParam in(Float(32), 2, "in");
        Var x("x"), y("y");
        RDom r(0, 2048, "r");
        Func row_max("row_max"), row_sum("row_sum"), out("out");
        row_max(y) = -1e30f;
        row_max(y) = max(row_max(y), in(r, y));
        row_sum(y) = 0.0f;
        row_sum(y) += in(r, y);
        out(x, y) = (in(x, y) - row_max(y)) / row_sum(y);
        return out;
    };
    AutoscheduleResult strict = autoschedule(Pipeline(make()), avx2, {{"out", {2048, 512}}}, fixed_machine());
    INFO(strict.explanation);
    CHECK(stanza(strict.schedule_text, "row_max.update(0)").find("rfactor(") != std::string::npos);
    CHECK(stanza(strict.schedule_text, "row_max_lanes").find("vectorize(u)") != std::string::npos);
    CHECK(stanza(strict.schedule_text, "row_sum.update(0)").find("rfactor(") == std::string::npos);
    bool considered = false;
    for (const auto &d : strict.decisions)
        for (const auto &a : d.alternatives) considered |= d.func == "row_max" && a.option == "serial reduction";
    CHECK(considered);
    // The user is told why the sum stays serial and what would allow it;
    // the max, which any order computes exactly, gets no such note.
    auto note_for = [](const AutoscheduleResult &r, const std::string &func) {
        for (const std::string &why : r.skipped)
            if (why.rfind(func + ": ", 0) == 0) return why;
        return std::string();
    };
    CHECK(note_for(strict, "row_sum") ==
          "row_sum: its float sum over r.x is not split into vector lanes (rfactor), which would change its rounding; "
          "add fast_math to the target to allow it (hand schedules with rfactor reassociate whatever the target)");
    CHECK(strict.explanation.find("skipped: row_sum: its float sum over r.x") != std::string::npos);
    CHECK(note_for(strict, "row_max").empty());

    AutoscheduleResult fast = autoschedule(Pipeline(make()), avx2.with(Target::FastMath), {{"out", {2048, 512}}},
                                           fixed_machine());
    INFO(fast.explanation);
    CHECK(stanza(fast.schedule_text, "row_sum.update(0)").find("rfactor(") != std::string::npos);
    CHECK(note_for(fast, "row_sum").empty());
}

TEST_CASE("autoschedule: a matrix product is computed in register blocks of its consumer", "[autoschedule]") {
    ImageParam A(Float(32), 2, "A"), B(Float(32), 2, "B");
    Var x("x"), y("y");
    RDom k(0, 512, "k");
    Func matmul("matmul"), out("out");
    matmul(x, y) = 0.0f;
    matmul(x, y) += A(k, y) * B(x, k);
    out(x, y) = max(matmul(x, y), 0.0f);
    AutoscheduleResult r = autoschedule(Pipeline(out), avx2, {{"out", {512, 512}}, {"A", {512, 512}}, {"B", {512, 512}}},
                                        fixed_machine());
    INFO(r.explanation);
    // AVX2: 8 lanes, blocks of 2 vectors x 6 rows (12 + 2 of the 16 registers).
    CHECK(stanza(r.schedule_text, "out") ==
          "out: split(x, xo, xi, natural_vector_size*2) split(y, yo, yi, 6) reorder(xi, yi, yo, xo) "
          "vectorize(xi, natural_vector_size) unroll(xi) unroll(yi) parallel(xo)");
    CHECK(stanza(r.schedule_text, "matmul") ==
          "matmul: compute_at(out, yo) vectorize(x, natural_vector_size) unroll(x) unroll(y)");
    CHECK(stanza(r.schedule_text, "matmul.update(0)") ==
          "matmul.update(0): reorder(x, y, k.x) vectorize(x, natural_vector_size) unroll(x) unroll(y)");
}

namespace {

// out = relu(A B), A of m rows of k, B of k rows of n, on AVX2 with the
// fixed machine (L1 32 KiB of 8 ways).
AutoscheduleResult product_schedule(int n, int m, int k) {
    ReluProductFixture p(k);
    return autoschedule(Pipeline(p.out), avx2, {{"out", {n, m}}, {"A", {k, m}}, {"B", {n, k}}}, fixed_machine());
}

}  // namespace

TEST_CASE("autoschedule: a product's operand read a row apart per k is packed per column panel", "[autoschedule]") {
    // B's rows are 4 KiB apart: one pass of k (1024 iterations of 2
    // vectors of 8 floats, a line; 64 KiB) reaches 1 set of L1 and 16 of L2
    // (of 16 ways of 64 KiB), 16 KiB of L2's 1 MiB, so each row block would
    // load the panel from L3 again.
    AutoscheduleResult r = product_schedule(1024, 1024, 1024);
    INFO(r.explanation);
    CHECK(stanza(r.schedule_text, "B.in(matmul)") ==
          "B.in(matmul): compute_at(out, xo) vectorize(_0, natural_vector_size)");
    CHECK(stanza(r.schedule_text, "matmul") ==
          "matmul: compute_at(out, yo) vectorize(x, natural_vector_size) unroll(x) unroll(y)");
    const AutoscheduleDecision *d = nullptr;
    for (const auto &dd : r.decisions)
        if (dd.func == "matmul" && dd.chosen.find(".in(") != std::string::npos) d = &dd;
    REQUIRE(d);
    CHECK(d->chosen == "B.in(matmul) at out.xo (each panel's rows contiguous, not 4.0 KiB apart per k.x)");
    REQUIRE(d->alternatives.size() == 2);
    // Read in place, the note says which loads alias, how far apart, and
    // where their lines come from.
    const AutoscheduleAlternative &in_place = d->alternatives[0];
    CHECK(in_place.option == "operand B read in place");
    CHECK(in_place.note.find("matmul loads B 4.0 KiB apart per k.x: 64.0 KiB a pass, L2 holds 16.0 KiB of it at that "
                             "stride: from L3, +") != std::string::npos);
    CHECK(in_place.cost.aliasing > 0);
    CHECK(d->alternatives[1].cost.aliasing == 0);
    CHECK(d->alternatives[1].note.find("the packed panel: recompute 1.00x; 64.0 KiB per realization, fits L2") == 0);
    CHECK(d->reason.find("aliasing +") != std::string::npos);
    CHECK(r.schedule_text.find("# matmul: B.in(matmul) at out.xo") != std::string::npos);
}

TEST_CASE("autoschedule: a product whose operand's pass fits L1 at its stride is not packed", "[autoschedule]") {
    // B's rows 1 KiB apart, but k is 16: a pass is 16 lines, which 4 sets of
    // L1's 8 ways hold. No aliasing term, so the packing costs more than
    // it saves.
    AutoscheduleResult r = product_schedule(256, 256, 16);
    INFO(r.explanation);
    CHECK(stanza(r.schedule_text, "matmul") ==
          "matmul: compute_at(out, yo) vectorize(x, natural_vector_size) unroll(x) unroll(y)");
    CHECK(stanza(r.schedule_text, "B.in(matmul)") == "");
    CHECK(r.explanation.find("matmul loads B") == std::string::npos);
    CHECK(r.predicted.aliasing == 0);
    const AutoscheduleDecision *d = nullptr;
    for (const auto &dd : r.decisions)
        if (dd.func == "matmul" && dd.chosen.find("operand B") == 0) d = &dd;
    REQUIRE(d);
    CHECK(d->chosen == "operand B read in place");
    REQUIRE(d->alternatives.size() == 2);
    CHECK(d->alternatives[0].cost.aliasing == 0);
    CHECK(d->alternatives[1].cost.total() > d->alternatives[0].cost.total());
}

TEST_CASE("autoschedule: Funcs whose loops are scheduled already are an error", "[autoschedule][error]") {
    ImageParam in(Float(32), 2, "in");
    Var x("x"), y("y");
    Func f("f"), g("g");
    f(x, y) = in(x, y) * 2.0f;
    g(x, y) = f(x, y) + 1.0f;
    const std::map<std::string, std::vector<int>> sizes = {{"g", {256, 256}}};
    f.compute_root().parallel(y);  // a level, and a mark on a loop left whole, are the search's to change
    CHECK_NOTHROW(autoschedule(Pipeline(g), avx2, sizes, fixed_machine()));
    // A second search over the first's loops would clash with every candidate.
    CHECK_THROWS_WITH(autoschedule(Pipeline(g), avx2, sizes, fixed_machine()),
                      Catch::Contains("autoschedule: Func g already has loops scheduled (split of ") &&
                          Catch::Contains("); the search chooses every Func's loops and applies them over the "
                                          "schedule it finds, where these would clash"));
    Func h("h");
    h(x, y) = in(x, y) + 1.0f;
    h.vectorize(x, 8);
    CHECK_THROWS_WITH(autoschedule(Pipeline(h), avx2, {{"h", {256, 256}}}, fixed_machine()),
                      Catch::Contains("autoschedule: Func h already has loops scheduled (split of x)"));
}

TEST_CASE("autoschedule: a product's consumer read twice is weighed at the root in register blocks",
          "[autoschedule]") {
    // bias_add has two consumers (a forward pass writing its output and the
    // ReLU's bits), so it is placed before matmul: its placement must weigh
    // register blocks with matmul computed per block, or matmul ends at the
    // root untiled (3x slower here, predicted).
    ImageParam A(Float(32), 2, "A"), B(Float(32), 2, "B");
    Var x("x"), y("y");
    RDom k(0, 512, "k");
    Func matmul("matmul"), bias_add("bias_add"), out("out"), sign("sign");
    matmul(x, y) = 0.0f;
    matmul(x, y) += A(k, y) * B(x, k);
    bias_add(x, y) = matmul(x, y) + 1.0f;
    out(x, y) = max(bias_add(x, y), 0.0f);
    sign(x, y) = select(bias_add(x, y) >= 0.0f, 1.0f, 0.0f);
    AutoscheduleResult r = autoschedule(Pipeline({out, sign}), avx2,
                                        {{"out", {512, 512}}, {"sign", {512, 512}}, {"A", {512, 512}}, {"B", {512, 512}}},
                                        fixed_machine());
    INFO(r.explanation);
    CHECK(stanza(r.schedule_text, "bias_add").find("compute_root() split(x, xo, xi, natural_vector_size*2) split(y, yo, "
                                                   "yi, 6)") != std::string::npos);
    CHECK(stanza(r.schedule_text, "matmul").find("matmul: compute_at(bias_add, ") == 0);
    const AutoscheduleDecision *d = decision(r, "bias_add");
    REQUIRE(d);
    bool joint = false;
    for (const auto &a : d->alternatives)
        joint |= a.option == "compute_root, register blocks of 2 vectors x 6 rows with matmul per block";
    CHECK(joint);
}

TEST_CASE("autoschedule: a matrix product read along whole rows is computed per register block of its wrapper",
          "[autoschedule]") {
    // Attention: scores, a matrix product, is read by a row maximum over
    // whole rows, so no consumer reads it at its own points; its wrapper
    // scores.in() does, and computes it in register blocks. The output's
    // rows of blocks go outermost, so that the rows' statistics are computed
    // once per row of blocks, not once per column.
    AttentionFixture at(64, 512);
    AutoscheduleResult res = autoschedule(
        Pipeline(at.out), avx2, {{"out", {64, 512}}, {"Q", {64, 512}}, {"K", {64, 512}}, {"V", {64, 512}}}, fixed_machine());
    INFO(res.explanation);
    INFO(res.schedule_text);
    CHECK(stanza(res.schedule_text, "scores.in()") ==
          "scores.in(): compute_at(out, io) split(j, jo, ji, natural_vector_size*2) split(i, io, ii, 6) "
          "reorder(ji, ii, io, jo) vectorize(ji, natural_vector_size) unroll(ji) unroll(ii)");
    CHECK(stanza(res.schedule_text, "scores") ==
          "scores: compute_at(scores_in, io) vectorize(j, natural_vector_size) unroll(j) unroll(i)");
    CHECK(stanza(res.schedule_text, "scores.update(0)") ==
          "scores.update(0): reorder(j, i, rd.x) vectorize(j, natural_vector_size) unroll(j) unroll(i)");
    CHECK(stanza(res.schedule_text, "out") ==
          "out: split(c, co, ci, natural_vector_size*2) split(i, io, ii, 6) reorder(ci, ii, co, io) "
          "vectorize(ci, natural_vector_size) unroll(ci) unroll(ii) parallel(io)");
    CHECK(stanza(res.schedule_text, "probs") == "probs: compute_at(out, io) vectorize(j, natural_vector_size)");
    // The row maximum is computed per row of blocks and split into vector
    // lanes; its lanes per row (stored contiguously), not per row of
    // blocks, where they would be stored a row of blocks apart.
    CHECK(stanza(res.schedule_text, "row_max") == "row_max: compute_at(out, io)");
    CHECK(stanza(res.schedule_text, "row_max_lanes") == "row_max_lanes: compute_at(row_max, i) vectorize(u)");
    const AutoscheduleDecision *d = decision(res, "scores");
    REQUIRE(d);
    CHECK(d->chosen.find("of scores.in()") != std::string::npos);
    // The wrapper at the root was weighed too, and scores without one.
    bool root_wrapper = false, unwrapped_root = false;
    for (const auto &a : d->alternatives) {
        root_wrapper |= a.option.find("scores.in() at the root") != std::string::npos;
        unwrapped_root |= a.option == "compute_root";
    }
    CHECK(root_wrapper);
    CHECK(unwrapped_root);
}

TEST_CASE("autoschedule: a histogram's scattering update is weighed vectorized and serial with its channels unrolled",
          "[autoschedule]") {
    GridFixture g;
    AutoscheduleResult res = autoschedule(Pipeline(g.out), avx2, {{"out", {128, 128}}, {"input", {1024, 1024}}},
                                          fixed_machine());
    INFO(res.explanation);
    INFO(res.schedule_text);
    const AutoscheduleDecision *d = nullptr;
    for (const auto &k : res.decisions)
        if (k.func == "histogram" && k.chosen.find("updates") == 0) d = &k;
    REQUIRE(d);
    REQUIRE(d->alternatives.size() == 2);
    CHECK(d->alternatives[0].option == "updates vectorized, lane by lane at their indices");
    CHECK(d->alternatives[1].option == "updates serial over their RVars, small dimensions unrolled");
    CHECK(d->alternatives[0].legal);
    CHECK(d->alternatives[1].legal);
    // At these sizes the serial form wins: a vector of lanes storing to
    // cells apart is a store per lane, and the two channels' values share
    // their loads and cell. (Computed per row of out, it runs in out's
    // parallel loop; at the root its rows would be in parallel.)
    CHECK(d->chosen == d->alternatives[1].option);
    CHECK(stanza(res.schedule_text, "histogram") == "histogram: compute_at(out, yi) vectorize(x, natural_vector_size)");
    CHECK(stanza(res.schedule_text, "histogram.update(0)") ==
          "histogram.update(0): reorder(c, r.x, r.y, x, y) unroll(c, 2, GuardWithIf)");
}

TEST_CASE("autoschedule: a scatter's small dimension that follows the output's is unrolled by its extent",
          "[autoschedule]") {
    // A histogram per channel of an RGB input: its channels are the
    // output's, 3 at these sizes but not a constant of the algorithm, so
    // unroll(c) would not lower for a buffer of unknown size (the kernel
    // kiln-gen emits); unroll(c, 3, GuardWithIf) does, at any size.
    ImageParam in{Float(32), 3, "in"};
    Var x{"x"}, y{"y"}, z{"z"}, c{"c"};
    Func clamped = BoundaryConditions::repeat_edge(in);
    Func histogram{"histogram"}, out{"out"};
    RDom r(0, 8, 0, 8, "r");
    Expr v = clamp(clamped(x * 8 + r.x, y * 8 + r.y, c), 0.0f, 1.0f);
    histogram(x, y, z, c) = 0.0f;
    histogram(x, y, cast<int>(v * 10.0f + 0.5f), c) += v;
    out(x, y, c) = histogram(x, y, 3, c) + histogram(x, y, 4, c) * 2.0f;
    AutoscheduleResult res = autoschedule(Pipeline(out), avx2, {{"out", {128, 128, 3}}, {"in", {1024, 1024, 3}}},
                                          fixed_machine());
    INFO(res.schedule_text);
    CHECK(stanza(res.schedule_text, "histogram.update(0)") ==
          "histogram.update(0): reorder(c, r.x, r.y, x, y) unroll(c, 3, GuardWithIf)");
    CHECK_NOTHROW(Pipeline(out).compile_to_cpp_source("channel_histogram", avx2));
}

TEST_CASE("autoschedule: an update indexed by its RVars alone is vectorized, not weighed as a scatter",
          "[autoschedule]") {
    // max_filter's vert_log: each level the max of two of the level below,
    // stored at rows and levels its RVars give. Its lanes along x store
    // densely; until session 53 any index other than the pure variable
    // counted as a scatter, and the serial form (x outermost in parallel,
    // each column walked down its rows) ran max_filter 12x its hand
    // schedule's time.
    ImageParam in{Float(32), 3, "in"};
    Var x{"x"}, y{"y"}, c{"c"}, t{"t"};
    Func clamped = BoundaryConditions::repeat_edge(in);
    Func levels{"levels"}, out{"out"};
    RDom r(0, 64, 1, 3, "r");
    levels(x, y, c, t) = clamped(x, y, c);
    levels(x, r.x, c, r.y) = max(levels(x, r.x, c, r.y - 1), levels(x, r.x + 1, c, r.y - 1));
    out(x, y, c) = levels(x, y, c, 2) + levels(x, y + 4, c, 3);
    AutoscheduleResult res = autoschedule(Pipeline(out), avx2, {{"out", {256, 60, 3}}}, fixed_machine());
    INFO(res.schedule_text);
    for (const auto &d : res.decisions) CHECK(!(d.func == "levels" && d.chosen.find("updates") == 0));
    CHECK(stanza(res.schedule_text, "levels.update(0)").find("vectorize(x, natural_vector_size, GuardWithIf)") !=
          std::string::npos);
}

TEST_CASE("autoschedule: an update whose only loop is x is vectorized without a reorder", "[autoschedule]") {
    // f(x, 0) = ...: one loop, which reorder (two loops or more) cannot
    // take. Until session 55 the stanza was "reorder(x) vectorize(...)",
    // every candidate failed to parse and the search fell back to no
    // schedule.
    ImageParam in{Float(32), 2, "in"};
    Var x{"x"}, y{"y"};
    Func f{"f"}, out{"out"};
    f(x, y) = in(x, y) * 2.0f;
    f(x, 0) = in(x, 0) + 1.0f;
    out(x, y) = f(x, y) + f(x, y + 1) + f(x, y + 2);
    AutoscheduleResult r = autoschedule(Pipeline(out), avx2, {{"out", {512, 256}}}, fixed_machine());
    INFO(r.schedule_text);
    CHECK(r.skipped.empty());
    CHECK(r.schedule_text.find("reorder(x)") == std::string::npos);
    CHECK(stanza(r.schedule_text, "f.update(0)").find("f.update(0): vectorize(x, natural_vector_size, GuardWithIf)") ==
          0);
}

TEST_CASE("autoschedule: a 0-D Func gets no loop directives", "[autoschedule]") {
    // camera_pipe's sharpen_strength_x32() and a scalar sum: the search read
    // the first dimension of Funcs that have none.
    ImageParam in{Float(32), 2, "in"};
    Param<float> strength{"strength"};
    Var x{"x"}, y{"y"};
    RDom r(0, 64, "r");
    Func scale{"scale"}, total{"total"}, out{"out"};
    scale() = strength * 2;
    total() = 0.0f;
    total() += in(r, 0);
    out(x, y) = in(x, y) * scale() + total();
    AutoscheduleResult res = autoschedule(Pipeline(out), avx2, {{"out", {512, 512}}}, fixed_machine());
    INFO(res.schedule_text);
    CHECK(res.skipped.empty());
    for (const char *f : {"scale", "total"}) {
        const std::string s = stanza(res.schedule_text, f);
        CHECK((s.empty() || s == std::string(f) + ": compute_root()"));
        CHECK(stanza(res.schedule_text, std::string(f) + ".update(0)").empty());
    }
    CHECK(ScheduleFile::parse(res.schedule_text) == res.schedule);
}

TEST_CASE("autoschedule: a small Func stays serial where its workers sleep between parallel loops",
          "[autoschedule]") {
    // A 64x64 output is 4096 points of work: a few microseconds on one core,
    // less than waking a sleeping worker (MachineModel::parallel_wake_ns).
    // Each search gets Funcs of its own (it applies its choice to them).
    auto search = [](int size, const MachineModel &m) {
        ImageParam in(Float(32), 2, "in");
        Var x("x"), y("y");
        Func g("g");
        g(x, y) = in(x, y) * 2.0f + 1.0f;
        AutoscheduleOptions o = fixed_machine();
        o.machine = m;
        return autoschedule(Pipeline(g), avx2, {{"g", {size, size}}}, o);
    };
    MachineModel m = fixed_machine().machine;
    m.workers_sleep = true;
    AutoscheduleResult sleeping = search(64, m);
    INFO(sleeping.explanation);
    CHECK(stanza(sleeping.schedule_text, "g").find("parallel(") == std::string::npos);
    CHECK(sleeping.schedule_text.find("no tiling, serial") != std::string::npos);
    // Spinning workers: no serial form is offered (a loop starts in a
    // microsecond or two), and the parallel loop stays.
    m.workers_sleep = false;
    AutoscheduleResult spinning = search(64, m);
    INFO(spinning.explanation);
    CHECK(spinning.explanation.find("no tiling, serial") == std::string::npos);
    CHECK(stanza(spinning.schedule_text, "g").find("parallel(") != std::string::npos);
    // A large Func is not offered the serial form at all.
    m.workers_sleep = true;
    AutoscheduleResult large = search(2048, m);
    INFO(large.explanation);
    CHECK(large.explanation.find("no tiling, serial") == std::string::npos);
    CHECK(stanza(large.schedule_text, "g").find("parallel(") != std::string::npos);
}

TEST_CASE("autoschedule: a transpose goes to the root with its recursive filter computed per strip of its rows",
          "[autoschedule]") {
    // Each filter (updates down its columns) can only be at the root or in
    // its consumer's loops. trans_a, placed first, is offered the root with
    // blur_a per strip of its rows (a band of blur_a's columns, in L2): the
    // two moves together, which neither makes alone (trans_a alone at the
    // root is a pass more than inlining it). blur_b, whose update needs
    // whole columns, is offered per strip of out's rows, not only a window
    // sliding over them.
    IirFixture f;
    AutoscheduleResult r = autoschedule(Pipeline(f.out), avx2, {{"out", {1536, 2560}}}, fixed_machine());
    INFO(r.explanation);
    CHECK(stanza(r.schedule_text, "blur_a").find("compute_at(trans_a, yo)") == 8);
    CHECK(stanza(r.schedule_text, "trans_a").find("trans_a: compute_root() split(y, yo, yi, ") == 0);
    CHECK(stanza(r.schedule_text, "blur_b").find("compute_at(out, yo)") == 8);
    const AutoscheduleDecision *d = nullptr;  // its placement (the first of its decisions)
    for (const auto &dd : r.decisions)
        if (dd.func == "trans_a" && !d) d = &dd;
    REQUIRE(d);
    CHECK(d->chosen == "compute_root, strips of 16 rows with blur_a compute_at(trans_a, yo)");
    const AutoscheduleAlternative *inl = nullptr, *joint = nullptr;
    for (const auto &alt : d->alternatives) {
        if (alt.option == "inline") inl = &alt;
        if (alt.option == d->chosen) joint = &alt;
    }
    REQUIRE(inl);
    REQUIRE(joint);
    CHECK(joint->cost.total() < inl->cost.total());
    bool outer_offered = false;
    const AutoscheduleDecision *b = decision(r, "blur_b");
    REQUIRE(b);
    for (const auto &alt : b->alternatives) outer_offered |= alt.option == "compute_at(out, yo)";
    CHECK(outer_offered);
}

TEST_CASE("autoschedule: a Func whose updates run down the rows is computed per strip of columns",
          "[autoschedule]") {
    // levels' updates run over all the rows its consumer's strips of rows
    // would split, so per strip of rows it is computed whole again, and at
    // the root its levels (33 MiB at 1024x2048) are in DRAM. It is offered
    // per strip of out's columns, out's loops made strips of columns: the
    // strip's band of levels (128 columns, 4.1 MiB) in L3. (Its decision is
    // then taken again in those loops: per strip or at the root.)
    ColumnMaxFixture f;
    AutoscheduleResult r = autoschedule(Pipeline(f.out), avx2, {{"out", {1024, 2048}}}, fixed_machine());
    INFO(r.explanation);
    CHECK(stanza(r.schedule_text, "out").find("out: split(x, xo, xi, ") == 0);
    CHECK(stanza(r.schedule_text, "out").find("reorder(xi, y, xo) vectorize(xi, natural_vector_size) parallel(xo)") !=
          std::string::npos);
    CHECK(stanza(r.schedule_text, "levels") == "levels: compute_at(out, xo) vectorize(x, natural_vector_size)");
    const AutoscheduleDecision *d = decision(r, "levels");
    REQUIRE(d);
    const AutoscheduleAlternative *root = nullptr, *columns = nullptr;
    for (const auto &alt : d->alternatives) {
        if (alt.option == "compute_root") root = &alt;
        if (alt.option == "compute_at(out, xo)") columns = &alt;
        // Never per strip of rows, whose strips would each compute all of levels' rows.
        CHECK(alt.option.find("compute_at(out, yo)") == std::string::npos);
    }
    REQUIRE(root);
    REQUIRE(columns);
    CHECK(columns->legal);
    CHECK(columns->cost.memory < root->cost.memory);
    CHECK(columns->cost.total() < root->cost.total());
    CHECK(r.explanation.find("out: strips of 128 columns\n") != std::string::npos);
    CHECK(ScheduleFile::parse(r.schedule_text) == r.schedule);
}

TEST_CASE("autoschedule: an image's channels are computed together, their shared values once per vector",
          "[autoschedule]") {
    // out's three channels mix luma and chroma values they share. With c
    // outermost, each channel's vectors compute all three arms of the
    // select and the shared values again; with c innermost and unrolled
    // (each channel's select one arm), the search places the shared values
    // per vector of out, computed once for the three.
    ChannelsFixture f;
    AutoscheduleResult r = autoschedule(Pipeline(f.out), avx2, {{"out", {1024, 1024, 3}}}, fixed_machine());
    INFO(r.explanation);
    const std::string out = stanza(r.schedule_text, "out");
    CHECK(out.find("reorder(c, ") != std::string::npos);
    CHECK(out.find("unroll(c, 3, GuardWithIf)") != std::string::npos);
    // The loops' decision weighed the same loops with c outermost.
    const AutoscheduleDecision *loops = nullptr;
    for (const auto &d : r.decisions)
        if (d.func == "out" && d.chosen.find("channels innermost") != std::string::npos) loops = &d;
    REQUIRE(loops);
    const std::string plain = loops->chosen.substr(0, loops->chosen.find(", channels innermost"));
    const AutoscheduleAlternative *chosen = nullptr, *outermost = nullptr;
    for (const auto &alt : loops->alternatives) {
        if (alt.option == loops->chosen) chosen = &alt;
        if (alt.option == plain) outermost = &alt;
    }
    REQUIRE(chosen);
    REQUIRE(outermost);
    CHECK(chosen->cost.compute < outermost->cost.compute);
    // Some shared value is computed per vector of out (compute_at(out, x)
    // or per vector of a tile, compute_at(out, xi)).
    bool per_vector = false;
    for (const char *g : {"luma", "cr", "cb"}) {
        const std::string st = stanza(r.schedule_text, g);
        per_vector |= st.find("compute_at(out, x)") != std::string::npos ||
                      st.find("compute_at(out, xi)") != std::string::npos;
    }
    CHECK(per_vector);
    CHECK(ScheduleFile::parse(r.schedule_text) == r.schedule);
}
