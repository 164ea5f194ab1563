// The OpenBLAS anchors (anchors.h).
#include <cblas.h>

#include <cmath>

#include "anchors.h"

namespace kiln_bench {

void blas_sgemm(int M, int N, int K, const float *A, const float *B, float *C) {
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, M, N, K, 1.0f, A, K, B, N, 0.0f, C, N);
}

void bias_activation_pass(int M, int N, const float *bias, Activation act, float *C) {
    const float k0 = 0.7978845608f;  // sqrt(2 / pi), the tanh approximation of GELU
#pragma omp parallel for schedule(static)
    for (int y = 0; y < M; y++) {
        float *row = C + (size_t)y * N;
        switch (act) {
        case Activation::None:
            for (int x = 0; x < N; x++) row[x] += bias[x];
            break;
        case Activation::Relu:
            for (int x = 0; x < N; x++) row[x] = std::fmax(row[x] + bias[x], 0.0f);
            break;
        case Activation::GeluTanh:
            for (int x = 0; x < N; x++) {
                float v = row[x] + bias[x];
                row[x] = 0.5f * v * (1.0f + std::tanh(k0 * (v + 0.044715f * v * v * v)));
            }
            break;
        }
    }
}

}  // namespace kiln_bench
