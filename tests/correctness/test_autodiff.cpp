// Autodiff (kiln/Derivative.h): gradients of float64 pipelines against
// central finite differences, (L(in + h e_i) - L(in - h e_i)) / 2h with
// h = 1e-6, for every element of every input, on random inputs.
//
// Tolerance. Central differences of a smooth loss err by O(h^2 L''') from
// truncation and O(eps |L| / h) from rounding: with float64 (eps 1.1e-16),
// |L| below ~100 and h = 1e-6 that is below 1e-8; each case allows
// 1e-6 * max(1, |gradient|). Where a float32 stage rounds the values, a
// step of 1e-6 is below its resolution (2^-24 relative): there h = 1e-3
// and the tolerance 1e-3 (truncation ~h^2, rounding ~6e-8 / h). Kinks (max, select, abs, clamp) are never within h of a
// random input.
#include "check.h"
#include "ir/Function.h"

#include <random>

using namespace kiln;

namespace {

Var x("x"), y("y");
// 0.0 is a float32 constant (as in Halide): the pipelines here are float64.
const Expr zero = make_zero(Float(64));

struct Data {
    ImageParam param;
    Buffer<double> buf;
};

Data random_input(const std::string &name, std::vector<int> sizes, uint32_t seed, double lo = -1, double hi = 1) {
    Data in{ImageParam(Float(64), (int)sizes.size(), name), Buffer<double>(sizes)};
    std::mt19937 rng(seed);
    std::uniform_real_distribution<double> u(lo, hi);
    in.buf.for_each_value([&](double &v) { v = u(rng); });
    in.param.set(in.buf);
    return in;
}

double value_of(Func &loss) {
    Buffer<double> b = loss.realize(std::vector<int>{});
    return b();
}

// loss() = sum over out's region [0, sizes) of out * weights (random).
Func weighted_sum(Func out, std::vector<int> sizes, uint32_t seed = 99) {
    static int count = 0;
    Data w = random_input("weights" + std::to_string(count++), sizes, seed);
    std::vector<std::pair<Expr, Expr>> region;
    for (int s : sizes) region.push_back({0, s});
    RDom r(region, "loss_r");
    std::vector<Expr> at;
    for (int i = 0; i < r.dimensions(); i++) at.push_back(r[i]);
    Func loss("loss");
    loss() = zero;
    loss() += out(at) * w.param(at);
    static std::vector<Data> keep;  // the weights' buffers stay bound
    keep.push_back(w);
    return loss;
}

// The gradient of loss with respect to each input, against central differences.
void check_gradients(Func loss, std::vector<Data> inputs, double tol, double h = 1e-6) {
    Derivative d = propagate_adjoints(loss);
    for (Data &in : inputs) {
        std::vector<int> sizes;
        for (int i = 0; i < in.buf.dimensions(); i++) sizes.push_back(in.buf.dim(i).extent());
        Buffer<double> g(sizes);
        Func din = d(in.param);
        CHECK(din.name() == in.param.name() + "_adjoint");
        din.realize(g);
        double worst = 0;
        in.buf.for_each_element([&](const int *pos) {
            double &v = in.buf(pos), keep = v;
            v = keep + h;
            double up = value_of(loss);
            v = keep - h;
            double down = value_of(loss);
            v = keep;
            double fd = (up - down) / (2 * h), ad = g(pos);
            double err = std::abs(fd - ad) / std::max(1.0, std::abs(fd));
            worst = std::max(worst, err);
            if (err > tol) {
                INFO(in.param.name() << " at (" << pos[0] << (in.buf.dimensions() > 1 ? ", " + std::to_string(pos[1]) : "")
                                     << "): autodiff " << ad << ", finite differences " << fd);
                CHECK(err <= tol);
            }
        });
        INFO("largest relative error of d loss / d " << in.param.name() << ": " << worst);
        CHECK(worst <= tol);
    }
}

// The 3x3 blur with repeat_edge.
void blur3x3(const ImageParam &in, Func &blur_x, Func &blur_y) {
    Func clamped = BoundaryConditions::repeat_edge(in);
    blur_x(x, y) = (clamped(x - 1, y) + clamped(x, y) + clamped(x + 1, y)) / 3;
    blur_y(x, y) = (blur_x(x, y - 1) + blur_x(x, y) + blur_x(x, y + 1)) / 3;
}

}  // namespace

