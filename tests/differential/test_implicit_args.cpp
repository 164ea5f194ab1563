// Implicit arguments (`_`, and `_0` as a value) against Halide 14: the same
// Funcs defined with `_` on both sides, scheduled alike, give the same
// outputs and dimensions.
#include "diff.h"

namespace {

// Each library spells `_` and `_0` with its own types.
template<typename L>
struct Implicit;
template<>
struct Implicit<kd::K> {
    static kiln::Var all() { return kiln::_; }
    static kiln::Var first() { return kiln::_0; }
};
template<>
struct Implicit<kd::H> {
    static Halide::Var all() { return Halide::_; }
    static Halide::Var first() { return Halide::_0; }
};

}  // namespace

TEST_CASE("differential: implicit arguments", "[differential][implicit]") {
    kiln::Buffer<int32_t> input = kt::random_image<int32_t>(60, 40, 0, 0, -1000, 1000, 77);
    auto build = [&](auto lib) {
        using L = decltype(lib);
        using I = Implicit<L>;
        typename L::ImageParam in(L::i32, 2, "in");
        L::set(in, input);
        typename L::Var x("x"), y("y");
        typename L::Func g("g"), h("h"), out("out");
        g(I::all()) = in(I::all()) * 2 + 1;                    // g(_0, _1)
        h(x, I::all()) = g(x, I::all()) - g(x + 1, I::all());  // h(x, _0)
        out(I::all()) = h(I::all()) * 3 + I::first();        // out(_0, _1), _0 as a value
        g.compute_root().vectorize(I::first(), 8);
        h.compute_root();
        return typename L::Pipeline(out);
    };
    kd::Out<int32_t> out("out", {55, 38});
    kd::run(build, {out.pair()});
    kd::compare(out);
}
