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
//
// gemm_grad: its backward pipeline, the same activations. Given the adjoint
// of the output (d_output), it computes the adjoints of A, B and bias by
// Kiln's reverse-mode autodiff (docs/autodiff.md): output_adjoint
// (d_output), bias_add_adjoint (times the activation's derivative at the
// forward bias_add, which reads the forward matmul), matmul_adjoint (the
// same values), A_adjoint(k, y) = sum over x of matmul_adjoint(x, y) B(x, k)
// and B_adjoint(x, k) = sum over y of A(k, y) matmul_adjoint(x, y) (each an
// update over an RDom spanning the summed Var), bias_adjoint (a sum over
// the rows); copied into d_A, d_B and d_bias.
#include <kiln/Generator.h>
#include <kiln/kiln.h>

using namespace kiln;

namespace {

enum class Activation { Relu, Gelu };

const std::map<std::string, Activation> &activation_names() {
    static const std::map<std::string, Activation> names = {{"relu", Activation::Relu}, {"gelu", Activation::Gelu}};
    return names;
}

// Define output, and matmul and bias_add, as act(A B + bias), k spanning
// A's columns.
void define_gemm(Activation activation, const ImageParam &A, const ImageParam &B, const ImageParam &bias, RDom k,
                 Func output) {
    Var x("x"), y("y");
    Func matmul("matmul"), bias_add("bias_add");
    matmul(x, y) = 0.0f;
    matmul(x, y) += A(k, y) * B(x, k);
    bias_add(x, y) = matmul(x, y) + bias(x);
    Expr v = bias_add(x, y);
    switch (activation) {
    case Activation::Relu:
        output(x, y) = max(v, 0.0f);
        break;
    case Activation::Gelu:
        output(x, y) = 0.5f * v * (1.0f + tanh(0.7978845608f * (v + 0.044715f * v * v * v)));
        break;
    }
}

}  // namespace

class Gemm : public Generator<Gemm> {
public:
    GeneratorParam<Activation> activation{"activation", Activation::Relu, activation_names()};
    GeneratorParam<int> depth{"depth", 0, 0, 1 << 20};  // K; 0: A's width, at run time
    Input<Buffer<float, 2>> A{"A"};
    Input<Buffer<float, 2>> B{"B"};
    Input<Buffer<float, 1>> bias{"bias"};
    Output<Buffer<float, 2>> output{"output"};

    void generate() {
        // depth > 0 fixes K at compile time (the NPU's TMATMUL has a constant shape).
        RDom k(0, depth > 0 ? Expr((int)depth) : A.dim(0).extent(), "k");
        define_gemm(activation, A, B, bias, k, output);
    }
};

class GemmGrad : public Generator<GemmGrad> {
public:
    GeneratorParam<Activation> activation{"activation", Activation::Relu, activation_names()};
    Input<Buffer<float, 2>> A{"A"};
    Input<Buffer<float, 2>> B{"B"};
    Input<Buffer<float, 1>> bias{"bias"};
    Input<Buffer<float, 2>> d_output{"d_output"};
    Output<Buffer<float, 2>> d_A{"d_A"};
    Output<Buffer<float, 2>> d_B{"d_B"};
    Output<Buffer<float, 1>> d_bias{"d_bias"};

    void generate() {
        Func output("output");
        define_gemm(activation, A, B, bias, RDom(0, A.dim(0).extent(), "k"), output);
        Derivative d = propagate_adjoints(output, d_output);
        d_A.set(d(A));
        d_B.set(d(B));
        d_bias.set(d(bias));
    }
};

KILN_REGISTER_GENERATOR(Gemm, gemm)
KILN_REGISTER_GENERATOR(GemmGrad, gemm_grad)
