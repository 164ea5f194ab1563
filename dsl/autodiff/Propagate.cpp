// The backward walk over Funcs and stages (Propagate.h).
#include "autodiff/Propagate.h"

#include <algorithm>

#include "autodiff/ForwardCopies.h"
#include "autodiff/ForwardRegions.h"
#include "autodiff/Gather.h"
#include "autodiff/ReverseAccumulate.h"
#include "ir/IRVisitor.h"
#include "ir/Simplify.h"
#include "ir/Substitute.h"

namespace kiln {
namespace internal {

namespace {

// The adjoint of a stage's value inside reverse accumulation.
const char *const kSeed = "adj$seed";

class FindRVar : public IRVisitor {
public:
    bool found = false;

protected:
    using IRVisitor::visit;
    void visit(const Variable *op) override { found |= op->rdom != nullptr; }
};

bool uses_rvars(const Expr &e) {
    FindRVar find;
    find.include(e);
    return find.found;
}

bool is_self_call(const Expr &e, const std::string &f) {
    const Call *c = e.as<Call>();
    return c && c->call_type == Call::Func && !c->func && c->name == f;
}

bool reads(const Expr &e, const std::string &f) {
    for (const Call *c : calls_in(e))
        if (c->call_type == Call::Func && !c->func && c->name == f) return true;
    return false;
}

bool same_args(const std::vector<Expr> &a, const std::vector<Expr> &b) {
    if (a.size() != b.size()) return false;
    for (size_t i = 0; i < a.size(); i++)
        if (!equal(a[i], b[i])) return false;
    return true;
}

std::vector<Expr> vars_of(const std::vector<std::string> &names) {
    std::vector<Expr> v;
    for (const auto &n : names) v.push_back(make_var(n));
    return v;
}

// f's calls to itself (kept without a pointer) made calls to `at_to` where
// their arguments are `at`, and to `other_to` elsewhere.
class RedirectByPoint : public IRMutator {
public:
    RedirectByPoint(const std::string &f, const std::vector<Expr> &at, const Func &at_to, const Func &other_to)
        : f(f), at(at), at_to(at_to.contents()), other_to(other_to.contents()) {}

protected:
    using IRMutator::visit;
    std::string f;
    std::vector<Expr> at;
    std::shared_ptr<FunctionContents> at_to, other_to;
    Expr visit(const Call *op) override {
        Expr e = IRMutator::visit(op);
        const Call *c = e.as<Call>();
        if (c->call_type != Call::Func || c->func || c->name != f) return e;
        const auto &to = same_args(c->args, at) ? at_to : other_to;
        return Call::make(c->type, to->name, c->args, Call::Func, to, nullptr, c->value_index);
    }
};

class Backward {
public:
    Backward(const std::shared_ptr<FunctionContents> &output, const Box &region)
        : fwd(find_forward_pipeline(output, region)) {}

