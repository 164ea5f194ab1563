// elementwise_chain: a chain of three pointwise stages, an activation chosen
// by a GeneratorParam:
//
//   variant=softplus      stage1 = exp(x),  stage2 = stage1 + 1,  output = log(stage2)
//   variant=tanh_affine   stage1 = a * x,   stage2 = stage1 + b,  output = tanh(stage2)
//
// The stages have the same names in both variants, so one schedule file
// serves both. The scalar Inputs a and b are in the signature of both (a
// generator's signature does not depend on what its algorithm reads).
#include <kiln/Generator.h>
#include <kiln/kiln.h>

using namespace kiln;

class ElementwiseChain : public Generator<ElementwiseChain> {
public:
    enum class Variant { Softplus, TanhAffine };
    GeneratorParam<Variant> variant{"variant", Variant::Softplus,
                                    {{"softplus", Variant::Softplus}, {"tanh_affine", Variant::TanhAffine}}};
    Input<Buffer<float, 2>> input{"input"};
    Input<float> a{"a", 1.0f};
    Input<float> b{"b", 0.0f};
    Output<Buffer<float, 2>> output{"output"};

    void generate() {
        Var x("x"), y("y");
        Func stage1("stage1"), stage2("stage2");
        switch (variant.value()) {
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
};

KILN_REGISTER_GENERATOR(ElementwiseChain, elementwise_chain)
