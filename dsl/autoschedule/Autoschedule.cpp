// autoschedule() (kiln/Autoschedule.h): a greedy search over the schedule
// language's directives, each candidate lowered, counted and costed.
//
//   blur_x(x, y) = in(x-1, y) + in(x, y) + in(x+1, y)
//   blur_y(x, y) = blur_x(x, y-1) + blur_x(x, y) + blur_x(x, y+1)
//     ->  blur_y: split(y, yo, yi, 16) vectorize(x, natural_vector_size) parallel(yo)
//         blur_x: compute_at(blur_y, yi) store_at(blur_y, yo) vectorize(x, natural_vector_size)
//   (blur_x slides over the rows of each strip: computed once, stored in 3 rows)
#include <algorithm>
#include <chrono>
#include <functional>
#include <cstdio>
#include <set>
#include <sstream>

#include "Autotune.h"
#include "CandidateCost.h"
#include "CostModel.h"
#include "Explain.h"
#include "NpuSearch.h"
#include "SearchSpace.h"
#include "SearchClock.h"
#include "Snapshot.h"
#include "analysis/ConcreteSizes.h"
#include "ir/Error.h"
#include "kiln/Autoschedule.h"
#include "ir/Simplify.h"
#include "ir/SimplifyMemo.h"
#include "ir/Substitute.h"
#include "lower/BoundsInference.h"
#include "lower/Lower.h"

namespace kiln {

using namespace internal;

namespace {

struct Evaluation {
    bool legal = false;
    std::string error;
    PipelineCost cost;
};

class Autoscheduler {
public:
    Autoscheduler(const Pipeline &p, const Target &t, const std::map<std::string, std::vector<int>> &estimates,
                  const AutoscheduleOptions &o)
        : p(p), t(t), o(o), snapshot(p), clock(o.time_limit_is_cpu) {
        for (const Func &f : p.outputs()) {
            outs.push_back(f.contents());
            out_names.push_back(f.name());
        }
        sz = sizes_for(outs, estimates, "autoschedule");
        sizes = sz.given;
        env = find_environment(outs);
        PipelineFuncs funcs = analyze_funcs(outs, out_names, t);
        order = std::move(funcs.order);
        info = std::move(funcs.info);
        result.time_limit_ms = o.time_limit_for(order.size());
    }

