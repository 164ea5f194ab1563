#include "BoundsInference.h"

#include <algorithm>
#include <functional>
#include <map>
#include <optional>
#include <set>

#include "ComputeWith.h"
#include "InlineFunctions.h"
#include "ScheduleFunctions.h"
#include "analysis/HeldNames.h"
#include "ir/IRVisitor.h"
#include "ir/Simplify.h"
#include "ir/Substitute.h"
#include "kiln_runtime.h"

namespace kiln {
namespace internal {

namespace {

// align_bounds(v, m, r): [mn, mx] widened to start at r modulo m and to
// span a multiple of m. The min keeps the form ((mn - r) / m) * m + r, from
// which the simplifier reads the residue of every coordinate derived from it.
//   align_bounds(x, 2):  [a, b]  ->  [((a / 2) * 2), ((a / 2) * 2) + (((b - (a / 2) * 2) + 2) / 2) * 2 - 1]
void align_region(const BoundAlignment &a, Expr &mn, Expr &mx) {
    if (a.modulus == 1) return;
    Expr m = make_const(mn.type(), a.modulus), r = make_const(mn.type(), a.remainder);
    Expr lo = simplify(((mn - r) / m) * m + r);
    mx = simplify(lo + ((mx - lo + m) / m) * m - 1);
    mn = lo;
}

// Lets defining f.s<k>.<v>.min/max for every stage, given the region the
// consumers need of the last stage.
std::vector<std::pair<std::string, Expr>> stage_region_lets(const FunctionContents &f, const Box &required,
                                                            bool is_output) {
    std::vector<std::pair<std::string, Expr>> lets;
    int n = f.num_stages();
    for (int k = n - 1; k >= 0; k--) {
        std::string prefix = f.stage_prefix(k);
        for (size_t d = 0; d < f.args.size(); d++) {
            Expr mn, mx;
            if (k == n - 1) {
                mn = required[d].min;
                mx = required[d].max;
            } else {
                // What stage k+1 reads or writes of f, over its own region.
                std::string next = f.stage_prefix(k + 1) + f.args[d];
                Stmt later = build_stage(f, k + 1, is_output);
                bool found = false;
                Box touched = box_touched(later, f.name, true, true, &found);
                mn = make_var(next + ".min");
                mx = make_var(next + ".max");
                if (found) {
                    user_assert(touched[d].bounded())
                        << "Update definition " << f.stage_name(k + 1) << " of Func " << f.name
                        << " reads or writes it at an unbounded coordinate in dimension " << d << " ("
                        << describe_unbounded_access(later, f.name)
                        << "); clamp the coordinate, e.g. clamp(e, 0, n - 1), or use an RDom with known bounds";
                    mn = simplify(min(mn, touched[d].min));
                    mx = simplify(max(mx, touched[d].max));
                }
            }
            for (const auto &b : f.schedule.bounds) {
                if (b.var == f.args[d]) {
                    mn = b.min;
                    mx = simplify(b.min + b.extent - 1);
                }
            }
            for (const auto &a : f.schedule.alignments)
                if (a.var == f.args[d]) align_region(a, mn, mx);
            lets.push_back({prefix + f.args[d] + ".min", mn});
            lets.push_back({prefix + f.args[d] + ".max", mx});
        }
    }
    return lets;
}

// The pure variables f.s<k>.<v> of the stages whose split of v can leave
// the stage's region. RoundUp (or an update's default) passes the region's
// max in the last tile; ShiftInwards, over a region smaller than the
// factor, shifts its one tile below the min. What the stage computes there
// is never used, so what it reads there need not be computed. A box inside
// one tile of a ShiftInwards split (a producer computed at its outer loop)
// keeps the whole tile, as Halide does, so that its extent stays the factor.
// (An output's region is its buffer, which the entry checks require to be
// at least one tile.)
//   f.split(y, yo, yi, 4, ShiftInwards), f's region one row r, reading g(y):
//     f computes rows [r - 3, r]; a g computed at root is computed for row r
//     only, a g computed at f's yo for rows [r - 3, r]
struct RoundedVar {
    std::string loop;  // ShiftInwards: the outer loop a box must range over; RoundUp: ""
};
using StageVars = std::map<std::string, RoundedVar>;
StageVars rounded_stage_vars(const Environment &env, const std::vector<std::string> &outputs) {
    StageVars vars;
    for (const auto &kv : env) {
        const FunctionContents &f = *kv.second;
        bool is_output = std::find(outputs.begin(), outputs.end(), f.name) != outputs.end();
        for (int k = 0; k < f.num_stages(); k++) {
            const Definition &d = f.stage(k);
            std::vector<const StageSchedule *> schedules{&d.schedule};
            for (const auto &sp : d.specializations) schedules.push_back(&sp.schedule);
            for (const StageSchedule *sched : schedules) {
                for (const Split &sp : sched->splits) {
                    if (sp.kind != Split::SplitVar) continue;
                    std::string root = sp.old_var.substr(0, sp.old_var.find('.'));
                    if (std::find(f.args.begin(), f.args.end(), root) == f.args.end()) continue;
                    std::string var = f.stage_prefix(k) + root;
                    TailStrategy tail = resolve_tail(sp.tail, is_rvar_name(d, sp.old_var), k, is_output);
                    if (tail == TailStrategy::RoundUp) vars[var] = {""};
                    else if (tail == TailStrategy::ShiftInwards && sp.old_var == root && !is_output)
                        vars.emplace(var, RoundedVar{f.stage_prefix(k) + sp.outer});
                }
            }
        }
    }
    return vars;
}

// The variables of `vars` taken over their regions in a box over s (a
// ShiftInwards one only if its outer loop is in s), for box_touched: those
// clamped at both ends, and those (ShiftInwards) clamped at the min only.
struct RoundedIn {
    std::set<std::string> both, min_only;
};
// The names a statement defines: its loops' variables and its lets.
std::set<std::string> defined_names(const Stmt &s) {
    class Names : public IRVisitor {
    public:
        std::set<std::string> names;
        using IRVisitor::include;
        void include(const Expr &) override {}  // statements only
        void visit(const For *op) override {
            names.insert(op->name);
            IRVisitor::visit(op);
        }
        void visit(const LetStmt *op) override {
            names.insert(op->name);
            IRVisitor::visit(op);
        }
    } n;
    n.include(s);
    return n.names;
}

// The variables of vars taken over their regions in a statement that
// defines the loops `loops_in_s`.
RoundedIn rounded_given(const StageVars &vars, const std::set<std::string> &loops_in_s) {
    RoundedIn in;
    for (const auto &kv : vars) {
        if (kv.second.loop.empty()) in.both.insert(kv.first);
        else if (loops_in_s.count(kv.second.loop)) in.min_only.insert(kv.first);  // its outer loop is in s
    }
    return in;
}

// The outer loops of vars' ShiftInwards splits.
std::set<std::string> shift_loops(const StageVars &vars) {
    std::set<std::string> loops;
    for (const auto &kv : vars)
        if (!kv.second.loop.empty()) loops.insert(kv.second.loop);
    return loops;
}

// Names the lets a box keeps (box_touched) afresh, so that their copies
// cannot clash with the originals deeper in the statement, and renames them
// in the box. `counter` numbers the copies of one lowering.
//   kept {a = e}, box [a - 1, a + 1]  ->  {a.b3 = e}, box [a.b3 - 1, a.b3 + 1]
LetList rename_kept(const LetList &kept, Box &box, int &counter) {
    std::map<std::string, Expr> fresh;
    LetList lets;
    for (const auto &l : kept) {
        std::string n = l.first + ".b" + std::to_string(counter++);
        lets.push_back({n, substitute(fresh, l.second)});
        fresh[l.first] = Variable::make(l.second.type(), n);
    }
    for (Interval &i : box) {
        if (i.min.defined()) i.min = substitute(fresh, i.min);
        if (i.max.defined()) i.max = substitute(fresh, i.max);
    }
    return lets;
}

// The lets of constant value around a node, by name: their values, and
// each as a point for the bounds of expressions.
struct ConstantLets {
    Scope consts;
    std::map<std::string, Expr> values;
    // Adds the let (name = value) if its value, with the constants above it
    // put in, simplifies to a constant.
    bool push(const std::string &name, const Expr &value, Expr *saved) {
        Expr v = simplify(substitute(values, value));
        if (!is_const(v)) return false;
        auto old = values.find(name);
        *saved = old == values.end() ? Expr() : old->second;
        values[name] = v;
        consts.push(name, Interval::point(v));
        return true;
    }
    void pop(const std::string &name, const Expr &saved) {
        consts.pop(name);
        if (saved.defined()) values[name] = saved;
        else values.erase(name);
    }
};

// The chain of lets at the top of the statement bounds inference works on,
// kept apart from it while each Func's pass runs on the rest: every Func
// at the root puts its region's lets at the end of the chain, so walking
// (and simplifying) the chain down again for each Func, and making it anew
// around each result, cost the square of the number of those Funcs.
class LeadingLets {
public:
    ConstantLets constants;  // of the chain, for the passes below it
    // s without its leading lets, which go to the end of the chain.
    Stmt take(Stmt s) {
        while (const auto *l = s.as<LetStmt>()) {
            Expr saved;
            constants.push(l->name, l->value, &saved);
            lets.push_back({l->name, l->value});
            s = l->body;
        }
        return s;
    }
    Stmt wrap(const Stmt &body) const { return wrap_lets(lets, body); }

private:
    LetList lets;
};

// A mutator that knows the lets of constant value around the node it is at
// (a split's inner extent: let out.s0.x.xi.loop_extent = 384), so that the
// boxes it computes see those constants. Without them a tile's region has a
// symbolic extent, and the clamp of a vectorized loop's last vector,
//   min((f.s0.x.max - f.s0.x.min) - 31, 0)
// cannot fold to 0; each stage of a fused chain then names its consumer's
// region twice, and the expressions double with every stage. It starts
// with those of the leading lets (`outer`) and is given the statement
// below them.
//
// It walks only the statements that hold a produce or Realize of the Func
// it works on (`held`, shared by the passes of all the Funcs): the rest of
// the pipeline is left as it is without visiting its expressions (each
// Func's pass would otherwise cost the whole pipeline, and bounds inference
// the square of its length).
class ConstantLetsMutator : public IRMutator {
public:
    ConstantLetsMutator(const std::string &f, ConstantLets &outer, HeldNames &held)
        : held(held), func_name(f), constants(outer), consts(outer.consts) {}
    using IRMutator::mutate;
    Stmt mutate(const Stmt &s) override { return held.produces(s, func_name) ? IRMutator::mutate(s) : s; }

protected:
    HeldNames &held;
    const std::string &func_name;
    ConstantLets &constants;
    const Scope &consts;

