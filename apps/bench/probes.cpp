// The bandwidth and FMA probes (probes.h).
#include "probes.h"

#include <immintrin.h>
#include <omp.h>

#include <algorithm>
#include <chrono>
#include <limits>
#include <memory>
#include <stdexcept>

namespace kiln_bench {

namespace {

double seconds_since(std::chrono::steady_clock::time_point t0) {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

// Twelve independent accumulator chains hide the FMA latency (4 cycles on
// two ports needs at least eight). The values stay finite: a*x + b with
// a slightly below 1 converges.
constexpr int kChains = 12;

__attribute__((target("avx2,fma"))) float fma_loop_avx2(long iters) {
    __m256 acc[kChains];
    for (int c = 0; c < kChains; c++) acc[c] = _mm256_set1_ps(0.001f * (float)c);
    const __m256 a = _mm256_set1_ps(0.999f), b = _mm256_set1_ps(0.001f);
    for (long i = 0; i < iters; i++) {
        for (int c = 0; c < kChains; c++) acc[c] = _mm256_fmadd_ps(acc[c], a, b);
    }
    __m256 s = acc[0];
    for (int c = 1; c < kChains; c++) s = _mm256_add_ps(s, acc[c]);
    float out[8];
    _mm256_storeu_ps(out, s);
    return out[0];
}

__attribute__((target("avx512f"))) float fma_loop_avx512(long iters) {
    __m512 acc[kChains];
    for (int c = 0; c < kChains; c++) acc[c] = _mm512_set1_ps(0.001f * (float)c);
    const __m512 a = _mm512_set1_ps(0.999f), b = _mm512_set1_ps(0.001f);
    for (long i = 0; i < iters; i++) {
        for (int c = 0; c < kChains; c++) acc[c] = _mm512_fmadd_ps(acc[c], a, b);
    }
    __m512 s = acc[0];
    for (int c = 1; c < kChains; c++) s = _mm512_add_ps(s, acc[c]);
    float out[16];
    _mm512_storeu_ps(out, s);
    return out[0];
}

}  // namespace

double triad_gb_per_s(int array_mib, int runs, int threads) {
    const size_t n = ((size_t)array_mib << 20) / sizeof(double);
    std::unique_ptr<double[]> a(new double[n]), b(new double[n]), c(new double[n]);
    const long len = (long)n;
#pragma omp parallel for num_threads(threads) schedule(static)
    for (long i = 0; i < len; i++) {  // first touch on the threads that use the pages
        a[i] = 0.0;
        b[i] = 1.0;
        c[i] = 2.0;
    }
    const double s = 3.0;
    double best = std::numeric_limits<double>::infinity();
    for (int r = 0; r <= runs; r++) {
        auto t0 = std::chrono::steady_clock::now();
#pragma omp parallel for num_threads(threads) schedule(static)
        for (long i = 0; i < len; i++) a[i] = b[i] + s * c[i];
        if (r > 0) best = std::min(best, seconds_since(t0));
    }
    if (a[n / 2] != 7.0) throw std::runtime_error("the triad probe computed a wrong value");
    return 3.0 * sizeof(double) * (double)n / best / 1e9;
}

double fma_peak_gflops(int runs, int threads, std::string *isa) {
    const bool wide = __builtin_cpu_supports("avx512f");
    if (!wide && !(__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma")))
        throw std::runtime_error("the FMA probe needs AVX2+FMA or AVX-512");
    if (isa) *isa = wide ? "avx512" : "avx2";
    const int lanes = wide ? 16 : 8;
    const long iters = 20'000'000;
    double best = std::numeric_limits<double>::infinity();
    volatile float sink = 0;
    for (int r = 0; r <= runs; r++) {
        auto t0 = std::chrono::steady_clock::now();
#pragma omp parallel num_threads(threads)
        {
            float v = wide ? fma_loop_avx512(iters) : fma_loop_avx2(iters);
#pragma omp critical
            sink = sink + v;
        }
        if (r > 0) best = std::min(best, seconds_since(t0));
    }
    (void)sink;
    const double flops = 2.0 * lanes * kChains * (double)iters * threads;
    return flops / best / 1e9;
}

Roofline measure_roofline(bool quick, int runs, int threads) {
    Roofline r;
    r.bandwidth_gbps = triad_gb_per_s(quick ? 64 : 256, quick ? 3 : std::max(runs, 5), threads);
    r.peak_gflops = fma_peak_gflops(quick ? 2 : 5, threads, &r.fma_isa);
    return r;
}

}  // namespace kiln_bench
