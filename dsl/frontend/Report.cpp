// Pipeline::report(): the fusion report (see kiln/Report.h), from the loop
// nests of the schedule and of its unfused baseline, counted with concrete
// sizes by analysis/LoopCounts.
#include <algorithm>
#include <cstdio>
#include <nlohmann/json.hpp>
#include <sstream>

#include "analysis/ConcreteSizes.h"
#include "analysis/LoopCounts.h"
#include "analysis/NpuTraffic.h"
#include "frontend/ReportLoopNest.h"
#include "ir/IRVisitor.h"
#include "kiln/Pipeline.h"
#include "lower/InlineFunctions.h"
#include "lower/Lower.h"
#include "lower/RealizationOrder.h"
#include "lower/RealizeIntoOutputs.h"

namespace kiln {

namespace internal {

Stmt report_loop_nest(const std::vector<std::shared_ptr<FunctionContents>> &outs, const Target &t, bool unfused,
                      bool materialize_inlined, SlidingReports *sliding, std::map<std::string, std::string> *into) {
    LowerOptions o;
    o.stop = LowerStop::LoopNest;
    Environment env;
    o.env = &env;
    o.sliding = sliding;
    if (unfused) {
        o.rewrite = [&](Environment &env) {
            std::vector<std::string> out_names;
            for (const auto &f : outs) out_names.push_back(f->name);
            for (auto &kv : env) {
                FunctionContents &f = *kv.second;
                f.schedule.storage_folds.clear();  // stored where computed: nothing to fold
                bool is_out = std::find(out_names.begin(), out_names.end(), f.name) != out_names.end();
                if (is_out || f.is_image_wrapper || (is_inlined(f, false) && !materialize_inlined)) continue;
                f.schedule.compute_level = LoopLevel::root();
                f.schedule.store_level = LoopLevel::root();
                f.schedule.store_level_set = true;
            }
            for (auto &kv : env)  // and no horizontal fusion
                for (int k = 0; k < kv.second->num_stages(); k++) kv.second->stage(k).schedule.fuse_with = FuseLevel();
        };
    }
    Stmt s = lower(outs, "", {}, t, o).body;
    if (t.has(Target::NPU)) return s;
    std::vector<std::string> out_names;
    for (const auto &f : outs) out_names.push_back(f->name);
    return realize_into_outputs(s, out_names, env, false, into);
}

}  // namespace internal

using namespace internal;

namespace {

std::string level_name(const FunctionContents &f, bool is_output) {
    if (is_output) return "root (output)";
    const LoopLevel &l = f.schedule.compute_level;
    if (l.is_inlined()) return "innermost use (default)";
    return l.to_string();
}
std::string store_name(const FunctionContents &f, bool is_output) {
    if (is_output) return "output buffer";
    if (f.schedule.compute_level.is_inlined()) return "innermost use (default)";
    return f.schedule.store_level.to_string();
}

// How many times one evaluation of e evaluates the inlined Func `f`,
// directly or through other inlined Funcs.
class InlinedCalls : public IRVisitor {
public:
    InlinedCalls(const Environment &d, const std::string &f) : defs(d), target(f) {}
    int64_t count(const Expr &e) {
        int64_t saved = n;
        n = 0;
        include(e);
        std::swap(saved, n);
        return saved;
    }

