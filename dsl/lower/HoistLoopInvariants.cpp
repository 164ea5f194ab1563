#include "HoistLoopInvariants.h"

#include <algorithm>
#include <map>
#include <set>
#include <unordered_map>
#include <utility>
#include <vector>

#include "ir/BoundNames.h"
#include "ir/ExprKey.h"
#include "ir/IRVisitor.h"
#include "ir/Substitute.h"
#include "kiln/IROperator.h"

namespace kiln {
namespace internal {

namespace {

const char *const licm_prefix = "licm.";  // the names of the lets the pass makes

bool is_leaf(const Expr &e) {
    return e.as<Variable>() || e.as<IntImm>() || e.as<UIntImm>() || e.as<FloatImm>() || e.as<StringImm>();
}

// Whether an expression may differ between two iterations of a loop whose
// body binds `bound`: it names one of those, reads memory or has an effect.
// Remembered per node (the nodes are kept alive with the answers).
class Varies : public IRVisitor {
public:
    explicit Varies(const std::set<std::string> &b) : bound(b) {}
    bool operator()(const Expr &e) {
        varies = false;
        include(e);
        return varies;
    }
    using IRVisitor::include;
    void include(const Expr &e) override {
        if (!e.defined()) return;
        auto it = memo.find(e.get());
        if (it == memo.end()) {
            const bool outer = varies;
            varies = false;
            IRVisitor::include(e);
            it = memo.emplace(e.get(), std::make_pair(e, varies)).first;
            varies = outer;
        }
        varies = varies || it->second.second;
    }

protected:
    const std::set<std::string> &bound;
    std::unordered_map<const IRNode *, std::pair<Expr, bool>> memo;
    bool varies = false;
    void visit(const Variable *op) override { varies = varies || bound.count(op->name) > 0; }
    void visit(const Load *) override { varies = true; }
    void visit(const Call *op) override {
        if (op->call_type != Call::PureExtern || op->name == "prefetch") varies = true;
        else IRVisitor::visit(op);
    }
};

// Whether an operand of e (not e itself) is other than a leaf.
class HasInner : public IRVisitor {
public:
    bool operator()(const Expr &e) {
        top = true;
        inner = false;
        include(e);
        return inner;
    }
    using IRVisitor::include;
    void include(const Expr &e) override {
        if (top) {
            top = false;
            IRVisitor::include(e);
        } else {
            inner = inner || !is_leaf(e);
        }
    }

private:
    bool top = true, inner = false;
};

// An invariant scalar worth computing once (HoistLoopInvariants.h).
bool worth_naming(const Expr &e) {
    if (!e.type().is_scalar() || is_leaf(e) || e.as<Let>()) return false;
    if (e.as<Call>()) return true;
    const Expr *divisor = nullptr;
    if (const Div *d = e.as<Div>()) divisor = &d->b;
    if (const Mod *m = e.as<Mod>()) divisor = &m->b;
    if (divisor) {
        const Expr &b = *divisor;
        const IntImm *i = b.as<IntImm>();
        const UIntImm *u = b.as<UIntImm>();
        const uint64_t v = i ? (uint64_t)i->value : u ? u->value : 0;
        const bool power_of_two = ((i && i->value > 0) || u) && v != 0 && (v & (v - 1)) == 0;
        if (e.type().is_float() || !power_of_two) return true;
    }
    return HasInner()(e);
}

// Names the invariant parts of one loop's body (lets collected in order).
class NameInvariants : public IRMutator {
public:
    NameInvariants(Varies &v, int &c) : varies(v), counter(c) {}
    std::vector<std::pair<std::string, Expr>> lets;
    using IRMutator::mutate;
    Expr mutate(const Expr &e) override {
        if (!e.defined() || is_leaf(e)) return e;
        if (!varies(e)) {
            if (worth_naming(e)) return name(e);
            if (e.type().is_scalar()) return e;  // operations of leaves only
        } else if (e.type().is_scalar() && e.type().is_int_or_uint() && !e.type().is_bool() && (e.as<Add>() || e.as<Sub>())) {
            Expr r = regroup(e);
            if (r.defined()) return r;
        }
        return IRMutator::mutate(e);
    }

private:
    Varies &varies;
    int &counter;
    std::map<std::string, Expr> named;  // by expr_key

    // An allocation's size stays whole: the code generator multiplies its
    // factors in 64 bits to report a size that overflows.
    Stmt visit(const Allocate *op) override {
        Stmt body = mutate(op->body);
        if (body.same_as(op->body)) return Stmt(op);
        return Allocate::make(op->name, op->type, op->size, body, op->in_output, op->in_place);
    }

    Expr name(const Expr &e) {
        const std::string &key = *expr_key(e);
        auto it = named.find(key);
        if (it != named.end()) return it->second;
        std::string n = licm_prefix + std::to_string(counter++);
        lets.emplace_back(n, e);
        Expr v = Variable::make(e.type(), n);
        named[key] = v;
        return v;
    }

