// calibrate_host(): the measurements behind kiln-calibrate (kiln/Calibrate.h).
//
// Each figure is the best of several timed runs (the machine may be shared:
// the best run is the one least disturbed). The vector kernels are compiled
// three times, for SSE, AVX2 + FMA and AVX-512, and the widest the host
// target uses runs, so that "an operation" is one vector of the width the
// emitted kernels use (Target::host().natural_vector_size).
#include "kiln/Calibrate.h"

#include <immintrin.h>
#include <omp.h>
#include <sys/mman.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <fstream>
#include <functional>
#include <sstream>
#include <vector>

#include "kiln/Target.h"

namespace kiln {

namespace {

double now_ns() {
    return (double)std::chrono::duration_cast<std::chrono::nanoseconds>(
               std::chrono::steady_clock::now().time_since_epoch())
        .count();
}

// The shortest of `runs` calls of f, in ns.
double best_ns(int runs, const std::function<void()> &f) {
    double best = 1e300;
    for (int i = 0; i < runs; i++) {
        double t0 = now_ns();
        f();
        best = std::min(best, now_ns() - t0);
    }
    return best;
}

volatile float float_sink;
volatile uint64_t int_sink;

// A chain of dependent integer additions of a register: one cycle each on
// every x86-64 core, so additions per ns is the clock in GHz. Not of an
// immediate: Intel's cores since Golden Cove (Sapphire Rapids, Alder Lake)
// fold `add $1` chains at rename, several a cycle (20 "GHz" measured on a
// Sapphire Rapids class Xeon).
void add_chain(uint64_t rounds) {
    uint64_t x = 0, one = 1;
    for (uint64_t i = 0; i < rounds; i++) {
        __asm__ volatile(
            "add %1, %0\n\tadd %1, %0\n\tadd %1, %0\n\tadd %1, %0\n\t"
            "add %1, %0\n\tadd %1, %0\n\tadd %1, %0\n\tadd %1, %0\n\t"
            "add %1, %0\n\tadd %1, %0\n\tadd %1, %0\n\tadd %1, %0\n\t"
            "add %1, %0\n\tadd %1, %0\n\tadd %1, %0\n\tadd %1, %0\n\t"
            : "+r"(x)
            : "r"(one));
    }
    int_sink = x;
}
constexpr int adds_per_round = 16;

// The vector kernels, once per instruction set: `fma` runs 12 independent
// multiply-add chains (enough to cover the latency, 4 cycles, of two
// pipes), `div` 8 independent division chains, `copy` dst = src * s.
#define KILN_VECTOR_KERNELS(SUFFIX, TARGET, V, SET1, FMA, DIV, MUL, LOAD, STORE, REDUCE)       \
    __attribute__((target(TARGET))) void fma_##SUFFIX(uint64_t rounds) {                       \
        V a[12];                                                                              \
        for (int i = 0; i < 12; i++) a[i] = SET1(1.0f + i * 1e-3f);                            \
        const V m = SET1(0.999999f), c = SET1(1e-7f);                                          \
        for (uint64_t r = 0; r < rounds; r++) {                                                \
            for (int i = 0; i < 12; i++) a[i] = FMA(a[i], m, c);                               \
        }                                                                                     \
        V s = a[0];                                                                           \
        for (int i = 1; i < 12; i++) s = FMA(s, m, a[i]);                                     \
        float_sink = REDUCE(s);                                                               \
    }                                                                                         \
    __attribute__((target(TARGET))) void div_##SUFFIX(uint64_t rounds) {                       \
        V a[8];                                                                               \
        for (int i = 0; i < 8; i++) a[i] = SET1(1e30f + i);                                    \
        const V d = SET1(1.0000001f);                                                          \
        for (uint64_t r = 0; r < rounds; r++) {                                                \
            for (int i = 0; i < 8; i++) a[i] = DIV(a[i], d);                                   \
        }                                                                                     \
        V s = a[0];                                                                           \
        for (int i = 1; i < 8; i++) s = FMA(s, d, a[i]);                                      \
        float_sink = REDUCE(s);                                                               \
    }                                                                                         \
    __attribute__((target(TARGET))) void copy_##SUFFIX(float *dst, const float *src, size_t n) { \
        constexpr size_t lanes = sizeof(V) / sizeof(float);                                    \
        const V s = SET1(1.0000001f);                                                          \
        for (size_t i = 0; i + lanes <= n; i += lanes) STORE(dst + i, MUL(LOAD(src + i), s));  \
    }

float reduce_sse(__m128 v) { return _mm_cvtss_f32(v); }
__attribute__((target("avx2,fma"))) float reduce_avx2(__m256 v) { return _mm256_cvtss_f32(v); }
__attribute__((target("avx512f"))) float reduce_avx512(__m512 v) { return _mm512_cvtss_f32(v); }
inline __m128 fma_sse_op(__m128 a, __m128 b, __m128 c) { return _mm_add_ps(_mm_mul_ps(a, b), c); }