TEST_CASE("autodiff: pointwise chain (softplus and every math function)", "[autodiff]") {
    Data in = random_input("in", {17}, 1, 0.2, 1.5);
    Func pre("pre"), soft("soft"), f("f");
    pre(x) = in.param(x) * 1.5 - 0.25;
    soft(x) = log(1.0 + exp(pre(x)));
    f(x) = tanh(soft(x)) * sqrt(soft(x) + 1) + sin(pre(x)) * cos(in.param(x)) + pow(soft(x), in.param(x)) +
           abs(pre(x) - 0.5) + min(pre(x), 0.3) + max(pre(x), 0.4) + soft(x) / (in.param(x) + 2) -
           floor(pre(x) * 3) + cast<double>(cast<int>(in.param(x) * 100)) + lerp(pre(x), soft(x), in.param(x) * 0.5);
    check_gradients(weighted_sum(f, {17}), {in}, 1e-6);
}

TEST_CASE("autodiff: trigonometric, hyperbolic and inverse functions, atan2, hypot", "[autodiff]") {
    Data in = random_input("in", {17}, 7, 0.2, 1.5);
    Func unit("unit"), f("f");
    unit(x) = in.param(x) * 0.5 - 0.4;  // in (-0.3, 0.35): inside asin's, acos's and atanh's domain
    Expr v = in.param(x);
    f(x) = tan(unit(x)) + asin(unit(x)) * 2 + acos(unit(x)) * v + atan(v * 3) + atan2(unit(x), v) + sinh(v) * cosh(unit(x)) +
           asinh(v - 1) + acosh(v + 1.2) + atanh(unit(x)) * v + hypot(v, unit(x)) + trunc(v * 4);
    check_gradients(weighted_sum(f, {17}), {in}, 1e-6);
}

TEST_CASE("autodiff: 3x3 blur with repeat_edge", "[autodiff]") {
    Data in = random_input("in", {11, 8}, 2);
    Func blur_x("blur_x"), blur_y("blur_y");
    blur3x3(in.param, blur_x, blur_y);
    Func loss = weighted_sum(blur_y, {11, 8});
    check_gradients(loss, {in}, 1e-6);
    Derivative d = propagate_adjoints(loss);
    CHECK(d(blur_x).name() == "blur_x_adjoint");
    CHECK(d(blur_y).name() == "blur_y_adjoint");
}

TEST_CASE("autodiff: constant_exterior, mirror_image, clamps and a Param", "[autodiff]") {
    Data in = random_input("in", {9, 7}, 3);
    Param<double> gain("gain", 1.25);
    Func ext = BoundaryConditions::constant_exterior(in.param, 0.5);
    Func f("f");
    Func mirror = BoundaryConditions::mirror_image(in.param);
    f(x, y) = ext(x - 2, y + 1) * gain + in.param(clamp(x + 3, 0, 8), clamp(y * 2, 0, 6)) * gain * gain +
              mirror(x + 5, y - 4) * mirror(x + 5, y - 4);
    Func loss = weighted_sum(f, {9, 7});
    check_gradients(loss, {in}, 1e-6);
    Derivative d = propagate_adjoints(loss);
    Buffer<double> g = d(gain).realize(std::vector<int>{});
    double h = 1e-6, up, down;
    gain.set(1.25 + h);
    up = value_of(loss);
    gain.set(1.25 - h);
    down = value_of(loss);
    gain.set(1.25);
    CHECK(std::abs(g() - (up - down) / (2 * h)) <= 1e-6 * std::max(1.0, std::abs(g())));
}

