// autoschedule() for a tile-NPU target (NpuSearch.h): a greedy search over
// the schedules the NPU's code generator takes, each costed from its
// instruction stream (NpuCost.h) and, with autotune, simulated.
//
//   row_max(y) = maximum(input(r, y)); exps(x, y) = exp(input(x, y) - row_max(y)); ...
//     ->  output: bound(x, 0, 1024) split(y, yo, yi, 8) double_buffer() parallel(yo)
//         row_max: compute_at(output, yo) double_buffer()
//         exps: compute_at(output, yo) double_buffer()
//         row_sum: compute_at(output, yo) double_buffer()
//
// The search space, in the order the search decides it:
//   1. the output's tiles: whole rows in strips of 1..128 rows (bound(x)
//      to the estimated width) when a Func reduces along a row or is a
//      matrix product, else 2-D tiles of 64..256 columns by 8..64 rows,
//      with every other Func computed per tile (a boundary condition, or
//      a Func the NPU's passes refuse to compute per tile, inlined); for a
//      matrix product C(x, y) += A(k, y) * B(x, k), also column panels of
//      128 or 256 columns in tiles of 32 or 64 rows, the panels outermost,
//      K whole or split into slices of 64 or 128 accumulated in L0C, and
//      B's panel staged in L1 once per panel (B.in(C) at xo) or not;
//   2. per Func without updates, consumers first: computed per tile (its
//      own UB buffer) or inlined into its consumers' instructions;
//   3. double_buffer() on the tile Funcs and the output, or not;
//   4. the tile loop across the machine's cores (parallel), or not;
//   4b. software_pipeline() on one Func of the tile loop's body (with the
//      double_buffer() its second copies need), or not: the rotated
//      kernel is costed like any (NpuCost.h);
//   5. the tiles again, with what 2-4b chose.
// A matrix product (f += a * b over an RDom) is computed per tile in L0C
// (store_in(L0C)). A schedule the NPU's passes refuse (buffers over UB,
// a form with no instructions) is listed as not possible with the reason.
#include "NpuSearch.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>

#include "Autotune.h"
#include "CostModel.h"
#include "Explain.h"
#include "SearchClock.h"
#include "NpuCost.h"
#include "Snapshot.h"
#include "analysis/ConcreteSizes.h"
#include "codegen/NpuKernel.h"
#include "driver/NpuReport.h"
#include "ir/Error.h"
#include "ir/IRVisitor.h"
#include "ir/Substitute.h"
#include "lower/RealizationOrder.h"

namespace kiln {
namespace internal {

namespace {

// f += a * b over an RDom (the update adds to f's own value): the matrix unit's form.
bool is_matrix_product(const FunctionContents &f) {
    if (f.updates.size() != 1 || f.args.size() != 2 || f.updates[0].values.size() != 1) return false;
    const Add *add = f.updates[0].values[0].as<Add>();
    if (!add) return false;
    const Call *self = add->a.as<Call>() ? add->a.as<Call>() : add->b.as<Call>();
    const Expr &other = add->a.as<Call>() == self ? add->b : add->a;
    return self && self->name == f.name && other.as<Mul>();
}

// The Funcs and images called in e whose arguments use `along` and not
// `across` (the product's own value excluded).
class OperandsAlong : public IRVisitor {
public:
    OperandsAlong(const std::string &self, const std::string &along, const std::string &across)
        : self(self), along(along), across(across) {}
    std::set<std::string> names;

private:
    const std::string &self, &along, &across;
    void visit(const Call *op) override {
        IRVisitor::visit(op);
        if ((op->call_type != Call::Image && op->call_type != Call::Func) || op->name == self) return;
        bool uses_along = false, uses_across = false;
        for (const Expr &a : op->args) uses_along |= expr_uses_var(a, along), uses_across |= expr_uses_var(a, across);
        if (uses_along && !uses_across) names.insert(op->name);
    }
};

// A matrix product C(x, y) += A(k, y) * B(x, k) the output's tiles can
// take in column panels: its pure Vars, its RVar, and the input read along
// its columns (B), which a panel stages in L1 once for all its row tiles.
struct MatrixPanels {
    std::string func, x, y, k, operand;
    std::string slice;  // the prefix of the k-slice loops' names
};

struct NpuState {
    int tw = 0, th = 0;                 // tiles tw x th; tw == 0: strips of th whole rows
    std::set<std::string> inlined;
    bool double_buffer = true, parallel = true;
    // Column panels of a matrix product (tw x th tiles, the panels
    // outermost): the product's K split into slices of ks (0: not split),
    // its column operand staged in L1 per panel (l1).
    bool panels = false, l1 = false;
    int ks = 0;
    // software_pipeline() on this Func (the first of the tile loop body's
    // second stage; empty: none), which needs double_buffer().
    std::string pipelined;

