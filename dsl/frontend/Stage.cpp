// Loop-shaping directives: split, fuse, reorder, tile, vectorize, unroll,
// parallel, serial. They only record Splits and reorder the Dim list of a
// stage; lower/ScheduleFunctions.cpp turns that into loops.
//
// Legality rules that keep results unchanged (checked here, when the user
// writes the directive): an RVar, or a pure Var whose iterations depend on
// each other (f(x) = f(x - 1) + ...), may not be made parallel or vectorized;
// two RVars may not swap their order; an RVar split may not ShiftInwards,
// and no update split may (both would apply the update twice to some points).
#include <algorithm>

#include "analysis/Associativity.h"
#include "ir/Function.h"
#include "ir/IRVisitor.h"
#include "ir/Substitute.h"
#include "ir/Util.h"
#include "kiln/Func.h"

namespace kiln {

using namespace internal;

namespace {

// The stage's loops, outermost first.
std::string dims_list(const StageSchedule &s) {
    std::vector<std::string> names;
    for (auto it = s.dims.rbegin(); it != s.dims.rend(); ++it) names.push_back(it->user_name);
    return join(names);
}

// For parallel() or vectorize() of RVar loop i of an associative update:
// the rfactor() that makes the loop a pure Var of an intermediate, which
// may then run at once. A loop that is not yet split is split first, so
// that each slice reduces a run of the RVar (parallel: the outer part
// becomes the slices, vectorize: the inner part the lanes). "" when rfactor
// cannot help: the update is not associative, the loop fuses RVars, or a
// non-commutative update (an argmax) would be sliced across other RVars.
std::string rfactor_recipe(const FunctionContents &f, int stage, const StageSchedule &s, int i,
                           const std::string &directive) {
    const Definition &def = f.stage(stage);
    AssociativeOp op = find_associative_op(f.name, def.args, def.values);
    const Dim &d = s.dims[i];
    bool from_rdom = false, from_split = false, outermost = true;
    for (const auto &rv : def.rdom->vars) from_rdom |= rv.name == d.var;
    for (const auto &sp : s.splits) from_split |= sp.kind == Split::SplitVar && (sp.outer == d.var || sp.inner == d.var);
    for (size_t k = i + 1; k < s.dims.size(); k++) outermost &= !s.dims[k].is_rvar;
    bool parallel = directive == "parallel";
    if (!op.found || !(from_rdom || from_split) || (!op.commutative && !(parallel && outermost))) return "";
    std::string update = f.name + ".update(" + std::to_string(stage - 1) + ")", rv = d.user_name, recipe;
    if (from_rdom) {
        std::string base;
        for (char c : d.user_name)
            if (c != '.') base += c;
        recipe = "RVar " + base + "o(\"" + base + "o\"), " + base + "i(\"" + base + "i\"); ";
        recipe += update + ".split(" + d.user_name + ", " + base + "o, " + base + "i, " + (parallel ? "256" : "8") + "); ";
        rv = base + (parallel ? "o" : "i");
    }
    recipe += "Var u(\"u\"); Func intm = " + update + ".rfactor(" + rv + ", u); intm.compute_root().update(0)." +
              directive + "(u);";
    return ". Or, as " + update + " is an associative reduction (" + op.description +
           "), rfactor() it into partial results computed at once, then combined: " + recipe;
}

}  // namespace

std::string Stage::name() const {
    std::string n = func->stage_name(stage_index);
    if (specialization >= 0) n += ".specialize(" + to_string(func->stage(stage_index).specializations[specialization].condition) + ")";
    return n;
}

StageSchedule &Stage::schedule() const {
    Definition &d = func->stage(stage_index);
    return specialization < 0 ? d.schedule : d.specializations[specialization].schedule;
}

// Find a dim by user name; error listing the stage's loops if absent.
int Stage::find_dim(const VarOrRVar &v, const char *directive) const {
    bump_definition_epoch();  // every directive looks its loop up first
    StageSchedule &s = schedule();
    for (size_t i = 0; i < s.dims.size(); i++) {
        if (s.dims[i].user_name == v.name()) return (int)i;
    }
    for (const auto &sp : s.splits) {
        if (sp.old_var == v.name() || last_component(sp.old_var) == v.name()) {
            user_error << "In schedule of " << name() << ": " << directive << "(" << v.name()
                       << ", ...): " << v.name() << " has already been split or fused into other loops; "
                       << "use one of the current loops instead: " << dims_list(s);
        }
    }
    user_error << "In schedule of " << name() << ": " << directive << "(" << v.name()
               << ", ...): " << v.name() << " is not a loop of this stage; its loops (outermost first) are: "
               << dims_list(s);
    return -1;
}

void Stage::check_new_name(const std::string &n, const char *directive) const {
    for (const auto &d : schedule().dims)
        user_assert(d.user_name != n)
            << "In schedule of " << name() << ": " << directive << " creates a loop named " << n
            << ", but the stage already has a loop with that name; choose another name";
}

Stage &Stage::split(const VarOrRVar &old, const VarOrRVar &outer, const VarOrRVar &inner, Expr factor,
                    TailStrategy tail) {
    FunctionContents &f = *func;
    user_assert(f.init.defined()) << "Func " << f.name << " must be defined before it is scheduled";
    int i = find_dim(old, "split");
    StageSchedule &s = schedule();
    Dim d = s.dims[i];
    user_assert(factor.defined()) << "In schedule of " << name() << ": split(" << old.name()
                                  << ", ...) with an undefined factor";
    user_assert(!factor.type().is_float()) << "In schedule of " << name() << ": split(" << old.name()
                                           << ", ...) factor must be an integer";
    factor = cast(Int(32), factor);
    if (const int64_t *c = as_const_int(factor)) {
        user_assert(*c > 0) << "In schedule of " << name() << ": split(" << old.name() << ", " << outer.name()
                            << ", " << inner.name() << ", " << *c << "): the factor must be positive";
    }
    if (outer.name() != d.user_name) check_new_name(outer.name(), "split");
    if (inner.name() != d.user_name) check_new_name(inner.name(), "split");
    user_assert(outer.name() != inner.name()) << "In schedule of " << name() << ": split(" << old.name()
                                              << ", ...) gives the outer and inner loops the same name "
                                              << outer.name();
    if (tail == TailStrategy::ShiftInwards) {
        user_assert(stage_index == 0)
            << "In schedule of " << name() << ": split(" << old.name()
            << ", ..., TailStrategy::ShiftInwards) would compute some points of an update definition twice, "
               "which changes the result; use GuardWithIf or RoundUp";
    }
    s.split_dim(i, outer.name(), inner.name(), factor, tail);
    return *this;
}

Stage &Stage::fuse(const VarOrRVar &inner, const VarOrRVar &outer, const VarOrRVar &fused) {
    int ii = find_dim(inner, "fuse");
    int io = find_dim(outer, "fuse");
    StageSchedule &s = schedule();
    user_assert(io == ii + 1) << "In schedule of " << name() << ": fuse(" << inner.name() << ", " << outer.name()
                              << ", " << fused.name() << "): " << outer.name()
                              << " must be the loop directly outside " << inner.name()
                              << "; reorder first (current loops, outermost first: " << dims_list(s) << ")";
    user_assert(s.dims[ii].is_rvar == s.dims[io].is_rvar)
        << "In schedule of " << name() << ": fuse(" << inner.name() << ", " << outer.name()
        << ", ...) mixes a Var and an RVar; fuse Vars with Vars and RVars with RVars";
    check_new_name(fused.name(), "fuse");
    Split sp;
    sp.kind = Split::FuseVars;
    sp.inner = s.dims[ii].var;
    sp.outer = s.dims[io].var;
    sp.old_var = fused.name();
    s.splits.push_back(sp);
    Dim d = s.dims[io];
    d.var = fused.name();
    d.user_name = fused.name();
    d.is_pure = s.dims[ii].is_pure && s.dims[io].is_pure;
    s.dims[ii] = d;
    s.dims.erase(s.dims.begin() + io);
    return *this;
}

Stage &Stage::reorder(const std::vector<VarOrRVar> &vars) {
    StageSchedule &s = schedule();
    std::vector<int> idx;
    for (const auto &v : vars) {
        int i = find_dim(v, "reorder");
        user_assert(std::find(idx.begin(), idx.end(), i) == idx.end())
            << "In schedule of " << name() << ": reorder names " << v.name() << " twice";
        idx.push_back(i);
    }
    std::vector<int> slots = idx;
    std::sort(slots.begin(), slots.end());
    std::vector<Dim> old = s.dims;
    for (size_t k = 0; k < idx.size(); k++) s.dims[slots[k]] = old[idx[k]];
    // Legality: RVars keep their relative order; a dependent pure Var keeps
    // its place relative to RVars.
    auto pos = [&](const std::string &n) {
        for (size_t i = 0; i < s.dims.size(); i++)
            if (s.dims[i].var == n) return (int)i;
        return -1;
    };
    for (size_t a = 0; a < old.size(); a++) {
        for (size_t b = a + 1; b < old.size(); b++) {
            const Dim &da = old[a], &db = old[b];  // da inside db before the reorder
            if (pos(da.var) < pos(db.var)) continue;
            bool bad = (da.is_rvar && db.is_rvar) || (da.is_rvar && !db.is_pure) || (db.is_rvar && !da.is_pure);
            if (bad) {
                s.dims = old;
                user_error << "In schedule of " << name() << ": reorder would move " << db.user_name
                           << " inside " << da.user_name
                           << ", which changes the order in which the reduction visits its points and may "
                              "change the result; keep RVars (and Vars the update reads at other "
                              "coordinates) in their original relative order";
            }
        }
    }
    return *this;
}

Stage &Stage::tile(const VarOrRVar &x, const VarOrRVar &y, const VarOrRVar &xo, const VarOrRVar &yo,
                   const VarOrRVar &xi, const VarOrRVar &yi, Expr xfactor, Expr yfactor, TailStrategy tail) {
    split(x, xo, xi, xfactor, tail);
    split(y, yo, yi, yfactor, tail);
    return reorder({xi, yi, xo, yo});
}
Stage &Stage::tile(const VarOrRVar &x, const VarOrRVar &y, const VarOrRVar &xi, const VarOrRVar &yi, Expr xfactor,
                   Expr yfactor, TailStrategy tail) {
    return tile(x, y, x, y, xi, yi, xfactor, yfactor, tail);
}

void Stage::check_can_run_at_once(const VarOrRVar &v, const char *directive) {
    int i = find_dim(v, directive);
    const StageSchedule &s = schedule();
    const Dim &d = s.dims[i];
    std::vector<std::string> pure;
    for (const Dim &dim : s.dims)
        if (!dim.is_rvar && dim.is_pure) pure.push_back(dim.user_name);
    std::string pure_text = pure.empty() ? " (" + name() + " has none)" : " (" + name() + " has " + join(pure) + ")";
    user_assert(!d.is_rvar) << "In schedule of " << name() << ": " << directive << "(" << v.name() << "): "
                            << v.name()
                            << " is a reduction variable; running its iterations at once would race on the values "
                               "being accumulated. Parallelize or vectorize a pure Var instead"
                            << pure_text << rfactor_recipe(*func, stage_index, s, i, directive);
    user_assert(d.is_pure) << "In schedule of " << name() << ": " << directive << "(" << v.name()
                           << "): the update reads " << func->name << " at other values of " << v.name()
                           << ", so its iterations depend on each other and must run in order";
}

Stage &Stage::set_for_type(const VarOrRVar &v, ForType t, const char *directive) {
    if (t == ForType::Parallel || t == ForType::Vectorized) check_can_run_at_once(v, directive);
    int i = find_dim(v, directive);
    schedule().dims[i].for_type = t;
    return *this;
}

Stage &Stage::vectorize(const VarOrRVar &v) { return set_for_type(v, ForType::Vectorized, "vectorize"); }
Stage &Stage::unroll(const VarOrRVar &v) { return set_for_type(v, ForType::Unrolled, "unroll"); }
Stage &Stage::parallel(const VarOrRVar &v) { return set_for_type(v, ForType::Parallel, "parallel"); }
Stage &Stage::serial(const VarOrRVar &v) { return set_for_type(v, ForType::Serial, "serial"); }
Stage &Stage::npu_tile(const VarOrRVar &x, const VarOrRVar &y) {
    int ix = find_dim(x, "npu_tile"), iy = find_dim(y, "npu_tile");
    user_assert(ix != iy) << "In schedule of " << name() << ": npu_tile(" << x.name() << ", " << y.name()
                          << "): a tile has two different loops, columns first";
    StageSchedule &s = schedule();
    s.npu_tile = {s.dims[ix].var, s.dims[iy].var};
    return *this;
}

static void require_const_factor(const Stage &s, const char *directive, const VarOrRVar &v, const Expr &factor) {
    user_assert(factor.defined() && as_const_int(factor))
        << "In schedule of " << s.name() << ": " << directive << "(" << v.name()
        << ", factor): the factor must be a constant integer (got " << (factor.defined() ? to_string(factor) : "nothing")
        << ")";
    user_assert(*as_const_int(factor) > 0) << "In schedule of " << s.name() << ": " << directive << "(" << v.name()
                                           << ", " << factor << "): the factor must be positive (the number of "
                                           << (std::string(directive) == "vectorize" ? "lanes" : "copies") << ")";
}

Stage &Stage::vectorize(const VarOrRVar &v, Expr factor, TailStrategy tail) {
    require_const_factor(*this, "vectorize", v, factor);
    check_can_run_at_once(v, "vectorize");  // on the loop the user named, before splitting it
    VarOrRVar inner(v.name() + "_vec", v.rvar());
    split(v, v, inner, factor, tail);
    return set_for_type(inner, ForType::Vectorized, "vectorize");
}
Stage &Stage::unroll(const VarOrRVar &v, Expr factor, TailStrategy tail) {
    require_const_factor(*this, "unroll", v, factor);
    VarOrRVar inner(v.name() + "_unr", v.rvar());
    split(v, v, inner, factor, tail);
    return set_for_type(inner, ForType::Unrolled, "unroll");
}
Stage &Stage::parallel(const VarOrRVar &v, Expr task_size, TailStrategy tail) {
    VarOrRVar inner(v.name() + "_task", v.rvar());
    check_can_run_at_once(v, "parallel");
    const int64_t *size = as_const_int(task_size);
    user_assert(!size || *size > 0) << "In schedule of " << name() << ": parallel(" << v.name() << ", " << task_size
                                    << "): the task size must be positive (the iterations each task runs)";
    split(v, v, inner, task_size, tail);
    return set_for_type(v, ForType::Parallel, "parallel");
}

Stage &Stage::compute_with(const Stage &s, const VarOrRVar &var, LoopAlignStrategy align) {
    bump_definition_epoch();
    FunctionContents &f = *func;
    user_assert(f.init.defined() && s.func->init.defined())
        << "In schedule of " << name() << ": compute_with(" << s.name() << ", " << var.name()
        << "): both Funcs must be defined first";
    user_assert(s.func != func) << "In schedule of " << name() << ": compute_with(" << s.name() << ", "
                                << var.name()
                                << "): fusing two stages of one Func is not supported; fuse stages of two "
                                   "different Funcs";
    user_assert(specialization < 0 && func->stage(stage_index).specializations.empty())
        << "In schedule of " << name() << ": compute_with(" << s.name() << ", " << var.name()
        << "): a stage with specializations cannot be fused; fuse the unspecialized stages";
    FuseLevel &l = schedule().fuse_with;
    l.func = s.func->name;
    l.target = s.func;
    l.stage = s.stage_index;
    l.var = var.name();
    l.align = align;
    l.align_dims.clear();
    return *this;
}

Stage &Stage::compute_with(const Stage &s, const VarOrRVar &var,
                           const std::vector<std::pair<VarOrRVar, LoopAlignStrategy>> &align) {
    std::map<std::string, LoopAlignStrategy> dims;
    for (const auto &[v, a] : align) {
        find_dim(v, "compute_with");  // a loop of this stage (that it is fused is checked when lowering)
        user_assert(dims.emplace(v.name(), a).second)
            << "In schedule of " << name() << ": compute_with(" << s.name() << ", " << var.name() << ", {...}): loop "
            << v.name() << " is given two alignments; give each fused loop one";
    }
    compute_with(s, var, LoopAlignStrategy::Auto);
    schedule().fuse_with.align_dims = dims;
    return *this;
}

Stage &Stage::prefetch(const Func &f, const VarOrRVar &at, const VarOrRVar &from, Expr offset,
                       PrefetchBoundStrategy strategy) {
    user_assert(f.defined()) << "In schedule of " << name() << ": prefetch(" << f.name() << ", " << at.name()
                             << ", ...): " << f.name() << " is not defined";
    add_prefetch(f.name(), false, at, from, offset, strategy);
    schedule().prefetches.back().target = f.contents();
    return *this;
}

Stage &Stage::prefetch(const OutputImageParam &image, const VarOrRVar &at, const VarOrRVar &from, Expr offset,
                       PrefetchBoundStrategy strategy) {
    user_assert(image.defined()) << "In schedule of " << name() << ": prefetch of an undefined ImageParam";
    // An output's buffer is its Func's storage.
    add_prefetch(image.name(), !image.parameter()->is_output, at, from, offset, strategy);
    if (image.parameter()->is_output) schedule().prefetches.back().buffer = image.parameter();
    return *this;
}

Stage &Stage::add_prefetch(const std::string &target, bool is_image, const VarOrRVar &at, const VarOrRVar &from,
                           Expr offset, PrefetchBoundStrategy strategy) {
    bump_definition_epoch();
    std::string call = "In schedule of " + name() + ": prefetch(" + target + ", " + at.name() + ", " + from.name();
    user_assert(offset.defined() && (offset.type().is_int() || offset.type().is_uint()))
        << call << ", ...): the offset must be an integer (iterations of " << from.name() << " ahead)";
    struct FreeVar : internal::IRVisitor {
        std::string name;
        void visit(const Variable *op) override {
            if (!op->param && name.empty()) name = op->name;
        }
    } free;
    free.include(offset);
    user_assert(free.name.empty()) << call << ", " << offset << "): the offset uses " << free.name
                                   << "; it may use constants and Params only";
    user_assert(specialization < 0)
        << call << ", ...) in a specialization is not supported; prefetch in the stage's own schedule (a "
        << "specialization made afterwards starts as a copy of it)";
    // As every loop directive, it names current loops (lowering checks again, after later splits).
    const int a = find_dim(at, "prefetch"), f = find_dim(from, "prefetch");
    user_assert(f >= a) << call << ", ...): loop " << from.name() << " is inside loop " << at.name()
                        << "; `from` must be `at` itself or a loop around it, e.g. prefetch(" << target << ", "
                        << from.name() << ", " << at.name() << ", ...)";
    user_assert(schedule().dims[a].for_type != ForType::Vectorized)
        << call << ", ...): loop " << at.name() << " is vectorized, and a prefetch goes into each iteration; "
        << "prefetch at a loop around it";
    Prefetch p;
    p.name = target;
    p.is_image = is_image;
    p.at = at.name();
    p.from = from.name();
    p.offset = cast(Int(32), offset);
    p.strategy = strategy;
    schedule().prefetches.push_back(p);
    return *this;
}

// Variables a specialization condition may use: Params and buffer fields.
class CheckCondition : public IRVisitor {
public:
    std::string bad;

protected:
    void visit(const Variable *op) override {
        if (!op->param && bad.empty()) bad = "Var " + op->name;
    }
    void visit(const Call *op) override {
        IRVisitor::visit(op);
        if (op->call_type != Call::PureExtern && bad.empty()) bad = "a read of " + op->name;
    }
};

Stage Stage::specialize(Expr condition) {
    bump_definition_epoch();
    user_assert(specialization < 0) << "In schedule of " << name()
                                     << ": specialize() of a specialization is not supported; write the "
                                        "combined condition, e.g. specialize(a && b)";
    user_assert(condition.defined() && condition.type().is_bool())
        << "In schedule of " << name() << ": specialize(" << (condition.defined() ? to_string(condition) : "")
        << "): the condition must be a bool expression, e.g. n >= 64";
    CheckCondition check;
    check.include(condition);
    user_assert(check.bad.empty()) << "In schedule of " << name() << ": specialize(" << condition
                                   << ") uses " << check.bad
                                   << "; a specialization is chosen once per run, so its condition may use only "
                                      "Params and image fields (e.g. input.width())";
    Definition &d = func->stage(stage_index);
    user_assert(!d.schedule.fuse_with.defined())
        << "In schedule of " << name() << ": specialize(" << condition
        << "): the stage is fused (compute_with); a fused stage cannot be specialized";
    for (size_t i = 0; i < d.specializations.size(); i++)
        if (equal(d.specializations[i].condition, condition)) return Stage(func, stage_index, (int)i);
    d.specializations.push_back({condition, d.schedule});
    return Stage(func, stage_index, (int)d.specializations.size() - 1);
}

void Stage::specialize_fail(const std::string &message) {
    bump_definition_epoch();
    user_assert(specialization < 0) << "In schedule of " << name()
                                     << ": specialize_fail() belongs to the stage, not to a specialization";
    Definition &d = func->stage(stage_index);
    user_assert(!d.specializations.empty())
        << "In schedule of " << name() << ": specialize_fail(\"" << message
        << "\") without any specialize() before it would always fail";
    d.specialize_fail = message.empty() ? "no specialization applies" : message;
}

// Func forwards loop shaping to its pure definition.
#define KILN_FORWARD(NAME, PARAMS, ARGS) \
    Func &Func::NAME PARAMS {            \
        stage0().NAME ARGS;              \
        return *this;                    \
    }
KILN_FORWARD(split, (const VarOrRVar &o, const VarOrRVar &a, const VarOrRVar &b, Expr f, TailStrategy t), (o, a, b, f, t))
KILN_FORWARD(fuse, (const VarOrRVar &i, const VarOrRVar &o, const VarOrRVar &f), (i, o, f))
KILN_FORWARD(reorder, (const std::vector<VarOrRVar> &v), (v))
KILN_FORWARD(tile,
             (const VarOrRVar &x, const VarOrRVar &y, const VarOrRVar &xo, const VarOrRVar &yo, const VarOrRVar &xi,
              const VarOrRVar &yi, Expr xf, Expr yf, TailStrategy t),
             (x, y, xo, yo, xi, yi, xf, yf, t))
KILN_FORWARD(tile,
             (const VarOrRVar &x, const VarOrRVar &y, const VarOrRVar &xi, const VarOrRVar &yi, Expr xf, Expr yf,
              TailStrategy t),
             (x, y, xi, yi, xf, yf, t))
KILN_FORWARD(vectorize, (const VarOrRVar &v), (v))
KILN_FORWARD(vectorize, (const VarOrRVar &v, Expr f, TailStrategy t), (v, f, t))
KILN_FORWARD(unroll, (const VarOrRVar &v), (v))
KILN_FORWARD(unroll, (const VarOrRVar &v, Expr f, TailStrategy t), (v, f, t))
KILN_FORWARD(parallel, (const VarOrRVar &v), (v))
KILN_FORWARD(parallel, (const VarOrRVar &v, Expr f, TailStrategy t), (v, f, t))
KILN_FORWARD(serial, (const VarOrRVar &v), (v))
Stage Func::specialize(Expr c) { return stage0().specialize(c); }
void Func::specialize_fail(const std::string &m) { stage0().specialize_fail(m); }
KILN_FORWARD(npu_tile, (const VarOrRVar &x, const VarOrRVar &y), (x, y))
KILN_FORWARD(compute_with, (const Stage &s, const VarOrRVar &v, LoopAlignStrategy a), (s, v, a))
KILN_FORWARD(prefetch, (const Func &f, const VarOrRVar &a, const VarOrRVar &b, Expr o, PrefetchBoundStrategy s),
             (f, a, b, o, s))
KILN_FORWARD(prefetch,
             (const OutputImageParam &i, const VarOrRVar &a, const VarOrRVar &b, Expr o, PrefetchBoundStrategy s),
             (i, a, b, o, s))
Func &Func::compute_with(const Func &f, const VarOrRVar &v, LoopAlignStrategy a) {
    return compute_with(Stage(f.contents(), 0), v, a);
}
Stage &Stage::compute_with(const Func &f, const VarOrRVar &v, LoopAlignStrategy a) {
    return compute_with(Stage(f.contents(), 0), v, a);
}
using AlignList = std::vector<std::pair<VarOrRVar, LoopAlignStrategy>>;
KILN_FORWARD(compute_with, (const Stage &s, const VarOrRVar &v, const AlignList &a), (s, v, a))
Func &Func::compute_with(const Func &f, const VarOrRVar &v, const AlignList &a) {
    return compute_with(Stage(f.contents(), 0), v, a);
}
Stage &Stage::compute_with(const Func &f, const VarOrRVar &v, const AlignList &a) {
    return compute_with(Stage(f.contents(), 0), v, a);
}
#undef KILN_FORWARD

}  // namespace kiln
