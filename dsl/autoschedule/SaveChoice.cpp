// choose_saves() (kiln/Autoschedule.h): which forward Funcs a backward
// pipeline reads saved (Func::save()) and which it recomputes, by the cost
// model, under a budget of residual bytes.
//
// Greedy over the forward Funcs the backward pipeline computes: each round
// autoschedules the backward pipeline with each remaining candidate saved
// (as bits where the backward pass reads it only through one comparison,
// else whole or, if the caller allows it, as a float16 or bfloat16 copy,
// whichever is predicted cheaper), adds the time the forward pass takes to
// write the residual, and keeps the candidate that lowers the total most,
// while the residuals fit the budget. A save can make other candidates moot
// (saving bias_add drops matmul from the backward pass), so every round
// starts again from the choices made. The backward pass with the same
// saves at the same sizes is searched once: the final schedule is the last
// round's winner's search, applied again.
#include <algorithm>
#include <cstdio>
#include <optional>
#include <set>
#include <sstream>

#include "ir/Error.h"
#include "ir/Util.h"
#include "kiln/Autoschedule.h"
#include "kiln/Derivative.h"
#include "lower/RealizationOrder.h"
#include "CostModel.h"
#include "Snapshot.h"
#include "lower/SavedResiduals.h"

namespace kiln {

using namespace internal;

namespace {

class Chooser {
public:
    Chooser(const Pipeline &backward, const std::vector<Func> &forward, const Target &t,
            const std::map<std::string, std::vector<int>> &sizes, int64_t budget, const AutoscheduleOptions &o,
            Residual narrow)
        : backward(backward), forward(forward), t(t), sizes(sizes), budget(budget), options(o), narrow(narrow) {}

    SaveChoices run() {
        Environment fwd = find_user_functions(contents_of(forward));
        Environment user = find_user_functions(contents_of(backward.outputs()));
        for (const Func &f : forward) outputs.insert(f.name());
        for (const auto &[name, f] : user) {
            if (!fwd.count(name) || f->num_values() != 1) continue;
            user_assert(f->schedule.residual == Residual::None)
                << "choose_saves: Func " << name << " is already saved (save()); choose_saves decides every "
                << "forward Func's save itself, so remove it";
            candidates.push_back(Func(f));
        }
        snapshot();
        SaveChoices r;
        CostTerms current = evaluate();  // recomputing everything
        r.recompute_all = current;
        double writes = 0;  // the forward pass writing the residuals chosen
        std::set<std::string> chosen;
        int64_t used = 0;
        while (true) {
            // The backward pass's Funcs now: a candidate it no longer computes is moot.
            Environment env = find_environment(contents_of(backward.outputs()));
            int best = -1;
            SaveDecision best_d;
            double best_total = current.total() + writes;
            for (size_t i = 0; i < candidates.size(); i++) {
                Func &c = candidates[i];
                if (chosen.count(c.name()) || !env.count(c.name())) continue;
                SaveDecision d = try_save(c, budget > 0 ? budget - used : -1);
                d.recompute = current;
                double total = d.saved.total() + writes + d.write_ns;
                bool fits = budget <= 0 || used + d.bytes <= budget;
                if (d.how != Residual::None && !fits)
                    d.reason = "saving it (" + kib(d.bytes) + ") would exceed the budget";
                tried[c.name()] = d;
                // Better than saving nothing more; between saves the cost
                // model predicts within 2% of each other, the fewer bytes.
                bool better = best < 0 ? total < best_total
                                       : total < best_total * 0.98 ||
                                             (total <= best_total * 1.02 && d.bytes < best_d.bytes);
                if (d.how != Residual::None && fits && better) {
                    best_total = total;
                    best = (int)i;
                    best_d = d;
                }
            }
            if (best < 0) break;
            Func &c = candidates[best];
            c.save(best_d.how);
            chosen.insert(c.name());
            used += best_d.bytes;
            writes += best_d.write_ns;
            best_d.reason = "saving it (" + kib(best_d.bytes) + ", " + ms(best_d.write_ns) +
                            " to write in the forward pass) takes the backward pass from " +
                            ms(current.total()) + " to " + ms(best_d.saved.total());
            current = best_d.saved;
            order.push_back(best_d);
        }
        // The decisions, the saved ones first in the order chosen.
        for (SaveDecision &d : order) r.decisions.push_back(d);
        Environment left = find_environment(contents_of(backward.outputs()));
        for (const Func &c : candidates) {
            if (chosen.count(c.name())) continue;
            SaveDecision d;
            auto it = tried.find(c.name());
            if (it != tried.end()) d = it->second;
            d.func = c.name();
            d.how = Residual::None;
            if (!left.count(c.name())) d.reason = "the backward pass no longer computes it";
            else if (d.reason.empty() && d.considered != Residual::None)
                d.reason = "recomputing it is cheaper: saving it (" + kib(d.bytes) + ") would take the backward "
                           "pass to " + ms(d.saved.total() + d.write_ns) + " with the write";
            r.decisions.push_back(d);
        }
        r.bytes = used;
        r.backward = autoschedule_now();  // applied to the Funcs
        r.predicted = r.backward.predicted;
        r.explanation = explain(r) + "\n" + r.backward.explanation;
        return r;
    }

private:
    const Pipeline &backward;
    std::vector<Func> forward;
    const Target &t;
    std::map<std::string, std::vector<int>> sizes;
    int64_t budget;
    AutoscheduleOptions options;
    Residual narrow;  // the lower-precision copy allowed (Float16, BFloat16), or None
    std::vector<Func> candidates;
    std::set<std::string> outputs;
    std::map<std::string, SaveDecision> tried;
    std::vector<SaveDecision> order;