    std::map<std::string, std::vector<Func>> run(const std::shared_ptr<FunctionContents> &output, const Expr &seed) {
        for (const auto &f : fwd.funcs) {
            if (f->num_values() != 1 || !f->types[0].is_float() || image_of(*f)) continue;
            std::vector<Func> stages;
            for (int s = 0; s + 1 < f->num_stages(); s++) stages.emplace_back(f->name + "_" + std::to_string(s) + "_adjoint");
            stages.emplace_back(f->name + "_adjoint");
            add(f->name, stages, f->args, f->types[0]);
        }
        static const char *names[] = {"x", "y", "z", "w"};
        for (const auto &[name, p] : fwd.images) {
            if (!p->type.is_float()) continue;
            std::vector<std::string> v;
            for (int d = 0; d < p->dimensions; d++) v.push_back(d < 4 ? names[d] : "v" + std::to_string(d));
            add(name, {Func(name + "_adjoint")}, v, p->type);
        }
        for (const auto &[name, p] : fwd.params)
            if (p->type.is_float()) add(name, {Func(name + "_adjoint")}, {}, p->type);
        // An image's Func (in_im(_0, _1) = in(_0, _1)) shares the image's adjoint.
        for (const auto &f : fwd.funcs)
            if (const char *image = image_of(*f); image && adjoints.count(image)) alias[f->name] = image;

        pending[output->name].push_back({vars_of(output->args), seed, false});
        for (auto it = fwd.funcs.rbegin(); it != fwd.funcs.rend(); ++it) {
            const auto &f = *it;
            if (!adjoints.count(f->name) || alias.count(f->name)) continue;
            define(f->name);
            if (pending[f->name].empty()) {
                // Nothing reaches f (it is read only through stop_gradient(),
                // or not at all): every stage's adjoint is zero, and so is
                // what f would send on; no helper (an argmax) is built for it.
                const std::vector<Func> &adj = adjoints[f->name];
                for (size_t s = 0; s + 1 < adj.size(); s++) {
                    Func g = adj[s];
                    g(vars_of(vars[f->name])) = make_zero(types[f->name]);
                }
                continue;
            }
            for (int s = f->num_stages() - 1; s >= 0; s--) stage(f, s);
        }
        for (const auto &[name, p] : fwd.images)
            if (adjoints.count(name)) define(name);
        for (const auto &[name, p] : fwd.params)
            if (adjoints.count(name)) define(name);
        for (const auto &[from, to] : alias) adjoints[from] = adjoints[to];
        return adjoints;
    }

private:
    ForwardPipeline fwd;
    std::map<std::string, std::vector<Func>> adjoints;  // per stage; one for images and Params
    std::map<std::string, std::vector<std::string>> vars;
    std::map<std::string, Type> types;
    std::map<std::string, std::vector<AdjointTerm>> pending;  // what readers sent to the final adjoint
    std::map<std::string, Func> values;                       // stage_value() copies, made once
    std::map<std::string, std::string> alias;                 // an image's Func -> the image

    // The image an image's Func reads (its name), or null.
    static const char *image_of(const FunctionContents &f) {
        if (!f.is_image_wrapper) return nullptr;
        const Call *c = f.init.values[0].as<Call>();
        return c && c->call_type == Call::Image ? c->name.c_str() : nullptr;
    }

    void add(const std::string &name, std::vector<Func> stages, std::vector<std::string> v, Type t) {
        adjoints[name] = std::move(stages);
        vars[name] = std::move(v);
        types[name] = t;
    }

    Func value_before(const std::shared_ptr<FunctionContents> &f, int s) {
        std::string key = f->name + "#" + std::to_string(s - 1);
        auto it = values.find(key);
        if (it == values.end()) it = values.emplace(key, stage_value(f, s - 1)).first;
        return it->second;
    }

    // The final adjoint of `name`: the gathers summed in its pure
    // definition, every sum or scatter an update. A sum whose terms are all
    // zero outside a condition of the adjoint's own Vars (the range of an
    // RVar solved for them: select(0 <= u < n, e, 0)) tests it once per
    // point, after summing, rather than once per term, which keeps the
    // sum's register blocks free of it:
    //
    //   g(u) = 0;  g(u) += select(c(u), e(u, r), 0)
    //     ->  g(u) = 0;  g(u) += e(u, r);  g(u) = select(c(u), g(u), 0)
    //
    // (the gathers of the pure definition, if any, are added after it).
    void define(const std::string &name) {
        Func g = adjoints[name].back();
        std::vector<Expr> pv = vars_of(vars[name]);
        const Expr zero = make_zero(types[name]);
        Expr pure, guard;
        std::vector<Expr> guarded;
        std::vector<AdjointTerm> updates;
        for (const AdjointTerm &t : pending[name]) {
            const bool at_own_vars = !t.scatter && same_args(t.lhs, pv);
            const Select *sel = t.value.as<Select>();
            if (at_own_vars && !uses_rvars(t.value)) {
                pure = pure.defined() ? pure + t.value : t.value;
            } else if (at_own_vars && sel && is_zero(sel->false_value) && !uses_rvars(sel->condition) &&
                       (!guard.defined() || equal(guard, sel->condition))) {
                guard = sel->condition;
                guarded.push_back(sel->true_value);
            } else {
                updates.push_back(t);
            }
        }
        if (guarded.empty()) {
            g(pv) = pure.defined() ? pure : zero;
        } else {
            g(pv) = zero;
            for (const Expr &e : guarded) g(pv) += e;
            g(pv) = select(guard, g(pv), zero);
            if (pure.defined()) g(pv) += pure;
        }
        for (const AdjointTerm &t : updates) g(t.lhs) += t.value;
        // A sum or scatter computed at the innermost loop of each consumer
        // (the default of a Func with updates) would redo it per point.
        if (!updates.empty()) g.compute_root();
    }

