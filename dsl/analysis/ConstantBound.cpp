#include "analysis/ConstantBound.h"

#include <algorithm>
#include <tuple>

#include "ir/ExprKey.h"
#include "ir/IRVisitor.h"
#include "ir/Substitute.h"
#include "kiln/IROperator.h"

namespace kiln {
namespace internal {

const Expr *BoundFacts::let(const std::string &name) const {
    auto it = lets.find(name);
    return it == lets.end() ? nullptr : &it->second.back();
}

const std::pair<Expr, Expr> *BoundFacts::loop(const std::string &name) const {
    auto it = loops.find(name);
    return it == loops.end() ? nullptr : &it->second.back();
}

namespace {

constexpr size_t max_candidates = 4;  // per expression and side
constexpr int max_nodes = 64;         // a larger candidate is dropped (never needed to cancel small sizes)
constexpr int max_settle = 2;         // min and max atoms of a candidate looked through
constexpr int max_depth = 2;          // lets and loops looked through, one inside another
constexpr int max_simplifies = 1000;  // candidates normalized per query; past it none is added (a bound may be missed)

using Candidates = std::vector<Expr>;

int64_t floor_div(int64_t a, int64_t c) { return a >= 0 ? a / c : -((-a + c - 1) / c); }  // c > 0

// A candidate in a normal form that makes equal sums equal and cancels
// terms: a linear sum of atoms (sorted by their text) plus a constant, with
// min, max and division by a constant kept as atoms of normalized operands,
// a min or max whose operands differ by a constant reduced to one, and the
// multiples of c taken out of a division by c. Far cheaper than the
// simplifier, which the candidates would otherwise go through by the
// thousand; exact (index arithmetic does not overflow).
class Normalize {
public:
    Expr operator()(const Expr &e) {
        auto it = done.find(e.get());
        if (it != done.end()) return it->second.second;
        Linear l;
        collect(e, 1, l);
        Expr r = rebuild(l, e.type());
        done[e.get()] = {e, r};
        done[r.get()] = {r, r};
        return r;
    }

    struct Linear {
        std::map<std::string, std::pair<Expr, int64_t>> terms;  // atom text -> atom, coefficient
        int64_t constant = 0;
    };
    const Linear &linear(const Expr &e) {
        auto it = linears.find(e.get());
        if (it != linears.end()) return it->second.second;
        Linear l;
        collect(e, 1, l);
        return (linears[e.get()] = {e, std::move(l)}).second;
    }

    static Expr rebuild(const Linear &l, Type t) {
        Expr r;
        for (const auto &kv : l.terms) {
            const int64_t k = kv.second.second;
            if (k == 0) continue;
            Expr term = k == 1 ? kv.second.first : Mul::make(kv.second.first, make_const(t, k));
            r = r.defined() ? Add::make(r, term) : term;
        }
        if (!r.defined()) return make_const(t, l.constant);
        return l.constant == 0 ? r : Add::make(r, make_const(t, l.constant));
    }

private:
    // Normalized nodes, each kept alive with its key (a freed node's
    // address may be reused).
    std::map<const void *, std::pair<Expr, Expr>> done;
    std::map<const void *, std::pair<Expr, Linear>> linears;

    void collect(const Expr &e, int64_t k, Linear &l) {
        if (const int64_t *c = as_const_int(e)) {
            l.constant += k * *c;
        } else if (const Add *op = e.as<Add>()) {
            collect(op->a, k, l);
            collect(op->b, k, l);
        } else if (const Sub *op = e.as<Sub>()) {
            collect(op->a, k, l);
            collect(op->b, -k, l);
        } else if (const Mul *op = e.as<Mul>(); op && (as_const_int(op->a) || as_const_int(op->b))) {
            const int64_t *c = as_const_int(op->a);
            if (c) collect(op->b, k * *c, l);
            else collect(op->a, k * *as_const_int(op->b), l);
        } else {
            Expr atom = reduce(e);
            if (!atom.same_as(e) && !atom.as<Variable>() && !atom.as<Min>() && !atom.as<Max>() && !atom.as<Div>())
                return collect(atom, k, l);  // reduced to a sum or a constant
            auto &t = l.terms[*expr_key(atom)];
            t.first = atom;
            t.second += k;
        }
    }