    Stmt visit(const LetStmt *op) override {
        Expr saved;
        if (!constants.push(op->name, op->value, &saved)) return IRMutator::visit(op);
        Stmt body = mutate(op->body);
        constants.pop(op->name, saved);
        if (body.same_as(op->body)) return Stmt(op);
        return LetStmt::make(op->name, op->value, body);
    }
};

// The lets of `s` by name (the first of each name).
std::map<std::string, Expr> let_values(const Stmt &s) {
    class Lets : public IRVisitor {
    public:
        std::map<std::string, Expr> values;
        using IRVisitor::include;
        void include(const Expr &) override {}
        void visit(const LetStmt *op) override {
            values.emplace(op->name, op->value);
            IRVisitor::visit(op);
        }
    } l;
    l.include(s);
    return l.values;
}

// An output computed at a loop of another output (computed_within_output)
// writes, per iteration of the loops around it, the box its consumers read
// there, into its buffer; the buffer is written whole only if those boxes
// leave no gap between them (the entry checks then require the buffer to be
// their hull). Proved per dimension: the box does not move with the loops
// around it (`moving`: their variables and the lets inside them), so every
// iteration writes the same box; or it is [v + a, v + b] for constants
// a <= b, where v is a pure coordinate of the consumer output that the
// loops fix (its let, f.s<k>.<var>, names no loop inside), which the
// consumer's loops step through one value at a time (either end may be
// clamped by a bound that does not move, as a GuardWithIf split's last tile
// clamps it: the union is still one interval).
//   mean at output's loop yi, read as mean(y):  box [output.s0.y, output.s0.y]  ->  covered
//   the same under a GuardWithIf split:  [output.s0.y, min(output.s0.y, output.s0.y.loop_max)]  ->  covered
//   mean at output's loop yo (bands of rows):  box [yo * 8 + ..., yo * 8 + ... + 7]  ->  error
void check_within_output_covers(const FunctionContents &f, const Box &box, const LetList &kept,
                                const Stmt &consumers, const std::set<std::string> &moving,
                                const LetList &around, const Environment &env) {
    const LoopLevel &cl = f.schedule.compute_level;
    const FunctionContents &p = *env.at(cl.func());
    const std::set<std::string> inner = defined_names(consumers);
    const std::map<std::string, Expr> lets = let_values(consumers);
    // In terms of the loops: the box's kept lets, then the lets around the
    // site inside the loops (the regions of the other Funcs there), innermost
    // first.
    auto expand = [&](Expr e) {
        for (auto it = kept.rbegin(); it != kept.rend(); ++it) e = substitute(it->first, it->second, e);
        for (auto it = around.rbegin(); it != around.rend(); ++it) e = substitute(it->first, it->second, e);
        return simplify(e);
    };
    // The consumer's pure coordinates the loops fix: one value per iteration.
    std::vector<Expr> fixed;
    for (int k = 0; k < p.num_stages(); k++)
        for (const auto &v : p.args) {
            const std::string name = p.stage_prefix(k) + v;
            auto it = lets.find(name);
            if (it != lets.end()) {  // split: defined inside, from the loops
                if (!expr_uses_var_if(it->second, [&](const std::string &n) { return inner.count(n) > 0; }))
                    fixed.push_back(expand(it->second));
            } else if (moving.count(name)) {  // the loop itself, or a let around the site
                fixed.push_back(expand(Variable::make(Int(32), name)));
            }
        }
    auto moves = [&](const Expr &e) {
        return expr_uses_var_if(e, [&](const std::string &n) { return moving.count(n) > 0 || inner.count(n) > 0; });
    };
    // e as v plus a constant, or that clamped by a bound that does not move
    // (a GuardWithIf split's last tile reads only up to the region's end:
    // min(v, max)); the iterations past the bound then compute less or nothing.
    std::function<std::optional<int64_t>(const Expr &, const Expr &)> offset = [&](const Expr &e, const Expr &v) {
        const Expr diff = simplify(e - v);  // outlives the pointer into it
        if (const int64_t *c = as_const_int(diff)) return std::optional<int64_t>(*c);
        Expr a, b;
        if (const Min *m = e.as<Min>()) a = m->a, b = m->b;
        if (const Max *m = e.as<Max>()) a = m->a, b = m->b;
        if (!a.defined()) return std::optional<int64_t>();
        if (!moves(b)) return offset(a, v);
        if (!moves(a)) return offset(b, v);
        return std::optional<int64_t>();
    };
    for (size_t d = 0; d < box.size(); d++) {
        Expr lo = expand(box[d].min), hi = expand(box[d].max);
        if (!moves(lo) && !moves(hi)) continue;
        bool window = false;
        for (const Expr &v : fixed) {
            std::optional<int64_t> a = offset(lo, v), b = offset(hi, v);
            window |= a && b && *a <= *b;
        }
        user_assert(window) << "Func " << f.name << " is an output of the pipeline computed at a loop of "
                            << p.name << " (compute_at(" << cl.func() << ", " << cl.var() << ")), where each "
                            << "iteration computes it over [" << lo << ", " << hi << "] in dimension " << d
                            << "; Kiln cannot prove that the iterations together write all of its buffer. "
                            << "Compute it at a loop of " << p.name << " where " << p.name << "'s coordinate is one "
                            << "value per iteration (the innermost loop of its split) and read it at that coordinate "
                            << "(plus a constant), or compute it at the root";
    }
}

// Finds the producer/consumer pair of f and defines its region at the top
// of the loop body (or branch, or statement) that holds the pair, after the
// lets already there. Funcs are visited consumers first, so the consumers'
// region lets enclose f's, and f's region is in terms of their names
// (blur_x.s0.y.min = blur_y.s0.y.min - 1) rather than their values: the
// expressions stay as long as one stage's, however deep the fused group.
class DefineRegion : public ConstantLetsMutator {
public:
    DefineRegion(const FunctionContents &f, bool out, int &copies, const StageVars &stage_vars, ConstantLets &outer,
                 HeldNames &held, const Environment *within = nullptr)
        : ConstantLetsMutator(f.name, outer, held), func(f), is_output(out), copies(copies), stage_vars(stage_vars),
          within(within) {}
    bool done = false;

