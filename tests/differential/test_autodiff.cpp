// Autodiff against Halide 14's propagate_adjoints: the same algorithm, the
// same output adjoint (an image, zero outside its region) and the same
// region, in both libraries (d(image) is Halide 14's d(Func(image)), the
// image's own adjoint); the adjoints of the input (and of the
// intermediates) must agree.
//
// Tolerance. The two libraries sum the same terms in different orders
// (Halide scatters a clamped read over an RDom where Kiln gathers, and
// orders the sums of an adjoint differently) and Halide contracts FMAs, so
// the float32 results differ by rounding of the partial sums: up to n terms
// (27 in the product) below 1 in magnitude, n * 2^-24 ~ 2e-6 of their
// total; 3e-5 relative to max(|halide|, 1e-2). Measured: 4e-6 (blur), 9e-6
// (product).
#include "patterns.h"

namespace {

template<typename L>
typename L::Func zero_outside(const typename L::ImageParam &im, int w, int h) {
    return L::bounded(kd::Boundary::ConstantExterior, typename L::Func(im), {{0, w}, {0, h}}, 0.0f);
}

// The output's region [0, w) x [0, h) as each library takes it: Halide 14's
// propagate_adjoints makes the interval [min, min + extent] of each Range
// (one past the region: its own Buffer overload passes extent - 1), so it
// is given extents one smaller to sum over the same region as Kiln.
template<typename L>
typename L::Region output_region(int w, int h) {
    int less = std::is_same<L, kd::H>::value ? 1 : 0;
    return {{0, w - less}, {0, h - less}};
}

}  // namespace

TEST_CASE("autodiff: 3x3 blur with repeat_edge, against Halide's propagate_adjoints", "[autodiff]") {
    const int w = 37, h = 23;
    kiln::Buffer<float> input = kd::random_buffer({w, h}, -1, 1, 1), seed = kd::random_buffer({w, h}, -1, 1, 2);
    // The adjoint of the input, of the intermediate and of the boundary
    // condition, each the one output of its pipeline (0, 1, 2).
    for (int which = 0; which < 3; which++) {
        kd::Out<float> out(which == 0 ? "in_adjoint" : which == 1 ? "blur_x_adjoint" : "clamped_adjoint", {w, h});
        kd::run(
            [&](auto lib) {
                using L = decltype(lib);
                typename L::ImageParam in(L::f32, 2, "in"), d_out(L::f32, 2, "d_out");
                L::set(in, input);
                L::set(d_out, seed);
                typename L::Var x("x"), y("y");
                typename L::Func clamped = L::repeat_edge(in), blur_x("blur_x"), blur_y("blur_y");
                blur_x(x, y) = (clamped(x - 1, y) + clamped(x, y) + clamped(x + 1, y)) / 3;
                blur_y(x, y) = (blur_x(x, y - 1) + blur_x(x, y) + blur_x(x, y + 1)) / 3;
                auto d = propagate_adjoints(blur_y, zero_outside<L>(d_out, w, h), output_region<L>(w, h));
                return typename L::Pipeline(which == 0 ? d(in) : which == 1 ? d(blur_x) : d(clamped));
            },
            {out.pair()});
        kd::compare_relative(out, 3e-5, 1e-2);
    }
}

TEST_CASE("autodiff: matrix multiply, against Halide's propagate_adjoints", "[autodiff]") {
    const int n = 19, m = 13, k = 27;
    kiln::Buffer<float> a = kd::random_buffer({k, m}, -1, 1, 3), b = kd::random_buffer({n, k}, -1, 1, 4),
                        seed = kd::random_buffer({n, m}, -1, 1, 5);
    kd::Out<float> da("A_adjoint", {k, m}), db("B_adjoint", {n, k});
    kd::run(
        [&](auto lib) {
            using L = decltype(lib);
            typename L::ImageParam A(L::f32, 2, "A"), B(L::f32, 2, "B"), d_out(L::f32, 2, "d_out");
            L::set(A, a);
            L::set(B, b);
            L::set(d_out, seed);
            typename L::Var x("x"), y("y");
            typename L::RDom r(0, k, "r");
            typename L::Func c("c");
            c(x, y) = 0.0f;
            c(x, y) += A(r, y) * B(x, r);
            auto d = propagate_adjoints(c, zero_outside<L>(d_out, n, m), output_region<L>(n, m));
            return typename L::Pipeline(std::vector<typename L::Func>{d(A), d(B)});
        },
        {da.pair(), db.pair()});
    kd::compare_relative(da, 3e-5, 1e-2);
    kd::compare_relative(db, 3e-5, 1e-2);
}