    // An atom with normalized operands; a min or max of operands that
    // differ by a constant is the smaller or larger one.
    Expr reduce(const Expr &e) {
        auto it = done.find(e.get());
        if (it != done.end()) return it->second.second;
        const Min *mn = e.as<Min>();
        const Max *mx = e.as<Max>();
        if (mn || mx) {
            Expr a = (*this)(mn ? mn->a : mx->a), b = (*this)(mn ? mn->b : mx->b);
            Expr d = (*this)(a - b);
            if (const int64_t *c = as_const_int(d)) return (*c <= 0) == bool(mn) ? a : b;
            return mn ? Min::make(a, b) : Max::make(a, b);
        }
        if (const Div *op = e.as<Div>()) {
            // (a + c*m + c*q + r) / c = (a + r) / c + m + q, 0 <= r < c.
            const int64_t *c = as_const_int(op->b);
            if (!c || *c <= 0) return Div::make((*this)(op->a), op->b);
            const Linear &num = linear(op->a);  // std::map: stays valid as linear() adds entries
            Linear in, out;
            for (const auto &kv : num.terms) {
                const int64_t k = kv.second.second;
                if (k == 0) continue;
                if (k % *c == 0) out.terms[kv.first] = {kv.second.first, k / *c};
                else in.terms[kv.first] = kv.second;
            }
            out.constant = floor_div(num.constant, *c);
            in.constant = num.constant - out.constant * *c;
            if (!in.terms.empty()) {
                Expr rest = Div::make(rebuild(in, e.type()), op->b);
                out.terms[*expr_key(rest)] = {rest, 1};
            }
            return rebuild(out, e.type());
        }
        return e;
    }
};

class Prover {
public:
    Prover(const BoundFacts &facts, int max_depth, int budget)
        : facts(facts), max_depth(max_depth), budget(budget) {}

    // Candidates c with c >= e (upper) or c <= e (lower).
    Candidates bounds(const Expr &e, bool upper) {
        if (!e.type().is_int() || !e.type().is_scalar()) return {e};
        if (as_const_int(e) || simplifies >= budget) return {e};
        if (const Variable *v = e.as<Variable>()) return variable(v, upper);
        // Let values share subexpressions: each node once per side and depth.
        auto key = std::make_tuple(e.get(), upper, depth);
        auto it = node_memo.find(key);
        if (it != node_memo.end()) return it->second.second;
        Candidates r = node_bounds(e, upper);
        node_memo[key] = {e, r};
        return r;
    }

    int count() const { return simplifies; }

private:
    Candidates node_bounds(const Expr &e, bool upper) {
        Candidates r = {e};
        Expr d = distribute(e);
        if (d.defined()) {
            for (const Expr &c : bounds(d, upper)) add(r, upper, c);
        } else if (const Add *op = e.as<Add>()) {
            combine(r, upper, bounds(op->a, upper), bounds(op->b, upper), [](const Expr &a, const Expr &b) { return a + b; });
        } else if (const Sub *op = e.as<Sub>()) {
            combine(r, upper, bounds(op->a, upper), bounds(op->b, !upper), [](const Expr &a, const Expr &b) { return a - b; });
        } else if (const Mul *op = e.as<Mul>()) {
            multiply(r, op, upper);
        } else if (const Div *op = e.as<Div>()) {
            const int64_t *c = as_const_int(op->b);
            if (c && *c > 0)
                for (const Expr &a : bounds(op->a, upper)) add(r, upper, a / op->b);
        } else if (const Mod *op = e.as<Mod>()) {
            const int64_t *c = as_const_int(op->b);
            if (c && *c > 0) add(r, upper, make_const(e.type(), upper ? *c - 1 : 0));
        } else if (const Min *op = e.as<Min>()) {
            if (upper) {
                for (const Expr &a : bounds(op->a, true)) add(r, upper, a);
                for (const Expr &b : bounds(op->b, true)) add(r, upper, b);
            } else {
                combine(r, upper, bounds(op->a, false), bounds(op->b, false), [](const Expr &a, const Expr &b) { return min(a, b); });
            }
        } else if (const Max *op = e.as<Max>()) {
            if (upper) {
                combine(r, upper, bounds(op->a, true), bounds(op->b, true), [](const Expr &a, const Expr &b) { return max(a, b); });
            } else {
                for (const Expr &a : bounds(op->a, false)) add(r, upper, a);
                for (const Expr &b : bounds(op->b, false)) add(r, upper, b);
            }
        } else if (const Select *op = e.as<Select>()) {
            combine(r, upper, bounds(op->true_value, upper), bounds(op->false_value, upper),
                    [upper](const Expr &a, const Expr &b) { return upper ? max(a, b) : min(a, b); });
        }
        return prune(r);
    }