    // The schedules the Funcs had before: each autoschedule starts from
    // them (it applies its choice over the schedule it finds), keeping the
    // saves made since.
    std::unique_ptr<Snapshot> before;
    void snapshot() { before = std::make_unique<Snapshot>(backward); }
    void restore() { before->restore(true); }

    // Autoschedule the backward pass as the Funcs are saved now.
    AutoscheduleResult autoschedule_now() {
        restore();
        std::map<std::string, std::vector<int>> s = sizes;
        std::vector<SavedResidual> saved;
        find_environment(contents_of(backward.outputs()), &saved);
        residual_sizes(saved, forward, backward.outputs(), t, s);
        return search(saved, s);
    }

    // The backward pass autoscheduled with the residuals `saved` at sizes s,
    // from the schedules the Funcs had before. The search depends on nothing
    // else (the pipeline, target and options are the Chooser's), so one made
    // before with the same saves and sizes is applied again, not repeated.
    AutoscheduleResult search(const std::vector<SavedResidual> &saved, const std::map<std::string, std::vector<int>> &s) {
        std::ostringstream key;
        for (const SavedResidual &r : saved)
            key << r.func << ":" << r.buffer->name << ":" << r.buffer->type.to_string() << ";";
        for (const auto &[name, dims] : s) {
            key << name << "=";
            for (int e : dims) key << e << ",";
            key << ";";
        }
        restore();
        auto it = searched.find(key.str());
        if (it != searched.end()) {
            it->second.schedule.apply(backward, t);  // as autoschedule() leaves the Funcs
            searches_reused++;
            return it->second;
        }
        AutoscheduleResult r = autoschedule(backward, t, s, options);
        states_evaluated += r.states_evaluated;
        search_ms += r.search_ms;
        return searched[key.str()] = r;
    }
    std::map<std::string, AutoscheduleResult> searched;  // by saves and sizes
    int searches_reused = 0, states_evaluated = 0;
    double search_ms = 0;
    CostTerms evaluate() { return autoschedule_now().predicted; }

    // The backward pass with c saved: bits if it lowers so; else whole, or
    // the lower-precision copy the caller allows (`narrow`) where only that
    // fits the `room` left in the budget (< 0: none) or it is predicted more
    // than 2% cheaper with its write (a forward output saved whole costs no
    // write; within 2%, the exact copy).
    SaveDecision try_save(Func &c, int64_t room) {
        SaveDecision d;
        d.func = c.name();
        std::vector<Residual> encodings = {Residual::Bits};
        if (narrow != Residual::None && c.type().is_float() && c.type().bits() > 16) encodings.push_back(narrow);
        encodings.push_back(Residual::Whole);
        auto fits = [&](const SaveDecision &e) { return room < 0 || e.bytes <= room; };
        auto total = [](const SaveDecision &e) { return e.saved.total() + e.write_ns; };
        std::optional<SaveDecision> best;
        for (Residual how : encodings) {
            std::optional<SaveDecision> e = with_save(c, how, d.note);
            if (!e) continue;
            if (!best || (fits(*e) && !fits(*best)) ||
                (fits(*e) == fits(*best) && (total(*e) < total(*best) * 0.98 ||
                                             (how == Residual::Whole && total(*e) <= total(*best) * 1.02))))
                best = e;
            if (how == Residual::Bits) break;  // exact and the fewest bytes
        }
        if (best) {
            best->note = d.note;
            d = *best;
        }
        return d;
    }

