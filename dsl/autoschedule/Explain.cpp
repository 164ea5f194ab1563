// The autoscheduler's explanation (Explain.h).
#include "Explain.h"

#include <algorithm>
#include <cstdio>
#include <nlohmann/json.hpp>
#include <sstream>

#include "CostModel.h"
#include "NpuSearch.h"

namespace kiln {
namespace internal {

std::string decision_reason(const AutoscheduleDecision &d, size_t best) {
    const AutoscheduleAlternative &b = d.alternatives[best];
    const AutoscheduleAlternative *next = nullptr;
    for (size_t i = 0; i < d.alternatives.size(); i++)
        if (i != best && d.alternatives[i].legal && (!next || d.alternatives[i].cost.total() < next->cost.total()))
            next = &d.alternatives[i];
    std::string r = "predicted " + ms(b.cost.total());
    if (!next) return r + "; the only option that lowers";
    double dc = next->cost.compute - b.cost.compute, dm = next->cost.memory - b.cost.memory,
           dov = next->cost.overhead - b.cost.overhead, da = next->cost.aliasing - b.cost.aliasing;
    const char *term = da > dm && da > dc && da > dov ? "aliasing"
                       : dm >= dc && dm >= dov        ? "memory"
                       : dc >= dov                    ? "compute"
                                                      : "overhead";
    double dt = std::max({dc, dm, dov, da});
    char s[240];
    std::snprintf(s, sizeof(s), "; next best %s costs %s (+%.0f%%, %s +%s)", next->option.c_str(),
                  ms(next->cost.total()).c_str(),
                  b.cost.total() > 0 ? 100 * (next->cost.total() - b.cost.total()) / b.cost.total() : 0.0, term,
                  ms(dt).c_str());
    return r + s;
}

namespace {

// Autotuning's account, a line a candidate:
//   autotune: ran the 3 best candidates by predicted cost; candidate 2 measured fastest
//     1 (the model's choice) predicted 1.20 ms, measured 1.050 ms
//     2 predicted 1.31 ms, measured 0.920 ms   <- chosen
std::string autotune_summary(const AutoscheduleResult &r) {
    if (r.autotuned.empty()) return "";
    std::ostringstream os;
    const bool ran = r.autotuned[r.autotune_chosen].error.empty();
    os << "autotune: ran the " << r.autotuned.size() << " best candidate" << (r.autotuned.size() > 1 ? "s" : "")
       << " by predicted cost; "
       << (!ran ? "none ran, the model's choice is kept"
                : r.autotune_chosen == 0 ? "the model's choice measured fastest"
                                         : "candidate " + std::to_string(r.autotune_chosen + 1) + " measured fastest")
       << "\n";
    for (size_t i = 0; i < r.autotuned.size(); i++) {
        const AutotuneCandidate &c = r.autotuned[i];
        char line[300];
        if (c.error.empty())
            std::snprintf(line, sizeof(line), "  %zu%s predicted %s, measured %.3f ms%s\n", i + 1,
                          i == 0 ? " (the model's choice)" : "", ms(c.predicted.total()).c_str(), c.measured_ms,
                          (int)i == r.autotune_chosen && ran ? "   <- chosen" : "");
        else
            std::snprintf(line, sizeof(line), "  %zu%s predicted %s, did not run: %.180s\n", i + 1,
                          i == 0 ? " (the model's choice)" : "", ms(c.predicted.total()).c_str(), c.error.c_str());
        os << line;
    }
    return os.str();
}

}  // namespace

void explain(AutoscheduleResult &r, const std::string &pipeline, const Target &t,
             const std::map<std::string, std::vector<int>> &sizes, const AutoscheduleOptions &o) {
    std::ostringstream os, sz;
    for (const auto &[name, ext] : sizes) {
        sz << (sz.tellp() ? ", " : "") << name << " ";
        for (size_t i = 0; i < ext.size(); i++) sz << (i ? "x" : "") << ext[i];
    }
    // The schedule file's header leaves out the time, which differs from
    // run to run; the explanation gives it, with both limits.
    char line[200];
    std::snprintf(line, sizeof(line), "searched %d schedules; predicted %s\n", r.states_evaluated,
                  r.predicted.to_string().c_str());
    const std::string summary = line;
    std::string budget = o.max_states > 0 ? std::to_string(o.max_states) + " schedules" : "no limit in schedules";
    std::snprintf(line, sizeof(line), "searched %d schedules in %.0f ms (budget: %s, %.0f ms%s); predicted %s\n",
                  r.states_evaluated, r.search_ms, budget.c_str(), r.time_limit_ms,
                  o.time_limit_is_cpu ? " of CPU time" : "", r.predicted.to_string().c_str());
    const std::string machine = t.has(Target::NPU) ? npu_machine_text() : o.machine.to_string();
    os << "Autoschedule for " << pipeline << " (target " << t.to_string() << "; sizes " << sz.str() << ")\n"
       << "machine: " << machine << "\n"
       << line;
    for (const std::string &sk : r.skipped) os << "skipped: " << sk << "\n";
    for (const auto &d : r.decisions) {
        os << "\n" << d.func << ": " << d.chosen << "\n  " << d.reason << "\n";
        for (const auto &a : d.alternatives) {
            std::snprintf(line, sizeof(line), "  %s %-48s ", a.option == d.chosen ? "*" : " ", a.option.c_str());
            os << line << (a.legal ? a.cost.to_string() : std::string("-")) << "\n      " << a.note << "\n";
        }
    }
    const std::string tuned = autotune_summary(r);
    os << tuned;
    for (size_t i = 0; i < r.autotuned.size(); i++) {
        std::istringstream lines(r.autotuned[i].schedule);
        os << "\nautotune candidate " << i + 1 << ":\n";
        for (std::string l; std::getline(lines, l);) os << "  " << l << "\n";
    }
    r.explanation = os.str();
    std::string header = "# Chosen by kiln::autoschedule for " + sz.str() + "; " + summary;
    std::istringstream lines(tuned);
    for (std::string l; std::getline(lines, l);) header += "# " + l + "\n";
    r.schedule_text = header + r.schedule_text;

    nlohmann::json j;
    j["pipeline"] = pipeline;
    j["target"] = t.to_string();
    j["sizes"] = sizes;
    j["machine"] = machine;
    j["states_evaluated"] = r.states_evaluated;
    j["search_ms"] = r.search_ms;
    j["max_states"] = o.max_states;
    j["time_limit_ms"] = r.time_limit_ms;
    j["stopped_by"] = r.stopped_by;
    auto terms = [](const CostTerms &c) {
        return nlohmann::json{{"total_ns", c.total()}, {"compute_ns", c.compute}, {"memory_ns", c.memory},
                              {"overhead_ns", c.overhead}, {"aliasing_ns", c.aliasing}};
    };
    j["predicted"] = terms(r.predicted);
    j["skipped"] = r.skipped;
    j["decisions"] = nlohmann::json::array();
    for (const auto &d : r.decisions) {
        nlohmann::json alts = nlohmann::json::array();
        for (const auto &a : d.alternatives)
            alts.push_back({{"option", a.option}, {"legal", a.legal}, {"cost", terms(a.cost)}, {"note", a.note}});
        j["decisions"].push_back({{"func", d.func}, {"chosen", d.chosen}, {"reason", d.reason}, {"alternatives", alts}});
    }
    j["autotune"] = nlohmann::json::array();
    for (size_t i = 0; i < r.autotuned.size(); i++) {
        const AutotuneCandidate &c = r.autotuned[i];
        j["autotune"].push_back({{"schedule", c.schedule}, {"predicted", terms(c.predicted)},
                                 {"measured_ms", c.measured_ms}, {"error", c.error},
                                 {"chosen", (int)i == r.autotune_chosen}});
    }
    j["schedule"] = r.schedule.to_string();
    r.explanation_json = j.dump(2);
}

}  // namespace internal
}  // namespace kiln