    ReadingStage reading_stage(const FunctionContents &f, const Definition &d, const std::string &what) {
        ReadingStage r;
        r.what = what;
        const Box &box = fwd.regions[f.name];
        for (size_t i = 0; i < d.args.size(); i++) {
            const Variable *v = d.args[i].as<Variable>();
            if (!v || v->rdom || v->param) continue;
            r.pure_vars.push_back(v->name);
            r.pure_ranges.push_back(i < box.size() && !box[i].is_empty_marker ? box[i] : Interval());
        }
        if (d.rdom) {
            r.rvars = d.rdom->vars;
            r.predicate = d.rdom->predicate;
        }
        return r;
    }

    void contribute(const LeafAdjoint &leaf, const ReadingStage &stage, const Expr &seed) {
        std::string target;
        std::vector<Expr> access;
        if (const Call *c = leaf.leaf.as<Call>()) {
            target = c->name;
            access = c->args;
            user_assert(c->call_type == Call::Image || (c->func && c->func->num_values() == 1))
                << "Cannot differentiate " << stage.what << ": it reads element " << c->value_index
                << " of the Tuple-valued Func " << c->name
                << "; autodiff handles Funcs of one value only (split the Tuple into one Func per element)";
        } else {
            target = leaf.leaf.as<Variable>()->name;
        }
        if (alias.count(target)) target = alias[target];
        auto it = adjoints.find(target);
        internal_assert(it != adjoints.end()) << "no adjoint for " << target;
        for (AdjointTerm &t :
             gather_or_scatter(it->second.back().name(), vars[target], access, leaf.adjoint, kSeed, seed, stage))
            pending[target].push_back(std::move(t));
    }

    void contribute_all(const std::vector<LeafAdjoint> &leaves, const ReadingStage &stage, const Expr &seed) {
        for (const LeafAdjoint &l : leaves) contribute(l, stage, seed);
    }