    std::string tiles() const {
        if (panels)
            return "panels of " + std::to_string(tw) + " columns in tiles of " + std::to_string(th) + " rows" +
                   (ks ? ", K in slices of " + std::to_string(ks) : "") + (l1 ? ", the panel's operand in L1" : "");
        return tw ? "tiles " + std::to_string(tw) + "x" + std::to_string(th)
                  : "strips of " + std::to_string(th) + " row" + (th > 1 ? "s" : "");
    }
};

struct NpuEvaluation {
    bool legal = false;
    std::string error;
    NpuCostEstimate estimate;
    CostTerms cost;
};

// The estimate as the autoscheduler's terms, in ns at a nominal 1 GHz
// (1 ns = 1 cycle): the busiest compute pipe, then the busiest DMA pipe's
// excess, then the rest (latencies, flags, trips that do not overlap).
CostTerms terms(const NpuCostEstimate &e) {
    auto busy = [&](const char *p) { return e.busy.count(p) ? (double)e.busy.at(p) : 0.0; };
    CostTerms c;
    c.compute = std::min(e.cycles, std::max(busy("V"), busy("M")));
    double dma = std::max({busy("MTE2"), busy("MTE3"), busy("MTE1"), busy("FIX")});
    c.memory = std::min(e.cycles - c.compute, std::max(0.0, dma - c.compute));
    c.overhead = e.cycles - c.compute - c.memory;
    return c;
}

class NpuSearch {
public:
    NpuSearch(const Pipeline &p, const Target &t, const std::map<std::string, std::vector<int>> &estimates,
              const AutoscheduleOptions &o)
        : p(p), t(t), o(o), snapshot(p), clock(o.time_limit_is_cpu) {
        for (const Func &f : p.outputs()) outs.push_back(f.contents());
        out = outs[0]->name;
        sizes = estimates;
        for (const auto &f : outs)
            if (!sizes.count(f->name)) sizes[f->name] = std::vector<int>(f->args.size(), 1024);
        cs = concrete_sizes(outs, sizes, "autoschedule");
        Environment env = find_environment(outs);
        const Environment user = find_user_functions(outs);
        for (const std::string &name : realization_order({out}, env)) {
            auto it = user.find(name);
            if (name == out || it == user.end() || it->second->is_image_wrapper) continue;
            const auto &f = it->second;
            funcs.push_back(name);
            if (is_matrix_product(*f)) {
                matrix.insert(name);
                panel_candidate(*f);
            }
            if (!f->updates.empty()) updates.insert(name);
            if (!f->boundary_condition.empty()) boundary.insert(name);
            if (!f->updates.empty() || f->args.size() < 2) rows = true;
        }
        std::reverse(funcs.begin(), funcs.end());  // consumers first
        result.time_limit_ms = o.time_limit_for(funcs.size() + 1);  // and the output
    }