    AutoscheduleResult run() {
        // The baseline: every Func at the root, untiled; its counts give
        // the extents and the recompute factors.
        State base;
        for (const std::string &f : order) {
            if (!info[f].output) base.place[f] = Place::Root;
            base.structure[f] = Structure();
            base.structure[f].bare = true;
        }
        Evaluation b = evaluate(base, &baseline);
        if (!b.legal) return fallback("the pipeline with every Func at the root does not lower: " + b.error);
        for (auto &[name, fi] : info) {
            auto it = baseline.funcs.find(name);
            if (it != baseline.funcs.end()) fi.extent = it->second.largest;
            if (fi.output) fi.extent.assign(sizes[name].begin(), sizes[name].end());
            fi.extent.resize(fi.args.size(), 1);
        }
        add_wrappers(info, env);
        for (auto &[name, fi] : info) fi.pack_stride = pack_stride(fi);
        for (const std::string &f : order)
            if (!info[f].exact_order_only.empty()) skip(info[f].exact_order_only);
        State s = base;
        for (const std::string &f : order)
            if (s.structure.count(f)) s.structure[f] = initial_structure(info[f]);

        std::set<std::string> changed = place_funcs(s);
        for (const std::string &g : tile_groups(s)) changed.insert(g);
        if (!changed.empty()) place_funcs(s, &changed);  // the Funcs whose groups have new loops
        // Last, the outputs other outputs read, in their readers' loops as
        // those now are (placed earlier, a row statistic in an output's rows
        // kept the output from the register blocks a matrix product in it
        // needs: attention_grad's forward pass); then the Funcs of the
        // groups they joined again, those computed in a moved output's own
        // loops among them (to_root).
        place_funcs(s, nullptr, /*outputs=*/true);
        std::set<std::string> joined;
        for (const std::string &f : order)
            if (info[f].output && s.group.count(f)) joined.insert(s.group.at(f));
        if (!joined.empty()) place_funcs(s, &joined);

        Evaluation final = evaluate(s);
        if (!final.legal) return fallback("the chosen schedule does not lower: " + final.error);
        if (o.autotune > 0) s = autotune_state(s);
        const PipelineCost &chosen = evaluated.at(writer.render(s)).cost;
        if (chosen.sampled)
            skip("exact counts of the chosen schedule: counting its loops took over " +
                 std::to_string(kiln_count_loop_visits) +
                 " visits, so the loops left were counted from their first iteration (the prediction is an "
                 "estimate)");
        result.predicted = chosen.total;
        result.schedule = ScheduleFile::parse(writer.render(s), "autoschedule");
        result.schedule_text = writer.render(s, &why);
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
    std::vector<std::string> out_names;
    Sizes sz;
    std::map<std::string, std::vector<int>> sizes;
    Environment env;
    std::vector<std::string> order;  // realization order: producers first
    std::map<std::string, FuncInfo> info;
    const ScheduleWriter writer{info, order, env};  // the schedule text of a State
    LoopCounts baseline;
    AutoscheduleResult result;
    std::map<std::string, std::string> why;  // "place:f", "loops:f" -> the .sched comment of f's decisions

    Evaluation evaluate(const State &s, LoopCounts *counts_out = nullptr) {
        const std::string text = writer.render(s);
        auto seen = evaluated.find(text);
        if (seen != evaluated.end() && !counts_out) return seen->second;  // the same schedule again
        Evaluation e;
        result.states_evaluated++;
        snapshot.restore();
        try {
            ScheduleFile::parse(text, "autoschedule").apply(p, t);
            std::map<std::string, std::string> outside;
            {
                SimplifyMemo::Use use(simplified);
                BoxMemo::Use boxes(touched);
                e.cost = cost_of_schedule(outs, out_names, t, sz, baseline, o.machine, counts_out, &outside, &counted);
            }
            // Past a buffer where the baseline is not (where it is, every
            // schedule is: the buffer sizes given are too small, or assumed).
            if (counts_out) outside_baseline = outside;  // the baseline
            for (const auto &[where, what] : outside)
                if (!outside_baseline.count(where)) user_error << what;
            e.legal = true;
        } catch (const std::exception &ex) {
            std::string msg = ex.what();
            e.error = msg.substr(0, msg.find('\n'));
        }
        snapshot.restore();
        evaluated[text] = e;
        if (e.legal) legal_states.emplace(text, s);
        return e;
    }
    std::map<std::string, Evaluation> evaluated;  // by schedule text
    // The candidates' lowerings simplify mostly the same bounds again.
    SimplifyMemo simplified;
    // And take most boxes of the same statements again.
    BoxMemo touched;
    // And most of their groups are counted as the last candidate's were.
    CountMemo counted;
    std::map<std::string, State> legal_states;     // the same, those that lower

    // AutoscheduleOptions::autotune: the model's choice and the schedules
    // evaluated next best by predicted cost run; the fastest is returned.
    // Its stanzas that differ from the model's choice say so.
    State autotune_state(const State &chosen) {
        const std::string first = writer.render(chosen);
        std::vector<std::pair<double, std::string>> ranked;  // ties: by text (the map's order)
        for (const auto &[text, e] : evaluated)
            if (e.legal && text != first) ranked.push_back({e.cost.total.total(), text});
        std::stable_sort(ranked.begin(), ranked.end(), [](const auto &a, const auto &b) { return a.first < b.first; });
        std::vector<AutotuneCandidate> c{{first, evaluated.at(first).cost.total}};
        for (size_t i = 0; i < ranked.size() && (int)c.size() < o.autotune; i++)
            c.push_back({ranked[i].second, evaluated.at(ranked[i].second).cost.total});
        auto measure = o.measure ? o.measure
                                 : [this](const Pipeline &q) { return measure_on_random_inputs(q, t, sz.given); };
        const size_t best = autotune(p, t, snapshot, c, measure, result);
        if (best == 0) return chosen;
        const State &w = legal_states.at(c[best].schedule);
        const AutotuneCandidate &model = result.autotuned[0];
        char ran[200], model_ms[40] = "did not run";
        if (model.error.empty()) std::snprintf(model_ms, sizeof(model_ms), "%.3f ms", model.measured_ms);
        std::snprintf(ran, sizeof(ran), "; autotune: candidate %zu ran fastest (%.3f ms; the model's choice %s)",
                      best + 1, result.autotuned[best].measured_ms, model_ms);
        for (const std::string &f : order)
            for (const char *kind : decision_kinds) {
                std::string was = decision_of(chosen, f, kind), is = decision_of(w, f, kind);
                if (was != is) why[kind + f] = is + ran + ", the cost model chose " + (was.empty() ? "nothing" : was);
            }
        return w;
    }
    // What state s decided for Func f of a kind of decision ("" if none).
    std::string decision_of(const State &s, const std::string &f, const std::string &kind) const {
        if (kind == "place:") return !s.place.count(f) ? "" : writer.option_name(s, f, s.place.at(f));
        if (kind == "loops:") return s.structure.count(f) ? s.structure.at(f).to_string() : "";
        if (kind == "packing:") return s.packed.count(f) ? "packed" : "";
        if (kind == "updates:") return !info.at(f).scatter ? "" : s.serial_updates.count(f) ? serial_updates : vector_updates;
        return info.at(f).rvar.empty() ? "" : s.rfactored.count(f) ? "rfactor(" + info.at(f).rvar + ")" : "serial reduction";
    }
    std::map<std::string, std::string> outside_baseline;  // outside_buffers of the baseline

    // The group root Funcs whose loops compute f's consumers.
    std::set<std::string> consumer_groups(const State &s, const std::string &f) const {
        std::set<std::string> groups;
        for (const std::string &c : info.at(f).consumers) {
            Place p = s.place_of(c);
            if (p == Place::Root) groups.insert(c);
            else if (p == Place::Inline) {
                auto g = consumer_groups(s, c);
                groups.insert(g.begin(), g.end());
            } else groups.insert(s.group.at(c));
        }
        return groups;
    }

    std::string note_for(const Evaluation &e, const std::string &f, Place p) const {
        if (!e.legal) return "not possible: " + e.error;
        auto it = e.cost.funcs.find(f);
        std::string note;
        if (p == Place::Inline || it == e.cost.funcs.end()) {
            note = "no storage; evaluated at every use";
        } else {
            const FuncCost &c = it->second;
            char s[200];
            std::string where = c.level == "DRAM"     ? "over L3 (" + kib(o.machine.l3_bytes) + "): DRAM"
                                : c.level == "output" ? "written to its buffer"
                                                      : "fits " + c.level;
            std::snprintf(s, sizeof(s), "recompute %.2fx; %s per realization, %s", c.recompute,
                          kib(c.footprint_bytes).c_str(), where.c_str());
            note = s;
        }
        // Vector loads whose lanes are not adjacent, wherever they are.
        for (const auto &[name, c] : e.cost.funcs) {
            if (c.gathers < 0.01) continue;
            char s[120];
            std::snprintf(s, sizeof(s), "; %s gathers %.2f loads per point lane by lane", name.c_str(), c.gathers);
            note += s;
        }
        // And vector stores whose lanes are not adjacent in memory.
        for (const auto &[name, c] : e.cost.funcs) {
            if (c.scatters < 0.01) continue;
            char s[120];
            std::snprintf(s, sizeof(s), "; %s scatters its vectors, %.0f stores each", name.c_str(), c.scatters);
            note += s;
        }
        // And loads whose stride leaves them few of a cache's sets.
        for (const auto &[name, c] : e.cost.funcs)
            for (const AliasedCost &a : c.aliased) note += "; " + name + " loads " + a.to_string();
        if (e.cost.sampled)
            note += "; an estimate: counting its loops took over " + std::to_string(kiln_count_loop_visits) +
                    " visits, and the loops left were counted from their first iteration";
        return note;
    }

    // Keep the cheapest legal alternative of d (for a placement or a loop
    // structure: `kind`); a later decision of the same kind replaces it.
    void decide(AutoscheduleDecision d, const std::vector<State> &states, State &s, const std::string &kind) {
        size_t best = 0;
        bool any = false;
        for (size_t i = 0; i < d.alternatives.size(); i++) {
            if (!d.alternatives[i].legal) continue;
            if (!any || d.alternatives[i].cost.total() < d.alternatives[best].cost.total()) best = i;
            any = true;
        }
        if (!any) return;  // keep s as it is (the caller's current state is legal)
        d.chosen = d.alternatives[best].option;
        d.reason = decision_reason(d, best);
        s = states[best];
        std::string key = kind + ":" + d.func;
        why[key] = d.chosen + "; " + d.reason;
        auto it = decision_index.find(key);
        if (it != decision_index.end()) {
            result.decisions[it->second] = d;
            return;
        }
        decision_index[key] = result.decisions.size();
        result.decisions.push_back(d);
    }
    std::map<std::string, size_t> decision_index;

    // Whether the search may evaluate another schedule: within its budget
    // of schedules and its time limit. The first limit reached is named in
    // `skipped`; later options keep their defaults.
    bool budget_left() {
        if (!result.stopped_by.empty()) return false;
        if (o.max_states > 0 && result.states_evaluated >= o.max_states) {
            result.stopped_by = "state budget";
            result.skipped.push_back("the search stopped at its budget of " + std::to_string(o.max_states) +
                                     " evaluated schedules; later options kept their defaults");
        } else if (clock.limit_ms() > result.time_limit_ms) {
            result.stopped_by = "time limit";
            result.skipped.push_back("the search stopped at its time limit (" + std::to_string((int)result.time_limit_ms) +
                                     (o.time_limit_is_cpu ? " ms of CPU time" : " ms") +
                                     "); later options kept their defaults");
        }
        return result.stopped_by.empty();
    }
    // A Func or group the search left to the default rule, named once.
    void skip(const std::string &what) {
        if (std::find(result.skipped.begin(), result.skipped.end(), what) == result.skipped.end())
            result.skipped.push_back(what);
    }

    // Places f in s: p, in group g unless p is Root or Inline. A Func that
    // leaves the root takes its loops with it, so the Funcs computed in
    // them (placed by an earlier pass) go back to the root with their own
    // loops; the caller places them again, after f.
    void place(State &s, const FuncInfo &f, Place p, const std::string &g) const {
        s.packed.erase(f.name);
        if (s.wrapped.erase(f.name)) {  // its wrapper goes; what was computed in the wrapper's loops goes back to the root
            s.place.erase(f.wrapper);
            s.group.erase(f.wrapper);
            s.structure.erase(f.wrapper);
            to_root(s, f.wrapper);
        }
        s.place[f.name] = p;
        if (f.output && p == Place::Root) s.place.erase(f.name);  // an output's default
        s.group.erase(f.name);
        if (p == Place::Inline) s.serial_updates.erase(f.name);
        if (p == Place::Root) {
            if (!s.structure.count(f.name)) s.structure[f.name] = initial_structure(f);
            return;
        }
        s.structure.erase(f.name);
        if (p != Place::Inline) s.group[f.name] = g;
        to_root(s, f.name);
    }
    // An output placed (by the outputs' pass of place_funcs) in group g
    // after the Funcs of its own group were placed: those (in `before`)
    // go with it, each at the same level of g's loops where g has one (a
    // statistic per row of the output it feeds, now per row of g), else
    // they stay at the root where place() put them. Costed without them,
    // the move would be weighed against passes of their own.
    void take_members(State &s, const State &before, const std::string &r, const std::string &g) const {
        for (const auto &[m, mg] : before.group) {
            if (mg != r || writer.loops_for(g, s.structure.at(g), before.place.at(m)).first.empty()) continue;
            s.place[m] = before.place.at(m);
            s.group[m] = g;
            s.structure.erase(m);
        }
    }
    // The Funcs computed in group root r's loops go to the root, each with
    // loops of its own.
    void to_root(State &s, const std::string &r) const {
        for (auto it = s.group.begin(); it != s.group.end();) {
            if (it->second != r) {
                ++it;
                continue;
            }
            s.place[it->first] = Place::Root;
            s.structure[it->first] = initial_structure(info.at(it->first));
            it = s.group.erase(it);
        }
    }

    // Consumers first: inline, in its consumers' group, or at the root.
    // With `outputs`, the outputs that other outputs read instead: at the
    // root, or in their readers' group when its root is an output (computed
    // at that output's loop and written to its own buffer there; not
    // sliding: an output's storage is its buffer, so it takes no store_at).
    // Lowering refuses the sites whose iterations do not cover its buffer,
    // which makes them illegal here.
    // With `only`, just the Funcs consumed in those groups.
    // Returns the groups whose loops a placement changed (a matrix product's
    // register blocks, the order of a group's blocks).
    std::set<std::string> place_funcs(State &s, const std::set<std::string> *only = nullptr, bool outputs = false) {
        std::set<std::string> changed;
        for (auto it = order.rbegin(); it != order.rend(); ++it) {
            const FuncInfo &f = info.at(*it);
            if (f.output != outputs || (f.output && f.consumers.empty())) continue;
            if (f.pointwise && !f.output) {
                s.place[f.name] = Place::Inline;
                s.group.erase(f.name);
                s.structure.erase(f.name);
                why["place:" + f.name] = "inline; read once, at the same point, by its only consumer " + f.consumers[0] +
                                         ": inlining adds no work and no storage";
                continue;
            }
            std::set<std::string> groups = consumer_groups(s, f.name);
            if (only && std::none_of(groups.begin(), groups.end(), [&](const std::string &g) { return only->count(g); }))
                continue;
            std::vector<Place> options;
            if (!f.updates && !f.output) options.push_back(Place::Inline);
            std::string g = groups.size() == 1 ? *groups.begin() : "";
            if (f.output && (g.empty() || !info.at(g).output)) continue;  // at the root
            // Per strip only where the group cannot slide (a sliding window
            // stores about as much and computes each point once), or where
            // f has updates: an update over a whole dimension (a recursive
            // filter down the columns) needs all of it in every window, so
            // its window does not slide but is computed again per row
            // (unless the strip's rows are those the updates run over,
            // FuncInfo::rows_reduced, or f's region does not follow the
            // strips: a table read at loaded values, the same in every one).
            // A strip of columns runs down all the rows.
            const bool strips_of_updates =
                f.updates && !g.empty() && ScheduleWriter::follows_loop(f, s.structure.at(g), Place::Outer) &&
                (!f.rows_reduced || s.structure.at(g).kind == Structure::Columns);
            if (!g.empty())
                for (Place p : {Place::Vector, Place::Inner, Place::Sliding, Place::Outer})
                    if (!writer.loops_for(g, s.structure.at(g), p).first.empty() &&
                        !((p == Place::Sliding || p == Place::Vector) && f.output) &&
                        !(p == Place::Outer && !strips_of_updates && !options.empty() && options.back() == Place::Sliding))
                        options.push_back(p);
            options.push_back(Place::Root);
            if (f.output && !budget_left()) continue;  // out of budget: an output stays at the root
            if (!budget_left()) {
                // Out of budget: sliding in its consumers' group, or per row
                // or tile, or at the root, without evaluating it. Per row or
                // tile only where its region follows the loop's dimension
                // (otherwise every iteration would compute all of it again)
                // and a strip holds enough of its rows (strip_rows).
                Place p = Place::Root;
                for (Place q : options)
                    if (((q == Place::Sliding && !f.updates) || (q == Place::Inner && p == Place::Root)) &&
                        ScheduleWriter::follows_loop(f, s.structure.at(g), q) && strip_rows(f, g, s.structure.at(g)))
                        p = q;
                place(s, f, p, g);
                why["place:" + f.name] = writer.option_name(s, f.name, p) + "; not evaluated (" + result.stopped_by + "): the default rule";
                skip(f.name + ": " + writer.option_name(s, f.name, p) + ", not evaluated: the default rule");
                continue;
            }
            AutoscheduleDecision d;
            d.func = f.name;
            std::vector<State> states;
            for (Place p : options) {
                State c = s;
                place(c, f, p, g);
                if (f.output && p != Place::Root) take_members(c, s, f.name, g);
                if (!budget_left()) break;
                Evaluation e = evaluate(c);
                d.alternatives.push_back({writer.option_name(c, f.name, p), e.legal, e.cost.total, note_for(e, f.name, p)});
                states.push_back(c);
            }
            // A matrix product: also per register block of its group, the
            // group's loops made register blocks to match. (These options
            // that change a group's loops are not offered to an output.)
            const FuncInfo *gi = g.empty() || f.output ? nullptr : &info.at(g);
            const int rows = block_rows(f);
            if (!f.matrix_rvar.empty() && f.block_root == g && gi && gi->args.size() >= 2 && gi->extent[0] >= 2 * gi->lanes &&
                gi->extent[1] >= rows) {
                for (bool rows_outer : {false, true}) {
                    State c = s;
                    place(c, f, Place::Inner, g);
                    c.structure[g] = {Structure::Blocks, 2, rows, false, rows_outer};
                    bool others = false;  // other Funcs in the group must have a level in the new loops
                    for (const auto &[m, mg] : c.group)
                        if (mg == g && m != f.name && writer.loops_for(g, c.structure[g], c.place.at(m)).first.empty()) others = true;
                    if (others || !budget_left()) continue;
                    Evaluation e = evaluate(c);
                    d.alternatives.push_back({writer.option_name(c, f.name, Place::Inner) + ", " + c.structure[g].to_string() + " of " + g,
                                              e.legal, e.cost.total, note_for(e, f.name, Place::Inner)});
                    states.push_back(c);
                }
            }
            // The group root of a matrix product's register blocks
            // (FuncInfo::block_root), placed before the product: also at the
            // root in register blocks with the product computed per block,
            // which its own two options (the product then at the root,
            // untiled) would never show.
            for (const auto &[m, mi] : info) {
                if (f.output || mi.matrix_rvar.empty() || mi.block_root != f.name || f.args.size() < 2 ||
                    f.extent[0] < 2 * f.lanes || f.extent[1] < block_rows(mi) || !s.place.count(m))
                    continue;
                for (bool rows_outer : {false, true}) {
                    if (!budget_left()) break;
                    State c = s;
                    place(c, f, Place::Root, "");
                    c.structure[f.name] = {Structure::Blocks, 2, block_rows(mi), false, rows_outer};
                    place(c, mi, Place::Inner, f.name);
                    Evaluation e = evaluate(c);
                    d.alternatives.push_back({writer.option_name(c, f.name, Place::Root) + ", " +
                                                  c.structure[f.name].to_string() + " with " + m + " per block",
                                              e.legal, e.cost.total, note_for(e, f.name, Place::Root)});
                    states.push_back(c);
                }
            }
            // In register blocks: also per row (or column) of blocks, the
            // group's blocks in the other order.
            if (!f.output && !g.empty() && s.structure.at(g).kind == Structure::Blocks && budget_left()) {
                State c = s;
                c.structure[g].rows_outer = !c.structure[g].rows_outer;
                place(c, f, Place::Outer, g);
                Evaluation e = evaluate(c);
                d.alternatives.push_back({writer.option_name(c, f.name, Place::Outer) + ", " + c.structure[g].to_string() + " of " + g,
                                          e.legal, e.cost.total, note_for(e, f.name, Place::Outer)});
                states.push_back(c);
            }
            if (!f.output && gi) column_strips(s, f, g, d, states);
            if (!f.wrapper.empty()) wrapped_options(s, f, g, d, states);
            if (!f.output) root_with_producers(s, f, d, states);
            std::map<std::string, Structure> before = s.structure;
            decide(d, states, s, "place");
            if (f.output && !s.structure.count(f.name)) why.erase("loops:" + f.name);  // no loops of its own now
            for (const auto &[r, st] : s.structure)
                if (before.count(r) && !st.same_loops(before.at(r))) changed.insert(r);
            if (f.output) continue;  // an output's updates keep their default form, as at the root
            if (!f.rvar.empty() && s.place.at(f.name) != Place::Inline && budget_left())
                either(s, f, &State::rfactored, "reduction", "serial reduction",
                       "rfactor(" + f.rvar + ") into natural_vector_size lanes");
            if (f.scatter && s.place.at(f.name) != Place::Inline && budget_left())
                either(s, f, &State::serial_updates, "updates", vector_updates, serial_updates);
            pack_option(s, f);
        }
        return changed;
    }

    // Whether a strip (or row of tiles) of group g holds at least 16 of
    // f's rows, by the extents of f and g at the root: the default rule's
    // test for computing f in g's strips. A Func of a coarser scale than
    // its consumers (a pyramid's levels: a strip of 16 rows of the output
    // holds 8 of level 1's and 4 of level 2's, and their downsampling reads
    // about as many again around them, each level's halo widening the
    // next's) is mostly computed again from strip to strip; at the root
    // each of its points is computed once.
    bool strip_rows(const FuncInfo &f, const std::string &g, const Structure &st) const {
        const FuncInfo &gi = info.at(g);
        if (st.ty <= 0 || f.extent.size() < 2 || gi.extent.size() < 2 || gi.extent[1] <= 0) return true;
        return st.ty * f.extent[1] >= 16 * gi.extent[1];
    }

    // FuncInfo::pack_stride of f at the sizes searched: the elements of
    // its operand's dimensions inside pack_dim, times its bytes.
    int64_t pack_stride(const FuncInfo &f) const {
        if (f.pack_operand.empty()) return 0;
        int64_t bytes = 0;
        std::vector<int64_t> extent;
        auto in = sz.concrete.sizes.find(f.pack_operand);
        if (info.count(f.pack_operand) && env.count(f.pack_operand)) {
            extent = info.at(f.pack_operand).extent;
            bytes = env.at(f.pack_operand)->bytes_per_point();
        } else if (in != sz.concrete.sizes.end() && sz.input_bytes.count(f.pack_operand)) {
            extent.assign(in->second.begin(), in->second.end());
            int64_t points = 1;
            for (int64_t e : extent) points *= std::max<int64_t>(e, 1);
            bytes = sz.input_bytes.at(f.pack_operand) / points;
        }
        for (int d = 0; d < f.pack_dim && d < (int)extent.size(); d++) bytes *= extent[d];
        const int64_t power = bytes & -bytes;
        return power >= kiln_aliasing_stride ? power : 0;
    }

    // Matrix product f in register blocks whose operand (pack_operand)
    // moves by an aliasing stride per iteration of its innermost RVar
    // (pack_stride): read in place, or packed per column panel of the
    // blocks (State::packed), contiguous in the order the blocks read it.
    // The cost model's aliasing term decides.
    void pack_option(State &s, const FuncInfo &f) {
        if (writer.pack_site(s, f).first.empty() || !f.pack_stride) {
            s.packed.erase(f.name);
            return;
        }
        if (!budget_left()) return;
        auto [g, loop] = writer.pack_site(s, f);
        const std::string wrapper = f.pack_operand + "_in_" + f.name;
        const std::string rvar = f.matrix_rvar.substr(0, f.matrix_rvar.find(','));
        either(s, f, &State::packed, "packing", "operand " + f.pack_operand + " read in place",
               f.pack_operand + ".in(" + f.name + ") at " + g + "." + loop + " (each panel's rows contiguous, not " +
                   kib(f.pack_stride) + " apart per " + rvar + ")",
               [&](const Evaluation &ev, bool packed) {
                   return packed ? "the packed panel: " + note_for(ev, wrapper, Place::Inner)
                                 : note_for(ev, f.name, Place::Inner);
               });
    }

    // f at the root with a producer p computed per strip of f's loops
    // (compute_at(f, yo)): p has updates (it cannot be inlined) that do not
    // run over the strip's rows (FuncInfo::rows_reduced), f is its only
    // consumer and p is at the root. Each alone loses: f at the root
    // is a pass more than f inlined while p stays at the root, and p is
    // placed after f, in the groups f's placement left it. Together, p
    // computes per strip what the strip of f reads (an IIR filter down the
    // columns, per strip of its transpose's rows: a band of columns that
    // fits L2), and f reads it from there.
    void root_with_producers(const State &s, const FuncInfo &f, AutoscheduleDecision &d, std::vector<State> &states) {
        for (const std::string &pn : order) {
            const FuncInfo &p = info.at(pn);
            if (!p.updates || p.rows_reduced || p.output || !p.matrix_rvar.empty() ||
                p.consumers != std::vector<std::string>{f.name} ||
                s.place_of(pn) != Place::Root || !budget_left())
                continue;
            State c = s;
            place(c, f, Place::Root, "");
            const Structure &st = c.structure.at(f.name);
            if (writer.loops_for(f.name, st, Place::Outer).first.empty() ||
                !ScheduleWriter::follows_loop(p, st, Place::Outer))
                continue;
            place(c, p, Place::Outer, f.name);
            Evaluation e = evaluate(c);
            d.alternatives.push_back({"compute_root, " + st.to_string() + " with " + pn + " " +
                                          writer.option_name(c, pn, Place::Outer),
                                      e.legal, e.cost.total, note_for(e, f.name, Place::Root)});
            states.push_back(c);
        }
    }

    // f per strip of columns of its consumers' group g, g's loops made
    // strips of columns (Structure::Columns): where f's updates run over
    // the rows g's strips of rows split (FuncInfo::rows_reduced), so that
    // per strip of rows it would be computed whole again, and f's region
    // follows g's columns. Each strip computes f down the band of columns
    // it reads (max_filter's vert_log, its levels down the columns: a band
    // that fits L2 where the whole image is in DRAM). Its own option, like
    // a matrix product's register blocks: placed per strip of rows f loses
    // to the root, and g keeps the loops it chose before f is placed.
    void column_strips(const State &s, const FuncInfo &f, const std::string &g, AutoscheduleDecision &d,
                       std::vector<State> &states) {
        const FuncInfo &gi = info.at(g);
        const Structure st{Structure::Columns, column_strip_vectors * gi.lanes, 0};
        if (!f.updates || !f.rows_reduced || !f.follows.count(0) || s.structure.at(g).kind == Structure::Columns ||
            gi.args.size() < 2 || gi.extent[0] < 2 * st.tx || !budget_left())
            return;
        State c = s;
        c.structure[g] = st;
        place(c, f, Place::Outer, g);
        Evaluation e = evaluate(c);
        d.alternatives.push_back({writer.option_name(c, f.name, Place::Outer) + ", " + st.to_string() + " of " + g,
                                  e.legal, e.cost.total, note_for(e, f.name, Place::Outer)});
        states.push_back(c);
    }
    // The vectors across a strip of columns that column_strips offers
    // (tile_groups then weighs the other widths): 16 (256 floats with
    // AVX-512, 128 with AVX2).
    static constexpr int column_strip_vectors = 16;

    // Matrix product f (FuncInfo::wrapper) per register block of its
    // wrapper: the wrapper at the root, or per strip of f's consumers' group
    // g (rows, a row of tiles, or a row of blocks when rows of blocks are
    // outermost), its blocks as high as divides the strip.
    void wrapped_options(const State &s, const FuncInfo &f, const std::string &g, AutoscheduleDecision &d,
                         std::vector<State> &states) {
        const FuncInfo &w = info.at(f.wrapper);
        if (w.args.size() < 2 || w.extent[0] < 2 * w.lanes) return;
        std::vector<std::pair<Place, int>> options;  // the wrapper's place, its blocks' rows
        if (w.extent[1] >= block_rows(w)) options.push_back({Place::Root, block_rows(w)});
        const Structure *gs = g.empty() ? nullptr : &s.structure.at(g);
        if (gs && (gs->kind == Structure::Rows || gs->kind == Structure::Tiles || (gs->kind == Structure::Blocks && gs->rows_outer)))
            options.push_back({Place::Outer, block_rows(w, gs->ty)});
        for (auto [wp, rows] : options) {
            if (!budget_left()) return;
            State c = s;
            place(c, f, Place::Inner, w.name);
            c.wrapped.insert(f.name);
            c.place[w.name] = wp;
            if (wp == Place::Outer) c.group[w.name] = g;
            c.structure[w.name] = {Structure::Blocks, 2, rows};
            Evaluation e = evaluate(c);
            std::string where = wp == Place::Root ? "at the root" : writer.option_name(c, w.name, wp);
            d.alternatives.push_back({writer.option_name(c, f.name, Place::Inner) + ", " + c.structure[w.name].to_string() +
                                          " of " + f.name + ".in() " + where,
                                      e.legal, e.cost.total, note_for(e, f.name, Place::Inner)});
            states.push_back(c);
        }
    }

    // A decision of `kind` between two forms of f: `without` (f not in
    // the State's set `forms`) and `with` (in it): a 1-D reduction serial
    // or split into vector lanes (rfactor), a scattering update vectorized
    // or serial.
    // `note` (if given) writes each option's note from its evaluation.
    void either(State &s, const FuncInfo &f, std::set<std::string> State::*forms, const std::string &kind,
                const std::string &without, const std::string &with,
                const std::function<std::string(const Evaluation &, bool)> &note = nullptr) {
        AutoscheduleDecision d;
        d.func = f.name;
        std::vector<State> states;
        for (bool in : {false, true}) {
            State c = s;
            if (in) (c.*forms).insert(f.name);
            else (c.*forms).erase(f.name);
            Evaluation e = evaluate(c);
            d.alternatives.push_back({in ? with : without, e.legal, e.cost.total,
                                      !e.legal ? "not possible: " + e.error : note ? note(e, in) : ""});
            states.push_back(c);
        }
        decide(d, states, s, kind);
    }

    // The two forms of a scattering update (a decision of either()):
    // vectorized across its first dimension (each lane storing where its
    // value says), or serial with its small dimensions unrolled innermost
    // (ScheduleWriter::update_stanzas).
    static constexpr const char *vector_updates = "updates vectorized, lane by lane at their indices";
    static constexpr const char *serial_updates = "updates serial over their RVars, small dimensions unrolled";

    // The most points a Func may have for tile_groups to offer it loops
    // without a parallel one.
    static constexpr int64_t serial_points = 1 << 18;

    // Each group's loop structure: strips of rows or 2-D tiles of a few
    // sizes. Returns the groups whose kind of structure changed.
    std::set<std::string> tile_groups(State &s) {
        std::set<std::string> changed;
        for (auto it = order.rbegin(); it != order.rend(); ++it) {
            const FuncInfo &f = info.at(*it);
            if (!s.structure.count(f.name) || f.args.empty()) continue;  // a 0-D Func has no loops
            if (!budget_left()) {
                skip(f.name + ": loops " + s.structure.at(f.name).to_string() + ", not evaluated: the default rule");
                continue;
            }
            std::vector<Structure> options;
            int64_t w = f.extent[0], h = f.args.size() > 1 ? f.extent[1] : 1;
            int L = f.lanes;
            if (f.args.size() >= 2) {
                for (int ty : {4, 16, 64})
                    if (h >= ty) options.push_back({Structure::Rows, 0, ty});
                for (auto [tx, ty] : {std::pair<int, int>{8 * L, 16}, {32 * L, 32}, {16 * L, 64}})
                    if (w >= tx && h >= ty) options.push_back({Structure::Tiles, tx, ty});
                // A matrix product in the group: register blocks (block_rows).
                bool product = false;
                for (const auto &[m, g] : s.group)
                    product |= g == f.name && !info.at(m).matrix_rvar.empty() && info.at(m).block_root == f.name;
                const int rows = block_rows(f);
                if (product && w >= 2 * L && h >= rows)
                    for (bool rows_outer : {false, true}) options.push_back({Structure::Blocks, 2, rows, false, rows_outer});
                // Strips of columns where a Func in the group runs its
                // updates over the rows (column_strips).
                bool down_rows = false;
                for (const auto &[m, g] : s.group) down_rows |= g == f.name && info.at(m).rows_reduced;
                if (down_rows)
                    for (int tx : {8 * L, column_strip_vectors * L})
                        if (w >= 2 * tx) options.push_back({Structure::Columns, tx, 0});
            } else {
                for (int tx : {64 * L, 512 * L})
                    if (w >= 2 * tx) options.push_back({Structure::Strips, tx, 0});
            }
            options.push_back(Structure());
            // Where each parallel loop wakes the workers (tens of us), a
            // Func small enough that starting one may cost more than it
            // saves is also tried without one. Not for larger Funcs, to
            // spare the search an evaluation per group; not with spinning
            // workers, whose loops start in a microsecond or two (offered
            // there too, it changed only toy-sized choices: gemm_grad's
            // residual at 45x29, predictions within 3 us).
            int64_t points = 1;
            for (int64_t e : f.extent) points *= e;
            if (o.machine.workers_sleep && points <= serial_points) {
                Structure serial;
                serial.serial = true;
                options.push_back(serial);
            }
            AutoscheduleDecision d;
            d.func = f.name;
            std::vector<State> states;
            for (const Structure &st : options) {
                State c = s;
                c.structure[f.name] = st;
                for (const auto &[m, g] : c.group)  // wrappers' blocks within the new strips
                    if (g == f.name && c.structure.count(m) && c.structure[m].kind == Structure::Blocks && st.ty > 0)
                        c.structure[m].ty = block_rows(info.at(m), st.ty);
                bool has_loops = true;  // for every Func computed in the group (not per strip of
                                        // rows where its updates run over the rows)
                for (const auto &[m, g] : s.group)
                    if (g == f.name && (writer.loops_for(g, st, s.place.at(m)).first.empty() ||
                                        (s.place.at(m) == Place::Outer && info.at(m).rows_reduced &&
                                         st.kind != Structure::Columns)))
                        has_loops = false;
                if (!has_loops) continue;
                if (!budget_left()) break;
                Evaluation e = evaluate(c);
                std::string note = e.legal ? group_note(e, c, f.name) : "not possible: " + e.error;
                d.alternatives.push_back({st.to_string(), e.legal, e.cost.total, note});
                states.push_back(c);
            }
            channels_option(f, d, states);
            const Structure before = s.structure.at(f.name);
            decide(d, states, s, "loops");
            if (!s.structure.at(f.name).same_loops(before)) changed.insert(f.name);
        }
        return changed;
    }

    // The cheapest of group root f's loops (d's alternatives so far) with
    // its small dimensions innermost and unrolled (Structure::
    // channels_inner): an image's channels computed together, per vector,
    // where the Funcs they share are then placed per vector (Place::
    // Vector) and computed once for all of them instead of once per
    // channel (hist_equalize's output: the luma, chroma and equalized luma
    // of each pixel, shared by its red, green and blue). One evaluation,
    // not one per loop structure: the channels' order is the same choice
    // in any of them. Not where a Func is computed per strip of the group
    // or slides down it: its storage per strip would then hold every
    // channel (max_filter's vert_log per strip of columns: 69 MiB a strip
    // instead of 23, which the model, holding both in the 480 MiB of L3
    // sysfs reports on a shared Xeon, predicted faster; it ran 3.5x
    // slower).
    void channels_option(const FuncInfo &f, AutoscheduleDecision &d, std::vector<State> &states) {
        size_t best = d.alternatives.size();
        for (size_t i = 0; i < d.alternatives.size(); i++)
            if (d.alternatives[i].legal && (best == d.alternatives.size() ||
                                            d.alternatives[i].cost.total() < d.alternatives[best].cost.total()))
                best = i;
        if (best == d.alternatives.size() || f.updates || ScheduleWriter::small_dims(f).empty() || !budget_left())
            return;
        State c = states[best];
        for (const auto &[m, g] : c.group)
            if (g == f.name && (c.place.at(m) == Place::Outer || c.place.at(m) == Place::Sliding)) return;
        Structure &st = c.structure[f.name];
        if (st.kind != Structure::Rows && st.kind != Structure::Tiles && st.kind != Structure::Columns) return;
        st.channels_inner = true;
        Evaluation e = evaluate(c);
        d.alternatives.push_back(
            {st.to_string(), e.legal, e.cost.total, e.legal ? group_note(e, c, f.name) : "not possible: " + e.error});
        states.push_back(c);
    }

    // The working set of group r: the storage of the Funcs computed in it.
    std::string group_note(const Evaluation &e, const State &s, const std::string &r) const {
        int64_t bytes = 0;
        for (const auto &[f, g] : s.group)
            if (g == r && e.cost.funcs.count(f)) bytes += e.cost.funcs.at(f).footprint_bytes;
        const MachineModel &m = o.machine;
        std::string fits = bytes <= m.l1_bytes ? "fits L1" : bytes <= m.l2_bytes ? "fits L2 (" + kib(m.l2_bytes) + ")"
                                                                                  : "over L2 (" + kib(m.l2_bytes) + ")";
        return "working set of its group " + kib(bytes) + ", " + fits;
    }

    AutoscheduleResult fallback(const std::string &why_not) {
        snapshot.restore();
        result.skipped.push_back(why_not + "; every Func is left inlined (the default schedule)");
        result.schedule = ScheduleFile::parse("", "autoschedule");
        result.schedule_text = "# kiln::autoschedule could not schedule this pipeline: " + why_not + "\n";
        finish();
        return result;
    }

    void finish() {
        result.search_ms = clock.wall_ms();
        explain(result, out_names[0], t, sizes, o);
    }
};

}  // namespace

AutoscheduleOptions AutoscheduleOptions::reproducible(int max_states) {
    user_assert(max_states > 0) << "AutoscheduleOptions::reproducible: the budget of schedules must be positive, not "
                                << max_states << " (a build without a budget depends on the machine's load)";
    AutoscheduleOptions o;
    o.max_states = max_states;
    o.time_limit_is_cpu = true;
    return o;
}

namespace {

// The search applies its directives over the schedule it finds: a loop a
// Func's schedule already split (split, tile, vectorize or unroll with a
// factor, fuse) clashes with every candidate's own split of it, and the
// search would fall back to no schedule. (A parallel or vector mark on a
// loop left whole does not: the bits a forward pass saves come with one.)
void check_loops_unscheduled(const Pipeline &p) {
    for (const auto &[name, f] : p.functions()) {
        const FunctionContents &c = *f.contents();
        for (int i = 0; i < c.num_stages(); i++) {
            const std::vector<Split> &splits = c.stage(i).schedule.splits;
            if (splits.empty()) continue;
            const std::string &v = splits[0].old_var;
            user_error << "autoschedule: Func " << name << (i == 0 ? "" : ".update(" + std::to_string(i - 1) + ")")
                       << " already has loops scheduled (" << (splits[0].kind == Split::FuseVars ? "fuse into " : "split of ")
                       << v.substr(v.rfind('.') + 1) << "); the search chooses every Func's loops and applies them "
                       << "over the schedule it finds, where these would clash. Call it on Funcs whose loops are not "
                       << "scheduled (build the pipeline again), or schedule them from a .sched file instead";
        }
    }
}

}  // namespace

AutoscheduleResult autoschedule(const Pipeline &p, const Target &t,
                                const std::map<std::string, std::vector<int>> &estimates,
                                const AutoscheduleOptions &options) {
    user_assert(!p.outputs().empty()) << "autoschedule: the pipeline has no outputs";
    check_loops_unscheduled(p);
    user_assert(options.autotune >= 0 && options.autotune <= AutoscheduleOptions::max_autotune)
        << "autoschedule: autotune " << options.autotune << " is not a number of candidates to run; use 0 (the cost "
        << "model alone) or 1 to " << AutoscheduleOptions::max_autotune << " (each candidate is compiled and run)";
    if (t.has(Target::NPU)) return npu_autoschedule(p, t, estimates, options);
    return Autoscheduler(p, t, estimates, options).run();
}

}  // namespace kiln
