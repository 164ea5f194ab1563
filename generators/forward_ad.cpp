// forward_ad: the product z = u * v with its forward-mode derivative, as an
// automatic-differentiation framework emits it (a tangent du, dv per input):
//
//   z(x, y)     = u * v                          the primal
//   du_v(x, y)  = du * v                         the two terms of the product rule
//   u_dv(x, y)  = u * dv
//   dz(x, y)    = du_v + u_dv                    the tangent
//
// Two outputs that read the same inputs: unfused, every operation is a
// kernel of its own (du_v and u_dv go to memory); fused, the terms are
// inlined into dz and one loop nest can compute z and dz from one read of
// u, v, du and dv (multi-output fusion). It is a generator of its own, not a
// variant of elementwise_chain, because its signature (four inputs, two
// outputs) differs and a GeneratorParam does not change a signature.
#include <kiln/Generator.h>
#include <kiln/kiln.h>

using namespace kiln;

class ForwardAD : public Generator<ForwardAD> {
public:
    Input<Buffer<float, 2>> u{"u"};
    Input<Buffer<float, 2>> du{"du"};
    Input<Buffer<float, 2>> v{"v"};
    Input<Buffer<float, 2>> dv{"dv"};
    Output<Buffer<float, 2>> z{"z"};
    Output<Buffer<float, 2>> dz{"dz"};

    void generate() {
        Var x("x"), y("y");
        Func du_v("du_v"), u_dv("u_dv");
        z(x, y) = u(x, y) * v(x, y);
        du_v(x, y) = du(x, y) * v(x, y);
        u_dv(x, y) = u(x, y) * dv(x, y);
        dz(x, y) = du_v(x, y) + u_dv(x, y);
    }
};

KILN_REGISTER_GENERATOR(ForwardAD, forward_ad)
