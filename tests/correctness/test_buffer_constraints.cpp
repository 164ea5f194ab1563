// Buffer constraints (Dimension::set_min / set_extent / set_stride /
// set_bounds) and output-buffer Exprs (f.output_buffer().width()) end to
// end: a buffer that meets its constraints gives the reference values, one
// that breaks them is refused by the kernel with
// kiln_error_constraint_violated and a message, never read out of bounds.
#include "check.h"

#include "kiln_runtime.h"

using namespace kiln;
using Catch::Contains;

namespace {

struct Brighten {
    ImageParam in{Int(32), 2, "in"};
    Var x{"x"}, y{"y"}, xo{"xo"}, xi{"xi"};
    Func out{"out"};
    Buffer<int> im = kt::random_image<int>(64, 48, 0, 0, -1000, 1000);
    Brighten() {
        out(x, y) = in(x, y) * 3 + in(x, y) / 7;
        in.set(im);
    }
    static int ref(const Buffer<int> &im, int x, int y) {
        int v = im(x, y);
        int q = v / 7 - ((v % 7 != 0) && (v < 0));  // Euclidean
        return v * 3 + q;
    }
};

// The code and message of the RuntimeError that realizing f into b throws.
std::pair<int, std::string> refused(Func f, Buffer<int> &b) {
    try {
        f.realize(b);
    } catch (const RuntimeError &e) {
        return {e.code, e.what()};
    }
    return {0, ""};
}

}  // namespace

TEST_CASE("buffer constraints: set_bounds on the output and on the input", "[buffer_constraints]") {
    Brighten p;
    p.out.output_buffer().dim(0).set_bounds(0, 64).dim(1).set_min(0);
    p.in.dim(0).set_bounds(0, 64).dim(1).set_stride(64);
    p.out.vectorize(p.x, 8);
    kt::realize_and_check<int>(p.out, {{64, 48, 0, 0}, {64, 5, 0, 0}},
                               [&](int x, int y) { return Brighten::ref(p.im, x, y); });
}

TEST_CASE("buffer constraints: a buffer that breaks one is refused with its message", "[buffer_constraints]") {
    Brighten p;
    p.out.output_buffer().dim(0).set_bounds(0, 64);
    Buffer<int> narrow = kt::output<int>(32, 8);
    auto [code, msg] = refused(p.out, narrow);
    CHECK(code == kiln_error_constraint_violated);
    CHECK_THAT(msg, Contains("output 'out' has extent 32 in dimension 0, but the pipeline requires 64") &&
                        Contains("out.output_buffer().dim(0).set_extent(64)"));
    Buffer<int> shifted = kt::output<int>(64, 8, 3, 0);
    auto [code2, msg2] = refused(p.out, shifted);
    CHECK(code2 == kiln_error_constraint_violated);
    CHECK_THAT(msg2, Contains("output 'out' has min 3 in dimension 0, but the pipeline requires 0"));

    Brighten q;
    q.in.dim(1).set_stride(128);  // the image given has stride 64
    Buffer<int> o = kt::output<int>(16, 4);
    auto [code3, msg3] = refused(q.out, o);
    CHECK(code3 == kiln_error_constraint_violated);
    CHECK_THAT(msg3, Contains("input 'in' has stride 64 in dimension 1, but the pipeline requires 128") &&
                         Contains("in.dim(1).set_stride(128)"));
}

TEST_CASE("buffer constraints: a constraint of Params and other buffers' fields", "[buffer_constraints]") {
    Brighten p;
    Param<int> w{"w"};
    p.out.output_buffer().dim(0).set_extent(w).dim(1).set_extent(p.in.dim(1).extent() - 8);
    w.set(40);
    kt::realize_and_check<int>(p.out, {{40, 40, 0, 0}}, [&](int x, int y) { return Brighten::ref(p.im, x, y); });
    Buffer<int> o = kt::output<int>(40, 48);
    CHECK(refused(p.out, o).first == kiln_error_constraint_violated);
    // Removing a constraint: an undefined Expr.
    p.out.output_buffer().dim(1).set_extent(Expr());
    kt::realize_and_check<int>(p.out, {{40, 48, 0, 0}}, [&](int x, int y) { return Brighten::ref(p.im, x, y); });
}