TEST_CASE("autodiff: sum reduction over an RDom with where(), and its loss", "[autodiff]") {
    Data in = random_input("in", {10, 6}, 4);
    RDom r(0, 10, "r");
    r.where(r <= y + 4);  // a triangle: the predicate is differentiated through too
    Func rows("rows"), loss("loss");
    rows(y) = zero;
    rows(y) += in.param(r, y) * in.param(r, y);
    RDom ry(0, 6, "ry");
    loss() = zero;
    loss() += sqrt(rows(ry) + 1.0);
    check_gradients(loss, {in}, 1e-6);
}

TEST_CASE("autodiff: max and min reductions send the gradient to the winner", "[autodiff]") {
    Data in = random_input("in", {12, 5}, 5);
    RDom r(0, 12, "r");
    Func mx("mx"), mn("mn"), f("f");
    mx(y) = in.param(0, y) * 0.5;
    mx(y) = max(mx(y), in.param(r, y) * in.param(r, y));
    mn(y) = make_const(Float(64), 10.0);
    mn(y) = min(in.param(r, y) - 0.1, mn(y));
    f(y) = mx(y) * 2 + mn(y) * mx(y) + maximum(in.param(r, y) * 3);
    check_gradients(weighted_sum(f, {5}), {in}, 1e-6);
    Derivative d = propagate_adjoints(weighted_sum(f, {5}));
    CHECK(d(mx, -1).name() == "mx_0_adjoint");
    CHECK(d(mx, 0).name() == "mx_adjoint");
}

// Ties: a serial max that replaces only on > keeps the first point in
// iteration order (r.x innermost), and the value before the update when it
// equals the result; the argmax helper (a min reduction of point indices)
// picks the same point, also when rfactor() splits it into vector lanes.
TEST_CASE("autodiff: a max reduction's ties send the gradient to the first point", "[autodiff]") {
    const int W = 7, H = 4;
    ImageParam in(Float(64), 2, "in"), init(Float(64), 1, "init"), w(Float(64), 1, "w");
    Buffer<double> in_buf(W, H), init_buf(H), w_buf(H);
    const double rows[H][W] = {{1, 3, 3, 2, 3, 0, 1}, {0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5},
                               {-2, -1, -3, -1, -2, -1, -5}, {4, 1, 1, 1, 1, 1, 4}};
    const double inits[H] = {-9, 0.5, -1, 0};
    for (int yy = 0; yy < H; yy++) {
        for (int xx = 0; xx < W; xx++) in_buf(xx, yy) = rows[yy][xx];
        init_buf(yy) = inits[yy];
        w_buf(yy) = yy + 2.0;
    }
    in.set(in_buf);
    init.set(init_buf);
    w.set(w_buf);
    // mx(y) over each row from init(y); all2 over the whole image (a 2-D RDom).
    RDom r(0, W, "r"), r2(0, W, 0, H, "r2");
    Func mx("mx"), all2("all2"), loss("loss");
    mx(y) = init(y);
    mx(y) = max(mx(y), in(r, y));
    all2() = make_const(Float(64), -100.0);
    all2() = max(all2(), in(r2.x, r2.y) * 1.0);
    RDom ry(0, H, "ry");
    loss() = all2() * 10.0;
    loss() += mx(ry) * w(ry);
    // Row 0: the first 3 (x = 1). Rows 1 and 2: init, equal to the largest
    // points. Row 3: the first 4 (x = 0). all2: the first 4 in iteration
    // order, (0, 3) before (6, 3).
    Buffer<double> want_in(W, H), want_init(H);
    want_in.fill(0.0);
    want_init.fill(0.0);
    want_in(1, 0) = 2;
    want_init(1) = 3;
    want_init(2) = 4;
    want_in(0, 3) = 5 + 10;
    for (bool lanes : {false, true}) {
        Derivative d = propagate_adjoints(loss);
        Func din = d(in), dinit = d(init);
        if (lanes) {
            // Exact under any split: an integer min of point indices.
            ScheduleFile::parse("mx_1_argmax: compute_root()\n"
                                "mx_1_argmax.update(0): split(r, ro, ri, 4) rfactor(ri, u, mx_lanes)\n"
                                "mx_lanes: compute_root() vectorize(u)\n"
                                "mx_lanes.update(0): reorder(u, ro) vectorize(u)\n")
                .apply(Pipeline({din, dinit}));
        }
        Buffer<double> got_in(W, H), got_init(H);
        din.realize(got_in);
        dinit.realize(got_init);
        INFO((lanes ? "argmax rfactored into 4 lanes" : "serial argmax"));
        for (int yy = 0; yy < H; yy++) {
            for (int xx = 0; xx < W; xx++) {
                INFO("d in at (" << xx << ", " << yy << ")");
                CHECK(got_in(xx, yy) == want_in(xx, yy));
            }
            INFO("d init at " << yy);
            CHECK(got_init(yy) == want_init(yy));
        }
    }
}

