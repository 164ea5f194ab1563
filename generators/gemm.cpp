// gemm: a matrix product with a bias and an activation.
//
//   matmul(x, y)   = Σ_k A(k, y) · B(x, k)        k over A's columns (A is M rows of K)
//   bias_add(x, y) = matmul(x, y) + bias(x)
//   output(x, y)   = act(bias_add(x, y))
//
// The element type of A, B, bias and the output is a GeneratorParam (type=
// float32, the default; float16 or bfloat16): the products and the sum are
// float32 whatever it is (each 16-bit value widened exactly), and the output
// is rounded to its type once, at the end: the mixed precision of a matrix
// unit that takes 16-bit operands and accumulates in float32.
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
// gemm_int8: the quantized product, int8 A and B summed in int32, an int32
// bias, and the output requantized to int8 by the GeneratorParam scale:
//
//   matmul(x, y)   = Σ_k int32(A(k, y)) · int32(B(x, k))
//   bias_add(x, y) = matmul(x, y) + bias(x)
//   output(x, y)   = saturating_cast<int8_t>(round(float(max(bias_add(x, y), 0)) * scale))
//
// (ReLU only; round is to nearest, ties to even). Integer sums are exact,
// so every schedule computes the same bits; on the NPU the product runs on
// the matrix unit's int8 path and the epilogue on the fix pipe as the tile
// is stored (docs/npu.md §6). The stages have gemm's names, so gemm's
// schedules serve it.
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
// A's columns, in float32; the output is rounded to `type`.
void define_gemm(Activation activation, const ImageParam &A, const ImageParam &B, const ImageParam &bias, RDom k,
                 Func output, Type type = Float(32)) {
    Var x("x"), y("y");
    Func matmul("matmul"), bias_add("bias_add");
    matmul(x, y) = 0.0f;
    matmul(x, y) += cast<float>(A(k, y)) * cast<float>(B(x, k));
    bias_add(x, y) = matmul(x, y) + cast<float>(bias(x));
    Expr v = bias_add(x, y);
    switch (activation) {
    case Activation::Relu:
        output(x, y) = cast(type, max(v, 0.0f));
        break;
    case Activation::Gelu:
        output(x, y) = cast(type, 0.5f * v * (1.0f + tanh(0.7978845608f * (v + 0.044715f * v * v * v))));
        break;
    }
}

}  // namespace

class Gemm : public Generator<Gemm> {
public:
    GeneratorParam<Activation> activation{"activation", Activation::Relu, activation_names()};
    GeneratorParam<int> depth{"depth", 0, 0, 1 << 20};  // K; 0: A's width, at run time
    GeneratorParam<Type> type{"type", Float(32)};       // of A, B, bias and the output
    Input<Buffer<void, 2>> A{"A", type};
    Input<Buffer<void, 2>> B{"B", type};
    Input<Buffer<void, 1>> bias{"bias", type};
    Output<Buffer<void, 2>> output{"output", type};

    void generate() {
        // depth > 0 fixes K at compile time (the NPU's TMATMUL has a constant shape).
        RDom k(0, depth > 0 ? Expr((int)depth) : A.dim(0).extent(), "k");
        define_gemm(activation, A, B, bias, k, output, type);
    }
};

class GemmInt8 : public Generator<GemmInt8> {
public:
    GeneratorParam<int> depth{"depth", 0, 0, 1 << 20};  // K; 0: A's width, at run time
    GeneratorParam<float> scale{"scale", 1.0f / 1024};  // requantization: int8 output per unit of the int32 sum
    Input<Buffer<int8_t, 2>> A{"A"};
    Input<Buffer<int8_t, 2>> B{"B"};
    Input<Buffer<int32_t, 1>> bias{"bias"};
    Output<Buffer<int8_t, 2>> output{"output"};

    void generate() {
        RDom k(0, depth > 0 ? Expr((int)depth) : A.dim(0).extent(), "k");
        Var x("x"), y("y");
        Func matmul("matmul"), bias_add("bias_add");
        matmul(x, y) = 0;
        matmul(x, y) += cast<int32_t>(A(k, y)) * cast<int32_t>(B(x, k));
        bias_add(x, y) = matmul(x, y) + bias(x);
        output(x, y) = saturating_cast<int8_t>(round(cast<float>(max(bias_add(x, y), 0)) * (float)scale));
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
KILN_REGISTER_GENERATOR(GemmInt8, gemm_int8)
KILN_REGISTER_GENERATOR(GemmGrad, gemm_grad)