    // The written point of a scan's update, one entry per RVar: the
    // argument of f it moves and in which direction (f(x, r) = ...: +1 for
    // argument 1; f(x, n - r) = ...: -1). Every argument must be f's own Var
    // or one RVar (or minus it) plus a constant, every RVar in one argument
    // (else several points of the RDom write one value).
    std::vector<std::pair<int, int>> scan_positions(const FunctionContents &f, const Definition &d, const std::string &what) {
        const std::string fix = "; autodiff differentiates scans that write f at its own Vars and at each RVar "
                                "plus a constant (f(x, r) = f(x, r - 1) * a + in(x, r)). Write the scan into a Func "
                                "with one more dimension indexed by the RVar, so that no value is overwritten";
        user_assert(d.rdom) << "Cannot differentiate " << what << ": it reads " << f.name
                            << " at other points than it writes without an RDom (each point of an update over "
                            << "pure Vars depends on its neighbours' values at once); write the recurrence over an "
                            << "RDom (f(r) = f(r - 1) + in(r))";
        user_assert(!d.rdom->predicate.defined())
            << "Cannot differentiate " << what << ": a scan over an RDom with where() (its adjoint runs the RDom "
            << "backwards, which Kiln does not do under a predicate); move the condition into a select() in the "
            << "update's value";
        std::vector<std::pair<int, int>> pos(d.rdom->vars.size(), {-1, 0});
        for (size_t i = 0; i < d.args.size(); i++) {
            user_assert(!reads(d.args[i], f.name))
                << "Cannot differentiate " << what << ": it writes " << f.name << " at a point computed from "
                << f.name << " (" << d.args[i] << ")" << fix;
            const Variable *v = d.args[i].as<Variable>();
            if (v && !v->rdom && !v->param && v->name == f.args[i]) continue;
            bool found = false;
            for (size_t j = 0; j < pos.size() && !found; j++) {
                Expr rv = RVar(d.rdom, (int)j);
                for (int sign : {1, -1})
                    if (!found && pos[j].first < 0 && as_const_int(simplify(d.args[i] - rv * sign)))
                        pos[j] = {(int)i, sign}, found = true;
            }
            user_assert(found) << "Cannot differentiate " << what << ": it writes " << f.name << " at "
                               << d.args[i] << " (argument " << i << "), neither " << f.name
                               << "'s own Var nor an RVar (or minus one) plus a constant" << fix;
        }
        for (size_t j = 0; j < pos.size(); j++)
            user_assert(pos[j].first >= 0) << "Cannot differentiate " << what << ": every point of its RVar "
                                     << d.rdom->vars[j].name << " writes the same value of " << f.name
                                     << " (an overwriting scan, whose adjoint needs every overwritten value)"
                                     << fix;
        return pos;
    }

