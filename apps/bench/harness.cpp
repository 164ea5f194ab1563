// Timing, tables, JSON and the SVG chart of apps/bench (harness.h).
#include "harness.h"

#include <kiln/StmtHTML.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <sstream>

#include <sys/resource.h>

namespace kiln_bench {

using nlohmann::json;

double Timing::best() const { return runs_ms.empty() ? first_ms : *std::min_element(runs_ms.begin(), runs_ms.end()); }

double Timing::median() const {
    if (runs_ms.empty()) return first_ms;
    std::vector<double> v = runs_ms;
    std::sort(v.begin(), v.end());
    return v[v.size() / 2];
}

double cpu_ms(int who) {
    rusage u;
    getrusage(who, &u);
    return (u.ru_utime.tv_sec + u.ru_stime.tv_sec) * 1e3 + (u.ru_utime.tv_usec + u.ru_stime.tv_usec) * 1e-3;
}

Timing time_runs(int runs, const std::function<void()> &f) {
    using clock = std::chrono::steady_clock;
    auto ms = [](clock::time_point t0) {
        return std::chrono::duration<double, std::milli>(clock::now() - t0).count();
    };
    Timing t;
    const double cpu0 = cpu_ms(RUSAGE_THREAD) + cpu_ms(RUSAGE_CHILDREN);
    auto t0 = clock::now();
    f();
    t.first_ms = ms(t0);
    t.first_cpu_ms = cpu_ms(RUSAGE_THREAD) + cpu_ms(RUSAGE_CHILDREN) - cpu0;
    for (int i = 0; i < runs; i++) {
        const double c0 = cpu_ms(RUSAGE_THREAD), p0 = cpu_ms(RUSAGE_SELF);
        t0 = clock::now();
        f();
        t.runs_ms.push_back(ms(t0));
        t.runs_process_cpu_ms.push_back(cpu_ms(RUSAGE_SELF) - p0);
        const double c = cpu_ms(RUSAGE_THREAD) - c0;
        if (i == 0 || c < t.best_run_cpu_ms) t.best_run_cpu_ms = c;
    }
    return t;
}

const Entry *CaseResult::find(const std::string &system) const {
    for (const Entry &e : entries)
        if (e.system == system) return &e;
    return nullptr;
}

bool CaseResult::outputs_agree() const {
    for (const Entry &e : entries)
        if (e.failure.empty() && !(e.max_rel_err <= (e.tolerance >= 0 ? e.tolerance : tolerance))) return false;
    return true;
}

namespace {

// The time the roofline allows: the larger of the memory and compute bounds.
double roofline_ms(const CaseResult &c, const Roofline &roof) {
    double mem = c.bytes / (roof.bandwidth_gbps * 1e9) * 1e3;
    double compute = c.flops > 0 ? c.flops / (roof.peak_gflops * 1e9) * 1e3 : 0;
    return std::max(mem, compute);
}

// The rate shown for a case: GFLOP/s for compute-bound work, else GB/s.
bool compute_bound(const CaseResult &c, const Roofline &roof) {
    return c.flops / (roof.peak_gflops * 1e9) > c.bytes / (roof.bandwidth_gbps * 1e9);
}

double rate(const CaseResult &c, const Roofline &roof, double ms) {
    return compute_bound(c, roof) ? c.flops / (ms * 1e-3) / 1e9 : c.bytes / (ms * 1e-3) / 1e9;
}

}  // namespace

json to_json(const CaseResult &c, const Roofline &roof) {
    json entries = json::array();
    const double kiln_ms = c.entries.empty() ? 0 : c.entries[0].timing.best();
    for (const Entry &e : c.entries) {
        if (!e.failure.empty()) {
            entries.push_back({{"system", e.system}, {"failure", e.failure}});
            continue;
        }
        json j = {{"system", e.system},
                  {"first_run_ms", e.timing.first_ms},
                  {"best_ms", e.timing.best()},
                  {"median_ms", e.timing.median()},
                  {"runs_ms", e.timing.runs_ms},
                  {"runs_process_cpu_ms", e.timing.runs_process_cpu_ms},
                  {"percent_of_roofline", 100.0 * roofline_ms(c, roof) / e.timing.best()},
                  {"time_over_kiln", e.timing.best() / kiln_ms},
                  {"max_rel_err_vs_kiln", e.max_rel_err},
                  {"same_work", e.same_work}};
        j[compute_bound(c, roof) ? "gflop_per_s" : "gb_per_s"] = rate(c, roof, e.timing.best());
        if (!e.note.empty()) j["note"] = e.note;
        if (e.compile_ms >= 0) j["compile_ms"] = e.compile_ms;
        if (e.compile_cpu_ms >= 0) j["compile_cpu_ms"] = e.compile_cpu_ms;
        if (e.compile_reused) j["compile_reused"] = true;
        if (e.search_ms >= 0) j["search_ms"] = e.search_ms;
        if (!e.schedule.empty()) j["schedule"] = e.schedule;
        entries.push_back(j);
    }
    return {{"case", c.name},       {"kiln_schedule", c.schedule},       {"bytes", c.bytes},
            {"flops", c.flops},     {"bound", compute_bound(c, roof) ? "compute" : "memory"},
            {"tolerance", c.tolerance}, {"outputs_agree", c.outputs_agree()}, {"systems", entries}};
}

void print_table(const std::vector<CaseResult> &cases, const Roofline &roof) {
    std::printf("\n%-26s %-22s %9s %9s %10s %6s %7s %9s %14s\n", "case", "system", "best ms", "median", "rate",
                "%roof", "x kiln", "rel err", "compile ms cpu");
    for (const CaseResult &c : cases) {
        const bool cb = compute_bound(c, roof);
        const double kiln_ms = c.entries[0].timing.best();
        for (size_t i = 0; i < c.entries.size(); i++) {
            const Entry &e = c.entries[i];
            if (!e.failure.empty()) {
                std::printf("%-26s %-22s %s\n", i == 0 ? c.name.c_str() : "", e.system.c_str(), e.failure.c_str());
                continue;
            }
            char rate_text[32], compile_text[48];
            std::snprintf(rate_text, sizeof rate_text, "%.1f %s", rate(c, roof, e.timing.best()),
                          cb ? "GF/s" : "GB/s");
            if (e.compile_ms >= 0)
                std::snprintf(compile_text, sizeof compile_text, "%.0f %4.0f", e.compile_ms, e.compile_cpu_ms);
            else std::snprintf(compile_text, sizeof compile_text, "%s", e.compile_reused ? "reused" : "-");
            std::printf("%-26s %-22s %9.3f %9.3f %10s %5.0f%% %7.2f %9.1e %14s%s", i == 0 ? c.name.c_str() : "",
                        e.system.c_str(), e.timing.best(), e.timing.median(), rate_text,
                        100.0 * roofline_ms(c, roof) / e.timing.best(), e.timing.best() / kiln_ms, e.max_rel_err,
                        compile_text, e.same_work ? "" : "  (other work)");
            if (e.search_ms >= 0) std::printf("  search %.0f ms", e.search_ms);
            std::printf("\n");
        }
        if (!c.outputs_agree()) std::printf("%-26s OUTPUTS DISAGREE (tolerance %.1e)\n", "", c.tolerance);
    }
    std::printf("\nroofline: %.1f GB/s (triad), %.0f GFLOP/s (%s FMA probe); \"x kiln\" = time / Kiln's time\n",
                roof.bandwidth_gbps, roof.peak_gflops, roof.fma_isa.c_str());
    const double g = geomean_kiln_over_halide(cases);
    if (g > 0) std::printf("geomean Kiln / Halide time: %.3f\n", g);
    std::string worst;
    double worst_ratio = 0;
    const double a = geomean_over_kiln(cases, "kiln auto", &worst, &worst_ratio);
    if (a > 0)
        std::printf("geomean Kiln auto / Kiln (hand schedule) time: %.3f; worst %.2fx (%s)\n", a, worst_ratio,
                    worst.c_str());
    for (const std::string &name : other_autoschedulers(cases)) {
        const AutoComparison cmp = compare_with_kiln_auto(cases, name);
        std::printf("%s / Kiln auto time: geomean %.3f over %d cases, Kiln auto faster in %d; %d refused or failed\n",
                    name.c_str(), cmp.geomean, cmp.cases, cmp.kiln_auto_faster, cmp.failed);
    }
}

std::vector<std::string> other_autoschedulers(const std::vector<CaseResult> &cases) {
    std::vector<std::string> systems;
    for (const CaseResult &c : cases)
        for (const Entry &e : c.entries)
            if (e.system != "kiln auto" && (e.search_ms >= 0 || e.failure.compare(0, 8, "refused:") == 0) &&
                std::find(systems.begin(), systems.end(), e.system) == systems.end())
                systems.push_back(e.system);
    return systems;
}

AutoComparison compare_with_kiln_auto(const std::vector<CaseResult> &cases, const std::string &system) {
    AutoComparison cmp;
    double log_sum = 0;
    for (const CaseResult &c : cases) {
        const Entry *e = c.find(system), *k = c.find("kiln auto");
        if (!e || !k) continue;
        if (!e->failure.empty()) {
            cmp.failed++;
            continue;
        }
        const double r = e->timing.best() / k->timing.best();
        log_sum += std::log(r);
        cmp.cases++;
        cmp.kiln_auto_faster += r > 1;
    }
    cmp.geomean = cmp.cases ? std::exp(log_sum / cmp.cases) : 0;
    return cmp;
}

double geomean_over_kiln(const std::vector<CaseResult> &cases, const std::string &system, std::string *worst,
                         double *worst_ratio) {
    double log_sum = 0, most = 0;
    int n = 0;
    for (const CaseResult &c : cases) {
        const Entry *e = c.find(system);
        if (!e || !e->failure.empty()) continue;
        double r = e->timing.best() / c.entries[0].timing.best();
        log_sum += std::log(r);
        n++;
        if (r > most) {
            most = r;
            if (worst) *worst = c.name;
        }
    }
    if (worst_ratio) *worst_ratio = most;
    return n ? std::exp(log_sum / n) : 0;
}

double geomean_kiln_over_halide(const std::vector<CaseResult> &cases) {
    double log_sum = 0;
    int n = 0;
    for (const CaseResult &c : cases) {
        const Entry *h = c.find("halide");
        if (!h) continue;
        log_sum += std::log(c.entries[0].timing.best() / h->timing.best());
        n++;
    }
    return n ? std::exp(log_sum / n) : 0;
}

std::string chart_svg(const std::vector<CaseResult> &cases, const Roofline &roof) {
    // One group of bars per case: each system's time / Kiln's time (Kiln = 1,
    // shorter is faster), clipped at 4x; a line marks 1.
    const int bar_h = 14, label_w = 360, plot_w = 480, scale_max = 4;
    int rows = 0;
    for (const CaseResult &c : cases) rows += (int)c.entries.size() + 1;
    const int height = 60 + rows * bar_h;
    std::ostringstream s;
    s << "<svg xmlns='http://www.w3.org/2000/svg' width='" << label_w + plot_w + 80 << "' height='" << height
      << "' font-family='sans-serif' font-size='11'>\n";
    s << "<text x='8' y='18' font-size='14'>Kiln bench: time relative to Kiln (shorter is faster); roofline "
      << std::lround(roof.bandwidth_gbps) << " GB/s, " << std::lround(roof.peak_gflops) << " GFLOP/s</text>\n";
    int y = 40;
    const int x1 = label_w + plot_w / scale_max;
    s << "<line x1='" << x1 << "' y1='30' x2='" << x1 << "' y2='" << height - 10 << "' stroke='#888'/>\n";
    for (const CaseResult &c : cases) {
        s << "<text x='8' y='" << y + 10 << "' font-weight='bold'>" << kiln::html_escape(c.name) << "</text>\n";
        y += bar_h;
        const double kiln_ms = c.entries[0].timing.best();
        for (const Entry &e : c.entries) {
            if (!e.failure.empty()) {
                s << "<text x='24' y='" << y + 10 << "'>" << kiln::html_escape(e.system + ": " + e.failure)
                  << "</text>\n";
                y += bar_h;
                continue;
            }
            const double r = e.timing.best() / kiln_ms;
            const int w = (int)std::lround(std::min(r, (double)scale_max) / scale_max * plot_w);
            const char *colour = e.system == "kiln" ? "#d9480f" : e.system == "halide" ? "#1c7ed6" : "#868e96";
            s << "<text x='24' y='" << y + 10 << "'>" << kiln::html_escape(e.system) << "</text>";
            s << "<rect x='" << label_w << "' y='" << y + 2 << "' width='" << w << "' height='" << bar_h - 4
              << "' fill='" << colour << "'/>";
            char label[32];
            std::snprintf(label, sizeof label, "%.2fx (%.2f ms)", r, e.timing.best());
            s << "<text x='" << label_w + w + 4 << "' y='" << y + 10 << "'>" << label << "</text>\n";
            y += bar_h;
        }
    }
    s << "</svg>\n";
    return s.str();
}

double max_rel_err(const float *a, const float *b, size_t n) {
    double range = 0;
    for (size_t i = 0; i < n; i++) range = std::max(range, (double)std::fabs(b[i]));
    const double floor = std::max(1e-2 * range, 1e-30);
    double m = 0;
    for (size_t i = 0; i < n; i++) {
        double d = std::fabs((double)a[i] - (double)b[i]) / std::max((double)std::fabs(b[i]), floor);
        if (!(d <= m)) m = d;  // NaN propagates as a failure
    }
    return m;
}

}  // namespace kiln_bench