    // The top of `body` with the pending lets and checks put after its
    // leading lets.
    Stmt place_pending(const Stmt &body) {
        if (!pending) return body;
        pending = false;
        std::vector<const LetStmt *> leading;
        Stmt inner = body;
        while (const auto *l = inner.as<LetStmt>()) {
            leading.push_back(l);
            inner = l->body;
        }
        for (auto it = pending_checks.rbegin(); it != pending_checks.rend(); ++it) inner = Block::make(*it, inner);
        inner = wrap_lets(pending_lets, inner);
        for (auto it = leading.rbegin(); it != leading.rend(); ++it) inner = LetStmt::make((*it)->name, (*it)->value, inner);
        return inner;
    }

protected:
    const FunctionContents &func;
    bool is_output;
    int &copies;
    const StageVars &stage_vars;  // the consumers' pure variables, taken over their regions
    bool pending = false;
    std::vector<std::pair<std::string, Expr>> pending_lets;
    std::vector<Stmt> pending_checks;
    const Environment *within;  // f is an output computed at another's loop: the pipeline's Funcs
    std::set<std::string> moving;  // loop variables around the node, and the lets inside loops
    LetList around;                // those lets, outermost first
    int loop_depth = 0;

    Stmt visit(const LetStmt *op) override {
        if (!within || loop_depth == 0) return ConstantLetsMutator::visit(op);
        bool added = moving.insert(op->name).second;
        around.push_back({op->name, op->value});
        Stmt r = ConstantLetsMutator::visit(op);
        around.pop_back();
        if (added) moving.erase(op->name);
        return r;
    }

