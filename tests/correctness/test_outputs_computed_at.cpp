// Outputs computed at a loop of another output (ScheduleFunctions.h,
// computed_within_output): a row statistic written by the loops of the
// output that reads it, as a fused kernel writes a saved value beside its
// result; a 2-D stage stored per row; the proofs and checks that keep
// such an output from being left partly unwritten.
#include "check.h"

#include "kiln_runtime.h"

using namespace kiln;
using Catch::Contains;

namespace {

// A 1-D buffer of h rows from y0.
Buffer<float> rows(int h, int y0) {
    Buffer<float> b(h);
    b.set_min(y0);
    b.fill(0.0f);
    return b;
}

// The message of the CompileError run() throws ("" if none).
template<typename Fn>
std::string compile_error(Fn run) {
    try {
        run();
    } catch (const CompileError &e) {
        return e.what();
    }
    return "";
}

// mean(y): the row's mean; out(x, y) = in(x, y) - mean(y). Both outputs.
struct RowMean {
    ImageParam in{Float(32), 2, "in"};
    Var x{"x"}, y{"y"}, yo{"yo"}, yi{"yi"};
    Func sum{"sum"}, mean{"mean"}, out{"out"};
    RDom r;
    RowMean() : r(in.dim(0).min(), in.dim(0).extent(), "r") {
        sum(y) = 0.0f;
        sum(y) += in(r, y);
        mean(y) = sum(y) / cast<float>(in.dim(0).extent());
        out(x, y) = in(x, y) - mean(y);
    }
    // Runs the pipeline on a w x h input (rows from y0) and checks both
    // outputs against a float64 reference.
    void run(int w, int h, int y0) {
        Buffer<float> im = kt::image<float>(w, h, 0, y0, [](int px, int py) { return kt::noise(px, py, -1000, 1000) / 100.0f; });
        in.set(im);
        Buffer<float> m = rows(h, y0), o = kt::output<float>(w, h, 0, y0);
        Pipeline({out, mean}).realize_raw({o.raw_buffer(), m.raw_buffer()});
        for (int py = y0; py < y0 + h; py++) {
            double s = 0;
            for (int px = 0; px < w; px++) s += im(px, py);
            double mu = s / w;
            REQUIRE(std::abs(m(py) - mu) <= 1e-4 * (1 + std::abs(mu)));
            for (int px = 0; px < w; px++) REQUIRE(std::abs(o(px, py) - (im(px, py) - mu)) <= 1e-4 * (1 + std::abs(mu)));
        }
    }
};

}  // namespace

TEST_CASE("outputs computed at: a row statistic at the row loop of the output that reads it", "[outputs_at]") {
    RowMean p;
    p.mean.compute_at(p.out, p.y);
    p.out.vectorize(p.x, 8);
    p.run(37, 13, -2);
}

TEST_CASE("outputs computed at: at the inner loop of a split, in parallel, the last band partial", "[outputs_at]") {
    RowMean p;
    p.out.split(p.y, p.yo, p.yi, 4).parallel(p.yo).vectorize(p.x, 8);
    p.mean.compute_at(p.out, p.yi);
    p.sum.compute_at(p.out, p.yi);
    p.run(40, 15, 3);  // 15 rows: the last band of 4 has 3
}

TEST_CASE("outputs computed at: a band of rows per iteration is refused, with the fix", "[outputs_at][error]") {
    RowMean p;
    p.out.split(p.y, p.yo, p.yi, 4);
    p.mean.compute_at(p.out, p.yo);
    Buffer<float> im = kt::image<float>(8, 8, 0, 0, [](int px, int py) { return (float)(px + py); });
    p.in.set(im);
    Buffer<float> m = rows(8, 0), o = kt::output<float>(8, 8, 0, 0);
    std::string e = compile_error([&] { Pipeline({p.out, p.mean}).realize_raw({o.raw_buffer(), m.raw_buffer()}); });
    CHECK_THAT(e, Contains("Func mean is an output of the pipeline computed at a loop of out (compute_at(out, yo))"));
    CHECK_THAT(e, Contains("cannot prove that the iterations together write all of its buffer"));
    CHECK_THAT(e, Contains("or compute it at the root"));
}

TEST_CASE("outputs computed at: only at a loop of another output", "[outputs_at][error]") {
    RowMean p;
    Func h("h"), out2("out2");
    h(p.x, p.y) = p.in(p.x, p.y) - p.mean(p.y);  // not an output
    out2(p.x, p.y) = h(p.x, p.y) * 2.0f;
    h.compute_root();
    p.mean.compute_at(h, p.y);
    Buffer<float> im = kt::image<float>(8, 8, 0, 0, [](int px, int py) { return (float)(px + py); });
    p.in.set(im);
    Buffer<float> m = rows(8, 0), o = kt::output<float>(8, 8, 0, 0);
    std::string e = compile_error([&] { Pipeline({out2, p.mean}).realize_raw({o.raw_buffer(), m.raw_buffer()}); });
    CHECK_THAT(e, Contains("Func mean is an output of the pipeline and is scheduled compute_at(h, y), but h is not "
                           "another output of this pipeline"));
    CHECK_THAT(e, Contains("compute it at the root, or at a loop of an output"));
}