    // A scan: update s writes f(L(x, r)) from f(A(x, r)), A the written
    // point moved by constants along the RVars to a point the RDom writes
    // earlier, or never (and optionally from f(L) itself, the value before
    // the update). Its adjoint is a scan running the other way:
    //
    //   f(x, r) = f(x, r - 1) * a + in(x, r)     r over [1, n)
    //     ->  f_1_scan_adjoint(x, y) = f_adjoint(x, y)
    //         f_1_scan_adjoint(x, n' - 1) += f_1_scan_adjoint(x, n') * a    n' = n - r, r over [1, n)
    //         f_0_adjoint(x, y) = f_1_scan_adjoint(x, y)
    //         f_0_adjoint(x, r) = 0                       (overwritten)
    //         in receives f_1_scan_adjoint(x, r) at (x, r)
    //
    // When the backward scan reaches a point, every later reader of the
    // value written there has added to its adjoint, so it is final.
    void scan(const std::shared_ptr<FunctionContents> &fp, int s, const ReadingStage &rs) {
        const FunctionContents &f = *fp;
        const Definition &d = f.stage(s);
        const std::string what = f.stage_name(s);
        const std::vector<Func> &adj = adjoints[f.name];
        const Type t = types[f.name];
        const std::vector<std::pair<int, int>> pos = scan_positions(f, d, what);
        const size_t n = pos.size();
        // The one earlier point read, as offsets along the RVars.
        std::vector<Expr> earlier;
        std::vector<int64_t> offset;
        for (const Call *c : calls_in(d.values[0])) {
            if (c->call_type != Call::Func || c->func || c->name != f.name || same_args(c->args, d.args)) continue;
            std::vector<int64_t> off(n, 0);
            bool affine = c->args.size() == d.args.size();
            for (size_t i = 0; affine && i < d.args.size(); i++) {
                const int64_t *k = as_const_int(simplify(c->args[i] - d.args[i]));
                auto j = std::find_if(pos.begin(), pos.end(), [&](const auto &p) { return p.first == (int)i; });
                affine = k && (j != pos.end() ? (off[j - pos.begin()] = *k * j->second, true) : *k == 0);
            }
            user_assert(affine) << "Cannot differentiate " << what << ": it reads " << Expr(c) << ", not the point it "
                                << "writes (" << f.name << "(" << d.args.size() << " argument(s))) moved by constants "
                                << "along its RVars; autodiff differentiates scans reading "
                                << "f(x, r - 1) for f(x, r) = ..., not a computed or a pure Var's neighbour. Write "
                                << "the scan into a Func with one more dimension indexed by the RVar, so that no "
                                << "value is overwritten";
            int sign = 0;
            for (size_t j = n; j-- > 0 && !sign;) sign = off[j] < 0 ? -1 : off[j] > 0;
            user_assert(sign < 0) << "Cannot differentiate " << what << ": it reads " << Expr(c)
                                  << ", a point its RDom writes later (the value before the update), which the "
                                  << "backward scan cannot tell from the value written; read the earlier point "
                                  << "(f(r - 1) for f(r) = ...), or the old values from a copy of " << f.name;
            user_assert(earlier.empty() || offset == off)
                << "Cannot differentiate " << what << ": it reads " << f.name << " at two earlier points ("
                << Expr(c) << " and " << f.name << "(" << earlier[0] << ", ...)); autodiff differentiates scans "
                << "reading one (f(r) = f(r - 1) * a + in(r)). Keep each earlier value in a Func of its own";
            earlier = c->args;
            offset = off;
        }
        Func after = s + 1 == f.num_stages() ? Func(fp) : value_before(fp, s + 1);
        RedirectByPoint redirect(f.name, d.args, value_before(fp, s), after);
        std::vector<Expr> pv = vars_of(f.args);
        Func w(f.name + "_" + std::to_string(s) + "_scan_adjoint"), prev = adj[s - 1];
        std::map<std::string, Expr> backwards;  // each RVar from its max down to its min
        for (size_t j = 0; j < n; j++) {
            RVar r(d.rdom, (int)j);
            backwards[r.name()] = r.min() * 2 + r.extent() - 1 - Expr(r);
        }
        auto reversed = [&](Expr e) { return substitute(backwards, e); };
        auto at_reversed = [&](const std::vector<Expr> &args) {
            std::vector<Expr> a;
            for (const Expr &e : args) a.push_back(reversed(e));
            return a;
        };
        w(pv) = adj[s](pv);
        const Expr seed = w(d.args);
        Expr to_earlier, to_self;
        std::vector<LeafAdjoint> others;
        for (LeafAdjoint &l : reverse_accumulate(d.values[0], make_var(kSeed, t), what)) {
            l.adjoint = redirect.mutate(l.adjoint);
            const Call *c = l.leaf.as<Call>();
            if (!is_self_call(l.leaf, f.name))
                others.push_back(l);
            else if (same_args(c->args, d.args))
                to_self = to_self.defined() ? to_self + l.adjoint : l.adjoint;
            else
                to_earlier = to_earlier.defined() ? to_earlier + l.adjoint : l.adjoint;
        }
        if (to_earlier.defined())
            w(at_reversed(earlier)) += reversed(substitute(kSeed, seed, to_earlier));
        w.compute_root();
        prev(pv) = w(pv);
        prev(d.args) = to_self.defined() ? substitute(kSeed, seed, to_self) : make_zero(t);
        prev.compute_root();
        contribute_all(others, rs, seed);
    }

