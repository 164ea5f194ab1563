#include "CandidateCost.h"

#include <optional>

#include "analysis/Bounds.h"
#include "ir/Error.h"
#include "kiln/Autoschedule.h"
#include "lower/Lower.h"

namespace kiln {
namespace internal {

Sizes sizes_for(const std::vector<std::shared_ptr<FunctionContents>> &outs,
                const std::map<std::string, std::vector<int>> &estimates, const std::string &caller) {
    Sizes r;
    r.given = estimates;
    for (const auto &f : outs)
        if (!r.given.count(f->name)) r.given[f->name] = std::vector<int>(f->args.size(), 1024);
    r.concrete = concrete_sizes(outs, r.given, caller);
    auto params = find_parameters(find_environment(outs));
    for (const auto &[name, ext] : r.concrete.sizes) {
        auto it = params.find(name);
        if (it == params.end() || !it->second->is_buffer) continue;
        int64_t n = it->second->type.bytes();
        for (int e : ext) n *= e;
        r.input_bytes[name] = n;
    }
    return r;
}

namespace {

// Where the schedule reads an input or writes an output outside the
// buffers of the given sizes: "name:dim" -> what happens there.
std::map<std::string, std::string> outside_buffers(const PipelineRegions &regions, const Sizes &sz) {
    const std::map<std::string, Expr> values = substitutions(sz.concrete);
    std::map<std::string, std::string> found;
    auto check = [&](const std::string &name, const Box &box, const char *what) {
        auto it = sz.concrete.sizes.find(name);
        if (it == sz.concrete.sizes.end()) return;
        for (size_t d = 0; d < box.size() && d < it->second.size(); d++) {
            std::optional<int64_t> lo, hi;
            if (box[d].has_lower()) lo = constant_value(box[d].min, values);
            if (box[d].has_upper()) hi = constant_value(box[d].max, values);
            if ((lo && *lo < 0) || (hi && *hi >= it->second[d]))
                found[name + ":" + std::to_string(d)] = std::string(what) + " " + name + " over [" +
                                                        std::to_string(lo ? *lo : 0) + ", " + std::to_string(hi ? *hi : 0) +
                                                        "] in dimension " + std::to_string(d) + ", past its " +
                                                        std::to_string(it->second[d]) + " elements";
        }
    };
    for (const auto &[name, box] : regions.inputs) check(name, box, "reads input");
    for (const auto &[name, box] : regions.outputs) check(name, box, "writes output");
    return found;
}

}  // namespace

PipelineCost cost_of_schedule(const std::vector<std::shared_ptr<FunctionContents>> &outs,
                              const std::vector<std::string> &out_names, const Target &t, const Sizes &sz,
                              const LoopCounts &baseline, const MachineModel &m, LoopCounts *counts_out,
                              std::map<std::string, std::string> *outside, CountMemo *memo) {
    LowerOptions lo;
    lo.stop = LowerStop::LoopNest;
    PipelineRegions regions;
    lo.regions = &regions;
    Stmt body = lower(outs, "", {}, t, lo).body;
    if (outside) *outside = outside_buffers(regions, sz);
    Environment env = find_environment(outs);
    LoopCounts counts =
        count_loop_nest(body, sz.concrete.values, sz.concrete.float_values, innermost_storage_dims(env), memo);
    if (counts_out) *counts_out = counts;
    PipelineCost cost = predict_cost(counts, baseline, env, out_names, sz.input_bytes, m);
    cost.sampled = counts.sampled;
    return cost;
}

}  // namespace internal

CostTerms predicted_time(const Pipeline &p, const Target &t, const std::map<std::string, std::vector<int>> &sizes,
                         const MachineModel &m) {
    user_assert(!p.outputs().empty()) << "predicted_time: the pipeline has no outputs";
    std::vector<std::shared_ptr<internal::FunctionContents>> outs;
    std::vector<std::string> names;
    for (const Func &f : p.outputs()) {
        outs.push_back(f.contents());
        names.push_back(f.name());
    }
    return internal::cost_of_schedule(outs, names, t, internal::sizes_for(outs, sizes, "predicted_time"),
                                      internal::LoopCounts(), m)
        .total;
}

}  // namespace kiln