    const BoundFacts &facts;
    const int max_depth;  // how many lets or loops deep a variable is looked through
    int depth = 0;
    std::map<std::tuple<std::string, bool, int>, Candidates> memo;  // a variable's candidates, per depth
    std::map<std::tuple<const void *, bool, int>, std::pair<Expr, Candidates>> node_memo;  // other nodes, kept alive
    Normalize normalize;
    const int budget;  // the most candidates normalized
    int simplifies = 0;

    // a + min(b, c) as min(a + b, a + c), a - min(b, c) as max(a - b, a -
    // c), and the same for max and select (exact): the bounds of the
    // operands then stay correlated, as in d - min(d - 1, 0) = max(1, d).
    // Undefined if e is not such a sum or difference.
    static Expr distribute(const Expr &e) {
        const Add *add = e.as<Add>();
        const Sub *sub = e.as<Sub>();
        if (!add && !sub) return Expr();
        const Expr &a = add ? add->a : sub->a, &b = add ? add->b : sub->b;
        auto op = [&](const Expr &x, const Expr &y) { return add ? x + y : x - y; };
        auto split = [&](const Expr &choice, bool left) -> Expr {
            const Expr &other = left ? b : a;
            auto f = [&](const Expr &part) { return left ? op(part, other) : op(other, part); };
            const bool flip = !left && sub;  // subtracting a min gives a max
            if (const Min *m = choice.as<Min>()) return flip ? max(f(m->a), f(m->b)) : min(f(m->a), f(m->b));
            if (const Max *m = choice.as<Max>()) return flip ? min(f(m->a), f(m->b)) : max(f(m->a), f(m->b));
            if (const Select *c = choice.as<Select>()) return select(c->condition, f(c->true_value), f(c->false_value));
            return Expr();
        };
        if (nodes(e, max_nodes) > max_nodes) return Expr();  // the operand distributed over is repeated
        Expr r = split(b, false);
        return r.defined() ? r : split(a, true);
    }

    Candidates variable(const Variable *v, bool upper) {
        Candidates r = {Expr(v)};
        if (depth >= max_depth) return r;
        auto key = std::make_tuple(v->name, upper, depth);
        auto it = memo.find(key);
        if (it != memo.end()) return it->second;
        depth++;
        // A large definition (a strip's region, built from the whole
        // pipeline's) is left a name: a bound small enough for the stack
        // comes from small definitions, and exploring large ones is most
        // of the work of the queries that fail.
        if (const Expr *value = facts.let(v->name)) {
            if (nodes(*value, max_nodes) <= max_nodes)
                for (const Expr &c : bounds(*value, upper)) add(r, upper, c);
        } else if (const auto *range = facts.loop(v->name)) {
            Expr end = upper ? range->first + range->second - 1 : range->first;
            if (nodes(end, max_nodes) <= max_nodes)
                for (const Expr &c : bounds(end, upper)) add(r, upper, c);
        }
        depth--;
        r = prune(r);
        memo[key] = r;
        return r;
    }