    // The terms of a sum through its varying + and - (an invariant sum is
    // one term), each with whether it is subtracted.
    void terms(const Expr &e, bool negated, std::vector<std::pair<Expr, bool>> &out) {
        if (varies(e)) {
            if (const Add *a = e.as<Add>()) {
                terms(a->a, negated, out);
                terms(a->b, negated, out);
                return;
            }
            if (const Sub *s = e.as<Sub>()) {
                terms(s->a, negated, out);
                terms(s->b, !negated, out);
                return;
            }
        }
        out.emplace_back(e, negated);
    }
    // The added terms minus the subtracted ones; `negated` if all are
    // subtracted (the sum of them is returned).
    static Expr sum(const std::vector<std::pair<Expr, bool>> &ts, bool &negated) {
        Expr plus, minus;
        for (const auto &[t, neg] : ts) {
            Expr &side = neg ? minus : plus;
            side = side.defined() ? Add::make(side, t) : t;
        }
        negated = !plus.defined();
        if (negated) return minus;
        return minus.defined() ? Sub::make(plus, minus) : plus;
    }
    // ((a + x) + b) - c -> (a + x) + licm.N, licm.N = b - c; undefined if
    // the sum has fewer than two invariant terms.
    Expr regroup(const Expr &e) {
        std::vector<std::pair<Expr, bool>> all, fixed, moving;
        terms(e, false, all);
        int fixed_vars = 0;  // invariant terms other than constants
        for (const auto &t : all) {
            const bool v = varies(t.first);
            (v ? moving : fixed).push_back(t);
            fixed_vars += !v && !is_const(t.first);
        }
        if (fixed_vars < 2) return Expr();
        for (auto &t : moving) t.first = mutate(t.first);
        bool fixed_neg, moving_neg;
        Expr f = name(sum(fixed, fixed_neg)), m = sum(moving, moving_neg);
        if (!moving_neg) return fixed_neg ? Sub::make(m, f) : Add::make(m, f);
        if (!fixed_neg) return Sub::make(f, m);
        return Sub::make(make_zero(e.type()), Add::make(m, f));
    }
};

// Takes the lets of a loop's body whose values are invariant out of it, in
// order (a let naming one taken before it is taken too). Inner loops have
// been taken already: what they bind is theirs.
class TakeLets : public IRMutator {
public:
    // `bound`: the names the loops' bodies bind (a taken let's name leaves
    // it); `kept`: names never taken (bound twice, or also around the loops).
    TakeLets(std::set<std::string> &b, const std::set<std::string> &k, std::vector<std::pair<std::string, Expr>> &t)
        : bound(b), kept(k), taken(t) {}

private:
    std::set<std::string> &bound;
    const std::set<std::string> &kept;
    std::vector<std::pair<std::string, Expr>> &taken;
    using IRMutator::visit;
    Stmt visit(const LetStmt *op) override {
        if (kept.count(op->name) || Varies(bound)(op->value)) return IRMutator::visit(op);
        bound.erase(op->name);
        taken.emplace_back(op->name, op->value);
        return mutate(op->body);
    }
    Stmt visit(const For *op) override { return Stmt(op); }
};

// A parallel loop whose body is lets, then a parallel loop over a range
// that names neither them nor the outer loop: the lets go back inside the
// inner loop, so that the two stay one OpenMP loop (collapse(2), CodeGen_C).
Stmt keep_parallel_nest(const std::string &outer, const Stmt &body) {
    std::vector<const LetStmt *> lets;
    Stmt s = body;
    while (const LetStmt *l = s.as<LetStmt>()) {
        lets.push_back(l);
        s = l->body;
    }
    const For *inner = s.as<For>();
    if (lets.empty() || !inner || inner->for_type != ForType::Parallel) return body;
    auto named = [&](const std::string &n) {
        if (n == outer) return true;
        for (const LetStmt *l : lets)
            if (l->name == n) return true;
        return false;
    };
    if (expr_uses_var_if(inner->min, named) || expr_uses_var_if(inner->extent, named)) return body;
    Stmt in = inner->body;
    for (auto it = lets.rbegin(); it != lets.rend(); ++it) in = LetStmt::make((*it)->name, (*it)->value, in);
    return For::make(inner->name, inner->min, inner->extent, inner->for_type, in);
}

// Lets of one value in `lets` (in order, each in the scope of those
// before it): the first keeps its name, a later one the pass named
// (licm.N; `any_name`: every later one) is dropped and goes into `renamed`
// as the first's Variable. Returns the lets kept, their values with the
// earlier renames substituted.
std::vector<std::pair<std::string, Expr>> merge_equal(const std::vector<std::pair<std::string, Expr>> &lets,
                                                      std::map<std::string, Expr> &renamed, bool any_name) {
    std::map<std::string, std::string> first;  // by expr_key of the value
    std::vector<std::pair<std::string, Expr>> kept;
    for (const auto &[n, value] : lets) {
        Expr v = renamed.empty() ? value : substitute(renamed, value);
        auto [it, fresh] = first.emplace(*expr_key(v), n);
        if (fresh || !(any_name || n.rfind(licm_prefix, 0) == 0)) kept.emplace_back(n, v);
        else renamed[n] = Variable::make(v.type(), it->second);
    }
    return kept;
}

// The lets at the head of a loop's body, with a later licm.N of the value
// of one before it dropped. Lets taken out of two inner loops (an edge
// loop and the steady state) may differ in how their invariant terms
// associate until this loop's naming regroups them alike. Lets the pass did
// not name keep their names (a Func's bounds, `Iy.s0.y.min`, say whose they
// are even when another Func's have the same value).
Stmt merge_equal_head_lets(const Stmt &body) {
    std::vector<std::pair<std::string, Expr>> lets;
    Stmt s = body;
    for (const LetStmt *l; (l = s.as<LetStmt>()); s = l->body) lets.emplace_back(l->name, l->value);
    if (lets.size() < 2) return body;
    std::map<std::string, Expr> renamed;
    std::vector<std::pair<std::string, Expr>> kept = merge_equal(lets, renamed, false);
    if (renamed.empty()) return body;
    s = substitute(renamed, s);
    for (auto it = kept.rbegin(); it != kept.rend(); ++it) s = LetStmt::make(it->first, it->second, s);
    return s;
}

// Takes loops innermost first. Consecutive loops of one name (a loop's
// edges and steady state, partition_loops) are taken together: what they
// compute alike gets one name before the first, so that their bodies still
// print alike (the code generator's shared edges, emit_shared_edges).
class Hoist : public IRMutator {
    int counter = 0;
    std::multiset<std::string> around;  // the names bound around what is being mutated
    using IRMutator::visit;