    AutoscheduleResult run() {
        const auto &o0 = *outs[0];
        if (outs.size() != 1 || o0.args.size() != 2 || !o0.updates.empty()) {
            std::string why = outs.size() != 1 ? "the pipeline has " + std::to_string(outs.size()) + " outputs"
                                               : o0.args.size() != 2 ? "its output " + out + " is not 2-D"
                                                                     : "its output " + out + " has update definitions";
            return fallback("the NPU search tiles one 2-D output without updates, but " + why);
        }
        // 1. The output's tiles, double-buffered, across cores, with every
        // Func per tile but the boundary conditions (the DMA replicates
        // edges as it loads); while no shape compiles and the NPU's passes
        // name a Func without updates in refusing them, with that Func
        // inlined; then the same single-buffered.
        NpuState s, init;
        init.inlined = boundary;
        bool found = false;
        for (bool db : {true, false}) {
            for (size_t tries = 0; !found && tries <= funcs.size(); tries++) {
                std::vector<NpuState> states = tile_shapes(init, db);
                found = decide(out, "tiles", states, [&](const NpuState &c) { return c.tiles() + (db ? "" : ", single-buffered"); }, s);
                // A Func the NPU cannot compute in a tile of its own (a
                // transposed read): inlined into its consumer, and again.
                const auto [f, refusal] = refused_func(states);
                if (found || f.empty()) break;
                init.inlined.insert(f);
                result.skipped.push_back(f + " is inlined: " + refusal);
            }
            if (found) break;
        }
        if (!found) return fallback("no tile shape of the output compiles for the NPU (first: " + first_error + ")");
        // 2. Each Func without updates: per tile or inlined, consumers first.
        for (const std::string &f : funcs) {
            if (updates.count(f) || !budget_left()) continue;
            NpuState at = s, in = s;
            at.inlined.erase(f);
            in.inlined.insert(f);
            decide(f, "place", {at, in}, [&](const NpuState &c) { return c.inlined.count(f) ? "inline" : at_text(); }, s);
        }
        // 3. Double buffering, 4. cores.
        if (budget_left()) {
            NpuState on = s, off = s;
            on.double_buffer = true, off.double_buffer = false;
            decide(out, "double_buffer", {on, off},
                   [](const NpuState &c) { return c.double_buffer ? "double_buffer()" : "single-buffered"; }, s);
        }
        if (budget_left()) {
            NpuState on = s, off = s;
            on.parallel = true, off.parallel = false;
            decide(out, "cores", {on, off}, [&](const NpuState &c) { return c.parallel ? "parallel(" + outer(c) + ")" : "one core"; }, s);
        }
        // 4b. Software pipelining: the tile loop's body rotated at one of its
        // Funcs (the next tile's first stage before this tile's second), with
        // the two copies it needs, or not.
        if (budget_left()) {
            std::vector<NpuState> states{s};
            for (const std::string &f : pipeline_sites(s)) {
                NpuState on = s;
                on.double_buffer = true, on.pipelined = f;
                states.push_back(on);
            }
            if (states.size() > 1)
                decide(out, "software_pipeline", states, [](const NpuState &c) {
                    return c.pipelined.empty() ? std::string("not pipelined") : "software_pipeline() on " + c.pipelined;
                }, s);
        }
        // 5. The tiles again, with the placement, buffering and cores chosen
        // (a shape chosen for 8 cores may not be the best for one).
        if (budget_left()) {
            const bool db = s.double_buffer;
            decide(out, "tiles", tile_shapes(s, db), [&](const NpuState &c) { return c.tiles() + (db ? "" : ", single-buffered"); }, s);
        }
        if (o.autotune > 0) s = autotune_state(s);
        result.predicted = evaluated.at(render(s)).cost;
        result.schedule = ScheduleFile::parse(render(s), "autoschedule");
        result.schedule_text = render(s, true);
        snapshot.restore();
        result.schedule.apply(p, t);
        finish();
        return result;
    }

private:
    const Pipeline &p;
    const Target &t;
    const AutoscheduleOptions &o;
    Snapshot snapshot;
    SearchClock clock;
    std::vector<std::shared_ptr<FunctionContents>> outs;
    std::string out;
    std::map<std::string, std::vector<int>> sizes;
    ConcreteSizes cs;
    std::vector<std::string> funcs;        // not the output, consumers first
    std::set<std::string> matrix, updates, boundary;
    bool rows = false;                     // strips of whole rows (a row reduction or a matrix product)
    AutoscheduleResult result;
    std::map<std::string, NpuEvaluation> evaluated;  // by schedule text
    std::map<std::string, NpuState> legal_states;
    std::map<std::string, std::string> why;          // stanza -> its comment
    std::map<std::string, size_t> decision_index;    // "kind:func" -> its place in result.decisions
    std::string first_error;
    std::vector<MatrixPanels> panel_products;        // see MatrixPanels; panels only with exactly one

