// The legality checks of instruction selection whose messages say how to
// fix the schedule: a stage computed outside any loop, the loops of a tile
// (npu_tile, constant extents, RDoms of run-time extent), and what makes a
// run-time extent constant. Part of the Selector (NpuSelect.h).
//
//   output: split(y, yo, yi, 8)        (x spans the output's run-time width)
//   -> "NPU target: Func output: loop x of its tile (output.s0.x) has extent
//      output.extent.0, which is known only at run time; ... bound(x, 0, W) on
//      output with W a constant ..., or split(x, xo, xi, 64) on output ..."
#include <algorithm>
#include <sstream>

#include "NpuSelect.h"
#include "ir/IRPrinter.h"
#include "ir/IRVisitor.h"

namespace kiln {
namespace internal {
namespace npu_select {

void Selector::provide_outside_loop(const Provide *p) {
    bool varies = false;
    for (const Expr &a : p->args) varies |= !is_const(simplify(a));
    const LoopLevel &at = func(p->name).schedule.compute_level;
    // A Func with dimensions whose loops all had extent 1 (and were simplified
    // away): its tile is one row (or point) of the loop it is computed at.
    user_assert(!varies || at.is_root() || at.is_inlined())
        << "NPU target: Func " << p->name << " is computed one point per iteration of " << at.to_string()
        << " (compute_at(" << at.func() << ", " << at.var() << ")): its own loops there have extent 1, e.g. "
        << "tiles of one row (split(y, yo, yi, 1)) or a compute_at inside the rows of its consumer's tile, so "
        << "no loop is left to become a tile instruction; give the tiles of " << at.func()
        << " two rows or more (split(y, yo, yi, 8) on " << at.func() << ") and compute_at(" << at.func()
        << ", yo) so that " << p->name << "'s tile spans those rows";
    user_error << "NPU target: Func " << p->name << " is computed outside a loop (a Func of no dimensions, or "
               << "an update of one point such as " << p->name << "(0, 0) = ...); every stage's innermost "
               << "two loops become one tile instruction, so define and update " << p->name
               << " over one or two dimensions (pure Vars or an RDom)";
}


void Selector::check_npu_tile(const std::string &f, const For *fy, const For *fx, const int64_t *ey, const int64_t *ex) {
    const For *any = fx ? fx : fy;
    const std::string prefix = f + ".s";
    if (any->name.rfind(prefix, 0) != 0) return;
    size_t dot = any->name.find('.', prefix.size());
    int stage = std::atoi(any->name.substr(prefix.size(), dot - prefix.size()).c_str());
    const FunctionContents &fc = func(f);
    if (stage >= fc.num_stages()) return;
    const StageSchedule &ss = fc.stage(stage).schedule;
    if (ss.npu_tile.empty()) return;
    auto user = [&](const std::string &var) {
        for (const Dim &d : ss.dims)
            if (d.var == var) return d.user_name;
        return var;
    };
    const std::string base = any->name.substr(0, dot + 1), x = user(ss.npu_tile[0]), y = user(ss.npu_tile[1]);
    const std::string directive = "npu_tile(" + x + ", " + y + ")";
    auto loop_name = [&](const For *l) { return l ? user(l->name.substr(base.size())) : std::string("(none)"); };
    user_assert(fx && fy && fx->name == base + ss.npu_tile[0] && fy->name == base + ss.npu_tile[1])
        << "NPU target: Func " << fc.stage_name(stage) << ": " << directive << " names the loops of its tile, but "
        << "the innermost two loops of the stage are " << loop_name(fy) << " (rows) and " << loop_name(fx)
        << " (columns, innermost); reorder(" << x << ", " << y << ", ...) so that " << x << " is innermost and "
        << y << " next, or name those two loops";
    user_assert(ex && ey) << "NPU target: Func " << fc.stage_name(stage) << ": " << directive << ": loop "
                          << (ex ? y : x) << " has extent " << expand(ex ? fy->extent : fx->extent)
                          << ", which is not a constant; a tile has a constant shape, so "
                          << tile_extent_fix(f, ex ? fy : fx);
    user_assert(*ex * 4 % 32 == 0) << "NPU target: Func " << fc.stage_name(stage) << ": " << directive << ": a row of the tile is "
                                    << *ex << " float32 values, " << *ex * 4
                                    << " bytes, not a multiple of the machine's 32-byte alignment; make the extent "
                                       "of "
                                    << x << " a multiple of 8 (or drop npu_tile to let the tile pad its rows)";
}

const ReductionVariable *Selector::rvar_of(const std::string &f, const For *loop, int *stage_out) const {
    const std::string prefix = f + ".s";
    if (loop->name.rfind(prefix, 0) != 0) return nullptr;
    size_t dot = loop->name.find('.', prefix.size());
    int stage = std::atoi(loop->name.substr(prefix.size(), dot - prefix.size()).c_str());
    const FunctionContents &fc = func(f);
    if (stage < 1 || stage > (int)fc.updates.size() || !fc.updates[stage - 1].rdom) return nullptr;
    const std::string var = loop->name.substr(dot + 1);
    for (const auto &rv : fc.updates[stage - 1].rdom->vars)
        if (var == rv.name || var.rfind(rv.name + ".", 0) == 0) {
            if (stage_out) *stage_out = stage;
            return &rv;
        }
    return nullptr;
}

void Selector::check_rvar_extent(const std::string &f, const For *loop) {
    int stage = 0;
    const ReductionVariable *rv = rvar_of(f, loop, &stage);
    if (!rv) return;
    user_assert(is_const(simplify(rv->extent)))
        << "NPU target: Func " << f << ": the RDom variable " << rv->name << " of " << func(f).stage_name(stage)
        << " spans " << rv->extent << " elements, which is known only at run time; its loop " << loop->name
        << " is a loop of the tile, and a tile has a constant shape (a reduction covers its whole RDom in "
        << "one instruction), so give the RDom constant bounds: RDom(0, 1024) in the algorithm, or a "
        << "generator's constant width (softmax and layernorm: width=1024). bound() on a Func does not change "
           "an RDom's extent";
}

std::string Selector::region_root(const std::string &f) const {
    std::string g = f;
    for (size_t i = 0; i <= env.size(); i++) {  // a compute_at chain visits each Func once
        const LoopLevel &at = func(g).schedule.compute_level;
        if (is_output(g) || at.is_root() || at.is_inlined() || !env.count(at.func())) return g;
        g = at.func();
    }
    return g;
}

namespace {

// The first Func of env with an update over an RDom that reads Func f
// (a reduction over f's values), or "".
std::string reducer_of(const Environment &env, const std::string &f) {
    struct Reads : IRVisitor {
        const std::string &f;
        bool found = false;
        explicit Reads(const std::string &f) : f(f) {}
        using IRVisitor::visit;
        void visit(const Call *c) override {
            found |= c->call_type == Call::Func && c->name == f;
            IRVisitor::visit(c);
        }
    };
    for (const auto &kv : env)
        for (const Definition &u : kv.second->updates) {
            if (!u.rdom || kv.first == f) continue;
            Reads r(f);
            for (const Expr &v : u.values) r.include(v);
            if (r.found) return kv.first;
        }
    return "";
}

}  // namespace

std::string Selector::constant_extent_fix(const std::string &f, int dim) const {
    const FunctionContents &fc = func(f);
    const std::string root = region_root(f);
    const FunctionContents &rc = func(root);
    if (fc.args.empty() || rc.args.empty()) return "";
    const std::string v = fc.args[std::min<size_t>(dim, fc.args.size() - 1)];
    // The root's dimension that f's dimension follows: the one of the same
    // name (row_max(y) at output(x, y)), else the one at the same place.
    std::string rv = rc.args[std::min<size_t>(dim, rc.args.size() - 1)];
    if (std::count(rc.args.begin(), rc.args.end(), v)) rv = v;
    std::ostringstream s;
    for (const BoundAlignment &a : fc.schedule.alignments)
        if (a.var == v && root != f) {  // rounded out per tile: the size follows where the tile starts
            s << f << "'s align_bounds(" << v << ", " << a.modulus << ", " << a.remainder << ") rounds its region at "
              << "each tile of " << root << " out to multiples of " << a.modulus << ", a size that depends on where "
              << "the tile starts: align the tiles too (align_bounds(" << rv << ", " << a.modulus << ") on " << root
              << ", with tiles a multiple of " << a.modulus << " in " << rv << ", so that every tile starts at a "
              << "multiple of " << a.modulus << "), or remove the align_bounds()";
            return s.str();
        }
    for (const Bound &b : rc.schedule.bounds)
        if (b.var == rv && is_const(simplify(b.extent))) return "";  // the run-time size comes from elsewhere
    if (root != f) {
        const LoopLevel &at = fc.schedule.compute_level;
        s << f << " is computed at compute_at(" << at.func() << ", " << at.var() << "), and its region there spans "
          << "all of dimension " << rv << " of " << root << ", whose extent is known only at run time: ";
    }
    s << "bound(" << rv << ", 0, W) on " << root << " with W a constant, the width it always has (a number: "
      << root << ": bound(" << rv << ", 0, 1024) in a .sched file; in a generator a GeneratorParam's value, "
      << "set by kiln-gen NAME=VALUE; a Param or a buffer's size stays a run-time value)";
    const std::string reducer = root == f ? std::string() : reducer_of(env, f);
    if (!reducer.empty()) {  // narrower tiles would cut the reduction's rows
        s << "; narrower tiles of " << root << " do not help: " << reducer << " reduces over " << f
          << " with an RDom, so " << f << " is computed over all that the RDom reads";
        return s.str();
    }
    s << ", or split(" << rv << ", " << rv << "o, " << rv << "i, 64) on " << root;
    if (root != f) s << " and compute " << f << " at " << rv << "o or inside it";
    s << " so that each tile spans a constant 64";
    return s.str();
}

std::string Selector::tile_extent_fix(const std::string &f, const For *loop) const {
    const std::string generic = "split or tile its loops by constants (e.g. tile(x, y, xo, yo, xi, yi, 64, 16))";
    const std::string prefix = f + ".s";
    if (loop->name.rfind(prefix, 0) != 0) return generic;
    size_t dot = loop->name.find('.', prefix.size());
    int stage = std::atoi(loop->name.substr(prefix.size(), dot - prefix.size()).c_str());
    const FunctionContents &fc = func(f);
    if (dot == std::string::npos || stage >= fc.num_stages()) return generic;
    const std::string var = loop->name.substr(dot + 1);
    for (const Split &sp : fc.stage(stage).schedule.splits)
        if (sp.kind == Split::SplitVar && sp.inner == var && !is_const(simplify(sp.factor))) {
            auto user = [](const std::string &v) { return v.substr(v.rfind('.') + 1); };
            std::ostringstream s;
            s << "split " << user(sp.old_var) << " by a constant factor: split(" << user(sp.old_var) << ", "
              << user(sp.outer) << ", " << user(sp.inner) << ", " << sp.factor << ") on " << f << " has a factor "
              << "known only at run time (a GeneratorParam's value is a constant, a Param is not)";
            return s.str();
        }
    auto arg = std::find(fc.args.begin(), fc.args.end(), var);
    if (arg == fc.args.end()) return generic;
    std::string fix = constant_extent_fix(f, (int)(arg - fc.args.begin()));
    return fix.empty() ? generic : fix;
}

}  // namespace npu_select
}  // namespace internal
}  // namespace kiln
