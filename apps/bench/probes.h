// The roofline of the machine, measured in the same run as the kernels:
// memory bandwidth (a STREAM-style triad) and peak float32 FMA throughput.
// Both run on the same thread count as the pipelines. The FMA probe uses the
// widest vectors the host has (AVX-512 if present, else AVX2+FMA): core
// clocks under load differ from the nominal clock, so "% of peak" is taken
// against this measurement, never against a datasheet.
#pragma once
#include <string>

namespace kiln_bench {

struct Roofline {
    double bandwidth_gbps = 0;  // triad, GB/s (1e9 bytes)
    double peak_gflops = 0;     // float32, FMA = 2 flops
    std::string fma_isa;        // "avx512" or "avx2"
};

// STREAM triad a[i] = b[i] + s * c[i] over three arrays of `array_mib` MiB of
// doubles; best of `runs` after a warm-up.
double triad_gb_per_s(int array_mib, int runs, int threads);

// Peak float32 GFLOP/s: independent FMA chains in registers, on every thread.
double fma_peak_gflops(int runs, int threads, std::string *isa);

Roofline measure_roofline(bool quick, int runs, int threads);

}  // namespace kiln_bench
