// Shared pieces of the suite cases (case_util.h).
#include "case_util.h"

#include <cctype>
#include <chrono>
#include <cstdio>
#include <memory>
#include <random>
#include <utility>

#include "halide_auto.h"

namespace kiln_bench {

FBuf random_buffer(const std::vector<int> &extents, float lo, float hi, unsigned seed) {
    FBuf b(extents);
    std::mt19937 rng(seed);
    std::uniform_real_distribution<float> u(lo, hi);
    b.for_each_value([&](float &v) { v = u(rng); });
    return b;
}

FBuf zeros_like(const FBuf &b) {
    std::vector<int> extents;
    for (int i = 0; i < b.dimensions(); i++) extents.push_back(b.dim(i).extent());
    FBuf z(extents);
    z.fill(0.0f);
    return z;
}

Halide::Buffer<float> halide_view(FBuf &b) { return Halide::Buffer<float>(FBuf(b)); }  // a shallow copy

namespace {
std::vector<Entry> pending_auto_rows;
}

bool &auto_rows() {
    static bool on = false;
    return on;
}

std::vector<Entry> take_auto_rows() { return std::exchange(pending_auto_rows, {}); }

namespace {

// Kiln's JIT compile of `k` alone (lowering, g++, loading), timed as
// run_halide times Halide's compile_jit(): wall ms and this thread's CPU ms
// with the compiler's processes.
void compile_kiln(Entry &e, KilnRunner &k, const std::vector<halide_buffer_t *> &raw) {
    const double cpu0 = cpu_ms(RUSAGE_THREAD) + cpu_ms(RUSAGE_CHILDREN);
    auto t0 = std::chrono::steady_clock::now();
    k.compile(raw);
    e.compile_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
    e.compile_cpu_ms = cpu_ms(RUSAGE_THREAD) + cpu_ms(RUSAGE_CHILDREN) - cpu0;
    if (k.reused_kernel()) {  // loaded, not compiled: no compile time to report
        e.compile_ms = e.compile_cpu_ms = -1;
        e.compile_reused = true;
    }
}

}  // namespace

Entry run_kiln(KilnRunner &k, const std::vector<halide_buffer_t *> &raw, int runs) {
    Entry e;
    e.system = "kiln";
    compile_kiln(e, k, raw);
    e.timing = time_runs(runs, [&] { k.realize(raw); });
    return e;
}

Entry run_kiln(KilnRunner &k, const std::vector<FBuf *> &outs, int runs) {
    std::vector<halide_buffer_t *> raw;
    for (FBuf *o : outs) raw.push_back(o->raw_buffer());
    Entry e = run_kiln(k, raw, runs);
    if (auto_rows() && pending_auto_rows.empty() && k.schedule_path() != "auto") {  // the case's first Kiln pipeline
        std::vector<FBuf> copies;
        for (FBuf *o : outs) copies.push_back(zeros_like(*o));
        std::vector<FBuf *> auto_outs;
        std::vector<halide_buffer_t *> auto_raw;
        for (FBuf &c : copies) {
            auto_outs.push_back(&c);
            auto_raw.push_back(c.raw_buffer());
        }
        Entry ae = run_kiln_auto(k, auto_raw, runs);
        check_against(ae, auto_outs, outs);
        // The target allows reassociation (fast_math), and the search may
        // split a float reduction into vector lanes where the hand schedule
        // does not: the sums round differently.
        ae.tolerance = 1e-4;
        pending_auto_rows.push_back(ae);
    }
    return e;
}

Entry run_kiln_auto(const KilnRunner &k, const std::vector<halide_buffer_t *> &outs, int runs) {
    std::unique_ptr<KilnRunner> a = k.twin("auto");
    Entry e;
    e.system = "kiln auto";
    compile_kiln(e, *a, outs);
    e.timing = time_runs(runs, [&] { a->realize(outs); });
    char note[80];
    std::snprintf(note, sizeof note, "kiln::autoschedule, search %.0f ms (in compile ms)", a->autoschedule_ms());
    e.note = note;
    e.search_ms = a->autoschedule_ms();
    e.schedule = a->autoschedule_text();
    return e;
}

void add_auto_row(Entry e) { pending_auto_rows.push_back(std::move(e)); }

Entry run_halide(Halide::Pipeline p, const std::vector<FBuf *> &outs, int runs) {
    std::vector<Halide::Buffer<>> views;
    for (FBuf *o : outs) views.push_back(halide_view(*o));
    return run_halide(p, Halide::Realization(views), runs);
}

Entry run_halide(Halide::Pipeline p, Halide::Realization r, int runs) {
    Entry e;
    e.system = "halide";
    const double cpu0 = cpu_ms(RUSAGE_THREAD);
    auto t0 = std::chrono::steady_clock::now();
    p.compile_jit(kiln_halide::jit_target());
    e.compile_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
    e.compile_cpu_ms = cpu_ms(RUSAGE_THREAD) - cpu0;
    e.timing = time_runs(runs, [&] { p.realize(r, kiln_halide::jit_target()); });
    return e;
}

Entry run_halide_autoscheduled(Halide::Pipeline p, const std::string &name, int threads,
                               const std::function<Entry(Halide::Pipeline)> &run) {
    Entry e;
    e.system = "halide " + name;
    for (char &ch : e.system) ch = (char)std::tolower((unsigned char)ch);
    try {
        e.search_ms = halide_autoschedule(p, name, threads, &e.schedule);
    } catch (const Halide::Error &err) {
        e.failure = "refused: " + first_line(err.what());
        return e;
    }
    try {
        Entry r = run(p);
        r.system = e.system;
        r.search_ms = e.search_ms;
        r.schedule = e.schedule;
        e = std::move(r);
    } catch (const Halide::Error &err) {
        e.failure = "failed: " + first_line(err.what());
        return e;
    }
    char note[96];
    std::snprintf(note, sizeof note, "Halide 14 %s autoschedule, search %.0f ms (not in compile ms)", name.c_str(),
                  e.search_ms);
    e.note = note;
    return e;
}

Entry run_halide(const HalideTwin &twin, const std::vector<FBuf *> &outs, const std::vector<FBuf *> &ref,
                 const SuiteOptions &o) {
    Entry e = run_halide(twin(true), outs, o.runs);
    if (auto_rows())
        for (const std::string &name : halide_autoschedulers()) {
            // The twin unscheduled, into fresh buffers like outs, checked against ref.
            Halide::Pipeline p = twin(false);
            set_output_estimates(p, outs);
            pending_auto_rows.push_back(run_halide_autoscheduled(p, name, o.threads, [&](Halide::Pipeline q) {
                std::vector<FBuf> copies;
                for (FBuf *out : outs) copies.push_back(zeros_like(*out));
                std::vector<FBuf *> ptrs;
                for (FBuf &c : copies) ptrs.push_back(&c);
                Entry r = run_halide(q, ptrs, o.runs);
                check_against(r, ptrs, ref);
                return r;
            }));
        }
    return e;
}

Entry run_anchor(const std::string &system, const std::function<void()> &f, int runs, const std::string &note,
                 bool same_work) {
    Entry e;
    e.system = system;
    e.note = note;
    e.same_work = same_work;
    e.timing = time_runs(runs, f);
    return e;
}

void check_against(Entry &entry, const std::vector<FBuf *> &outs, const std::vector<FBuf *> &ref) {
    entry.max_rel_err = 0;
    for (size_t i = 0; i < outs.size(); i++) {
        double err = max_rel_err(outs[i]->data(), ref[i]->data(), ref[i]->number_of_elements());
        if (!(err <= entry.max_rel_err)) entry.max_rel_err = err;
    }
}

void warm_up_halide() {
    Halide::Func f("warm_up");
    Halide::Var x("x");
    f(x) = x;
    Halide::Buffer<int> out = f.realize({8}, kiln_halide::jit_target());
    (void)out;
}

void warm_up_kiln() {
    kiln::Func f("warm_up");
    kiln::Var x("x");
    f(x) = x;
    f.realize({8}, KilnRunner::target());
}

}  // namespace kiln_bench