TEST_CASE("autodiff: select and ReLU", "[autodiff]") {
    Data in = random_input("in", {15, 4}, 6);
    Func relu("relu"), leaky("leaky");
    relu(x, y) = max(in.param(x, y), 0.0);
    leaky(x, y) = select(in.param(x, y) > 0.2, relu(x, y) * relu(x, y), in.param(x, y) * 0.1) + relu(x, y);
    check_gradients(weighted_sum(leaky, {15, 4}), {in}, 1e-6);
}

TEST_CASE("autodiff: matrix multiply, an update over an RDom", "[autodiff]") {
    const int n = 6, m = 5, k = 7;
    Data a = random_input("A", {k, m}, 7), b = random_input("B", {n, k}, 8);
    RDom r(0, k, "k");
    Func c("c");
    c(x, y) = zero;
    c(x, y) += a.param(r, y) * b.param(x, r);
    check_gradients(weighted_sum(c, {n, m}), {a, b}, 1e-6);
}

TEST_CASE("autodiff: scatter reads (x / 2, 2 * x, x - 1) become gathers", "[autodiff]") {
    Data in = random_input("in", {16}, 9);
    Func up("up"), down("down"), f("f");
    up(x) = in.param(x / 2) * in.param(x / 2);
    down(x) = in.param(2 * x + 1) - in.param(x + 3);
    f(x) = up(x) + down(x / 2) * 3;
    check_gradients(weighted_sum(f, {12}), {in}, 1e-6);
}

TEST_CASE("autodiff: a data-dependent read is a general scatter (histogram-like)", "[autodiff]") {
    Data values = random_input("values", {20}, 10), table = random_input("table", {8}, 11);
    ImageParam index(Int(32), 1, "index");
    Buffer<int> ib(20);
    for (int i = 0; i < 20; i++) ib(i) = (i * 7) % 11 - 1;  // some outside [0, 8): clamped
    index.set(ib);
    Func f("f");
    f(x) = table.param(clamp(index(x), 0, 7)) * values.param(x);
    check_gradients(weighted_sum(f, {20}), {values, table}, 1e-6);
    // A histogram: a scatter in the forward pipeline, a gather in the backward one.
    RDom r(0, 20, "r");
    Func hist("hist");
    hist(x) = zero;
    hist(clamp(index(r), 0, 7)) += values.param(r) * values.param(r);
    check_gradients(weighted_sum(hist, {8}), {values}, 1e-6);
}

