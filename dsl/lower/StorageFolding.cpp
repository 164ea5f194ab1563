#include "StorageFolding.h"

#include <set>
#include <sstream>

#include "ir/Error.h"
#include "ir/IRVisitor.h"
#include "ir/Simplify.h"
#include "ir/Substitute.h"
#include "kiln_runtime.h"
#include "schedule/ScheduleOrigin.h"

namespace kiln {
namespace internal {

namespace {

std::string directive(const StorageFold &fold) {
    std::ostringstream os;
    os << "fold_storage(" << fold.var << ", " << fold.factor << (fold.fold_forward ? "" : ", false") << ")";
    return os.str();
}

// "file:line:col: Func f is scheduled fold_storage(y, 3)"
std::string scheduled(const FunctionContents &f, const StorageFold &fold) {
    return schedule_origin(f, "fold." + fold.var) + "Func " + f.name + " is scheduled " + directive(fold);
}

std::string compute_text(const FunctionContents &f) {
    const LoopLevel &l = f.schedule.compute_level;
    return l.is_root() ? "compute_root()" : "compute_at(" + l.func() + ", " + l.var() + ")";
}

// Puts `checks` after the lets at the top of the body of loop `name`.
class ChecksAtTop : public IRMutator {
public:
    ChecksAtTop(const std::string &l, const std::vector<Stmt> &c) : loop(l), checks(c) {}

protected:
    const std::string &loop;
    const std::vector<Stmt> &checks;
    Stmt visit(const For *op) override {
        if (op->name != loop) return IRMutator::visit(op);
        std::vector<const LetStmt *> lets;
        Stmt inner = op->body;
        while (const auto *l = inner.as<LetStmt>()) {
            lets.push_back(l);
            inner = l->body;
        }
        std::vector<Stmt> seq = checks;
        seq.push_back(inner);
        inner = Block::make(seq);
        for (auto it = lets.rbegin(); it != lets.rend(); ++it) inner = LetStmt::make((*it)->name, (*it)->value, inner);
        return For::make(op->name, op->min, op->extent, op->for_type, inner);
    }
};

// The rows of dimension d of f live in one iteration of its compute loop:
// those its consumers read (`read`, the region before sliding) and those
// its producer writes (a split's tail may write past the region; `past`
// says whether it does). `rows` can be evaluated after the lets at the top
// of the loop body (a check at run time); `count` is how many there are at
// most, if that is a constant (else undefined).
bool live_rows(const For *loop, const FunctionContents &f, int d, Interval &read, Interval &rows, Expr &count,
               bool &past) {
    std::vector<std::pair<Expr, Expr>> region;
    std::map<std::string, Expr> lets;
    if (!region_at(loop, f, region, &lets)) return false;
    Interval w;
    bool below = false, above = false;
    if (!rows_written(loop, f, d, w, below, above)) return false;
    const std::string min_let = f.stage_prefix(0) + f.args[d] + ".min";
    read = rows = Interval(region[d].first, region[d].second);
    past = below || above;
    if (past) rows = Interval(simplify(min(rows.min, w.min)), simplify(max(rows.max, w.max)));
    // The writes are in terms of the lets; a slid min is one of two values.
    Expr extent = rows.max - rows.min + 1;
    std::vector<std::map<std::string, Expr>> cases = {lets};
    if (const auto *sel = lets[min_let].as<Select>()) {
        cases = {lets, lets};
        cases[0][min_let] = sel->true_value;
        cases[1][min_let] = sel->false_value;
    }
    count = Expr();
    for (const auto &values : cases) {
        Expr n = simplify(substitute(values, extent));
        if (!as_const_int(n)) {
            count = Expr();
            break;
        }
        count = count.defined() ? simplify(max(count, n)) : n;
    }
    return true;
}

class Fold : public IRMutator {
public:
    Fold(const Environment &e, SlidingReports *r) : env(e), reports(r) {}
    std::set<std::string> realized, produced;

protected:
    const Environment &env;
    SlidingReports *reports;

    Stmt visit(const ProducerConsumer *op) override {
        if (op->is_producer) produced.insert(op->name);
        return IRMutator::visit(op);
    }