    // Calls in every element of a (Tuple) definition.
    int64_t count_all(const std::vector<Expr> &values) {
        int64_t total = 0;
        for (const Expr &v : values) total += count(v);
        return total;
    }

protected:
    const Environment &defs;
    const std::string &target;
    std::map<std::string, int64_t> memo;
    int64_t n = 0;
    void visit(const Call *op) override {
        IRVisitor::visit(op);
        if (op->call_type != Call::Func) return;
        if (op->name == target) {
            n++;
            return;
        }
        auto it = defs.find(op->name);
        if (it == defs.end() || !is_inlined(*it->second, false)) return;
        auto m = memo.find(op->name);
        if (m == memo.end()) m = memo.emplace(op->name, count_all(it->second->init.values)).first;
        n += m->second;
    }
};

// The row of an inlined Func: evaluations in the computed stages that use it.
FuncReport inlined_row(const std::string &name, const Environment &defs, const LoopCounts &fused,
                       const LoopCounts &materialized) {
    FuncReport fr;
    fr.name = name;
    fr.inlined = true;
    fr.boundary_condition = defs.at(name)->boundary_condition;
    fr.compute_level = "inline";
    fr.store_level = "-";
    InlinedCalls calls(defs, name);
    for (const auto &kv : defs) {
        const FunctionContents &g = *kv.second;
        auto it = fused.funcs.find(g.name);
        if (g.name == name || it == fused.funcs.end()) continue;
        for (int k = 0; k < g.num_stages() && k < (int)it->second.stage_stores.size(); k++) {
            int64_t per_point = calls.count_all(g.stage(k).values);
            for (const auto &a : g.stage(k).args) per_point += calls.count(a);
            fr.points_computed += per_point * it->second.stage_stores[k];
        }
    }
    auto m = materialized.funcs.find(name);
    fr.points_computed_unfused = m == materialized.funcs.end() ? 0 : m->second.stores;
    fr.recompute = fr.points_computed_unfused ? (double)fr.points_computed / fr.points_computed_unfused : 0;
    fr.reads = fr.points_computed;
    return fr;
}

std::string megabytes(int64_t b) {
    char s[32];
    std::snprintf(s, sizeof(s), "%.1f", (double)b / 1e6);
    return s;
}

}  // namespace

PipelineReport Pipeline::report(const std::map<std::string, std::vector<int>> &sizes, const Target &t,
                                int64_t cache_bytes) const {
    user_assert(!outputs_.empty()) << "Pipeline::report: the pipeline has no outputs";
    std::vector<std::shared_ptr<FunctionContents>> outs;
    std::vector<std::string> out_names;
    for (const auto &o : outputs_) {
        user_assert(o.defined()) << "Pipeline::report: output " << o.name() << " is not defined";
        outs.push_back(o.contents());
        out_names.push_back(o.name());
    }
    PipelineReport r;
    r.pipeline = out_names[0];
    r.cache_bytes = cache_bytes;

    // Concrete values of the buffers' fields and of the scalar parameters.
    ConcreteSizes cs = concrete_sizes(outs, sizes, "Pipeline::report");
    const std::map<std::string, int64_t> &values = cs.values;
    r.sizes = cs.sizes;
    r.assumed = cs.assumed;
    int64_t input_bytes = cs.input_bytes;
    Environment env = find_environment(outs);

    SlidingReports sliding;
    std::map<std::string, std::string> into;  // computed in an output's buffer, where the sizes allow
    Stmt fused_nest = report_loop_nest(outs, t, false, false, &sliding, &into);
    LoopCounts fused = count_loop_nest(fused_nest, values, cs.float_values);
    LoopCounts unfused = count_loop_nest(report_loop_nest(outs, t, true), values, cs.float_values);
    r.exact = fused.exact && unfused.exact;
    r.sampled = fused.sampled || unfused.sampled;

    Environment defs = find_environment(outs);  // the definitions before inlining
    std::vector<std::string> order = realization_order(out_names, defs);
    inline_functions(env, out_names);
    Environment user = find_user_functions(outs);
    // Inlined Funcs get a row too: how often their values are recomputed.
    LoopCounts materialized;
    bool any_inlined = false;
    for (const auto &name : order) {
        const FunctionContents &f = *env.at(name);
        bool is_out = std::find(out_names.begin(), out_names.end(), name) != out_names.end();
        any_inlined |= !is_out && !f.is_image_wrapper && is_inlined(f, false);
    }
    if (any_inlined) materialized = count_loop_nest(report_loop_nest(outs, t, true, true), values, cs.float_values);
    int64_t output_bytes = 0;
    for (const auto &name : order) {
        const FunctionContents &f = *env.at(name);
        bool is_out = std::find(out_names.begin(), out_names.end(), name) != out_names.end();
        if (!is_out && is_inlined(f, false)) {
            if (!f.is_image_wrapper) r.funcs.push_back(inlined_row(name, defs, fused, materialized));
            continue;
        }
        FuncReport fr;
        fr.name = name;
        fr.is_output = is_out;
        fr.boundary_condition = f.boundary_condition;
        fr.compute_level = level_name(*user.at(name), is_out);
        fr.store_level = store_name(*user.at(name), is_out);
        const FuncCounts &fc = fused.funcs[name], &uc = unfused.funcs[name];
        auto in_output = into.find(name);
        if (in_output != into.end() && fc.realizations == 0 && fc.stores > 0)
            fr.store_level = in_output->second + "'s buffer";
        fr.allocation = fc.largest;
        fr.allocation_bytes = fc.largest_points * f.bytes_per_point();
        fr.realizations = fc.realizations;
        fr.points_computed = fc.stores;
        fr.points_computed_unfused = uc.stores;
        fr.recompute = uc.stores ? (double)fc.stores / (double)uc.stores : 0;
        fr.reads = fc.loads;
        auto slid = sliding.find(name);
        if (slid != sliding.end()) fr.sliding = slid->second.describe(f);
        if (is_out) {
            int64_t n = 1;
            for (int e : r.sizes[name]) n *= e;
            output_bytes += n * f.bytes_per_point();
        } else {
            // Each point its pure definition stores is written once and read
            // back once; updates modify points in place (in cache).
            fr.in_memory = fr.allocation_bytes > cache_bytes;
            fr.memory_bytes = fr.in_memory ? 2 * fc.pure_stores * f.bytes_per_point() : 0;
            bool unfused_in_memory = uc.largest_points * f.bytes_per_point() > cache_bytes;
            fr.memory_bytes_unfused = unfused_in_memory ? 2 * uc.pure_stores * f.bytes_per_point() : 0;
        }
        r.memory_bytes += fr.memory_bytes;
        r.memory_bytes_unfused += fr.memory_bytes_unfused;
        r.funcs.push_back(fr);
    }
    r.input_bytes = input_bytes;
    r.output_bytes = output_bytes;
    r.memory_bytes += input_bytes + output_bytes;
    r.memory_bytes_unfused += input_bytes + output_bytes;
    if (t.has(Target::NPU)) {
        // GM: the inputs, the outputs and the Funcs stored there (compute_root or store_in(GM)).
        std::map<std::string, int> gm, tile_loops;
        for (const auto &kv : find_parameters(env))
            if (kv.second->is_buffer) gm[kv.second->name] = kv.second->type.bytes();
        for (const auto &name : order) {
            const FunctionContents &f = *env.at(name);
            auto uit = user.find(name);
            const FunctionContents &u = uit != user.end() ? *uit->second : f;
            bool is_out = std::find(out_names.begin(), out_names.end(), name) != out_names.end();
            MemoryType m = u.schedule.memory_type;
            if (is_out || m == MemoryType::GM ||
                (m == MemoryType::Auto && !is_inlined(f, false) && u.schedule.compute_level.is_root()))
                gm[name] = f.bytes_per_point();
            if (m == MemoryType::L0C) tile_loops[name] = 3;  // a matrix update: C's tile and K
        }
        NpuTraffic n = npu_gm_traffic(fused_nest, gm, tile_loops,
                                      substitutions(cs));
        r.npu_read_bytes = n.reads();
        r.npu_write_bytes = n.writes();
        r.npu_exact = n.exact;
    }
    return r;
}

std::string PipelineReport::to_text() const {
    std::ostringstream os;
    os << "Fusion report for " << pipeline << " (sizes:";
    for (const auto &kv : sizes) {
        os << " " << kv.first << " ";
        for (size_t i = 0; i < kv.second.size(); i++) os << (i ? "x" : "") << kv.second[i];
        if (std::count(assumed.begin(), assumed.end(), kv.first)) os << " (assumed, not given)";
    }
    os << "; allocations over " << cache_bytes / 1024 << " KiB are counted as memory traffic)\n";
    char line[512];
    std::snprintf(line, sizeof(line), "%-14s %-22s %-22s %-18s %12s %14s %14s %9s %10s %10s\n", "func", "computed at",
                  "stored at", "allocation", "realizations", "points", "unfused pts", "recompute", "memory MB",
                  "unfused MB");
    os << line;
    for (const auto &f : funcs) {
        std::string alloc;
        for (size_t i = 0; i < f.allocation.size(); i++) alloc += (i ? "x" : "") + std::to_string(f.allocation[i]);
        if (f.is_output) alloc = "(output)";
        if (f.inlined) alloc = "(inlined)";
        std::snprintf(line, sizeof(line), "%-14s %-22s %-22s %-18s %12lld %14lld %14lld %8.2fx %10s %10s\n",
                      f.name.c_str(), f.compute_level.c_str(), f.store_level.c_str(), alloc.c_str(),
                      (long long)f.realizations, (long long)f.points_computed, (long long)f.points_computed_unfused,
                      f.recompute, f.is_output ? "-" : megabytes(f.memory_bytes).c_str(),
                      f.is_output ? "-" : megabytes(f.memory_bytes_unfused).c_str());
        os << line;
    }
    for (const auto &f : funcs)
        if (!f.sliding.empty()) os << "sliding window of " << f.name << ": " << f.sliding << "\n";
    os << "inputs read: " << megabytes(input_bytes) << " MB, outputs written: " << megabytes(output_bytes) << " MB\n";
    os << "memory traffic: " << megabytes(memory_bytes) << " MB (unfused: " << megabytes(memory_bytes_unfused)
       << " MB), saved " << megabytes(bytes_saved()) << " MB\n";
    if (!exact) os << "(approximate: some loop bounds depend on values not known before running)\n";
    if (sampled)
        os << "(estimated: counting stopped probing after " << internal::kiln_count_loop_visits
           << " loop visits; the loops left were counted from their first iteration)\n";
    if (npu_read_bytes >= 0)
        os << "NPU GM traffic (each tile's box, rows in 32-byte blocks, no cache): read " << npu_read_bytes
           << " bytes, written " << npu_write_bytes << (npu_exact ? "" : " (approximate)") << "\n";
    return os.str();
}

std::string PipelineReport::to_json() const {
    nlohmann::json j;
    j["pipeline"] = pipeline;
    j["sizes"] = sizes;
    j["assumed_sizes"] = assumed;
    j["cache_bytes"] = cache_bytes;
    j["exact"] = exact;
    j["sampled"] = sampled;
    j["input_bytes"] = input_bytes;
    j["output_bytes"] = output_bytes;
    j["memory_bytes"] = memory_bytes;
    j["memory_bytes_unfused"] = memory_bytes_unfused;
    j["bytes_saved"] = bytes_saved();
    if (npu_read_bytes >= 0)
        j["npu_model"] = {{"gm_read_bytes", npu_read_bytes}, {"gm_write_bytes", npu_write_bytes}, {"exact", npu_exact}};
    j["funcs"] = nlohmann::json::array();
    for (const auto &f : funcs) {
        j["funcs"].push_back({{"name", f.name},
                              {"is_output", f.is_output},
                              {"inlined", f.inlined},
                              {"boundary_condition", f.boundary_condition},
                              {"compute_level", f.compute_level},
                              {"store_level", f.store_level},
                              {"allocation", f.allocation},
                              {"allocation_bytes", f.allocation_bytes},
                              {"realizations", f.realizations},
                              {"points_computed", f.points_computed},
                              {"points_computed_unfused", f.points_computed_unfused},
                              {"recompute", f.recompute},
                              {"reads", f.reads},
                              {"in_memory", f.in_memory},
                              {"memory_bytes", f.memory_bytes},
                              {"memory_bytes_unfused", f.memory_bytes_unfused},
                              {"sliding", f.sliding}});
    }
    return j.dump(2);
}

}  // namespace kiln