// A convolution reads its input at x + r.x: the input's adjoint solves the
// argument for x and sums over the taps and the output channels, a gather
// (an update at the adjoint's own Vars) rather than a scatter.
TEST_CASE("autodiff: a convolution's taps x + r.x become a gather", "[autodiff]") {
    Var c("c");
    const int cin = 3, cout = 2, w = 7, h = 5;
    Data in = random_input("in", {cin, w + 2, h + 2}, 18), weights = random_input("weights", {cout, cin, 3, 3}, 19);
    RDom r(0, cin, 0, 3, 0, 3, "r");
    Func conv("conv");
    conv(c, x, y) = zero;
    conv(c, x, y) += weights.param(c, r.x, r.y, r.z) * in.param(r.x, x + r.y, y + r.z);
    Func loss = weighted_sum(conv, {cout, w, h});
    check_gradients(loss, {in, weights}, 1e-6);

    // in_adjoint(x, y, z) += ... (no scatter), then the range of the RVar
    // solved for x tested once per point: = select(0 <= x < cin, in_adjoint(...), 0).
    Func din = propagate_adjoints(loss)(in.param);
    REQUIRE(din.num_update_definitions() == 2);
    for (int s = 1; s <= 2; s++)
        for (const Expr &a : din.contents()->stage(s).args) {
            const internal::Variable *v = a.as<internal::Variable>();
            CHECK((v && !v->rdom));
        }
    const internal::Add *sum = din.contents()->stage(1).values[0].as<internal::Add>();
    REQUIRE(sum);
    CHECK(!sum->b.as<internal::Select>());
    CHECK(din.contents()->stage(2).values[0].as<internal::Select>());
    // So its update may run in parallel over the image's rows.
    Buffer<double> serial(cin, w + 2, h + 2), parallel(cin, w + 2, h + 2);
    din.realize(serial);
    Func din2 = propagate_adjoints(loss)(in.param);
    din2.update(0).parallel(din2.args()[2]);
    din2.realize(parallel);
    serial.for_each_element([&](const int *pos) { CHECK(parallel(pos) == serial(pos)); });

    // A box filter over an RDom: the same, in one dimension, with a negative tap.
    Data signal = random_input("signal", {20}, 20);
    RDom k(0, 4, "k");
    Func box("box");
    box(x) = zero;
    box(x) += signal.param(x - k + 3) * (k + 1.0);
    check_gradients(weighted_sum(box, {17}), {signal}, 1e-6);
}

// A derivative that is the value itself (exp) reads the forward Func
// rather than computing the function again.
TEST_CASE("autodiff: exp's derivative reads the Func that holds exp", "[autodiff]") {
    Data in = random_input("in", {12}, 21);
    Func e("e"), f("f");
    e(x) = exp(in.param(x) * 0.5);
    f(x) = e(x) * e(x) + tanh(in.param(x));
    Func loss = weighted_sum(f, {12});
    check_gradients(loss, {in}, 1e-6);
    std::ostringstream value;
    value << propagate_adjoints(loss)(in.param).contents()->init.values[0];
    INFO(value.str());
    CHECK(value.str().find("e(") != std::string::npos);
    CHECK(value.str().find("exp(") == std::string::npos);
}

TEST_CASE("autodiff: casts between float32 and float64", "[autodiff]") {
    Data in = random_input("in", {9}, 12);
    Func narrow("narrow"), f("f");
    narrow(x) = cast<float>(in.param(x) * 2.0);
    f(x) = cast<double>(narrow(x) * narrow(x)) + in.param(x);
    check_gradients(weighted_sum(f, {9}), {in}, 1e-3, 1e-3);
}

TEST_CASE("autodiff: updates without an RDom read the value before them", "[autodiff]") {
    Data in = random_input("in", {10}, 13);
    Func f("f");
    f(x) = in.param(x) + 0.5;
    f(x) = f(x) * f(x);
    f(x) = exp(f(x)) + in.param(x);
    check_gradients(weighted_sum(f, {10}), {in}, 1e-6);
}

TEST_CASE("autodiff: a cumulative sum and a nonlinear scan over an RDom", "[autodiff][scan]") {
    Data in = random_input("in", {12}, 21);
    RDom r(1, 11, "r");
    Func sum("sum");
    sum(x) = in.param(x);
    sum(r) = sum(r - 1) + in.param(r);
    check_gradients(weighted_sum(sum, {12}), {in}, 1e-6);
    // The derivative of the update reads the earlier value (tanh'(f(r - 1)))
    // and the value before the update at the written point (sin'(f(r))).
    Func f("f");
    f(x) = in.param(x) * 0.5;
    f(r) = tanh(f(r - 1)) * 0.9 + sin(f(r)) * in.param(r);
    check_gradients(weighted_sum(f, {12}), {in}, 1e-6);
}