    // A loop body or a branch holds the lets of the pairs found in it.
    Stmt container(const Stmt &s) {
        bool saved = pending;
        pending = false;
        Stmt r = place_pending(mutate(s));
        pending = saved;
        return r;
    }
    Stmt visit(const For *op) override {
        bool added = moving.insert(op->name).second;
        loop_depth++;
        Stmt body = container(op->body);
        loop_depth--;
        if (added) moving.erase(op->name);
        if (body.same_as(op->body)) return Stmt(op);
        return For::make(op->name, op->min, op->extent, op->for_type, body);
    }
    Stmt visit(const IfThenElse *op) override {
        Stmt then_case = container(op->then_case);
        Stmt else_case = op->else_case.defined() ? container(op->else_case) : op->else_case;
        if (then_case.same_as(op->then_case) && else_case.same_as(op->else_case)) return Stmt(op);
        return IfThenElse::make(op->condition, then_case, else_case);
    }

    // Does a chain of nested producers (or consumers) name f? A compute_with
    // group nests them: produce z1 { produce z2 { ... } }.
    bool chain_has(const Stmt &s, bool producer) const {
        for (const auto *pc = s.as<ProducerConsumer>(); pc && pc->is_producer == producer;
             pc = pc->body.as<ProducerConsumer>())
            if (pc->name == func.name) return true;
        return false;
    }