    // a * b: through a constant factor (its sign chooses the side), else
    // through both factors' constant bounds when neither can be negative.
    void multiply(Candidates &r, const Mul *op, bool upper) {
        const int64_t *ca = as_const_int(op->a), *cb = as_const_int(op->b);
        if (ca || cb) {
            const Expr &x = ca ? op->b : op->a;
            const Expr &c = ca ? op->a : op->b;
            const int64_t k = ca ? *ca : *cb;
            if (k == 0) return add(r, upper, make_zero(op->type));
            for (const Expr &b : bounds(x, k > 0 ? upper : !upper)) add(r, upper, b * c);
            return;
        }
        // One factor at a time: most products have no bound, and the first
        // factor without one settles it.
        std::optional<int64_t> ua, ub, la, lb;
        if (upper && !(ua = best(bounds(op->a, true), true))) return;
        if (!(la = best(bounds(op->a, false), false)) || *la < 0) return;
        if (upper && !(ub = best(bounds(op->b, true), true))) return;
        if (!(lb = best(bounds(op->b, false), false)) || *lb < 0) return;
        int64_t n;
        if (!__builtin_mul_overflow(upper ? *ua : *la, upper ? *ub : *lb, &n)) add(r, upper, make_const(op->type, n));
    }

    template<typename Op>
    void combine(Candidates &r, bool upper, const Candidates &as, const Candidates &bs, Op op) {
        for (const Expr &a : as)
            for (const Expr &b : bs) add(r, upper, op(a, b));
    }

    void add(Candidates &r, bool upper, const Expr &e) {
        if (simplifies >= budget || nodes(e, 2 * max_nodes) > 2 * max_nodes) return;
        simplifies++;
        Expr s = relax_divisions(normalize(e), upper);
        if (nodes(s, max_nodes) > max_nodes) return;
        for (const Expr &c : r)
            if (equal(c, s)) return;
        r.push_back(s);
        // A constant through one min or max atom, found now, ranks first
        // when the candidates are pruned (the sum itself may not survive).
        if (!as_const_int(s) && settles(s)) {
            simplifies++;
            std::optional<int64_t> b = best(settle(s, upper, 1), upper);
            if (b) r.push_back(make_const(s.type(), *b));
        }
    }

    // Whether s is a sum of a few atoms, one a min or max: the sums whose
    // atoms may cancel once it is split.
    bool settles(const Expr &s) {
        const Normalize::Linear &l = normalize.linear(s);
        if (l.terms.size() > 3) return false;
        for (const auto &kv : l.terms)
            if (kv.second.first.as<Min>() || kv.second.first.as<Max>()) return true;
        return false;
    }

public:
    // Bounds of a normalized sum s through the min and max atoms in it, as
    // the bounds of the operands do it for a whole expression, and through
    // its pairs of divisions (relax_divisions): the candidates that s's
    // parts, found separately, make when they meet. With R the rest of s:
    //   U(R + k*min(p, q)) = U(R + k*p) and U(R + k*q)          (k > 0)
    //   U(R + k*max(p, q)) = max(U(R + k*p), U(R + k*q))        (k > 0)
    // (mirrored for k < 0 and for L). s itself is the first candidate.
    Candidates settle(const Expr &s, bool upper, int atoms) {
        Candidates r = {s};
        Expr relaxed = relax_divisions(s, upper);
        if (!relaxed.same_as(s)) r.push_back(relaxed);
        if (atoms == 0 || as_const_int(relaxed)) return r;
        const Normalize::Linear &l = normalize.linear(relaxed);
        for (auto &kv : l.terms) {
            const Min *mn = kv.second.first.as<Min>();
            const Max *mx = kv.second.first.as<Max>();
            const int64_t k = kv.second.second;
            if ((!mn && !mx) || k == 0) continue;
            Normalize::Linear rest = l;
            rest.terms.erase(kv.first);
            Expr base = Normalize::rebuild(rest, s.type()), p = mn ? mn->a : mx->a, q = mn ? mn->b : mx->b;
            Candidates ps = settle(normalize(base + p * make_const(s.type(), k)), upper, atoms - 1);
            Candidates qs = settle(normalize(base + q * make_const(s.type(), k)), upper, atoms - 1);
            // Either operand bounds the sum, or it needs the larger (smaller) of both.
            if (bool(mn) == ((k > 0) == upper)) {
                r.insert(r.end(), ps.begin(), ps.end());
                r.insert(r.end(), qs.begin(), qs.end());
            } else {
                for (const Expr &a : ps)
                    for (const Expr &b : qs) r.push_back(normalize(upper ? max(a, b) : min(a, b)));
            }
            break;
        }
        return r;
    }

private:
    // A normalized sum with k * (a + r) / c - k * a / c in it (c > 0, r a
    // constant): that difference lies in [k * floor(r / c), k * ceil(r /
    // c)] (k > 0) whatever a is, so the sum's bound takes the end of it.
    //   (x + 7) / 2 - x / 2 + 1   ->  upper 5, lower 4
    Expr relax_divisions(const Expr &s, bool upper) {
        Normalize::Linear l = normalize.linear(s);  // a copy, changed below
        bool changed = false;
        for (auto i = l.terms.begin(); i != l.terms.end(); ++i) {
            const Div *di = i->second.first.as<Div>();
            const int64_t *ci = di ? as_const_int(di->b) : nullptr;
            if (!ci || *ci <= 0 || i->second.second == 0) continue;
            for (auto j = l.terms.begin(); j != l.terms.end(); ++j) {
                const Div *dj = j->second.first.as<Div>();
                const int64_t k = i->second.second;
                if (i == j || !dj || !is_const(dj->b, *ci) || j->second.second != -k) continue;
                const int64_t *r = as_const_int(normalize(di->a - dj->a));
                if (!r) continue;
                const int64_t lo = floor_div(*r, *ci), hi = -floor_div(-*r, *ci);
                l.constant += (k > 0) == upper ? k * hi : k * lo;
                i->second.second = j->second.second = 0;
                changed = true;
                break;
            }
        }
        return changed ? normalize(Normalize::rebuild(l, s.type())) : s;
    }