TEST_CASE("autodiff: an IIR filter down and up the rows (scans)", "[autodiff][scan]") {
    // As the IIR blur: a first-order recurrence down each column, then
    // back up (written at h - 1 - r, reading the row below), with a
    // coefficient per column.
    const int w = 7, h = 9;
    Data in = random_input("in", {w, h}, 22), coef = random_input("coef", {w}, 23, 0.2, 0.8);
    RDom r(1, h - 1, "r");
    Func down("down"), up("up");
    down(x, y) = in.param(x, y);
    down(x, r) = down(x, r - 1) * coef.param(x) + in.param(x, r) * (1.0 - coef.param(x));
    up(x, y) = down(x, y);
    up(x, h - 1 - r) = up(x, h - r) * coef.param(x) + down(x, h - 1 - r) * (1.0 - coef.param(x));
    check_gradients(weighted_sum(up, {w, h}), {in, coef}, 1e-6);
}

TEST_CASE("autodiff: a scan over a 2-D RDom reading the previous row's neighbour", "[autodiff][scan]") {
    // f(r.x, r.y) reads f(r.x + 1, r.y - 1): earlier in the RDom's order (r.y
    // outermost); column 5 of row 0 is never written, only read.
    Data in = random_input("in", {6, 5}, 24);
    RDom r(0, 5, 1, 4, "r");
    Func f("f");
    f(x, y) = in.param(x, y);
    f(r.x, r.y) = f(r.x, r.y) * 0.5 + f(r.x + 1, r.y - 1) * in.param(r.x, r.y);
    check_gradients(weighted_sum(f, {6, 5}), {in}, 1e-6);
}

TEST_CASE("autodiff: an output adjoint over a region, and an image adjoint", "[autodiff]") {
    Data in = random_input("in", {10, 6}, 14), seed = random_input("seed", {8, 5}, 15);
    Func clamped = BoundaryConditions::repeat_edge(in.param);
    Func f("f");
    f(x, y) = clamped(x + 1, y) * clamped(x, y - 1);
    // The vector-Jacobian product equals the gradient of sum(f * seed) over the region.
    Derivative by_image = propagate_adjoints(f, seed.param);
    Derivative by_func = propagate_adjoints(f, Func(seed.param), {{0, 8}, {0, 5}});
    Buffer<double> g1(10, 6), g2(10, 6), g3(10, 6);
    by_image(in.param).realize(g1);
    by_func(in.param).realize(g2);
    Func loss = weighted_sum(f, {8, 5});
    (void)loss;
    Func l2("l2");
    RDom r(0, 8, 0, 5, "r2");
    l2() = zero;
    l2() += f(r.x, r.y) * seed.param(r.x, r.y);
    propagate_adjoints(l2)(in.param).realize(g3);
    for (int yy = 0; yy < 6; yy++)
        for (int xx = 0; xx < 10; xx++) {
            CHECK(g1(xx, yy) == Approx(g3(xx, yy)).epsilon(1e-12));
            CHECK(g2(xx, yy) == Approx(g3(xx, yy)).epsilon(1e-12));
        }
}