    Stmt visit(const Block *op) override {
        const auto *c = op->rest.as<ProducerConsumer>();
        if (!chain_has(op->first, true) || !chain_has(op->rest, false)) return IRMutator::visit(op);
        bool found = false;
        LetList kept;
        // What the consumers need: a consumer's iterations past its own
        // region (a RoundUp split's last tile) read f where nothing uses
        // the result, so f is not computed there (its storage still
        // covers those reads, SetRealizeBounds).
        RoundedIn rounded = rounded_given(stage_vars, held.defines(c->body, shift_loops(stage_vars)).any);
        Box box = box_touched(c->body, func.name, true, false, &found, consts, &kept, &rounded.both,
                              &rounded.min_only);
        internal_assert(found) << "no consumer of " << func.name;
        if (within) check_within_output_covers(func, box, kept, c->body, moving, around, *within);
        LetList lets = rename_kept(kept, box, copies);
        for (size_t d = 0; d < box.size(); d++) {
            bool has_bound = false;
            for (const auto &b : func.schedule.bounds) has_bound |= b.var == func.args[d];
            user_assert(box[d].bounded() || has_bound)
                << "Func " << func.name << " is read at an unbounded coordinate in dimension " << d << " ("
                << describe_unbounded_access(c->body, func.name)
                << "), so Kiln cannot tell how much of it to compute; clamp the coordinate, use a "
                   "BoundaryConditions wrapper, or give "
                << func.name << " a bound(" << func.args[d] << ", min, extent)";
        }
        done = true;
        Stmt rest = mutate(op->rest);
        Stmt body = Block::make(op->first, rest);
        std::vector<Stmt> checks = bound_checks(box);
        LetList region = stage_region_lets(func, box, is_output);
        lets.insert(lets.end(), region.begin(), region.end());
        if (pending) {  // a second pair in the same container: its lets go right before it
            for (const Stmt &check : checks) body = Block::make(check, body);
            return wrap_lets(lets, body);
        }
        pending = true;
        pending_lets = lets;
        pending_checks = checks;
        return body;
    }

