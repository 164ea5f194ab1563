// interleave_parity_selects (dsl/lower/InterleaveSelects.h): the store of
// a vectorized demosaic-like select before and after the pass, and the
// selects it leaves alone.
#include <catch2/catch.hpp>

#include "ir/IRPrinter.h"
#include "kiln/kiln.h"
#include "lower/Lower.h"

using namespace kiln;
using namespace kiln::internal;
using Catch::Contains;

namespace {

const Target no_asserts = Target::host().with(Target::NoAsserts);

// lower() up to and including one pass, printed.
std::string until(const Func &out, const char *pass) {
    LowerOptions o;
    o.stop_after = pass;
    return to_string(lower({out.contents()}, out.name(), {}, no_asserts, o).body);
}

// The store statement of `out` in printed IR.
std::string store_of(const std::string &stmt, const std::string &out) {
    size_t at = stmt.find("\n", stmt.find("produce " + out));
    at = stmt.find(out + "[ramp(", at);
    REQUIRE(at != std::string::npos);
    return stmt.substr(at, stmt.find("\n", at) - at);
}

}  // namespace

TEST_CASE("interleave_parity_selects: a select on x % 2 between reads at x / 2 becomes an interleave",
          "[lower][interleave]") {
    ImageParam a(UInt(16), 1, "a"), b(UInt(16), 1, "b");
    Var x("x");
    Func out("out");
    out(x) = select(x % 2 == 0, a(x / 2), b(x / 2) + cast<uint16_t>(1));
    out.vectorize(x, 16);
    // Before: both sides in all 16 lanes, each read at ramp / 2.
    std::string pre = store_of(until(out, "partition loops"), "out");
    CHECK_THAT(pre, Contains("select(((ramp(") && Contains("% x16(2)) == x16(0))") && Contains("/ x16(2))"));
    // After: each half of 8 lanes picks one side for all its lanes (a
    // broadcast condition) and reads it densely from x0 / 2 or (x0 + 1) / 2.
    std::string post = store_of(until(out, "interleave parity selects"), "out");
    CHECK(post == "out[ramp((out.s0.x.x * 16), 1, 16)] = interleave_vectors("
                  "select(x8(((out.min.0 % 2) == 0)), a[ramp((((out.min.0 / 2) + (out.s0.x.x * 8)) - a.min.0), 1, 8)], "
                  "(b[ramp((((out.min.0 / 2) + (out.s0.x.x * 8)) - b.min.0), 1, 8)] + x8((uint16)1))), "
                  "select(x8((((out.min.0 + 1) % 2) == 0)), a[ramp(((((out.min.0 + 1) / 2) + (out.s0.x.x * 8)) - "
                  "a.min.0), 1, 8)], (b[ramp(((((out.min.0 + 1) / 2) + (out.s0.x.x * 8)) - b.min.0), 1, 8)] + "
                  "x8((uint16)1))))");
}

TEST_CASE("interleave_parity_selects: selects it leaves alone", "[lower][interleave]") {
    ImageParam a(UInt(16), 1, "a"), b(UInt(16), 1, "b");
    Var x("x");
    // Dense sides: each half would read them with strided loads.
    Func dense("dense");
    dense(x) = select(x % 2 == 0, a(x), b(x));
    // A condition that is not the lanes' parity.
    Func left("left");
    left(x) = select(x < 5, a(x / 2), b(x / 2));
    // Too few lanes to halve.
    Func narrow("narrow");
    narrow(x) = select(x % 2 == 0, a(x / 2), b(x / 2));
    for (Func *f : {&dense, &left}) f->vectorize(x, 16);
    narrow.vectorize(x, 2);
    // Each keeps its select where it has one: left's steady state (x < 5 in
    // every lane, no ShiftInwards alternative asked of the last vector) has
    // none since partition_loops' narrow bounds (session 52); its last
    // iterations do.
    for (Func *f : {&dense, &left, &narrow}) {
        INFO(f->name());
        std::string post = until(*f, "interleave parity selects");
        CHECK_THAT(post, !Contains("interleave_vectors") && Contains(f->name() + "[ramp(") && Contains(" = select(("));
    }
}

TEST_CASE("interleave_parity_selects: align_bounds() decides the parity of each half", "[lower][interleave]") {
    // Before: the halves test out.min.0 % 2 (the caller's origin). After
    // out.align_bounds(x, 2) the region starts at ((out.min.0 / 2) * 2),
    // and every tile of a stage computed inside it at an odd offset from it:
    // the simplify after the pass keeps one side of each half.
    ImageParam a(UInt(16), 1, "a"), b(UInt(16), 1, "b");
    Var x("x"), xo("xo"), xi("xi");
    Func out("out"), demosaiced("demosaiced");
    demosaiced(x) = select(x % 2 == 0, a(x / 2), b(x / 2) + cast<uint16_t>(1));
    out(x) = demosaiced(x - 1) + demosaiced(x + 1);
    out.split(x, xo, xi, 32);
    demosaiced.compute_at(out, xo).vectorize(x, 16);
    auto lowered = [&] { return to_string(lower({out.contents()}, out.name(), {}, no_asserts, LowerOptions()).body); };
    std::string free = lowered();
    CHECK_THAT(free, Contains("interleave_vectors(") && Contains("% 2) == 0)"));
    out.align_bounds(x, 2);
    std::string aligned = lowered();
    INFO(aligned);
    std::string produce = aligned.substr(aligned.find("produce demosaiced"));
    produce = produce.substr(0, produce.find("consume demosaiced"));
    CHECK_THAT(produce, Contains("interleave_vectors(") && !Contains("% 2") && !Contains("select("));
    // The even lanes read b (x - 1 is odd), the odd ones a.
    std::string store = store_of(aligned, "demosaiced");
    CHECK_THAT(store, Contains("interleave_vectors((b[ramp(") && Contains("x8((uint16)1)), a[ramp("));
}
