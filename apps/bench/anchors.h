// The anchors of apps/bench: libraries that users would otherwise call for
// the same work. All buffers are dense float32, row-major in the C sense
// (the last index is innermost, Kiln's x).
//   OpenBLAS  sgemm, and sgemm followed by a separate bias + activation pass
//   oneDNN    matmul with bias and an eltwise post-op, layer normalization,
//             softmax, convolution with bias and a ReLU post-op
//   OpenCV    3x3 box blur (BORDER_REPLICATE)
// Library set-up (oneDNN primitive creation) happens in the constructors,
// outside the timed runs, as a library user would cache it.
#pragma once
#include <memory>

namespace kiln_bench {

enum class Activation { None, Relu, GeluTanh };

void set_anchor_threads(int threads);

// C[M][N] = A[M][K] * B[K][N].
void blas_sgemm(int M, int N, int K, const float *A, const float *B, float *C);
// C[y][x] = act(C[y][x] + bias[x]): the separate epilogue pass after sgemm,
// written as a user would (OpenMP over rows, a vectorizable inner loop).
void bias_activation_pass(int M, int N, const float *bias, Activation act, float *C);

class DnnlMatmul {
public:
    // C[M][N] = act(A[M][K] * B[K][N] + bias[N]) as one oneDNN primitive.
    DnnlMatmul(int M, int N, int K, Activation act);
    ~DnnlMatmul();
    void run(const float *A, const float *B, const float *bias, float *C);

private:
    struct Impl;
    std::unique_ptr<Impl> impl_;
};

class DnnlLayerNorm {
public:
    // out[r][c] = (x[r][c] - mean_r) / sqrt(var_r + eps) * gamma[c] + beta[c]
    DnnlLayerNorm(int rows, int cols, float eps);
    ~DnnlLayerNorm();
    void run(const float *x, const float *gamma, const float *beta, float *out);

private:
    struct Impl;
    std::unique_ptr<Impl> impl_;
};

class DnnlSoftmax {
public:
    // Softmax over each row of [rows][cols].
    DnnlSoftmax(int rows, int cols);
    ~DnnlSoftmax();
    void run(const float *x, float *out);

private:
    struct Impl;
    std::unique_ptr<Impl> impl_;
};

class DnnlConvRelu {
public:
    // out = relu(conv(in, w) + b), stride 1, no padding ("valid"), batch 1.
    // nhwc: in [H][W][Cin], w [KH][KW][Cin][Cout], out [H-KH+1][W-KW+1][Cout];
    // otherwise in [Cin][H][W], w [Cout][Cin][KH][KW], out [Cout][..][..].
    DnnlConvRelu(int H, int W, int Cin, int Cout, int KH, int KW, bool nhwc);
    ~DnnlConvRelu();
    void run(const float *in, const float *w, const float *b, float *out);

private:
    struct Impl;
    std::unique_ptr<Impl> impl_;
};

// out = 3x3 mean of in with edge replication, [h][w].
void opencv_box3x3(int w, int h, const float *in, float *out);

}  // namespace kiln_bench