    // Records f if its tiles can be column panels: one RVar (its slices'
    // loops are named after its RDom) and one Func or input read along
    // f's columns only.
    void panel_candidate(const FunctionContents &f) {
        MatrixPanels m{f.name, f.args[0], f.args[1], "", "", ""};
        int rvars = 0;
        for (const Dim &d : f.updates[0].schedule.dims)
            if (d.is_rvar) m.k = d.user_name, rvars++;
        OperandsAlong ops(m.func, m.x, m.y);
        ops.include(f.updates[0].values[0]);
        if (rvars != 1 || ops.names.size() != 1) return;
        // The slices' loops are named after the RDom: k.x -> ko, ki.
        m.slice = m.k.substr(0, m.k.find('.'));
        m.operand = *ops.names.begin();
        panel_products.push_back(m);
    }

    std::string yo() const { return outs[0]->args[1] + "o"; }
    // The outermost tile loop: across panels, else across row strips or tiles.
    std::string outer(const NpuState &s) const { return s.panels ? xo() : yo(); }
    std::string xo() const { return outs[0]->args[0] + "o"; }
    std::string at_text() const { return "compute_at(" + out + ", " + (rows ? yo() : xo()) + ")"; }

    // The first Func without updates, computed per tile, that the NPU's
    // passes name in refusing one of `states` ("NPU target: Func f ..."),
    // and that refusal; "" if none does.
    std::pair<std::string, std::string> refused_func(const std::vector<NpuState> &states) const {
        const std::string prefix = "NPU target: Func ";
        for (const NpuState &st : states) {
            auto it = evaluated.find(render(st));
            if (it == evaluated.end()) continue;
            const std::string &error = it->second.error;
            if (error.compare(0, prefix.size(), prefix) != 0) continue;
            const std::string f = error.substr(prefix.size(), error.find(' ', prefix.size()) - prefix.size());
            if (std::count(funcs.begin(), funcs.end(), f) && !updates.count(f) && !st.inlined.count(f)) return {f, error};
        }
        return {"", ""};
    }

    // The Funcs of the tile loop's body software_pipeline() may split it at:
    // every Func computed per tile (the first of them has no stage before
    // it, which the NPU's passes refuse) and the output.
    std::vector<std::string> pipeline_sites(const NpuState &s) const {
        std::vector<std::string> sites;
        for (auto it = funcs.rbegin(); it != funcs.rend(); ++it)
            if (!s.inlined.count(*it)) sites.push_back(*it);
        if (!sites.empty()) sites.erase(sites.begin());
        sites.push_back(out);
        return sites;
    }

    // The output's tile shapes to try, the rest of `s` kept.
    std::vector<NpuState> tile_shapes(NpuState s, bool double_buffer) const {
        const int w = sizes.at(out)[0], h = sizes.at(out)[1];
        std::vector<NpuState> states;
        s.double_buffer = double_buffer;
        s.panels = s.l1 = false, s.ks = 0;
        auto add = [&](int tw, int th) {
            s.tw = tw, s.th = th;
            states.push_back(s);
        };
        if (rows) {
            for (int r : {1, 2, 4, 8, 16, 32, 64, 128})
                if (r <= h) add(0, r);
            // A matrix product: column panels, its K whole or in slices,
            // its column operand from GM per tile or staged in L1 per panel
            // (what a product too large for one row strip needs).
            if (panel_products.size() == 1) {
                NpuState p = s;
                p.panels = true;
                for (int tw : {128, 256})
                    for (int th : {32, 64})
                        for (int ks : {0, 64, 128})
                            for (bool l1 : {true, false}) {
                                if (tw > w || th > h) continue;
                                p.tw = tw, p.th = th, p.ks = ks, p.l1 = l1;
                                states.push_back(p);
                            }
            }
        } else {
            for (int tw : {64, 128, 256})
                for (int th : {8, 16, 32, 64})
                    if (tw <= std::max(w, 64) && th <= std::max(h, 8)) add(tw, th);
        }
        return states;
    }

    bool budget_left() {
        if (!result.stopped_by.empty()) return false;
        if (o.max_states > 0 && result.states_evaluated >= o.max_states) result.stopped_by = "state budget";
        else if (clock.limit_ms() > result.time_limit_ms) result.stopped_by = "time limit";
        if (!result.stopped_by.empty())
            result.skipped.push_back("the search stopped at its " + result.stopped_by + "; later options kept their defaults");
        return result.stopped_by.empty();
    }

