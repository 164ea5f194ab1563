// Misuse of the fusion vocabulary: wrappers (in()), horizontal fusion
// (compute_with) and specializations, each message checked.
#include "expect_error.h"
#include "row_sums_fixture.h"

using namespace kiln;

namespace {

// t = in * 2; z1 = t + 1; z2 = t - 1; out = z1 + z2.
struct Users {
    ImageParam in{Int(32), 2, "in"};
    Var x{"x"}, y{"y"}, xi{"xi"}, yi{"yi"};
    Func t{"t"}, z1{"z1"}, z2{"z2"}, out{"out"};
    Users() {
        t(x, y) = in(x, y) * 2;
        z1(x, y) = t(x, y) + 1;
        z2(x, y) = t(x, y) - 1;
        out(x, y) = z1(x, y) + z2(x, y);
    }
};

}  // namespace

TEST_CASE("error: in() of an undefined Func", "[error][wrappers]") {
    Func f("f"), g("g");
    REQUIRE_COMPILE_ERROR(f.in(g), Contains("Func f must be defined before in() makes a wrapper of it"));
}

TEST_CASE("error: a Func wrapping its own calls", "[error][wrappers]") {
    Users p;
    REQUIRE_COMPILE_ERROR(p.t.in(p.t), Contains("t.in(t): a Func cannot wrap its own calls"));
}

TEST_CASE("error: in() for a list where only some consumers have a wrapper", "[error][wrappers]") {
    Users p;
    p.t.in(p.z1);
    REQUIRE_COMPILE_ERROR(p.t.in({p.z1, p.z2}), Contains("some of the consumers already have their own wrapper (t_in_z1)"));
}

TEST_CASE("error: in(g) for a consumer that does not call the wrapped Func", "[error][wrappers]") {
    Users p;
    p.t.in(p.out).compute_root();  // out calls z1 and z2, not t
    REQUIRE_COMPILE_ERROR(p.out.lowered_stmt(),
                          Contains("In schedule of t_in_out: t.in(out) wraps the calls of out to t, but out does not "
                                   "call t, so t_in_out would never be used") &&
                              Contains("remove the in() stanza"));
    Users q;
    q.in.in(q.z1).compute_root();  // z1 reads t, which reads the image
    REQUIRE_COMPILE_ERROR(q.out.lowered_stmt(), Contains("in.in(z1) wraps the calls of z1 to in"));
}

TEST_CASE("error: clone_in() of an undefined Func", "[error][clone_in]") {
    Func f("f"), g("g");
    REQUIRE_COMPILE_ERROR(f.clone_in(g), Contains("Func f must be defined before clone_in() copies it"));
}

TEST_CASE("error: clone_in() for a consumer that has a wrapper, and in() for one with a clone", "[error][clone_in]") {
    Users p;
    p.t.in(p.z1);
    REQUIRE_COMPILE_ERROR(p.t.clone_in(p.z1), Contains("t.clone_in(...): the consumers already have a wrapper of t, "
                                                       "t_in_z1 (made by in); a consumer's calls can go to one of them"));
    p.t.clone_in(p.z2);
    REQUIRE_COMPILE_ERROR(p.t.in(p.z2), Contains("t.in(...): the consumers already have a clone of t, t_clone_in_z2 "
                                                 "(made by clone_in)"));
    REQUIRE_COMPILE_ERROR(p.t.clone_in(p.t), Contains("t.clone_in(t): a Func cannot wrap its own calls"));
    REQUIRE_COMPILE_ERROR(p.t.clone_in(std::vector<Func>{}), Contains("t.clone_in({}): name at least one consumer"));
}

TEST_CASE("error: compute_with aligning a loop twice, or a loop that is not fused", "[error][compute_with]") {
    Users p;
    p.z1.compute_root();
    p.z2.compute_root();
    REQUIRE_COMPILE_ERROR(
        p.z2.compute_with(p.z1, p.y, {{p.y, LoopAlignStrategy::AlignStart}, {p.y, LoopAlignStrategy::AlignEnd}}),
        Contains("In schedule of z2: compute_with(z1, y, {...}): loop y is given two alignments; give each fused loop "
                 "one"));
    p.z2.compute_with(p.z1, p.y, {{p.x, LoopAlignStrategy::AlignStart}});
    REQUIRE_COMPILE_ERROR(p.out.lowered_stmt(), Contains("with x aligned AlignStart, but x is not a fused loop; the "
                                                         "fused loops, outermost first, are: y"));
}