    // fold_storage(): checks it and sets folds[dim] (checks: what the kernel
    // must check at the top of the compute loop).
    void explicit_fold(const FunctionContents &f, const StorageFold &fold, const std::vector<const For *> &loops,
                       std::vector<Expr> &folds, std::vector<Stmt> &checks) {
        int dim = 0;
        while (dim < (int)f.args.size() && f.args[dim] != fold.var) dim++;
        internal_assert(dim < (int)f.args.size()) << "fold_storage of " << f.name << " in " << fold.var;
        const std::string what = scheduled(f, fold), loop = f.schedule.compute_level.to_string();
        user_assert(!loops.empty())
            << what << ", but it is stored where it is computed (" << compute_text(f)
            << "), so nothing is kept from one iteration to the next to fold; store it outside the loop it is "
               "computed in (e.g. store_root()), or remove the fold_storage";
        for (const For *l : loops)
            user_assert(l->for_type == ForType::Serial || l->for_type == ForType::Unrolled)
                << what << ", but the " << to_string(l->for_type) << " loop " << l->name
                << " lies between where it is stored and where it is computed, so its iterations would share the "
                   "circular buffer out of order; store it inside that loop, or remove the fold_storage";
        const For *compute = loops.back();
        Interval read, live;
        Expr count;
        bool past = false;
        user_assert(live_rows(compute, f, dim, read, live, count, past))
            << what << ", but Kiln cannot tell which rows of " << fold.var << " one iteration of " << loop
            << ", the loop it is computed in, reads and writes; remove the fold_storage";
        const Expr &mn = read.min, &mx = read.max;
        int smin = step_sign(mn, compute->name), smax = step_sign(mx, compute->name);
        bool forward = (smin == 0 || smin == 1) && (smax == 0 || smax == 1);
        bool backward = (smin == 0 || smin == -1) && (smax == 0 || smax == -1);
        std::ostringstream span;
        span << "[" << mn << ", " << mx << "]";
        if (fold.fold_forward ? !forward && backward : !backward && forward) {  // the other direction
            StorageFold other = fold;
            other.fold_forward = !fold.fold_forward;
            user_error << what << ", but its region in " << fold.var << " moves toward "
                       << (fold.fold_forward ? "smaller " : "larger ") << fold.var << " as " << loop
                       << " advances; fold it in that direction with " << directive(other)
                       << ", or remove the fold_storage";
        }
        user_assert(fold.fold_forward ? forward : backward)
            << what << ", but its region in " << fold.var << ", " << span.str()
            << ", does not move monotonically as " << loop
            << " advances (it can move both ways), so a circular buffer would overwrite values still to be read; "
               "remove the fold_storage, or read "
            << fold.var << " in one direction";
        // Its consumers' window, and the rows its producer writes past it.
        const std::string needs = past ? "its consumers and its producer (a split's tail writes past what they read) "
                                         "need "
                                       : "its consumers need ";
        const int64_t *w = count.defined() ? as_const_int(count) : nullptr, *n = as_const_int(fold.factor);
        internal_assert(n) << "fold_storage of " << f.name << " by a factor that is not a constant";
        if (w) {
            StorageFold enough = fold;
            enough.factor = count;
            user_assert(*w <= *n) << what << ", but " << needs << *w << " rows of " << fold.var
                                  << " at once (in each iteration of " << loop << "), more than the " << *n
                                  << " it keeps; use " << directive(enough) << " or more, or remove the fold_storage";
        } else {
            Expr rows = simplify(live.max - live.min + 1);
            Expr ok = simplify(rows <= fold.factor);
            if (!is_one(ok))
                checks.push_back(AssertStmt::make(
                    ok, kiln_error_generic,
                    {StringImm::make(what + ", but " + needs), rows,
                     StringImm::make(" rows of " + fold.var + " at once (in an iteration of " + loop + "), more than the "),
                     fold.factor,
                     StringImm::make(" it keeps; use a factor of at least the largest window, or remove the fold_storage")}));
        }
        folds[dim] = fold.factor;
    }

    Stmt visit(const Realize *op) override {
        Stmt body = mutate(op->body);
        auto it = env.find(op->name);
        std::vector<Expr> folds = op->fold_factors;
        if (it != env.end()) {
            const FunctionContents &f = *it->second;
            realized.insert(f.name);
            std::vector<const For *> loops = loops_to_producer(body, f.name);
            SlidingDim d;
            std::string not_folded;
            Interval read, live;
            Expr count;
            bool past = false;
            if (find_sliding_dim(body, env, f, d) && live_rows(loops.back(), f, d.dim, read, live, count, past)) {
                // The window before sliding (what one iteration reads), or
                // more if the producer writes past it.
                if (const int64_t *c = count.defined() ? as_const_int(count) : nullptr) {
                    int64_t n = 1;
                    while (n < *c) n *= 2;
                    folds[d.dim] = make_const(Int(32), n);
                } else {
                    not_folded = past ? "its producer writes past the window (a split's tail), by a number of rows "
                                        "not known before running"
                                      : "the window's size is not known before running";
                }
            }
            std::vector<Stmt> checks;
            for (const StorageFold &fold : f.schedule.storage_folds) explicit_fold(f, fold, loops, folds, checks);
            if (!checks.empty()) body = ChecksAtTop(loops.back()->name, checks).mutate(body);
            if (reports && reports->count(f.name)) {
                SlidingReport &r = reports->at(f.name);
                r.not_folded = not_folded;
                for (size_t i = 0; i < folds.size(); i++)
                    if (folds[i].defined() && !op->fold_factors[i].defined()) r.folds[(int)i] = folds[i];
                for (const StorageFold &fold : f.schedule.storage_folds)
                    for (size_t i = 0; i < f.args.size(); i++)
                        if (f.args[i] == fold.var) r.fold_storage.insert((int)i);
            }
        }
        if (body.same_as(op->body) && folds.size() == op->fold_factors.size()) {
            bool same = true;
            for (size_t i = 0; i < folds.size(); i++) same &= folds[i].same_as(op->fold_factors[i]);
            if (same) return Stmt(op);
        }
        return Realize::make(op->name, op->types, op->bounds, body, folds);
    }
};

}  // namespace

Stmt storage_folding(const Stmt &s, const Environment &env, SlidingReports *reports) {
    Fold fold(env, reports);
    Stmt r = fold.mutate(s);
    for (const auto &kv : env) {
        const FunctionContents &f = *kv.second;
        if (f.schedule.storage_folds.empty() || fold.realized.count(f.name)) continue;
        const std::string what = scheduled(f, f.schedule.storage_folds[0]);
        user_assert(!fold.produced.count(f.name))
            << what << ", but it is an output of the pipeline: its storage is the caller's buffer, which cannot be "
               "folded; remove the fold_storage";
        user_error << what << ", but it is inlined, so it has no storage to fold; schedule it "
                   << "store_root().compute_at(...) (or store_at(...) outside its compute_at), or remove the "
                      "fold_storage";
    }
    return r;
}

}  // namespace internal
}  // namespace kiln