    // A bound() replaces the region the consumers need; it must cover it.
    // Decided here when constant, else checked by the kernel.
    std::vector<Stmt> bound_checks(const Box &box) {
        std::vector<Stmt> checks;
        for (size_t d = 0; d < box.size(); d++) {
            for (const auto &b : func.schedule.bounds) {
                if (b.var != func.args[d] || !box[d].bounded()) continue;
                Expr last = simplify(b.min + b.extent - 1);
                Expr lo = simplify(box[d].min), hi = simplify(box[d].max);
                Expr covers = simplify(b.min <= lo && hi <= last);
                std::string what = "Func " + func.name + " is given bound(" + b.var + ", " + to_string(b.min) + ", " +
                                   to_string(b.extent) + ")";
                std::string fix = "; widen the bound() to cover what is read, or remove it";
                if (is_zero(covers)) {
                    user_error << what << ", which covers [" << simplify(b.min) << ", " << last
                               << "], but its consumers read it over [" << lo << ", " << hi << "] in dimension "
                               << d << fix;
                }
                if (is_one(covers)) continue;
                checks.push_back(AssertStmt::make(
                    covers, kiln_error_bound_too_small,
                    {StringImm::make(what + ", which covers ["), simplify(b.min), StringImm::make(", "), last,
                     StringImm::make("], but its consumers read it over ["), lo, StringImm::make(", "), hi,
                     StringImm::make("] in dimension " + std::to_string(d) + fix)}));
            }
        }
        return checks;
    }
};

// An output's bound() replaces the region its buffer asks for, so a buffer
// larger than the bound would be left partly unwritten: the kernel refuses it.
//   bound(x, 0, 1024), output.min.0 = 0, output.extent.0 = 2048  ->  kiln_error_bound_too_small
std::vector<Stmt> output_bound_checks(const FunctionContents &f, const Box &buf) {
    std::vector<Stmt> checks;
    for (size_t d = 0; d < f.args.size(); d++) {
        for (const auto &b : f.schedule.bounds) {
            if (b.var != f.args[d]) continue;
            Expr last = simplify(b.min + b.extent - 1);
            Expr covers = simplify(b.min <= buf[d].min && buf[d].max <= last);
            if (is_one(covers)) continue;
            std::string buffer = f.buffer_name(0);
            checks.push_back(AssertStmt::make(
                covers, kiln_error_bound_too_small,
                {StringImm::make("output Func " + f.name + " is given bound(" + b.var + ", " + to_string(b.min) +
                                 ", " + to_string(b.extent) + "), which covers ["),
                 simplify(b.min), StringImm::make(", "), last,
                 StringImm::make("], but its buffer '" + buffer + "' asks for ["), simplify(buf[d].min),
                 StringImm::make(", "), simplify(buf[d].max),
                 StringImm::make("] in dimension " + std::to_string(d) +
                                 "; pass a buffer within the bound, or widen or remove the bound()")}));
        }
    }
    return checks;
}

// An output's align_bounds() widens the region its buffer asks for, so a
// buffer that is not aligned so would be written outside: the kernel refuses it.
//   align_bounds(x, 2), output.min.0 = 1  ->  kiln_error_constraint_violated
std::vector<Stmt> output_alignment_checks(const FunctionContents &f, const Box &buf) {
    std::vector<Stmt> checks;
    for (size_t d = 0; d < f.args.size(); d++) {
        for (const auto &a : f.schedule.alignments) {
            if (a.var != f.args[d] || a.modulus == 1) continue;
            Expr m = make_const(Int(32), a.modulus), mn = simplify(buf[d].min),
                 ex = simplify(buf[d].max - buf[d].min + 1);
            Expr aligned = simplify(mn % m == make_const(Int(32), a.remainder) && ex % m == 0);
            if (is_one(aligned)) continue;
            std::string call = "align_bounds(" + a.var + ", " + std::to_string(a.modulus) + ", " +
                               std::to_string(a.remainder) + ")";
            checks.push_back(AssertStmt::make(
                aligned, kiln_error_constraint_violated,
                {StringImm::make("output Func " + f.name + " is given " + call + ", so its buffer '" +
                                 f.buffer_name(0) + "' must start at " + std::to_string(a.remainder) + " modulo " +
                                 std::to_string(a.modulus) + " and span a multiple of " + std::to_string(a.modulus) +
                                 " in dimension " + std::to_string(d) + ", but it starts at "),
                 mn, StringImm::make(" and spans "), ex,
                 StringImm::make("; pass a buffer aligned so (Buffer::set_min, a multiple of the extent), or "
                                 "remove the align_bounds()")}));
        }
    }
    return checks;
}

class SetRealizeBounds : public ConstantLetsMutator {
public:
    SetRealizeBounds(const FunctionContents &f, int &copies, const StageVars &stage_vars, ConstantLets &outer,
                     HeldNames &held)
        : ConstantLetsMutator(f.name, outer, held), func(f), copies(copies), stage_vars(stage_vars) {}

protected:
    const FunctionContents &func;
    int &copies;
    const StageVars &stage_vars;