    std::string render(const NpuState &s, bool comments = false) const {
        const std::string &x = outs[0]->args[0], &y = outs[0]->args[1];
        std::ostringstream os;
        auto comment = [&](const std::string &key) {
            auto it = why.find(key);
            if (comments && it != why.end()) os << "# " << key.substr(key.find(':') + 1) << ": " << it->second << "\n";
        };
        for (const char *k : {"tiles:", "double_buffer:", "cores:", "software_pipeline:"}) comment(k + out);
        os << out << ":";
        if (s.tw) os << " tile(" << x << ", " << y << ", " << xo() << ", " << yo() << ", " << x << "i, " << y << "i, " << s.tw
                     << ", " << s.th << ")";
        else os << " bound(" << x << ", 0, " << sizes.at(out)[0] << ") split(" << y << ", " << yo() << ", " << y << "i, " << s.th << ")";
        if (s.panels) os << " reorder(" << x << "i, " << y << "i, " << yo() << ", " << xo() << ")";
        if (s.double_buffer) os << " double_buffer()";
        if (s.parallel) os << " parallel(" << outer(s) << ")";
        if (s.pipelined == out) os << " software_pipeline()";
        os << "\n";
        if (s.panels && s.l1) {
            const MatrixPanels &m = panel_products[0];
            os << m.operand << ".in(" << m.func << "): compute_at(" << out << ", " << xo() << ") store_in(L1)\n";
        }
        for (auto it = funcs.rbegin(); it != funcs.rend(); ++it) {
            comment("place:" + *it);
            if (s.inlined.count(*it)) continue;
            os << *it << ": " << at_text() << (matrix.count(*it) ? " store_in(L0C)" : "")
               << (s.double_buffer ? " double_buffer()" : "") << (s.pipelined == *it ? " software_pipeline()" : "")
               << "\n";
            if (s.panels && s.ks && *it == panel_products[0].func) {
                const MatrixPanels &m = panel_products[0];
                os << m.func << ".update(0): split(" << m.k << ", " << m.slice << "o, " << m.slice << "i, " << s.ks
                   << ") reorder(" << m.slice << "i, " << m.x << ", " << m.y << ", " << m.slice << "o)\n";
            }
        }
        return os.str();
    }

    NpuEvaluation evaluate(const NpuState &s) {
        const std::string text = render(s);
        auto seen = evaluated.find(text);
        if (seen != evaluated.end()) return seen->second;
        NpuEvaluation e;
        result.states_evaluated++;
        snapshot.restore();
        try {
            ScheduleFile::parse(text, "autoschedule").apply(p, t);
            e.estimate = npu_predict(outs, t, cs.values);
            e.cost = terms(e.estimate);
            e.legal = true;
        } catch (const std::exception &ex) {
            std::string msg = ex.what();
            e.error = msg.substr(0, msg.find('\n'));
            if (first_error.empty()) first_error = e.error;
        }
        snapshot.restore();
        evaluated[text] = e;
        if (e.legal) legal_states.emplace(text, s);
        return e;
    }

    // Keeps the cheapest legal state of `states` in s; false if none is legal.
    template <typename Name>
    bool decide(const std::string &func, const std::string &kind, const std::vector<NpuState> &states, Name name,
                NpuState &s) {
        AutoscheduleDecision d;
        d.func = func;
        int best = -1;
        for (const NpuState &c : states) {
            if (!budget_left() && best >= 0) break;
            NpuEvaluation e = evaluate(c);
            d.alternatives.push_back({name(c), e.legal, e.cost, e.legal ? e.estimate.to_string() : "not possible: " + e.error});
            if (e.legal && (best < 0 || e.cost.total() < d.alternatives[best].cost.total())) best = (int)d.alternatives.size() - 1;
        }
        if (best < 0) return false;
        d.chosen = d.alternatives[best].option;
        const AutoscheduleAlternative *next = nullptr;
        for (size_t i = 0; i < d.alternatives.size(); i++)
            if ((int)i != best && d.alternatives[i].legal && (!next || d.alternatives[i].cost.total() < next->cost.total()))
                next = &d.alternatives[i];
        char line[300];
        const double cycles = d.alternatives[best].cost.total();
        if (next)
            std::snprintf(line, sizeof line, "predicted %.0f cycles; next best %s: %.0f cycles (+%.0f%%)", cycles,
                          next->option.c_str(), next->cost.total(), 100 * (next->cost.total() - cycles) / std::max(1.0, cycles));
        else
            std::snprintf(line, sizeof line, "predicted %.0f cycles; the only option that compiles for the NPU", cycles);
        d.reason = line;
        why[kind + ":" + func] = d.chosen + "; " + d.reason;
        s = states[best];
        // A decision taken again replaces the first.
        auto [at, first] = decision_index.emplace(kind + ":" + func, result.decisions.size());
        if (first) result.decisions.push_back(d);
        else result.decisions[at->second] = d;
        return true;
    }