// The adjoints are ordinary Funcs: schedules, in C++ or in a schedule file
// naming them, change where they are computed, never their values.
TEST_CASE("autodiff: scheduled adjoints give the same gradient", "[autodiff]") {
    Data in = random_input("in", {67, 45}, 16);
    Func blur_x("blur_x"), blur_y("blur_y");
    blur3x3(in.param, blur_x, blur_y);
    Func loss = weighted_sum(blur_y, {67, 45});
    Buffer<double> plain(67, 45), scheduled(67, 45), from_file(67, 45);
    propagate_adjoints(loss)(in.param).realize(plain);

    Derivative d = propagate_adjoints(loss);
    Var xo("xo"), xi("xi");
    d(in.param).parallel(y).vectorize(x, 4);
    d(blur_x).compute_root().parallel(y).vectorize(x, 4);
    d(blur_y).compute_at(d(blur_x), y).split(x, xo, xi, 8);
    d(in.param).realize(scheduled);

    Derivative e = propagate_adjoints(loss);
    ScheduleFile::parse("in_adjoint: parallel(y)\n"
                        "blur_x_adjoint: compute_root() vectorize(x, 4)\n"
                        "blur_y_adjoint: compute_at(blur_x_adjoint, y)\n")
        .apply(Pipeline(e(in.param)));
    e(in.param).realize(from_file);
    for (int yy = 0; yy < 45; yy++)
        for (int xx = 0; xx < 67; xx++) {
            CHECK(scheduled(xx, yy) == plain(xx, yy));
            CHECK(from_file(xx, yy) == plain(xx, yy));
        }
}

// Without a region the adjoint is taken as given everywhere: enough for a
// pipeline whose reads all invert (no sum needs the output's extent).
TEST_CASE("autodiff: an output adjoint without a region", "[autodiff]") {
    Data in = random_input("in", {10, 6}, 17);
    Func f("f"), ones("ones");
    f(x, y) = in.param(x, y) * in.param(x, y) + in.param(x + 1, y) * 0.5;
    ones(x, y) = make_const(Float(64), 1.0);
    Buffer<double> g(9, 6);
    propagate_adjoints(f, ones)(in.param).realize(g);
    for (int yy = 0; yy < 6; yy++)
        for (int xx = 0; xx < 9; xx++) CHECK(g(xx, yy) == Approx(2 * in.buf(xx, yy) + 0.5).epsilon(1e-15));
}

TEST_CASE("autodiff: stop_gradient passes the value and no gradient", "[autodiff][stop_gradient]") {
    Data in = random_input("in", {9}, 21);
    Func f("f");
    // d f / d in = 3 in^2 without the mark; with it, the marked factor is a
    // constant: in^2 (its value) from the other factor.
    f(x) = in.param(x) * in.param(x) * stop_gradient(in.param(x));
    Derivative d = propagate_adjoints(weighted_sum(f, {9}, 5));
    Data w = random_input("w_check", {9}, 5);  // the weights weighted_sum drew with seed 5
    Buffer<double> value = f.realize({9}), g(9);
    d(in.param).realize(g);
    for (int i = 0; i < 9; i++) {
        const double v = in.buf(i);
        CHECK(value(i) == v * v * v);
        CHECK(g(i) == Approx(2 * v * v * w.buf(i)).epsilon(1e-12));
    }
    std::string s = f.lowered_stmt();
    CHECK(s.find("stop_gradient") == std::string::npos);
    CHECK(d(in.param).lowered_stmt().find("stop_gradient") == std::string::npos);
}

// A softmax whose row maximum (subtracted for range only) is under
// stop_gradient: the maximum's adjoint is zero up to rounding, so the
// gradient is the same, and no argmax helper is built for it.
TEST_CASE("autodiff: softmax with the row maximum under stop_gradient", "[autodiff][stop_gradient]") {
    const int W = 6, H = 3;
    Data in = random_input("in", {W, H}, 22, -3, 3);
    for (bool stop : {false, true}) {
        RDom r(0, W, "r");
        Func mx("mx"), e("e"), s("s"), p("p");
        mx(y) = make_const(Float(64), -1e300);
        mx(y) = max(mx(y), in.param(r, y));
        e(x, y) = exp(in.param(x, y) - (stop ? stop_gradient(mx(y)) : mx(y)));
        s(y) = zero;
        s(y) += e(r, y);
        p(x, y) = e(x, y) / s(y);
        INFO((stop ? "stop_gradient(mx)" : "mx differentiated"));
        Func loss = weighted_sum(p, {W, H}, 23);
        check_gradients(loss, {in}, 1e-6);
        std::string stmt = propagate_adjoints(loss)(in.param).lowered_stmt();
        CHECK((stmt.find("argmax") == std::string::npos) == stop);
    }
}