KILN_VECTOR_KERNELS(sse, "sse2", __m128, _mm_set1_ps, fma_sse_op, _mm_div_ps, _mm_mul_ps, _mm_loadu_ps,
                    _mm_storeu_ps, reduce_sse)
KILN_VECTOR_KERNELS(avx2, "avx2,fma", __m256, _mm256_set1_ps, _mm256_fmadd_ps, _mm256_div_ps, _mm256_mul_ps,
                    _mm256_loadu_ps, _mm256_storeu_ps, reduce_avx2)
KILN_VECTOR_KERNELS(avx512, "avx512f", __m512, _mm512_set1_ps, _mm512_fmadd_ps, _mm512_div_ps, _mm512_mul_ps,
                    _mm512_loadu_ps, _mm512_storeu_ps, reduce_avx512)
#undef KILN_VECTOR_KERNELS

struct VectorKernels {
    const char *name;
    void (*fma)(uint64_t);
    void (*div)(uint64_t);
    void (*copy)(float *, const float *, size_t);
    int ops_per_fma;  // SSE has no FMA: a multiply and an add
};

VectorKernels vector_kernels() {
    const int lanes = Target::host().natural_vector_size(Float(32));
    if (lanes >= 16 && __builtin_cpu_supports("avx512f")) return {"AVX-512", fma_avx512, div_avx512, copy_avx512, 1};
    if (lanes >= 8 && __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma"))
        return {"AVX2", fma_avx2, div_avx2, copy_avx2, 1};
    return {"SSE", fma_sse, div_sse, copy_sse, 2};
}

// STREAM's triad a = b + s c over all threads (or one), in bytes per ns
// (three arrays' bytes; the write's read for ownership is not counted).
double triad_bytes_per_ns(std::vector<float> &a, const std::vector<float> &b, const std::vector<float> &c,
                          int threads, int runs) {
    const long n = (long)a.size();
    float *pa = a.data();
    const float *pb = b.data(), *pc = c.data();
    double ns = best_ns(runs, [&] {
#pragma omp parallel for num_threads(threads) schedule(static)
        for (long i = 0; i < n; i++) pa[i] = pb[i] + 3.0f * pc[i];
    });
    return 3.0 * 4.0 * (double)n / ns;
}

std::string fmt(const char *f, double a, double b = 0) {
    char s[200];
    std::snprintf(s, sizeof(s), f, a, b);
    return s;
}

}  // namespace

