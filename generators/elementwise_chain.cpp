// elementwise_chain: a chain of three pointwise stages, an activation chosen
// by a GeneratorParam:
//
//   variant=softplus      stage1 = exp(x),  stage2 = stage1 + 1,  output = log(stage2)
//   variant=tanh_affine   stage1 = a * x,   stage2 = stage1 + b,  output = tanh(stage2)
//
// The stages have the same names in both variants, so one schedule file
// serves both. The scalar Inputs a and b are in the signature of both (a
// generator's signature does not depend on what its algorithm reads).
//
// elementwise_chain_grad: its backward pipeline, the same variants. Given
// the adjoint of the output (d_output), it computes the adjoint of the
// input, d_input = d_output * d output / d input, by Kiln's reverse-mode
// autodiff (docs/autodiff.md): output_adjoint (d_output), stage2_adjoint,
// stage1_adjoint, input_adjoint, each a pointwise Func that reads the
// forward stages it needs, and d_input, the copy into the output buffer.
// The adjoints of a and b are not outputs (the signature would depend on
// the variant).
#include <kiln/Generator.h>
#include <kiln/kiln.h>

using namespace kiln;

namespace {

enum class Variant { Softplus, TanhAffine };

const std::map<std::string, Variant> &variant_names() {
    static const std::map<std::string, Variant> names = {{"softplus", Variant::Softplus},
                                                         {"tanh_affine", Variant::TanhAffine}};
    return names;
}

// Define output, stage1 and stage2 as the chain of `variant`.
void define_chain(Variant variant, const ImageParam &input, Expr a, Expr b, Func output) {
    Var x("x"), y("y");
    Func stage1("stage1"), stage2("stage2");
    switch (variant) {
    case Variant::Softplus:
        stage1(x, y) = exp(input(x, y));
        stage2(x, y) = stage1(x, y) + 1.0f;
        output(x, y) = log(stage2(x, y));
        break;
    case Variant::TanhAffine:
        stage1(x, y) = a * input(x, y);
        stage2(x, y) = stage1(x, y) + b;
        output(x, y) = tanh(stage2(x, y));
        break;
    }
}

}  // namespace

class ElementwiseChain : public Generator<ElementwiseChain> {
public:
    GeneratorParam<Variant> variant{"variant", Variant::Softplus, variant_names()};
    Input<Buffer<float, 2>> input{"input"};
    Input<float> a{"a", 1.0f};
    Input<float> b{"b", 0.0f};
    Output<Buffer<float, 2>> output{"output"};

    void generate() { define_chain(variant, input, a, b, output); }
};

class ElementwiseChainGrad : public Generator<ElementwiseChainGrad> {
public:
    GeneratorParam<Variant> variant{"variant", Variant::Softplus, variant_names()};
    Input<Buffer<float, 2>> input{"input"};
    Input<float> a{"a", 1.0f};
    Input<float> b{"b", 0.0f};
    Input<Buffer<float, 2>> d_output{"d_output"};
    Output<Buffer<float, 2>> d_input{"d_input"};

    void generate() {
        Func output("output");
        define_chain(variant, input, a, b, output);
        d_input.set(propagate_adjoints(output, d_output)(input));
    }
};

KILN_REGISTER_GENERATOR(ElementwiseChain, elementwise_chain)
KILN_REGISTER_GENERATOR(ElementwiseChainGrad, elementwise_chain_grad)
