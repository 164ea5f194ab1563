// many_users: one producer, two consumers, two outputs:
//
//   t(x, y)  = u * v
//   z1(x, y) = t + b
//   z2(x, y) = t - c
//
// The schedule decides what happens to t: recomputed in each consumer
// (inlined: u and v are read by both), materialized once (compute_root: t
// goes to memory and is read back twice), or computed in one loop nest
// with both consumers (horizontal fusion). b and c are scalars.
#include <kiln/Generator.h>
#include <kiln/kiln.h>

using namespace kiln;

class ManyUsers : public Generator<ManyUsers> {
public:
    Input<Buffer<float, 2>> u{"u"};
    Input<Buffer<float, 2>> v{"v"};
    Input<float> b{"b", 1.0f};
    Input<float> c{"c", 1.0f};
    Output<Buffer<float, 2>> z1{"z1"};
    Output<Buffer<float, 2>> z2{"z2"};

    void generate() {
        Var x("x"), y("y");
        Func t("t");
        t(x, y) = u(x, y) * v(x, y);
        z1(x, y) = t(x, y) + b;
        z2(x, y) = t(x, y) - c;
    }
};

KILN_REGISTER_GENERATOR(ManyUsers, many_users)
