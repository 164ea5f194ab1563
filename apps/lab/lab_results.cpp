// kiln-lab's report of a run: the table on stdout and the files in --out.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <limits>
#include <nlohmann/json.hpp>
#include <stdexcept>

#include "lab.h"
#include "lab_buffers.h"
#include "lab_chart.h"
#include "png_io.h"

namespace kiln_lab {

namespace {

namespace fs = std::filesystem;
using Halide::Runtime::Buffer;

std::string bytes_text(int64_t b) {
    char s[32];
    if (b < 1000) std::snprintf(s, sizeof(s), "%lld B", (long long)b);
    else if (b < 1000 * 1000) std::snprintf(s, sizeof(s), "%.1f KB", b / 1e3);
    else std::snprintf(s, sizeof(s), "%.2f MB", b / 1e6);
    return s;
}

std::string fixed(double v, int decimals) {
    char s[32];
    std::snprintf(s, sizeof(s), "%.*f", decimals, v);
    return s;
}

// Among the user's stored Funcs: an inlined Func's factor counts evaluations
// at its uses, and a boundary condition's Func is Kiln's, not the user's.
const kiln::FuncReport *worst_recompute(const kiln::PipelineReport &r) {
    const kiln::FuncReport *worst = nullptr;
    for (const auto &f : r.funcs)
        if (!f.inlined && f.boundary_condition.empty() && (!worst || f.recompute > worst->recompute)) worst = &f;
    return worst;
}

int64_t peak_intermediate(const kiln::PipelineReport &r) {
    int64_t peak = 0;
    for (const auto &f : r.funcs)
        if (!f.is_output) peak = std::max(peak, f.allocation_bytes);
    return peak;
}

// The output as a float image in [0, 1] for a PNG: integers over their full
// scale; floats as they are when in [0, 1], else stretched from [lo, hi]
// (the reference's range, so that every schedule's image compares).
struct Normalization {
    double lo = 0, hi = 1;
    bool stretched = false;
};

Normalization normalization(const Buffer<const void> &out) {
    Normalization n;
    if (out.type().code != halide_type_float && out.type().code != halide_type_bfloat) {
        n.hi = full_scale(out.type());
        return n;
    }
    Buffer<double, 3> d = to_double(out);
    double lo = std::numeric_limits<double>::infinity(), hi = -lo;
    d.for_each_element([&](int x, int y, int c) {
        if (std::isfinite(d(x, y, c))) lo = std::min(lo, d(x, y, c)), hi = std::max(hi, d(x, y, c));
    });
    if (lo < -1e-6 || hi > 1 + 1e-6) n = {lo, hi > lo ? hi : lo + 1, true};
    return n;
}

void save_output_png(const std::string &path, const Buffer<const void> &out, const Normalization &n, int bits) {
    Buffer<double, 3> d = to_double(out);
    if (d.channels() > 4) return;
    Buffer<float, 3> f(d.width(), d.height(), d.channels());
    f.for_each_element([&](int x, int y, int c) { f(x, y, c) = (float)((d(x, y, c) - n.lo) / (n.hi - n.lo)); });
    kiln_apps::save_png(path, kiln_apps::from_float(f, bits));
}

}  // namespace

double max_abs_diff(const Buffer<const void> &a, const Buffer<const void> &b) {
    Buffer<double, 3> da = to_double(a), db = to_double(b);
    double m = 0;
    da.for_each_element([&](int x, int y, int c) {
        double u = da(x, y, c), v = db(x, y, c);
        if (std::isnan(u) || std::isnan(v)) {
            if (std::isnan(u) != std::isnan(v)) m = std::numeric_limits<double>::infinity();
        } else {
            m = std::max(m, std::fabs(u - v));
        }
    });
    return m;
}

// The table: one row per schedule; speedups against the reference (the
// first schedule that ran).
std::string results_table(const std::vector<Outcome> &results, const Outcome &ref, const std::string &time_label) {
    std::vector<std::vector<std::string>> rows = {{"schedule", "first run ms", time_label, "speedup", "model ms",
                                                   "memory MB", "saved MB", "peak intermediate", "worst recompute",
                                                   "max diff"}};
    for (const Outcome &r : results) {
        if (!r.error.empty()) {
            rows.push_back({r.name, "failed", "-", "-", "-", "-", "-", "-", "-", "-"});
            continue;
        }
        const kiln::FuncReport *w = worst_recompute(r.report);
        double diff = 0;
        for (double d : r.max_diff) diff = std::max(diff, d);
        char diff_text[32];
        std::snprintf(diff_text, sizeof(diff_text), "%.3g", diff);
        rows.push_back({r.name, fixed(r.first_ms, 1), fixed(r.best_ms, 3), fixed(ref.best_ms / r.best_ms, 2) + "x",
                        r.predicted_ms > 0 ? fixed(r.predicted_ms, 3) : "-", fixed(r.report.memory_bytes / 1e6, 2), fixed(r.report.bytes_saved() / 1e6, 2),
                        bytes_text(peak_intermediate(r.report)),
                        w ? w->name + " " + fixed(w->recompute, 2) + "x" : "-", diff_text});
    }
    std::vector<size_t> width(rows[0].size(), 0);
    for (const auto &row : rows)
        for (size_t c = 0; c < row.size(); c++) width[c] = std::max(width[c], row[c].size());
    std::string out;
    for (const auto &row : rows) {
        for (size_t c = 0; c < row.size(); c++) {
            // The schedule name left-aligned, figures right-aligned.
            std::string pad(width[c] - row[c].size(), ' ');
            out += (c == 0 ? row[c] + pad : pad + row[c]) + (c + 1 < row.size() ? "  " : "\n");
        }
    }
    return out;
}

double rank_correlation(const std::vector<Outcome> &results) {
    std::vector<std::pair<double, double>> pairs;  // (predicted, measured)
    for (const Outcome &r : results)
        if (r.error.empty() && r.predicted_ms > 0) pairs.push_back({r.predicted_ms, r.best_ms});
    return rank_correlation(std::move(pairs));
}

double rank_correlation(std::vector<std::pair<double, double>> pairs) {
    const size_t n = pairs.size();
    if (n < 3) return std::nan("");
    // Ranks from 0, values within a millionth of each other tied at their
    // mean rank (the model often predicts the same time for schedules
    // that differ only in what it does not see).
    auto ranks = [&](bool second) {
        auto value = [&](size_t i) { return second ? pairs[i].second : pairs[i].first; };
        std::vector<size_t> idx(n);
        for (size_t i = 0; i < n; i++) idx[i] = i;
        std::sort(idx.begin(), idx.end(), [&](size_t a, size_t b) { return value(a) < value(b); });
        std::vector<double> rank(n);
        for (size_t lo = 0, hi; lo < n; lo = hi) {
            for (hi = lo + 1; hi < n && value(idx[hi]) - value(idx[hi - 1]) <= 1e-6 * std::fabs(value(idx[hi])); hi++) {
            }
            for (size_t k = lo; k < hi; k++) rank[idx[k]] = (lo + hi - 1) / 2.0;
        }
        return rank;
    };
    // Pearson's correlation of the ranks (Spearman's rho, ties included).
    std::vector<double> a = ranks(false), b = ranks(true);
    const double mean = (n - 1) / 2.0;
    double ab = 0, aa = 0, bb = 0;
    for (size_t i = 0; i < n; i++) {
        ab += (a[i] - mean) * (b[i] - mean);
        aa += (a[i] - mean) * (a[i] - mean);
        bb += (b[i] - mean) * (b[i] - mean);
    }
    return aa > 0 && bb > 0 ? ab / std::sqrt(aa * bb) : std::nan("");
}

void write_file(const std::string &path, const std::string &text) {
    std::ofstream f(path);
    f << text;
    if (!f) throw std::runtime_error("cannot write " + path);
}

// report.json, chart.svg and, for a PNG input, the output images.
void write_results(const Options &o, const Setup &s, const std::vector<Outcome> &results, const Outcome &ref,
                   const kiln::Target &target) {
    nlohmann::json j;
    j["generator"] = o.generator;
    j["input"] = s.description;
    j["params"] = o.params;
    j["target"] = target.to_string();
    j["runs"] = o.runs;
    j["clock"] = o.cpu_time ? "process cpu time" : "wall-clock time";
    // The model's rank correlations as printed (null: no ranking).
    auto rho = [](double r) { return std::isnan(r) ? nlohmann::json() : nlohmann::json(r); };
    j["rank_correlation"] = rho(rank_correlation(results));
    j["schedules"] = nlohmann::json::array();
    std::vector<ChartRow> chart;
    for (const Outcome &r : results) {
        if (!r.error.empty()) {
            j["schedules"].push_back({{"name", r.name}, {"file", r.file}, {"error", r.error}});
            continue;
        }
        const kiln::FuncReport *w = worst_recompute(r.report);
        auto autotuned_json = [](const Outcome &r) {
            nlohmann::json a = nlohmann::json::array();
            for (const auto &[predicted, measured] : r.autotuned)
                a.push_back({{"predicted_ms", predicted}, {"measured_ms", measured}});
            return a;
        };
        j["schedules"].push_back({{"name", r.name},
                                  {"file", r.file},
                                  {"first_run_ms", r.first_ms},
                                  {"best_ms", r.best_ms},
                                  {"predicted_ms", r.predicted_ms},
                                  {"autotuned", autotuned_json(r)},
                                  {"autotuned_rank_correlation", rho(rank_correlation(r.autotuned))},
                                  {"speedup", ref.best_ms / r.best_ms},
                                  {"memory_bytes", r.report.memory_bytes},
                                  {"bytes_saved", r.report.bytes_saved()},
                                  {"peak_intermediate_bytes", peak_intermediate(r.report)},
                                  {"worst_recompute", {{"func", w ? w->name : ""}, {"factor", w ? w->recompute : 0}}},
                                  {"max_abs_diff", r.max_diff},
                                  {"saved", r.saved},
                                  {"forward_ms", r.forward_ms},
                                  {"report", nlohmann::json::parse(r.report.to_json())}});
        chart.push_back({r.name, r.best_ms, r.report.memory_bytes / 1e6});
    }
    write_file((fs::path(o.out) / "report.json").string(), j.dump(2) + "\n");
    write_file((fs::path(o.out) / "chart.svg").string(),
               chart_svg("kiln-lab: " + o.generator + " on " + s.size + ", " + target.to_string(), chart));
    std::string written = "report.json, chart.svg, <schedule>.html";
    if (s.png_bits) {
        for (size_t k = 0; k < s.outputs.size(); k++) {
            Normalization n = normalization(ref.outputs[k]);
            if (n.stretched)
                std::printf("output '%s' is outside [0, 1] ([%g, %g]); its PNGs are stretched to that range\n",
                            s.outputs[k].name.c_str(), n.lo, n.hi);
            for (const Outcome &r : results) {
                if (!r.error.empty() || r.outputs[k].dimensions() > 3) continue;  // not an image
                std::string suffix = s.outputs.size() > 1 ? "_" + s.outputs[k].name : "";
                save_output_png((fs::path(o.out) / (r.name + suffix + ".png")).string(), r.outputs[k], n, s.png_bits);
            }
        }
        written += ", <schedule>.png";
    }
    std::printf("wrote %s in %s\n", written.c_str(), o.out.c_str());
}

}  // namespace kiln_lab