    // The constants first, then the smallest; at most max_candidates. The
    // first element (the expression itself) is kept whatever its size.
    Candidates prune(Candidates r) const {
        if (r.size() <= max_candidates) return r;
        std::vector<std::pair<int, size_t>> ranked;  // (nodes, position), the constants as 0
        for (size_t i = 1; i < r.size(); i++) ranked.push_back({as_const_int(r[i]) ? 0 : nodes(r[i], max_nodes), i});
        std::stable_sort(ranked.begin(), ranked.end());
        Candidates kept = {r[0]};
        for (size_t i = 0; kept.size() < max_candidates; i++) kept.push_back(r[ranked[i].second]);
        return kept;
    }

    // The number of nodes of e, or cap + 1 if it has more.
    static int nodes(const Expr &e, int cap) {
        class Count : public IRVisitor {
        public:
            int n = 0, cap;
            explicit Count(int cap) : cap(cap) {}
            void include(const Expr &x) override {
                if (n > cap) return;
                n++;
                IRVisitor::include(x);
            }
        } count(cap);
        count.include(e);
        return count.n;
    }

public:
    // The tightest constant among the candidates.
    static std::optional<int64_t> best(const Candidates &cs, bool upper) {
        std::optional<int64_t> r;
        for (const Expr &c : cs)
            if (const int64_t *k = as_const_int(c)) r = !r ? *k : upper ? std::min(*r, *k) : std::max(*r, *k);
        return r;
    }
};

std::optional<int64_t> constant_bound(const Expr &e, const BoundFacts &facts, bool upper) {
    if (const int64_t *k = as_const_int(e)) return *k;
    // Looking through one let first, then two: most bounds need one or two,
    // and each level deeper multiplies the candidates.
    std::optional<int64_t> r;
    int count = 0;
    for (int depth = 1; depth <= max_depth && !r && count < max_simplifies; depth++) {
        Prover p(facts, depth, max_simplifies - count);
        // The root's candidates through their min and max atoms (not every
        // candidate's on the way: that multiplies the work many times).
        for (const Expr &c : p.bounds(e, upper)) {
            std::optional<int64_t> b = Prover::best(p.settle(c, upper, max_settle), upper);
            if (b) r = !r ? *b : upper ? std::min(*r, *b) : std::max(*r, *b);
        }
        count += p.count();
    }
    return r;
}

}  // namespace

std::optional<int64_t> constant_upper_bound(const Expr &e, const BoundFacts &facts) {
    return constant_bound(e, facts, true);
}

std::optional<int64_t> constant_lower_bound(const Expr &e, const BoundFacts &facts) {
    return constant_bound(e, facts, false);
}

}  // namespace internal
}  // namespace kiln