TEST_CASE("output buffer Exprs in bound() and split()", "[buffer_constraints]") {
    Brighten p;
    OutputImageParam ob = p.out.output_buffer();
    p.out.split(p.x, p.xo, p.xi, ob.width() / 4, TailStrategy::GuardWithIf).bound(p.y, ob.dim(1).min(), ob.height());
    kt::realize_and_check<int>(p.out, {{64, 48, 0, 0}, {30, 7, 5, 3}, {8, 1, 56, 47}},
                               [&](int x, int y) { return Brighten::ref(p.im, x, y); });
    Buffer<int> narrow = kt::output<int>(3, 2);  // a split factor of 3 / 4 = 0
    auto [code, msg] = refused(p.out, narrow);
    CHECK(code == kiln_error_bad_split_factor);
    CHECK_THAT(msg, Contains("Func out: split(x, xo, xi, (out.extent.0 / 4)) has factor 0 in this run") &&
                        Contains("a split factor must be positive"));
    CHECK(ob.name() == "out");
    CHECK(ob.dimensions() == 2);
    CHECK(ob.type() == Int(32));
}

TEST_CASE("output buffer Exprs in an update of the output", "[buffer_constraints]") {
    Brighten p;
    OutputImageParam ob = p.out.output_buffer();
    // Adds the input mirrored across the output's columns, and its width.
    p.out(p.x, p.y) = p.out(p.x, p.y) + p.in(ob.left() + ob.right() - p.x, p.y) + ob.width();
    for (auto r : std::vector<std::array<int, 4>>{{20, 4, 2, 1}, {64, 48, 0, 0}})
        kt::realize_and_check<int>(p.out, {r}, [&](int x, int y) {
            return Brighten::ref(p.im, x, y) + p.im(2 * r[2] + r[0] - 1 - x, y) + r[0];
        });
}

TEST_CASE("output buffers of a Tuple-valued Func", "[buffer_constraints]") {
    Var x{"x"};
    Func f{"f"};
    f(x) = Tuple(x * 2, cast<float>(x) + 0.5f);
    std::vector<OutputImageParam> bufs = f.output_buffers();
    REQUIRE(bufs.size() == 2);
    CHECK(bufs[0].name() == "f.0");
    CHECK(bufs[1].type() == Float(32));
    bufs[1].dim(0).set_bounds(0, 10);
    Realization r = f.realize({10});
    Buffer<int> a(r[0]);
    for (int i = 0; i < 10; i++) CHECK(a(i) == 2 * i);
    CHECK_THROWS_AS(f.realize({12}), RuntimeError);
}

TEST_CASE("output buffer Exprs follow their Func when names are made unique", "[buffer_constraints]") {
    ImageParam in{Int(32), 1, "in"};
    Var x{"x"};
    Func a{"blur"}, b{"blur"};  // b becomes blur$1 in the pipeline
    a(x) = in(x) * 2;
    b(x) = a(x) + a(x + 1);
    OutputImageParam ob = b.output_buffer();
    b.bound(x, ob.dim(0).min(), ob.width());
    ob.dim(0).set_min(0);
    a.compute_root().prefetch(in, x, x, 4);
    b.prefetch(a, x, x, 2);
    Buffer<int> im = kt::image1<int>(40, 0, [](int i) { return i * 3 - 7; });
    in.set(im);
    Buffer<int> o(32);
    b.realize(o);
    CHECK(b.name() == "blur$1");
    CHECK(ob.name() == "blur$1");
    for (int i = 0; i < 32; i++) CHECK(o(i) == im(i) * 2 + im(i + 1) * 2);
    Buffer<int> shifted(32);
    shifted.set_min(1);
    CHECK(refused(b, shifted).first == kiln_error_constraint_violated);
}