    // Autotuning: the model's choice and the next best schedules by
    // predicted cycles, simulated; the fewest simulated cycles win.
    NpuState autotune_state(const NpuState &chosen) {
        const std::string first = render(chosen);
        std::vector<std::pair<double, std::string>> ranked;
        for (const auto &[text, e] : evaluated)
            if (e.legal && text != first) ranked.push_back({e.cost.total(), text});
        std::stable_sort(ranked.begin(), ranked.end(), [](const auto &a, const auto &b) { return a.first < b.first; });
        std::vector<AutotuneCandidate> c{{first, evaluated.at(first).cost}};
        for (size_t i = 0; i < ranked.size() && (int)c.size() < o.autotune; i++)
            c.push_back({ranked[i].second, evaluated.at(ranked[i].second).cost});
        auto measure = o.measure ? o.measure : [this](const Pipeline &q) { return simulated_ms(q, t, cs.sizes); };
        const size_t best = autotune(p, t, snapshot, c, measure, result);
        if (best == 0) return chosen;
        char ran[200];
        std::snprintf(ran, sizeof ran, "autotune: candidate %zu simulated fastest (%.0f cycles; the model's choice %s)",
                      best + 1, result.autotuned[best].measured_ms * 1e6,
                      result.autotuned[0].error.empty()
                          ? (std::to_string((long long)(result.autotuned[0].measured_ms * 1e6)) + " cycles").c_str()
                          : "did not run");
        why["tiles:" + out] = legal_states.at(c[best].schedule).tiles() + "; " + ran;
        return legal_states.at(c[best].schedule);
    }

    // On the NPU the default schedule (every Func inlined, no tiles) never
    // compiles, so a pipeline the search cannot schedule is an error.
    [[noreturn]] AutoscheduleResult fallback(const std::string &why_not) {
        snapshot.restore();
        user_error << "autoschedule: no schedule of " << out << " that the search tries compiles for the NPU: "
                   << why_not << ". Write a schedule by hand (docs/npu.md, \"Scheduling for the NPU\"), or "
                   << "autoschedule it for the host";
        std::abort();
    }

    void finish() {
        result.search_ms = clock.wall_ms();
        explain(result, out, t, sizes, o);
    }
};

}  // namespace

double simulated_ms(const Pipeline &p, const Target &t, const std::map<std::string, std::vector<int>> &sizes) {
    NpuReportFigures f = npu_report_figures(p, "kiln_autotune", p.infer_arguments(), sizes, t, 0);
    return nlohmann::json::parse(f.json)["cycles"].get<double>() / 1e6;
}

std::string npu_machine_text() {
    const npu::Machine m = npu_target_machine();
    std::string s = "NPU " + m.name + ", " + std::to_string(m.cores) + " cores";
    for (npu::Mem mem : {npu::Mem::UB, npu::Mem::L1, npu::Mem::L0A, npu::Mem::L0B, npu::Mem::L0C})
        s += ", " + std::string(npu::mem_name(mem)) + " " + kib((int64_t)m.capacity(mem));
    return s + "; times are cycles of its cost rules, shown as ns (1 cycle = 1 ns)";
}

AutoscheduleResult npu_autoschedule(const Pipeline &p, const Target &t,
                                    const std::map<std::string, std::vector<int>> &estimates,
                                    const AutoscheduleOptions &o) {
    return NpuSearch(p, t, estimates, o).run();
}

}  // namespace internal
}  // namespace kiln