    template<typename Node> Stmt scoped(const Node *op) {
        auto it = around.insert(op->name);
        Stmt s = IRMutator::visit(op);
        around.erase(it);
        return s;
    }
    Stmt visit(const LetStmt *op) override { return scoped(op); }
    Stmt visit(const Allocate *op) override { return scoped(op); }
    Stmt visit(const For *op) override { return hoist({op}); }

    Stmt visit(const Block *op) override {
        std::vector<Stmt> stmts, out;
        Stmt s(op);
        for (const Block *b; (b = s.as<Block>()); s = b->rest) stmts.push_back(b->first);
        if (s.defined()) stmts.push_back(s);
        bool changed = false;
        for (size_t i = 0; i < stmts.size();) {
            std::vector<const For *> run;
            for (size_t j = i; j < stmts.size(); j++) {
                const For *f = stmts[j].as<For>();
                if (!f || (!run.empty() && f->name != run[0]->name)) break;
                run.push_back(f);
            }
            Stmt r = run.size() > 1 ? hoist(run) : mutate(stmts[i]);
            changed = changed || !r.same_as(stmts[i]) || run.size() > 1;
            out.push_back(r);
            i += std::max<size_t>(run.size(), 1);
        }
        return changed ? Block::make(out) : Stmt(op);
    }

    Stmt hoist(const std::vector<const For *> &loops) {
        std::vector<Stmt> bodies;
        std::map<std::string, int> times;  // how often the bodies bind each name
        std::set<std::string> bound;
        for (const For *l : loops) {
            auto it = around.insert(l->name);
            bodies.push_back(mutate(l->body));
            around.erase(it);
            for (const std::string &n : bound_names(bodies.back())) times[n]++;
            bound.insert(l->name);
        }
        std::set<std::string> kept;
        for (const auto &[n, k] : times) {
            bound.insert(n);
            if (k > 1 || around.count(n)) kept.insert(n);
        }
        std::vector<std::pair<std::string, Expr>> lets;
        TakeLets take(bound, kept, lets);
        for (Stmt &b : bodies) b = take.mutate(b);
        Varies varies(bound);
        NameInvariants invariants(varies, counter);
        for (Stmt &b : bodies) b = invariants.mutate(b);
        lets.insert(lets.end(), invariants.lets.begin(), invariants.lets.end());
        // Two loops' names of one value, met here: the later one goes.
        std::map<std::string, Expr> renamed;
        std::vector<std::pair<std::string, Expr>> defined = merge_equal(lets, renamed, true);
        std::vector<Stmt> out;
        for (size_t i = 0; i < loops.size(); i++) {
            const For *l = loops[i];
            Stmt b = merge_equal_head_lets(renamed.empty() ? bodies[i] : substitute(renamed, bodies[i]));
            if (l->for_type == ForType::Parallel && loops.size() == 1) b = keep_parallel_nest(l->name, b);
            out.push_back(b.same_as(l->body) ? Stmt(l) : For::make(l->name, l->min, l->extent, l->for_type, b));
        }
        Stmt s = Block::make(out);
        for (auto it = defined.rbegin(); it != defined.rend(); ++it) s = LetStmt::make(it->first, it->second, s);
        return s;
    }
};

}  // namespace

Stmt hoist_loop_invariants(const Stmt &s) { return Hoist().mutate(s); }

}  // namespace internal
}  // namespace kiln
