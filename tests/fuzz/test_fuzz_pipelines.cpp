// Random pipelines with random schedules, compared against the algorithm
// evaluated directly (random_pipeline.h). Most cases are lowered and run by
// the interpreter of lowered IR (ir_interpreter.h: no C++ compiler, bounds
// checked on every access); a sample is JIT-compiled as users run it, and
// there the interpreter must agree with the kernel too. A sample also runs
// the trivial schedule (every Func compute_root, serial loops), and another
// the schedule kiln::autoschedule chooses for its output's size. A schedule
// the compiler rejects must be rejected with a CompileError (counted); an
// InternalError, a kernel error, an out-of-bounds access or a single
// differing value fails the case and prints the pipeline and the schedule,
// with the seed to replay it (KILN_FUZZ_SEED); KILN_FUZZ_VERBOSE=1 prints
// each rejected schedule with its message, and the trivial and auto ones.
#include <catch2/catch.hpp>
#include <cstdio>
#include <cstdlib>
#include <stdexcept>

#include "fuzz.h"
#include "ir_interpreter.h"
#include "random_pipeline.h"

using namespace kiln;
using namespace kiln_fuzz;

namespace {

struct Tally {
    int compiled = 0, rejected = 0, trivial = 0, automatic = 0;
};

enum class Mode { Interpret, JIT };

// Lowers the Built pipeline (scheduled) and interprets it on `input`; a
// kernel error becomes a std::runtime_error, as realize() throws one.
void interpret(Built &b, const Buffer<int32_t> &input, Buffer<int32_t> &out) {
    Pipeline pipe(b.output());
    std::vector<Argument> args = pipe.infer_arguments();
    internal::LoweredFunc f =
        internal::lower({b.output().contents()}, "interpreted", internal::lowered_args(args, 1), Target::host());
    std::vector<void *> argv;
    for (const Argument &a : args)
        argv.push_back(a.name == b.in.name() ? (void *)input.raw_buffer() : (void *)out.raw_buffer());
    std::string message;
    int code = kiln_fuzz::interpret(f, argv.data(), &message);
    if (code != 0) throw std::runtime_error("kernel error " + std::to_string(code) + ": " + message);
}

// Runs the Built pipeline (scheduled) on `input`; fills `out`. In JIT mode
// the interpreter runs it as well and must give the same output.
void run(Mode mode, Built &b, const Buffer<int32_t> &input, Buffer<int32_t> &out) {
    if (mode == Mode::Interpret) return interpret(b, input, out);
    b.in.set(input);
    b.output().realize(out);
    Buffer<int32_t> again(out.width(), out.height());
    again.fill(0x5eed);
    interpret(b, input, again);
    for (int y = 0; y < out.height(); y++)
        for (int x = 0; x < out.width(); x++)
            if (again(x, y) != out(x, y))
                throw std::runtime_error("the interpreter gives " + std::to_string(again(x, y)) + " at (" +
                                         std::to_string(x) + ", " + std::to_string(y) + "), the kernel " +
                                         std::to_string(out(x, y)));
}

// Random values in [-50, 50], in `input` and row-major in the result.
std::vector<int32_t> random_input(const PipelineSpec &p, Rng &r, Buffer<int32_t> &input) {
    std::vector<int32_t> flat(p.in_w * p.in_h);
    for (int y = 0; y < p.in_h; y++)
        for (int x = 0; x < p.in_w; x++) input(x, y) = flat[y * p.in_w + x] = r.pick(-50, 50);
    return flat;
}

bool same(const PipelineSpec &p, const Buffer<int32_t> &out, const std::vector<int32_t> &want, std::string &where) {
    for (int y = 0; y < p.out_h; y++)
        for (int x = 0; x < p.out_w; x++)
            if (out(x, y) != want[y * p.out_w + x]) {
                where = "at (" + std::to_string(x) + ", " + std::to_string(y) + "): got " + std::to_string(out(x, y)) +
                        ", expected " + std::to_string(want[y * p.out_w + x]);
                return false;
            }
    return true;
}

void fuzz_one(Mode mode, uint32_t seed, Tally &tally) {
    Rng r(seed);
    PipelineSpec p = random_pipeline(r);
    Buffer<int32_t> input(p.in_w, p.in_h);
    std::vector<int32_t> flat = random_input(p, r, input);
    std::vector<int32_t> want = reference(p, flat);

    for (int attempt = 0; attempt < 4; attempt++) {
        Built b;
        build(p, b);
        std::string schedule = random_schedule(p, b, r);
        INFO("seed " << seed << "\n" << p.to_string() << "schedule:\n" << schedule);
        Buffer<int32_t> out(p.out_w, p.out_h);
        out.fill(0x5eed);
        try {
            run(mode, b, input, out);
        } catch (const CompileError &e) {
            tally.rejected++;  // an illegal random schedule; try another
            if (std::getenv("KILN_FUZZ_VERBOSE")) std::fprintf(stderr, "rejected:\n%s%s\n", schedule.c_str(), e.what());
            continue;
        } catch (const std::exception &e) {
            FAIL_CHECK("not a CompileError: " << e.what());
            return;
        }
        tally.compiled++;
        std::string where;
        CHECK(same(p, out, want, where));
        if (!where.empty()) FAIL_CHECK("mismatch " << where);
        return;
    }
}

// A random pipeline of `seed` under the schedule `apply` gives it (which
// returns the schedule as text), run in `mode`: it must compute what the
// algorithm computes.
template<typename Apply>
void fuzz_fixed(uint32_t seed, Mode mode, Apply apply) {
    Rng r(seed);
    PipelineSpec p = random_pipeline(r);
    Buffer<int32_t> input(p.in_w, p.in_h);
    std::vector<int32_t> flat = random_input(p, r, input);
    Built b;
    build(p, b);
    const std::string schedule = apply(p, b);
    INFO("seed " << seed << "\n" << p.to_string() << schedule);
    if (std::getenv("KILN_FUZZ_VERBOSE")) std::fprintf(stderr, "seed %u:\n%s\n", (unsigned)seed, schedule.c_str());
    Buffer<int32_t> out(p.out_w, p.out_h);
    out.fill(0x5eed);
    run(mode, b, input, out);
    std::string where;
    CHECK(same(p, out, reference(p, flat), where));
    if (!where.empty()) FAIL_CHECK("mismatch " << where);
}

void fuzz_trivial(uint32_t seed, Tally &tally) {
    fuzz_fixed(seed, Mode::JIT, [](const PipelineSpec &, Built &b) {
        for (Func &f : b.stages) f.compute_root();
        return std::string("(every Func compute_root)");
    });
    tally.trivial++;
}

// The schedule kiln::autoschedule chooses for the output's size (a budget
// of schedules, so that the choice does not depend on the machine's load),
// interpreted. The search never throws; a pipeline it cannot handle gets a
// fallback schedule.
void fuzz_auto(uint32_t seed, Tally &tally) {
    fuzz_fixed(seed, Mode::Interpret, [](const PipelineSpec &p, Built &b) {
        AutoscheduleResult res = autoschedule(Pipeline(b.output()), Target::host(),
                                              {{b.output().name(), {p.out_w, p.out_h}}}, AutoscheduleOptions::reproducible(100));
        return "auto schedule:\n" + res.schedule_text;
    });
    tally.automatic++;
}

// Every other seed from `first`, so that two cases share the work across
// cores: `n` cases run in `mode`.
void fuzz_every_other(Mode mode, uint32_t first, int n) {
    Tally t;
    for (int i = 0; i < n; i++) fuzz_one(mode, first + 2 * i, t);
    CHECK(t.compiled > 0);
    WARN((mode == Mode::JIT ? "JIT-compiled " : "interpreted ")
         << t.compiled << " random schedules, " << t.rejected << " rejected with a CompileError");
}

}  // namespace