TEST_CASE("outputs computed at: a buffer larger than the loop computes is refused at run time", "[outputs_at][error]") {
    RowMean p;
    p.mean.compute_at(p.out, p.y);
    Buffer<float> im = kt::image<float>(8, 12, 0, 0, [](int px, int py) { return (float)(px + py); });
    p.in.set(im);
    // mean's buffer has rows 0..11, out computes rows 2..9 only.
    Buffer<float> m = rows(12, 0), o = kt::output<float>(8, 8, 0, 2);
    int code = 0;
    std::string message;
    try {
        Pipeline({p.out, p.mean}).realize_raw({o.raw_buffer(), m.raw_buffer()});
    } catch (const RuntimeError &e) {
        code = e.code;
        message = e.what();
    }
    CHECK(code == kiln_error_output_too_large);
    CHECK_THAT(message, Catch::Contains("output 'mean' is computed at the loop of compute_at(out, y), which computes it over [2, 9] in dimension 0, but the buffer covers [0, 11]"));
}

TEST_CASE("outputs computed at: a 2-D output two rows per iteration, one of them again the next", "[outputs_at]") {
    ImageParam in(Int(32), 2, "in");
    Var x("x"), y("y");
    Func t("t"), out("out");
    t(x, y) = in(x, y) * 3;
    out(x, y) = t(x, y) + t(x, y + 1);
    out.vectorize(x, 4).parallel(y);
    t.compute_at(out, y).vectorize(x, 4);
    Buffer<int> im = kt::random_image<int>(21, 11, -1, 2, -100, 100);
    in.set(im);
    // t is computed over out's columns and rows [out.min.1, out.max.1 + 1].
    Buffer<int> o = kt::output<int>(21, 10, -1, 2), tb = kt::output<int>(21, 11, -1, 2);
    Pipeline({out, t}).realize_raw({o.raw_buffer(), tb.raw_buffer()});
    kt::check(tb, [&](int px, int py) { return im(px, py) * 3; });
    kt::check(o, [&](int px, int py) { return im(px, py) * 3 + im(px, py + 1) * 3; });
}

TEST_CASE("outputs computed at: a chain of outputs at one loop, each read by the next", "[outputs_at]") {
    // layernorm's statistics, each an output (as a forward pass that saves
    // them for its backward pass writes them): mean, then the sum of squared
    // deviations from it, then inv_std from that, all at the output's rows.
    ImageParam in(Float(32), 2, "in");
    Var x("x"), y("y"), yo("yo"), yi("yi");
    RDom r(in.dim(0).min(), in.dim(0).extent(), "r");
    Func sum("sum"), mean("mean"), sum_sq("sum_sq"), inv_std("inv_std"), out("out");
    Expr w = cast<float>(in.dim(0).extent());
    sum(y) = 0.0f;
    sum(y) += in(r, y);
    mean(y) = sum(y) / w;
    sum_sq(y) = 0.0f;
    sum_sq(y) += (in(r, y) - mean(y)) * (in(r, y) - mean(y));
    inv_std(y) = 1.0f / sqrt(sum_sq(y) / w + 1e-5f);
    out(x, y) = (in(x, y) - mean(y)) * inv_std(y);
    out.split(y, yo, yi, 4).parallel(yo).vectorize(x, 8);
    for (Func f : {sum, mean, sum_sq, inv_std}) f.compute_at(out, yi);
    const int W = 33, H = 14;
    Buffer<float> im = kt::image<float>(W, H, 0, 0, [](int px, int py) { return kt::noise(px, py, -1000, 1000) / 100.0f; });
    in.set(im);
    Buffer<float> o = kt::output<float>(W, H), m = rows(H, 0), s = rows(H, 0), is = rows(H, 0);
    Pipeline({out, mean, sum_sq, inv_std}).realize_raw({o.raw_buffer(), m.raw_buffer(), s.raw_buffer(), is.raw_buffer()});
    for (int py = 0; py < H; py++) {
        double mu = 0, ss = 0;
        for (int px = 0; px < W; px++) mu += im(px, py) / (double)W;
        for (int px = 0; px < W; px++) ss += (im(px, py) - mu) * (im(px, py) - mu);
        double istd = 1 / std::sqrt(ss / W + 1e-5);
        REQUIRE(std::abs(m(py) - mu) <= 1e-4 * (1 + std::abs(mu)));
        REQUIRE(std::abs(s(py) - ss) <= 1e-4 * (1 + ss));
        REQUIRE(std::abs(is(py) - istd) <= 1e-4 * istd);
        for (int px = 0; px < W; px++) REQUIRE(std::abs(o(px, py) - (im(px, py) - mu) * istd) <= 1e-3);
    }
}

TEST_CASE("outputs computed at: the inner loop of a GuardWithIf split", "[outputs_at]") {
    RowMean p;
    p.out.split(p.y, p.yo, p.yi, 4, TailStrategy::GuardWithIf).vectorize(p.x, 8);
    p.mean.compute_at(p.out, p.yi);
    p.run(24, 15, 1);  // the last band has 3 rows
}