    void stage(const std::shared_ptr<FunctionContents> &fp, int s) {
        const FunctionContents &f = *fp;
        const Definition &d = f.stage(s);
        const std::string what = s == 0 ? "Func " + f.name : f.stage_name(s);
        const std::vector<Func> &adj = adjoints[f.name];
        const Type t = types[f.name];
        Expr seed = adj[s](d.args), seed_var = make_var(kSeed, t);
        ReadingStage rs = reading_stage(f, d, what);
        const Expr &value = d.values[0];
        if (s == 0) {
            // A Func of one definition holds the value: derivatives that are the value read it.
            Expr self;
            if (f.num_stages() == 1 && f.num_values() == 1)
                self = Call::make(value.type(), f.name, d.args, Call::Func, fp, nullptr, 0);
            contribute_all(reverse_accumulate(value, seed_var, what, self), rs, seed);
            return;
        }
        Func prev = adj[s - 1];
        std::vector<Expr> pv = vars_of(f.args);
        const bool pure_lhs = same_args(d.args, pv);
        bool self = reads(value, f.name);
        for (const Expr &a : d.args) self |= reads(a, f.name);
        if (!self) {
            // Overwritten points get nothing from the stage before.
            if (pure_lhs) {
                prev(pv) = make_zero(t);
            } else {
                prev(pv) = adj[s](pv);
                prev(d.args) = make_zero(t);
                prev.compute_root();
            }
            contribute_all(reverse_accumulate(value, seed_var, what), rs, seed);
            return;
        }
        for (const Call *c : calls_in(value))
            if (c->call_type == Call::Func && !c->func && c->name == f.name && !same_args(c->args, d.args)) {
                scan(fp, s, rs);
                return;
            }
        std::vector<LeafAdjoint> leaves = reverse_accumulate(value, seed_var, what), others;
        Expr self_adjoint;
        bool others_read_self = false;
        for (const LeafAdjoint &l : leaves) {
            if (is_self_call(l.leaf, f.name)) {
                self_adjoint = self_adjoint.defined() ? self_adjoint + l.adjoint : l.adjoint;
            } else {
                others.push_back(l);
                others_read_self |= reads(l.adjoint, f.name);
            }
        }
        Expr unit = self_adjoint.defined() ? simplify(substitute(kSeed, make_one(t), self_adjoint)) : Expr();
        if (unit.defined() && is_one(unit) && !others_read_self) {
            // A sum: the stage before has the same adjoint.
            prev(pv) = adj[s](pv);
            contribute_all(others, rs, seed);
            return;
        }
        if (!d.rdom && self_adjoint.defined()) {
            // Each point is updated once: dh/df reads f before the update.
            Func before = value_before(fp, s);
            Expr back = redirect_self_calls(self_adjoint, f.name, before);
            if (pure_lhs) {
                prev(pv) = substitute(kSeed, seed, back);
            } else {
                prev(pv) = adj[s](pv);
                prev(d.args) = substitute(kSeed, seed, back);
                prev.compute_root();
            }
            for (LeafAdjoint &l : others) l.adjoint = redirect_self_calls(l.adjoint, f.name, before);
            contribute_all(others, rs, seed);
            return;
        }
        const Max *mx = value.as<Max>();
        const Min *mn = value.as<Min>();
        if ((mx || mn) && pure_lhs) {
            Expr a = mx ? mx->a : mn->a, b = mx ? mx->b : mn->b;
            Expr incoming = is_self_call(a, f.name) ? b : is_self_call(b, f.name) ? a : Expr();
            if (incoming.defined() && !reads(incoming, f.name)) {
                Func after = s + 1 == fp->num_stages() ? Func(fp) : value_before(fp, s + 1);
                Func w = winner(fp, s, value_before(fp, s), after, incoming);
                Expr won = winner_index(d.rdom) == w(pv);
                Expr kept = w(pv) == -1;
                prev(pv) = select(kept, adj[s](pv), make_zero(t));
                Expr winning_seed = Select::make(won, seed_var, make_zero(t));
                contribute_all(reverse_accumulate(incoming, winning_seed, what), rs, seed);
                return;
            }
        }
        user_error << "Cannot differentiate " << what << " (" << f.name << "(...) = " << value
                   << "): an update over an RDom must add to " << f.name << " (f(...) += e, -=) or reduce it "
                   << "with min or max (f(x) = max(f(x), e) with f's own Vars on the left); the adjoint of a "
                   << "product or any other combination of " << f.name << "'s running value needs every "
                   << "intermediate value. Rewrite it as a sum (a product as exp of a sum of logs), or into a Func "
                   << "with one more dimension indexed by the RVar";
    }
};

}  // namespace

std::map<std::string, std::vector<Func>> propagate(const std::shared_ptr<FunctionContents> &output, const Expr &seed,
                                                   const Box &output_region) {
    return Backward(output, output_region).run(output, seed);
}

}  // namespace internal
}  // namespace kiln
