// A generator written outside Kiln: output = input * gain + offset.
#include <kiln/Generator.h>
#include <kiln/kiln.h>

using namespace kiln;

class Brighten : public Generator<Brighten> {
public:
    GeneratorParam<float> gain{"gain", 2.0f};
    Input<Buffer<uint8_t, 2>> input{"input"};
    Input<float> offset{"offset", 0.0f, -1.0f, 1.0f};
    Output<Buffer<float, 2>> output{"output"};

    void generate() {
        Var x("x"), y("y");
        output(x, y) = cast<float>(input(x, y)) * gain.value() + offset;
    }
};

KILN_REGISTER_GENERATOR(Brighten, brighten)