    // c saved as `how`, if the backward pass lowers so (else why not, in note).
    std::optional<SaveDecision> with_save(Func &c, Residual how, std::string &note) {
        SaveDecision d;
        d.func = c.name();
        c.save(how);
        std::vector<SavedResidual> saved;
        try {
            find_environment(contents_of(backward.outputs()), &saved);
            if (how == Residual::Bits) forward_with_residuals(forward, backward.outputs());  // shaped like an output?
        } catch (const CompileError &e) {
            note += std::string(to_string(how)) + ": " + first_line(e.what()) + "; ";
            c.save(Residual::None);
            return std::nullopt;
        }
        restore();
        std::map<std::string, std::vector<int>> s = sizes;
        residual_sizes(saved, forward, backward.outputs(), t, s);
        d.saved = search(saved, s).predicted;
        for (const SavedResidual &r : saved) {
            if (r.func != c.name()) continue;
            auto it = s.find(r.buffer->name);
            user_assert(it != s.end())
                << "choose_saves: saving " << c.name() << " (save(" << to_string(how) << ")) needs the size of its "
                << "buffer " << r.buffer->name << ", which neither the sizes given nor the region the backward "
                << "pass reads of it tell; give a size for " << r.buffer->name << " or for a forward output with "
                << r.buffer->dimensions << " dimensions";
            int64_t bytes = r.buffer->type.bytes();
            for (int e : it->second) bytes *= e;
            d.bytes = bytes;
        }
        // The forward pass writes it, unless it is the output it writes anyway.
        bool free = how == Residual::Whole && outputs.count(c.name());
        d.write_ns = free ? 0 : d.bytes / options.machine.dram_total_bytes_per_ns;
        d.how = d.considered = how;
        c.save(Residual::None);
        return d;
    }

    static std::string first_line(const std::string &s) {
        size_t n = s.find('\n');
        std::string l = s.substr(0, n);
        return l.size() > 160 ? l.substr(0, 157) + "..." : l;
    }

    std::string explain(const SaveChoices &r) const {
        std::ostringstream s;
        s << "Saved for the backward pass (choose_saves), budget "
          << (budget > 0 ? kib(budget) : std::string("none"))
          << (narrow != Residual::None ? std::string(", ") + to_string(narrow) + " copies allowed" : std::string())
          << ":\n"
          << "  recomputing every forward Func: " << r.recompute_all.to_string() << "\n";
        for (const SaveDecision &d : r.decisions) {
            s << "  " << d.func << ": ";
            if (d.how != Residual::None) s << "save(" << to_string(d.how) << ") -- " << d.reason << "\n";
            else s << "recompute -- " << (d.reason.empty() ? d.note : d.reason) << "\n";
        }
        s << "  residuals: " << kib(r.bytes) << "; the backward pass: " << r.predicted.to_string() << "\n";
        char line[200];
        std::snprintf(line, sizeof(line),
                      "  searched the backward pass %d times (%d schedules, %.0f ms); %d search%s with the same saves "
                      "applied again\n",
                      (int)searched.size(), states_evaluated, search_ms, searches_reused,
                      searches_reused == 1 ? "" : "es");
        s << line;
        return s.str();
    }
};

}  // namespace

std::string SaveChoices::schedule_text() const {
    std::string s;
    for (const SaveDecision &d : decisions)
        if (d.how != Residual::None)
            s += "# " + d.reason + "\n" + d.func + ": save(" + to_string(d.how) + ")\n";
    return s + backward.schedule_text;
}

SaveChoices choose_saves(const Pipeline &backward, const std::vector<Func> &forward, const Target &t,
                         const std::map<std::string, std::vector<int>> &sizes, int64_t budget,
                         const AutoscheduleOptions &options, Residual narrow) {
    user_assert(!backward.outputs().empty()) << "choose_saves: the backward pipeline has no outputs";
    user_assert(!forward.empty()) << "choose_saves: give the Funcs differentiated (the forward outputs)";
    // Each save considered autoschedules the backward pass again: autotuning
    // would compile and run its candidates every time.
    user_assert(options.autotune == 0)
        << "choose_saves: autotune " << options.autotune << " is not supported when the cost model also chooses the "
        << "saves of a backward pipeline (it autoschedules it once per save considered); set autotune to 0 (drop "
        << "kiln-gen --autotune for a backward generator)";
    user_assert(narrow == Residual::None || narrow == Residual::Float16 || narrow == Residual::BFloat16)
        << "choose_saves: the lower-precision copy allowed must be float16 or bfloat16 (or none), not "
        << to_string(narrow) << "; bits are chosen wherever the backward pass reads only a comparison";
    return Chooser(backward, forward, t, sizes, budget, options, narrow).run();
}

}  // namespace kiln