    // Does s bind one of the stage variables taken over their regions in it?
    bool binds_rounded(const Stmt &s) const {
        if (stage_vars.empty()) return false;
        const HeldNames::Defined found = held.defines(s);  // held is asked about those variables and loops
        const RoundedIn in = rounded_given(stage_vars, found.any);
        for (const std::string &n : found.lets)
            if (in.both.count(n) || in.min_only.count(n)) return true;
        return false;
    }
    Stmt visit(const Realize *op) override {
        if (op->name != func.name) return IRMutator::visit(op);
        // What its stages write: the region lets cover what the consumers
        // read (or a bound() does, checked), so the reads add nothing; and
        // in terms of those lets, the box stays as short as they are.
        LetList kept, kept_reads;
        Box box = box_touched(op->body, func.name, false, true, nullptr, consts, &kept);
        // Consumers that round a split up read past the region, where f is
        // not computed (DefineRegion): the storage covers those reads too.
        Box read;
        if (binds_rounded(op->body))
            read = box_touched(op->body, func.name, true, false, nullptr, consts, &kept_reads);
        for (size_t d = 0; d < box.size() && d < read.size(); d++) {
            if (!read[d].bounded() || !box[d].bounded()) continue;
            if (!is_one(simplify(box[d].min <= read[d].min))) box[d].min = simplify(min(box[d].min, read[d].min));
            if (!is_one(simplify(read[d].max <= box[d].max))) box[d].max = simplify(max(box[d].max, read[d].max));
        }
        kept.insert(kept.end(), kept_reads.begin(), kept_reads.end());
        LetList lets = rename_kept(kept, box, copies);
        std::vector<Range> bounds;
        for (size_t d = 0; d < box.size(); d++) {
            internal_assert(box[d].bounded()) << "unbounded realization of " << func.name;
            bounds.push_back({box[d].min, simplify(box[d].max - box[d].min + 1)});
        }
        return wrap_lets(lets, Realize::make(op->name, op->types, bounds, op->body, op->fold_factors));
    }
};

// The statement under the leading lets of s, where the entry checks go: the
// boxes of the inputs and outputs are computed there, and may name those
// lets (the regions of compute_root stages, each in terms of the last). A
// small value (an output's region, output.min.0 + output.extent.0 - 1) is
// put in `known` instead, so the boxes name the buffers where they can.
// Substituting every value would repeat each region once per use in the
// next one's, and the expressions would grow exponentially with the number
// of compute_root stages. The leading lets go to `leading`.
Stmt under_leading_lets(const Stmt &s, Scope &known, LetList &leading) {
    std::map<std::string, Expr> values;
    Stmt body = s;
    while (const auto *l = body.as<LetStmt>()) {
        Expr v = simplify(substitute(values, l->value));
        if (small_expr(v, 12)) {
            values[l->name] = v;
            known.push(l->name, Interval::point(v));
        }
        leading.push_back({l->name, l->value});
        body = l->body;
    }
    return body;
}

}  // namespace

Stmt bounds_inference(const Stmt &stmt, const std::vector<std::string> &outputs, const std::vector<std::string> &order,
                      const Environment &env, PipelineRegions &regions) {
    LeadingLets top;
    Stmt s = top.take(stmt);
    int copies = 0;  // lets defined again where a box names them
    const StageVars stage_vars = rounded_stage_vars(env, outputs);
    std::set<std::string> funcs, split_names = shift_loops(stage_vars);
    for (const auto &kv : env) funcs.insert(kv.first);
    for (const auto &kv : stage_vars) split_names.insert(kv.first);
    HeldNames held(funcs, split_names);
    for (auto it = order.rbegin(); it != order.rend(); ++it) {
        const FunctionContents &f = *env.at(*it);
        bool is_out = std::find(outputs.begin(), outputs.end(), f.name) != outputs.end();
        const bool within = computed_within_output(f, outputs);
        if ((is_out && !within) || is_inlined(f, false)) continue;
        DefineRegion def(f, false, copies, stage_vars, top.constants, held, within ? &env : nullptr);
        s = top.take(def.place_pending(top.take(def.mutate(s))));
        internal_assert(def.done) << "producer of " << f.name << " not found";
        if (within) continue;  // no storage to size: its buffer is the caller's
        // The loops of a compute_with group depend on every member's region
        // lets, so its storage is sized once the parent (realized first,
        // processed last) has its lets.
        // A Func fused into an output is sized on its own (outputs have no
        // storage to size).
        std::string parent = fusion_parent(f);
        bool into_output = std::find(outputs.begin(), outputs.end(), parent) != outputs.end();
        if (!parent.empty() && !into_output) continue;
        s = top.take(SetRealizeBounds(f, copies, stage_vars, top.constants, held).mutate(s));
        for (const auto &c : fused_children(env, f.name))
            s = top.take(SetRealizeBounds(*env.at(c), copies, stage_vars, top.constants, held).mutate(s));
    }
    s = top.wrap(s);
    // Outputs compute the region of their buffer; their lets go outermost.
    std::vector<std::pair<std::string, Expr>> out_lets;
    std::vector<Stmt> out_checks;
    for (const auto &o : outputs) {
        const FunctionContents &f = *env.at(o);
        if (computed_within_output(f, outputs)) continue;  // the region its readers need, above
        // A Tuple computes the region of its first element's buffer; the
        // entry checks make sure the others cover it too.
        Box buf;
        for (size_t d = 0; d < f.args.size(); d++) {
            Expr mn = make_var(f.buffer_name(0) + ".min." + std::to_string(d));
            Expr ex = make_var(f.buffer_name(0) + ".extent." + std::to_string(d));
            buf.push_back(Interval(mn, mn + ex - 1));
        }
        auto lets = stage_region_lets(f, buf, true);
        out_lets.insert(out_lets.end(), lets.begin(), lets.end());
        for (const Stmt &check : output_bound_checks(f, buf)) out_checks.push_back(check);
        for (const Stmt &check : output_alignment_checks(f, buf)) out_checks.push_back(check);
    }
    s = wrap_lets(out_lets, s);
    Scope known;
    LetList leading, copied;  // the lets the entry checks go under; what the boxes keep
    Stmt body = under_leading_lets(s, known, leading);
    // The outputs' bound() checks go first below those lets (the entry
    // checks follow them there), so that the chain of lets stays whole.
    if (!out_checks.empty()) {
        out_checks.push_back(body);
        body = Block::make(out_checks);
    }
    // What the outputs' loops really write (splits may round up or shift).
    for (const auto &o : outputs) {
        const FunctionContents &f = *env.at(o);
        LetList kept;
        Box written = box_touched(body, o, false, true, nullptr, known, &kept);
        kept = rename_kept(kept, written, copies);
        copied.insert(copied.end(), kept.begin(), kept.end());
        for (int i = 0; i < f.num_values(); i++) regions.outputs[f.buffer_name(i)] = written;
        if (computed_within_output(f, outputs))
            for (int i = 0; i < f.num_values(); i++)
                regions.written_within[f.buffer_name(i)] =
                    f.schedule.compute_level.func() + ", " + f.schedule.compute_level.var();
        // What the pipeline's other outputs read of it: the buffer must hold
        // it. A single output is read only by its own updates, which this
        // check is not about (and which would otherwise add a walk of the
        // statement and entry checks to every kernel with an update).
        if (f.num_values() != 1 || outputs.size() == 1) continue;
        bool found = false;
        LetList read_kept;
        Box read = box_touched(body, o, true, false, &found, known, &read_kept);
        if (!found) continue;
        bool bounded = true;
        for (const Interval &i : read) bounded &= i.bounded();
        if (!bounded) continue;
        read_kept = rename_kept(read_kept, read, copies);
        copied.insert(copied.end(), read_kept.begin(), read_kept.end());
        regions.output_reads[o] = read;
    }

    // The box of each input image, in terms of the arguments.
    for (const auto &kv : find_parameters(env)) {
        if (!kv.second->is_buffer) continue;
        bool found = false;
        LetList kept;
        Box b = box_touched(body, kv.first, true, false, &found, known, &kept);
        if (!found) continue;
        kept = rename_kept(kept, b, copies);
        copied.insert(copied.end(), kept.begin(), kept.end());
        for (size_t d = 0; d < b.size(); d++) {
            user_assert(b[d].bounded())
                << "Input image " << kv.first << " is read at an unbounded coordinate in dimension " << d << " ("
                << describe_unbounded_access(s, kv.first)
                << "); wrap it in a boundary condition (e.g. BoundaryConditions::repeat_edge(" << kv.first
                << ")) or clamp the coordinate";
        }
        regions.inputs[kv.first] = b;
    }
    // Copies of the lets the boxes name, last of the leading lets, where
    // the entry checks see them.
    leading.insert(leading.end(), copied.begin(), copied.end());
    return wrap_lets(leading, body);
}

}  // namespace internal
}  // namespace kiln