TEST_CASE("error: compute_with between Funcs at different compute levels", "[error][compute_with]") {
    Users p;
    p.z1.compute_root();
    p.z2.compute_at(p.out, p.y);
    p.z2.compute_with(p.z1, p.y);
    REQUIRE_COMPILE_ERROR(p.out.lowered_stmt(),
                          Contains("Func z2 is scheduled compute_with(z1, y), but z2 is computed at out.y and z1 at "
                                   "root; fused stages must share their compute level"));
}

TEST_CASE("error: compute_with an inlined Func", "[error][compute_with]") {
    Users p;
    p.z2.compute_root().compute_with(p.z1, p.y);
    REQUIRE_COMPILE_ERROR(p.out.lowered_stmt(), Contains("compute_with(z1, y), but z1 is inlined") &&
                                                    Contains("give z2 and z1 compute_root(), or the same compute_at()"));
}

TEST_CASE("error: compute_with a Func it depends on", "[error][compute_with]") {
    Users p;
    p.t.compute_root();
    p.z1.compute_root();
    p.z1.compute_with(p.t, p.y);
    REQUIRE_COMPILE_ERROR(p.out.lowered_stmt(),
                          Contains("Func z1 is scheduled compute_with(t, y), but z1 uses the values of t") &&
                              Contains("neither may read the other"));
}

TEST_CASE("error: compute_with where the fused loops differ", "[error][compute_with]") {
    Users p;
    p.z1.compute_root().reorder(p.y, p.x);
    p.z2.compute_root().compute_with(p.z1, p.x);
    REQUIRE_COMPILE_ERROR(p.out.lowered_stmt(),
                          Contains("the loops from x outward must have the same names, in the same order, in both "
                                   "stages. z1 loops over (x, y), z2 over (y, x)"));
}

TEST_CASE("error: compute_with a loop the parent does not have", "[error][compute_with]") {
    Users p;
    p.z1.compute_root();
    p.z2.compute_root().compute_with(p.z1, p.xi);
    REQUIRE_COMPILE_ERROR(p.out.lowered_stmt(),
                          Contains("but z1 has no loop xi (its loops, outermost first: y, x)"));
}

TEST_CASE("error: compute_with at a vectorized loop", "[error][compute_with]") {
    Users p;
    p.z1.compute_root().vectorize(p.x);
    p.z2.compute_root().vectorize(p.x).compute_with(p.z1, p.x);
    REQUIRE_COMPILE_ERROR(p.out.lowered_stmt(),
                          Contains("the fused loop x is vectorized; fuse at a loop outside the vectorized ones"));
}

TEST_CASE("error: compute_with loops of different kinds", "[error][compute_with]") {
    Users p;
    p.z1.compute_root().parallel(p.y);
    p.z2.compute_root().compute_with(p.z1, p.y);
    REQUIRE_COMPILE_ERROR(p.out.lowered_stmt(),
                          Contains("the fused loop y is parallel in z1 and serial in z2; a fused loop runs one way"));
}

TEST_CASE("error: an output fused into an intermediate", "[error][compute_with]") {
    Users p;
    Func o("o");
    o(p.x, p.y) = p.z1(p.x, p.y) + 1;
    p.z1.compute_root();
    p.z2.compute_with(p.z1, p.y);
    REQUIRE_COMPILE_ERROR(Pipeline({o, p.z2}).lowered_stmt(),
                          Contains("Func z2 is scheduled compute_with(z1, y), but z2 is an output of the pipeline and "
                                   "z1 is not; make the output the parent: z1.compute_with(z2, y)"));
}

TEST_CASE("error: an intermediate fused into an output without compute_root", "[error][compute_with]") {
    Users p;
    Func o("o");
    o(p.x, p.y) = p.z1(p.x, p.y) + 1;
    p.z1.compute_at(o, p.y);
    p.z1.compute_with(p.z2, p.y);
    REQUIRE_COMPILE_ERROR(Pipeline({p.z2, o}).lowered_stmt(),
                          Contains("Func z1 is scheduled compute_with(z2, y), but z2 is an output of the pipeline and "
                                   "z1 is computed at o.y; a Func fused into an output is computed at the root with "
                                   "it: give z1 compute_root()"));
}

TEST_CASE("error: an intermediate fused into an output, read before the outputs", "[error][compute_with]") {
    Users p;
    Func g("g"), o("o");
    g(p.x, p.y) = p.z1(p.x, p.y) * 3;
    o(p.x, p.y) = g(p.x, p.y) + 1;
    p.z1.compute_root().compute_with(p.z2, p.y);
    g.compute_root();
    REQUIRE_COMPILE_ERROR(Pipeline({p.z2, o}).lowered_stmt(),
                          Contains("Func z1 is scheduled compute_with(z2, ...) with the output z2") &&
                              Contains("but g reads it and is computed before the outputs. Make g an output"));
}

