// gemm: a matrix product with a bias and an activation, float32.
//
//   matmul(x, y)   = Σ_k A(k, y) · B(x, k)        k over A's columns (A is M rows of K)
//   bias_add(x, y) = matmul(x, y) + bias(x)
//   output(x, y)   = act(bias_add(x, y))
//
// x runs along a row of the result (N columns, B's rows have N values), y
// over the M rows. The activation is a GeneratorParam:
//
//   activation=relu   act(v) = max(v, 0)
//   activation=gelu   act(v) = 0.5 v (1 + tanh(√(2/π) (v + 0.044715 v³)))   (the tanh approximation)
//
// The sum runs over k in order 0, 1, ..., K-1 for every (x, y) whatever the
// schedule (the update's k loop may be moved, not split), so every schedule
// computes the same bits. The stages keep their names in both variants, so
// one schedule file serves both.
#include <kiln/Generator.h>
#include <kiln/kiln.h>

using namespace kiln;

class Gemm : public Generator<Gemm> {
public:
    enum class Activation { Relu, Gelu };
    GeneratorParam<Activation> activation{"activation", Activation::Relu,
                                          {{"relu", Activation::Relu}, {"gelu", Activation::Gelu}}};
    GeneratorParam<int> depth{"depth", 0, 0, 1 << 20};  // K; 0: A's width, at run time
    Input<Buffer<float, 2>> A{"A"};
    Input<Buffer<float, 2>> B{"B"};
    Input<Buffer<float, 1>> bias{"bias"};
    Output<Buffer<float, 2>> output{"output"};

    void generate() {
        Var x("x"), y("y");
        // depth > 0 fixes K at compile time (the NPU's TMATMUL has a constant shape).
        RDom k(0, depth > 0 ? Expr((int)depth) : A.dim(0).extent(), "k");
        Func matmul("matmul"), bias_add("bias_add");
        matmul(x, y) = 0.0f;
        matmul(x, y) += A(k, y) * B(x, k);
        bias_add(x, y) = matmul(x, y) + bias(x);
        Expr v = bias_add(x, y);
        switch (activation.value()) {
        case Activation::Relu:
            output(x, y) = max(v, 0.0f);
            break;
        case Activation::Gelu:
            output(x, y) = 0.5f * v * (1.0f + tanh(0.7978845608f * (v + 0.044715f * v * v * v)));
            break;
        }
    }
};

KILN_REGISTER_GENERATOR(Gemm, gemm)