Calibration calibrate_host(const CalibrationOptions &o) {
    Calibration c;
    MachineModel &m = c.machine;
    m = MachineModel::detected();
    std::ostringstream report;
    const int runs = o.quick ? 3 : 9;

    // The clock.
    const uint64_t add_rounds = o.quick ? 200000 : 2000000;
    add_chain(add_rounds / 10);  // wake the core up from a low clock
    m.ghz = (double)(add_rounds * adds_per_round) / best_ns(runs, [&] { add_chain(add_rounds); });
    report << fmt("clock: %.2f GHz (dependent integer additions, one cycle each)\n", m.ghz);

    // Vector operations per cycle, and a division's extra cycles.
    VectorKernels k = vector_kernels();
    const uint64_t fma_rounds = o.quick ? 50000 : 500000;
    double fma_ns = best_ns(runs, [&] { k.fma(fma_rounds); });
    m.ops_per_cycle = (double)(fma_rounds * 12 * k.ops_per_fma) / (fma_ns * m.ghz);
    report << k.name << fmt(" vectors: %.2f operations per cycle (independent multiply-adds)\n", m.ops_per_cycle);
    const uint64_t div_rounds = o.quick ? 20000 : 200000;
    double div_cycles = best_ns(runs, [&] { k.div(div_rounds); }) * m.ghz / (double)(div_rounds * 8);
    m.div_cycles = std::max(0.5, div_cycles - 1.0 / m.ops_per_cycle);
    report << fmt("division: %.1f cycles per vector (%.1f beyond one operation)\n", div_cycles, m.div_cycles);

    // Read + write bandwidth of each cache level, one core: a copy within
    // half the level (the other half is the other array and what else the
    // level holds).
    auto copy_bytes_per_ns = [&](int64_t level_bytes) {
        size_t n = (size_t)std::max<int64_t>(1024, level_bytes / 4 / 4);  // two arrays of a quarter each
        std::vector<float> src(n, 1.0f), dst(n, 0.0f);
        int repeat = (int)std::max<int64_t>(1, (o.quick ? 2 : 16) * (int64_t(1) << 20) / (int64_t)(n * 8));
        k.copy(dst.data(), src.data(), n);  // bring both into the level
        double ns = best_ns(runs, [&] {
            for (int r = 0; r < repeat; r++) k.copy(dst.data(), src.data(), n);
        });
        float_sink = dst[n / 2];
        return 8.0 * (double)n * repeat / ns;
    };
    m.l1_bytes_per_ns = copy_bytes_per_ns(m.l1_bytes);
    m.l2_bytes_per_ns = copy_bytes_per_ns(m.l2_bytes);
    m.l3_bytes_per_ns = copy_bytes_per_ns(m.l3_bytes);
    report << fmt("L1 %.0f, L2 %.0f", m.l1_bytes_per_ns, m.l2_bytes_per_ns)
           << fmt(", L3 %.0f bytes/ns, one core (copy within half the level)\n", m.l3_bytes_per_ns);

    // DRAM: arrays of twice L3 each (at least 32 MiB; 8 MiB when quick).
    size_t n = (size_t)std::max<int64_t>((o.quick ? 8 : 32) << 18, o.quick ? 0 : m.l3_bytes * 2 / 4);
    std::vector<float> a(n, 0.0f), b(n, 1.0f), cc(n, 2.0f);
    m.dram_bytes_per_ns = triad_bytes_per_ns(a, b, cc, 1, runs);
    m.dram_total_bytes_per_ns = triad_bytes_per_ns(a, b, cc, m.threads, runs);
    report << fmt("DRAM %.1f bytes/ns one core, %.1f", m.dram_bytes_per_ns, m.dram_total_bytes_per_ns)
           << " all " << m.threads << " threads (triad over " << (n * 4 >> 20) << " MiB arrays)\n";

    // Starting a parallel loop (fork and join of the OpenMP team), as this
    // process's OpenMP environment runs it: with libgomp's workers spinning
    // between loops (its default), or asleep (OMP_WAIT_POLICY=passive),
    // when each loop wakes them. The other figure keeps its default: a
    // process cannot change its wait policy once OpenMP has started.
    const int loops = o.quick ? 20 : 2000;
    volatile int touched = 0;
    const double start_ns = best_ns(runs, [&] {
                                for (int l = 0; l < loops; l++) {
#pragma omp parallel for num_threads(m.threads)
                                    for (int t = 0; t < m.threads; t++) touched = t;
                                }
                            }) /
                            loops;
    const bool asleep = m.workers_sleep;  // detected() above read the environment
    (asleep ? m.parallel_wake_ns : m.parallel_loop_ns) = start_ns;
    report << fmt("parallel loop: %.2f us to start and join (%.0f threads), its workers ", start_ns / 1000, m.threads)
           << (asleep ? "woken (OMP_WAIT_POLICY=passive; the spinning workers' figure is the default: measure it without "
                        "the passive policy)\n"
                      : "spinning (the figure for sleeping workers is the default: measure it with "
                        "OMP_WAIT_POLICY=passive)\n");

    // One heap allocation (64 KiB, used and freed), and the first touch of
    // a page of fresh memory.
    const int allocations = o.quick ? 100 : 2000;
    m.allocation_ns = std::max(1.0, best_ns(runs, [&] {
                                        for (int i = 0; i < allocations; i++) {
                                            volatile char *p = (char *)std::malloc(64 << 10);
                                            p[0] = 1;
                                            std::free((void *)p);
                                        }
                                    }) / allocations);
    const size_t region = (size_t)(o.quick ? 16 : 64) << 20;
    m.page_ns = best_ns(runs, [&] {
                    char *p = (char *)mmap(nullptr, region, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
                    if (p == MAP_FAILED) return;
                    for (size_t i = 0; i < region; i += 4096) p[i] = 1;
                    munmap(p, region);
                }) /
                (double)(region / 4096);
    report << fmt("allocation: %.0f ns (64 KiB); first touch of a page: %.0f ns\n", m.allocation_ns, m.page_ns);
    c.report = report.str();

    std::string cpu;
    std::ifstream info("/proc/cpuinfo");
    for (std::string line; std::getline(info, line);)
        if (line.rfind("model name", 0) == 0) {
            cpu = line.substr(line.find(':') + 2);
            break;
        }
    char date[32];
    std::time_t t = std::time(nullptr);
    std::strftime(date, sizeof(date), "%Y-%m-%d %H:%M", std::localtime(&t));
    c.header = "Kiln machine file, written by kiln-calibrate" + std::string(o.quick ? " --quick" : "") + " on " +
               date + "\nCPU: " + (cpu.empty() ? "unknown" : cpu) + "; vectors: " + k.name + "\n" + c.report;
    m.source = "kiln-calibrate";
    return c;
}

}  // namespace kiln
