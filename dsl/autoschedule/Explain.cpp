// The autoscheduler's explanation (Explain.h).
#include "Explain.h"

#include <cstdio>
#include <nlohmann/json.hpp>
#include <sstream>

namespace kiln {
namespace internal {

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
    std::snprintf(line, sizeof(line), "searched %d schedules in %.0f ms (budget: %s, %.0f ms); predicted %s\n",
                  r.states_evaluated, r.search_ms, budget.c_str(), o.time_limit_ms,
                  r.predicted.to_string().c_str());
    os << "Autoschedule for " << pipeline << " (target " << t.to_string() << "; sizes " << sz.str() << ")\n"
       << "machine: " << o.machine.to_string() << "\n"
       << line;
    for (const std::string &sk : r.skipped) os << "skipped: " << sk << "\n";
    for (const auto &d : r.decisions) {
        os << "\n" << d.func << ": " << d.chosen << "\n  " << d.reason << "\n";
        for (const auto &a : d.alternatives) {
            std::snprintf(line, sizeof(line), "  %s %-48s ", a.option == d.chosen ? "*" : " ", a.option.c_str());
            os << line << (a.legal ? a.cost.to_string() : std::string("-")) << "\n      " << a.note << "\n";
        }
    }
    r.explanation = os.str();
    std::string header = "# Chosen by kiln::autoschedule for " + sz.str() + "; " + summary;
    r.schedule_text = header + r.schedule_text;

    nlohmann::json j;
    j["pipeline"] = pipeline;
    j["target"] = t.to_string();
    j["sizes"] = sizes;
    j["machine"] = o.machine.to_string();
    j["states_evaluated"] = r.states_evaluated;
    j["search_ms"] = r.search_ms;
    j["max_states"] = o.max_states;
    j["time_limit_ms"] = o.time_limit_ms;
    j["stopped_by"] = r.stopped_by;
    auto terms = [](const CostTerms &c) {
        return nlohmann::json{{"total_ns", c.total()}, {"compute_ns", c.compute}, {"memory_ns", c.memory},
                              {"overhead_ns", c.overhead}};
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
    j["schedule"] = r.schedule.to_string();
    r.explanation_json = j.dump(2);
}

}  // namespace internal
}  // namespace kiln
