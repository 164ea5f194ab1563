// How the region expressions of bounds inference grow with the depth of a
// pipeline, taken through the passes of lower() up to bounds inference:
// the chain of 3x3 stencils of lowering-bench under Halide's stencil_chain
// schedule (apps/lowering/stencil_chain.h), and Halide's interpolate app
// with its pyramid levels (apps/lowering/pyramids.h). Its region lets
// (`let stage_3.s0.y.min = ...`) and the boxes of its Realizes
// (`realize stage_3([min, extent], [min, extent])`) are measured in printed
// characters.
#include <catch2/catch.hpp>

#include <algorithm>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "../../apps/lowering/pyramids.h"
#include "../../apps/lowering/stencil_chain.h"
#include "ir/IRPrinter.h"
#include "kiln/kiln.h"
#include "lower/Lower.h"

using namespace kiln;
using namespace kiln::internal;

namespace {

// The statement after bounds inference, as lower() makes it.
std::string after_bounds_inference(const Func &output) {
    LowerOptions o;
    o.stop_after = "bounds inference";
    std::ostringstream os;
    os << lower({output.contents()}, output.name(), {}, Target::host(), o).body;
    return os.str();
}

// The longest region expressions of a statement, in printed characters.
struct RegionSizes {
    size_t let = 0;      // the value of a region let `<func>.s0.<var>.min/max = ...`
    size_t realize = 0;  // a min or an extent of a Realize's box
};

// The min and extent expressions of a Realize's box "[m0, e0], [m1, e1]",
// split at the brackets and commas not nested in an expression.
std::vector<std::string> box_exprs(const std::string &box) {
    std::vector<std::string> parts;
    std::string cur;
    int depth = 0;
    for (char ch : box) {
        if (ch == '(' || ch == '[') depth++;
        if (ch == ')' || ch == ']') depth--;
        bool separator = (ch == ',' && depth == 1) || (ch == '[' && depth == 1) || (ch == ']' && depth == 0);
        if (separator) {
            if (!cur.empty()) parts.push_back(cur);
            cur.clear();
        } else if (depth >= 1 && !(ch == ' ' && cur.empty())) {
            cur += ch;
        }
    }
    return parts;
}

// Lines are matched by hand: std::regex recurses per character and
// overflows the stack on the Realize lines of depth 4 (30,000 characters).
RegionSizes region_sizes(const std::string &stmt) {
    RegionSizes r;
    std::istringstream lines(stmt);
    for (std::string line; std::getline(lines, line);) {
        size_t start = line.find_first_not_of(' ');
        if (start == std::string::npos) continue;
        line = line.substr(start);
        if (line.rfind("let ", 0) == 0) {
            size_t eq = line.find(" = ");
            std::string name = line.substr(4, eq == std::string::npos ? 0 : eq - 4);
            bool region = name.find(".s0.") != std::string::npos &&
                          (name.size() > 4 && (name.compare(name.size() - 4, 4, ".min") == 0 ||
                                               name.compare(name.size() - 4, 4, ".max") == 0));
            if (region) r.let = std::max(r.let, line.size() - (eq + 3));
        } else if (line.rfind("realize ", 0) == 0) {
            size_t open = line.find('('), close = line.rfind(')');
            if (open == std::string::npos || close == std::string::npos || close < open) continue;
            for (const std::string &e : box_exprs(line.substr(open + 1, close - open - 1)))
                r.realize = std::max(r.realize, e.size());
        }
    }
    return r;
}

// Linear growth with some room: from size a to size b, at most b/a times as
// long plus 15%, and a constant for the expressions' fixed parts.
void check_linear(const std::map<int, RegionSizes> &size, int a, int b) {
    auto linear = [&](size_t la, size_t lb) { return (double)lb <= 1.15 * b / a * (double)la + 64; };
    INFO("sizes " << a << " -> " << b);
    INFO("region lets " << size.at(a).let << " -> " << size.at(b).let << " characters");
    CHECK(linear(size.at(a).let, size.at(b).let));
    INFO("Realize bounds " << size.at(a).realize << " -> " << size.at(b).realize << " characters");
    CHECK(linear(size.at(a).realize, size.at(b).realize));
}

const Target fixed_target("x86-64-linux-avx2");  // so the lengths do not depend on the machine

}  // namespace

// Each stage's region names its consumer's lets, the constant extents of the
// tiles fold the clamp of each stage's last vector away, and the boxes of
// the Realizes stored per tile come out in the same names: a region grows by
// a constant per stage. (They grew 3x per stage, and depth 8 took over a
// minute to lower.) Depths up to 8 stay in one fused group: from 12 on, the
// schedule adds a compute_root stage, whose tiled box is longer than any
// region of a group but the same for every group.
TEST_CASE("region expressions of a stencil chain grow at most linearly with its depth", "[lower][bounds]") {
    std::map<int, RegionSizes> size;
    for (int depth : {2, 4, 8}) {
        kiln_lowering::StencilChain chain = kiln_lowering::make_stencil_chain(depth, fixed_target);
        size[depth] = region_sizes(after_bounds_inference(chain.output));
        REQUIRE(size[depth].let > 0);
        REQUIRE(size[depth].realize > 0);
    }
    check_linear(size, 2, 4);
    check_linear(size, 4, 8);
}

// Each level of the pyramid names the previous level's region twice (its
// min, and its extent in the clamp of the last vector), over a symbolic
// image width. Where a box would substitute such lets it keeps them as
// names, defined again above the Realize; substituted, they doubled with
// every level, and 6 levels did not lower in 100 s.
TEST_CASE("region expressions of an image pyramid grow at most linearly with its levels", "[lower][bounds]") {
    std::map<int, RegionSizes> size;
    for (int levels : {3, 6}) {
        kiln::Pipeline p = kiln_lowering::make_interpolate(levels, fixed_target);
        size[levels] = region_sizes(after_bounds_inference(p.outputs()[0]));
        REQUIRE(size[levels].let > 0);
        REQUIRE(size[levels].realize > 0);
    }
    check_linear(size, 3, 6);
}
