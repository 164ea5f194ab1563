// What autodiff cannot differentiate, each a CompileError naming the Func
// (or stage) and the fix: an integer output, a product or other
// non-sum update over an RDom, the scans it does not handle, a function with no derivative, a
// Tuple-valued Func, a sum that needs a region none was given for, the
// adjoint of something the output does not depend on, and a parallel loop
// over the RDom of a scattering adjoint (a race).
#include "expect_error.h"

#include "ir/IR.h"

using namespace kiln;

namespace {
struct Pipe {
    ImageParam in{Float(32), 1, "in"};
    Var x{"x"};
    RDom r{0, 16, "r"};
    Func f{"f"};
    Func loss{"loss"};
    // loss() = sum of f over [0, 16).
    Func sum_of(Func g) {
        loss() = 0.0f;
        loss() += g(r);
        return loss;
    }
};
}  // namespace

TEST_CASE("error: autodiff of an integer output", "[error][autodiff]") {
    Pipe p;
    p.f(p.x) = cast<int>(p.in(p.x) * 4);
    REQUIRE_COMPILE_ERROR(propagate_adjoints(p.f, Func(p.in), {{0, 16}}),
                          Contains("Func f has type int32; integer outputs are not differentiable") &&
                              Contains("cast"));
    Func loss("iloss");
    loss() = 0;
    loss() += p.f(p.r);
    REQUIRE_COMPILE_ERROR(propagate_adjoints(loss), Contains("Func iloss has type int32"));
}

TEST_CASE("error: autodiff of a product reduction", "[error][autodiff]") {
    Pipe p;
    p.f(p.x) = 1.0f;
    p.f(p.x) = p.f(p.x) * p.in(p.r + p.x);
    REQUIRE_COMPILE_ERROR(propagate_adjoints(p.sum_of(p.f)),
                          Contains("Cannot differentiate f.update(0)") && Contains("must add to f") &&
                              Contains("min or max") && Contains("a product"));
}

namespace {
// f(x) = in(x), then `update` gives f an update that reads f; the adjoint of
// the sum of f is refused with the message `m`.
template <typename Update, typename Matcher>
void require_refused_scan(Update update, const Matcher &m) {
    Pipe p;
    p.f(p.x) = p.in(p.x);
    update(p);
    REQUIRE_COMPILE_ERROR(propagate_adjoints(p.sum_of(p.f)), m);
}
}  // namespace

TEST_CASE("error: autodiff of the scans it does not handle", "[error][autodiff][scan]") {
    // A non-affine read of f: not the written point moved by a constant.
    require_refused_scan([](Pipe &p) { p.f(p.r) = p.f(p.r / 2) * 0.5f + p.in(p.r); },
                         Contains("Cannot differentiate f.update(0): it reads f((r.x / 2))") &&
                             Contains("moved by constants along its RVars") && Contains("one more dimension"));
    // Overwriting: every point of the RDom writes f(x).
    require_refused_scan([](Pipe &p) { p.f(p.x) = p.f(p.x - 1) + p.in(p.r); },
                         Contains("Cannot differentiate f.update(0): every point of its RVar r.x writes the "
                                  "same value of f (an overwriting scan") &&
                             Contains("one more dimension"));
    // A read of a point the RDom writes later.
    require_refused_scan([](Pipe &p) { p.f(p.r) = p.f(p.r + 1) * 0.5f; },
                         Contains("Cannot differentiate f.update(0): it reads f((r.x + 1)), a point its RDom "
                                  "writes later") &&
                             Contains("f(r - 1)"));
    // Two earlier points.
    require_refused_scan([](Pipe &p) { p.f(p.r) = p.f(p.r - 1) + p.f(p.r - 2); },
                         Contains("Cannot differentiate f.update(0): it reads f at two earlier points") &&
                             Contains("a Func of its own"));
    // A neighbour along a pure Var, with no RDom.
    require_refused_scan([](Pipe &p) { p.f(p.x) = p.f(p.x - 1) * 0.5f; },
                         Contains("Cannot differentiate f.update(0): it reads f at other points than it "
                                  "writes without an RDom") &&
                             Contains("over an RDom"));
}

TEST_CASE("error: autodiff through a function with no derivative", "[error][autodiff]") {
    Pipe p;
    // No float intrinsic of Kiln lacks a derivative today; a new one would be this.
    p.f(p.x) = internal::Call::make(Float(32), "erf", {p.in(p.x)}, internal::Call::PureExtern);
    REQUIRE_COMPILE_ERROR(propagate_adjoints(p.sum_of(p.f)),
                          Contains("Cannot differentiate Func f: it calls erf(), which has no derivative"));
}

TEST_CASE("error: autodiff through a Tuple-valued Func", "[error][autodiff]") {
    Pipe p;
    Func t("t");
    t(p.x) = Tuple(p.in(p.x), p.in(p.x) * 2);
    p.f(p.x) = t(p.x)[0] + t(p.x)[1];
    REQUIRE_COMPILE_ERROR(propagate_adjoints(p.sum_of(p.f)),
                          Contains("reads element 1 of the Tuple-valued Func t") && Contains("one Func per element"));
}

TEST_CASE("error: autodiff needs the output's region to sum or scatter", "[error][autodiff]") {
    Pipe p;
    Func seed("seed");
    seed(p.x) = 1.0f;
    p.f(p.x) = BoundaryConditions::repeat_edge(p.in)(p.x - 1);
    REQUIRE_COMPILE_ERROR(propagate_adjoints(p.f, seed),
                          Contains("Cannot differentiate Func in_im_repeat_edge: sending its adjoint to in_adjoint "
                                   "sums over every value of its Var _0 (the read cannot be inverted") &&
                              Contains("the region of Func in_im_repeat_edge in _0 is unknown") &&
                              Contains("propagate_adjoints(output, adjoint, {{min, extent}, ...})"));
}

TEST_CASE("error: the adjoint of what the output does not depend on", "[error][autodiff]") {
    Pipe p;
    ImageParam other(Float(32), 1, "other");
    p.f(p.x) = p.in(p.x) * 2;
    Derivative d = propagate_adjoints(p.sum_of(p.f));
    REQUIRE_COMPILE_ERROR(d(other), Contains("Derivative: other has no adjoint") &&
                                        Contains("Adjoints exist for: f, in, loss"));
}

TEST_CASE("error: a parallel loop over the RDom of a scattering adjoint", "[error][autodiff]") {
    Pipe p;
    ImageParam index(Int(32), 1, "index");
    p.f(p.x) = p.in(clamp(index(p.x), 0, 15));
    Derivative d = propagate_adjoints(p.sum_of(p.f));
    Func din = d(p.in);
    REQUIRE(din.num_update_definitions() == 1);
    RVar rx("in_adjoint_r.x");
    REQUIRE_COMPILE_ERROR(din.update(0).parallel(rx),
                          Contains("In schedule of in_adjoint.update(0): parallel(in_adjoint_r.x)") &&
                              Contains("would race"));
}
