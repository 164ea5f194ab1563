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
    // Func's adjoint at clamp(x), clamp(y), and sums each end of each clamp
    // in one update: the first row and the last over the tail in y (x
    // inside), the first column and the last over the tail in x and every
    // row, written at clamp(y), so the columns take the corners.
    ImageParam in2(Float(32), 2, "min2"), d_out2(Float(32), 2, "mdout2");
    Func clamped2 = BoundaryConditions::repeat_edge(in2);
    Func out2("mout2");
    out2(x, y) = clamped2(x - 1, y) + clamped2(x + 1, y + 1);
    Derivative d2 = propagate_adjoints(out2, d_out2);
    int rows = 0, columns = 0;
    for (const MarkedDom &m : marked_doms(d2)) {
        INFO(m.stage);
        for (bool t : m.tail) CHECK(t);  // no Var is left: every dimension is a tail or runs with one
        if (m.tail.size() == 1) rows++;
        if (m.tail.size() == 2) columns++;
    }
    CHECK(rows == 2);
    CHECK(columns == 2);
    // The columns write at a clamp of their row, the rows at the adjoint's Var.
    const FunctionContents &a2 = *d2(in2).contents();
    REQUIRE(a2.num_stages() == 5);  // the gather and 4 sums, not 8 (one per edge and corner)
    auto is_own_var = [&](const Expr &e, int i) {
        const Variable *v = e.as<Variable>();
        return v && v->name == a2.args[i];
    };
    int clamped_rows = 0;
    for (int k = 1; k < a2.num_stages(); k++) {
        const Definition &def = a2.stage(k);
        INFO(a2.stage_name(k) << ": (" << def.args[0] << ", " << def.args[1] << ")");
        REQUIRE(def.rdom);
        CHECK_FALSE(is_own_var(def.args[1], 1));  // every sum writes one row or a clamp of its RVar
        if (def.rdom->vars.size() == 2) {
            CHECK_FALSE(is_own_var(def.args[0], 0));  // the first or the last column
            CHECK(to_string(def.args[0]).find(def.rdom->name) == std::string::npos);
            CHECK(to_string(def.args[1]).find(def.rdom->vars[1].name) != std::string::npos);
            CHECK(def.args[1].as<Variable>() == nullptr);  // clamped, not the RVar itself
            clamped_rows++;
        } else {
            CHECK(is_own_var(def.args[0], 0));  // the adjoint's Var x
            CHECK(to_string(def.args[1]).find(def.rdom->name) == std::string::npos);  // the first or the last row
        }
    }
    CHECK(clamped_rows == 2);

    // In 3-D: 6 sums (each end of each clamp), not 26 (3^3 - 1).
    ImageParam in3(Float(32), 3, "min3"), d_out3(Float(32), 3, "mdout3");
    Func clamped3 = BoundaryConditions::repeat_edge(in3);
    Func out3("mout3");
    Var z("z");
    out3(x, y, z) = clamped3(x - 1, y, z + 1) + clamped3(x, y + 1, z);
    std::vector<int> by_dims(4, 0);
    for (const MarkedDom &m : marked_doms(propagate_adjoints(out3, d_out3))) {
        INFO(m.stage);
        for (bool t : m.tail) CHECK(t);
        REQUIRE(m.tail.size() <= 3);
        by_dims[m.tail.size()]++;
    }
    CHECK(by_dims == std::vector<int>{0, 2, 2, 2});
}
