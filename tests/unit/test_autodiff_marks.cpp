// What autodiff marks on the Funcs it builds for lowering to read: the RDom
// dimensions that run over a clamp's tail (ReductionVariable::boundary_tail,
// autodiff/Gather.cpp), which partition_loops leaves whole.
#include <catch2/catch.hpp>
#include <kiln/kiln.h>
#include <set>
#include <string>
#include <vector>
#include "ir/Function.h"
#include "ir/IRPrinter.h"

using namespace kiln;
using namespace kiln::internal;

namespace {

// Every RDom of every stage of every adjoint: its dimensions' marks, with
// the stage named for the failure's message.
struct MarkedDom {
    std::string stage;
    std::vector<bool> tail;
};

std::vector<MarkedDom> marked_doms(const Derivative &d) {
    std::vector<MarkedDom> doms;
    std::set<const FunctionContents *> seen;  // a Func may be listed under several names
    for (const auto &kv : d.adjoints)
        for (const Func &f : kv.second) {
            if (!seen.insert(f.contents().get()).second) continue;
            const FunctionContents &c = *f.contents();
            for (int k = 0; k < c.num_stages(); k++) {
                if (!c.stage(k).rdom) continue;
                MarkedDom m{c.stage_name(k) + " over " + c.stage(k).rdom->name, {}};
                for (const ReductionVariable &rv : c.stage(k).rdom->vars) {
                    m.stage += " " + rv.name + "(" + to_string(rv.min) + ", " + to_string(rv.extent) + ")";
                    m.tail.push_back(rv.boundary_tail);
                }
                doms.push_back(m);
            }
        }
    return doms;
}

}  // namespace

TEST_CASE("autodiff: a clamp's tails are marked boundary_tail, the summed Vars are not", "[unit][autodiff]") {
    // out(x, y) reads a 1-D input at a clamp of x: in's adjoint sums over y
    // (a Var left, the first RDom dimension of every term) and, at each end
    // of the input, over the points of x the clamp sends there (a tail).
    ImageParam in(Float(32), 1, "min"), d_out(Float(32), 2, "mdout");
    Var x("x"), y("y");
    Func out("mout");
    out(x, y) = in(clamp(x, in.dim(0).min(), in.dim(0).max())) * cast<float>(y + 1);
    Derivative d = propagate_adjoints(out, d_out);
    std::vector<MarkedDom> doms = marked_doms(d);
    int with_tail = 0, without = 0;
    for (const MarkedDom &m : doms) {
        INFO(m.stage);
        REQUIRE(!m.tail.empty());
        CHECK_FALSE(m.tail[0]);  // y, the Var left, comes first and is no tail
        if (m.tail.size() == 2) {
            CHECK(m.tail[1]);  // x's tail at one end of the input
            with_tail++;
        } else {
            CHECK(m.tail.size() == 1);
            without++;
        }
    }
    CHECK(with_tail == 2);  // the input's first and last points
    CHECK(without == 1);    // the interior's sum over y

    // A 2-D repeat_edge: the image's adjoint gathers from the boundary
    // Func's adjoint at clamp(x), clamp(y): one tail at each edge, two at
    // each corner.
    ImageParam in2(Float(32), 2, "min2"), d_out2(Float(32), 2, "mdout2");
    Func clamped2 = BoundaryConditions::repeat_edge(in2);
    Func out2("mout2");
    out2(x, y) = clamped2(x - 1, y) + clamped2(x + 1, y + 1);
    int edges = 0, corners = 0;
    for (const MarkedDom &m : marked_doms(propagate_adjoints(out2, d_out2))) {
        INFO(m.stage);
        for (bool t : m.tail) CHECK(t);  // no Var is left: every dimension is a tail
        if (m.tail.size() == 1) edges++;
        if (m.tail.size() == 2) corners++;
    }
    CHECK(edges == 4);
    CHECK(corners == 4);
}