TEST_CASE("error: compute_with a Func that is itself fused", "[error][compute_with]") {
    Users p;
    Func w("w");
    w(p.x, p.y) = p.t(p.x, p.y) * 5;
    p.z1.compute_root();
    p.z2.compute_root().compute_with(p.z1, p.y);
    w.compute_root().compute_with(p.z2, p.y);
    Func o2("o2");
    o2(p.x, p.y) = p.out(p.x, p.y) + w(p.x, p.y);
    REQUIRE_COMPILE_ERROR(o2.lowered_stmt(), Contains("but z2 is itself fused into z1; fuse w into z1 instead"));
}

TEST_CASE("error: compute_with two stages of one Func", "[error][compute_with]") {
    Func f("f");
    Var x("x");
    f(x) = x;
    f(x) += 1;
    REQUIRE_COMPILE_ERROR(f.update(0).compute_with(f, x), Contains("fusing two stages of one Func is not supported"));
}

TEST_CASE("error: specialize on a Var", "[error][specialize]") {
    Users p;
    REQUIRE_COMPILE_ERROR(p.z1.specialize(p.x > 3),
                          Contains("In schedule of z1: specialize((x > 3)) uses Var x") &&
                              Contains("may use only Params and image fields"));
}

TEST_CASE("error: specialize of a specialization", "[error][specialize]") {
    Users p;
    Param<int> n("n");
    REQUIRE_COMPILE_ERROR(p.z1.specialize(n > 1).specialize(n > 2),
                          Contains("specialize() of a specialization is not supported; write the combined condition"));
}

TEST_CASE("error: specialize_fail without a specialization", "[error][specialize]") {
    Users p;
    REQUIRE_COMPILE_ERROR(p.z1.specialize_fail("no"),
                          Contains("In schedule of z1: specialize_fail(\"no\") without any specialize() before it"));
}

TEST_CASE("error: compute_with a specialized stage", "[error][specialize]") {
    Users p;
    Param<int> n("n");
    p.z1.compute_root().specialize(n > 1).vectorize(p.x, 4);
    p.z2.compute_root().compute_with(p.z1, p.y);
    REQUIRE_COMPILE_ERROR(p.out.lowered_stmt(),
                          Contains("compute_with(z1, y), but z1 has specializations; a specialized stage cannot be fused"));
}

TEST_CASE("error: a directive on a specialization names it", "[error][specialize]") {
    Users p;
    Param<int> n("n");
    REQUIRE_COMPILE_ERROR(p.z1.specialize(n > 1).vectorize(p.xi, 4),
                          Contains("In schedule of z1.specialize((n > 1)): vectorize(xi, ...): xi is not a loop"));
}

namespace {

// The sums computed per row of their consumer.
struct RowSums : RowSumsFixture {
    explicit RowSums(bool chained = false) : RowSumsFixture(chained) { compute_per_row(); }
};

}  // namespace

TEST_CASE("error: compute_with an update stage: the messages name the stages", "[error][compute_with]") {
    {
        RowSums p(true);  // s2 reads s1
        p.s2.update(0).compute_with(p.s1.update(0), p.r.x);
        REQUIRE_COMPILE_ERROR(p.out.lowered_stmt(),
                              Contains("Func s2.update(0) is scheduled compute_with(s1.update(0), r.x), but s2 uses "
                                       "the values of s1"));
    }
    {
        RowSums p;
        p.s2.compute_root();
        p.s2.update(0).compute_with(p.s1.update(0), p.r.x);
        REQUIRE_COMPILE_ERROR(p.out.lowered_stmt(),
                              Contains("Func s2.update(0) is scheduled compute_with(s1.update(0), r.x), but s2 is "
                                       "computed at root and s1 at out.y"));
    }
    {
        RowSums p;  // s2's update loops over ro and ri, s1's over r.x
        RVar ro("ro"), ri("ri");
        p.s2.update(0).split(p.r.x, ro, ri, 8).compute_with(p.s1.update(0), p.r.x);
        REQUIRE_COMPILE_ERROR(p.out.lowered_stmt(),
                              Contains("Func s2.update(0) is scheduled compute_with(s1.update(0), r.x), but the "
                                       "fused loops differ") &&
                                  Contains("s1.update(0) loops over (y, r.x), s2.update(0) over (y, ro, ri)"));
    }
    {
        RowSums p;  // the parent's pure definition has no loop r.x
        p.s2.update(0).compute_with(p.s1, p.r.x);
        REQUIRE_COMPILE_ERROR(p.out.lowered_stmt(),
                              Contains("Func s2.update(0) is scheduled compute_with(s1, r.x), but s1 has no loop r.x "
                                       "(its loops, outermost first: y); s1.update(0) has it: compute_with(s1.update(0), r.x)"));
    }
}