TEST_CASE("fuzz: random pipelines with random schedules, JIT-compiled (a)", "[fuzz][pipelines]") {
    fuzz_every_other(Mode::JIT, kiln_fuzz::seed(1000), kiln_fuzz::iterations(6, 10));
}

TEST_CASE("fuzz: random pipelines with random schedules, JIT-compiled (b)", "[fuzz][pipelines]") {
    fuzz_every_other(Mode::JIT, kiln_fuzz::seed(1000) + 1, kiln_fuzz::iterations(6, 10));
}

TEST_CASE("fuzz: random pipelines with random schedules, interpreted (a)", "[fuzz][pipelines]") {
    fuzz_every_other(Mode::Interpret, kiln_fuzz::seed(20000), kiln_fuzz::iterations(150, 100));
}

TEST_CASE("fuzz: random pipelines with random schedules, interpreted (b)", "[fuzz][pipelines]") {
    fuzz_every_other(Mode::Interpret, kiln_fuzz::seed(20000) + 1, kiln_fuzz::iterations(150, 100));
}

TEST_CASE("fuzz: random pipelines with the trivial schedule", "[fuzz][pipelines]") {
    Tally t;
    uint32_t base = kiln_fuzz::seed(5000);
    int n = kiln_fuzz::iterations(3, 2);
    for (int i = 0; i < n; i++) fuzz_trivial(base + i, t);
    CHECK(t.trivial == n);
}

TEST_CASE("fuzz: random pipelines under the schedule the autoscheduler chooses", "[fuzz][pipelines][autoschedule]") {
    Tally t;
    uint32_t base = kiln_fuzz::seed(7000);
    int n = kiln_fuzz::iterations(8, 20);
    for (int i = 0; i < n; i++) fuzz_auto(base + i, t);
    CHECK(t.automatic == n);
}
