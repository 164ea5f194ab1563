// lower(): the pipeline of passes, read top to bottom.
//
// KILN_DEBUG=1 prints the statement after every pass; KILN_TIME_PASSES=1
// prints how long each pass took. A Func stored outside the loop it is
// computed in that does not slide is a warning on stderr
// (KILN_NO_WARNINGS=1 silences it).
#include "Lower.h"

#include <algorithm>
#include <cstdlib>
#include <map>

#include "AddEntryChecks.h"
#include "BoundAllocations.h"
#include "BoundsInference.h"
#include "BufferConstraints.h"
#include "CSE.h"
#include "ComputeWith.h"
#include "DecideSpecializations.h"
#include "EmulateFloat16.h"
#include "StripStopGradient.h"
#include "HoistLoads.h"
#include "HoistLoopInvariants.h"
#include "PromoteAccumulators.h"
#include "InjectPrefetches.h"
#include "InlineFunctions.h"
#include "InterleaveSelects.h"
#include "PartitionLoops.h"
#include "RealizationOrder.h"
#include "RealizeIntoOutputs.h"
#include "ScheduleFunctions.h"
#include "SlidingWindow.h"
#include "SplitFloatSums.h"
#include "SplitWideVectors.h"
#include "StorageFlattening.h"
#include "StorageFolding.h"
#include "UnrollLoops.h"
#include "UnswitchDenseLoads.h"
#include "VectorizeLoops.h"
#include "VectorizeUnrolledStores.h"
#include "ir/Error.h"
#include "ir/IRPrinter.h"
#include "ir/Simplify.h"

namespace kiln {
namespace internal {

bool PassLog::env_on(const char *v) {
    const char *e = std::getenv(v);
    return e && *e && std::string(e) != "0";
}

std::vector<LoweredArgument> lowered_args(const std::vector<Argument> &args, size_t num_outputs) {
    std::vector<LoweredArgument> r;
    for (size_t i = 0; i < args.size(); i++) {
        LoweredArgument a;
        a.name = args[i].name;
        a.is_buffer = args[i].is_buffer;
        a.is_output = i + num_outputs >= args.size();
        a.type = args[i].type;
        a.dimensions = args[i].dimensions;
        r.push_back(a);
    }
    return r;
}

LoweredFunc lower(const std::vector<std::shared_ptr<FunctionContents>> &outputs, const std::string &name,
                  const std::vector<LoweredArgument> &args, const Target &target, const LowerOptions &options) {
    PassLog log;
    std::vector<std::string> out_names;
    for (const auto &o : outputs) out_names.push_back(o->name);
    const bool final = options.stop == LowerStop::Final;
    const bool checked = final && options.stop_after.empty();  // entry checks and warnings: what codegen gets
    LoweredFunc f;
    f.name = name;
    f.args = args;
    bool stopped = false;
    // Runs one pass, unless lowering has stopped after an earlier one (LowerOptions::stop_after).
    auto pass = [&](const char *pass_name, const Stmt &s, auto fn) -> Stmt {
        if (stopped) return s;
        Stmt r = log.run(pass_name, fn);
        stopped = options.stop_after == pass_name;
        return r;
    };

    Environment env = find_environment(outputs);  // copies: a rewrite leaves the user's Funcs alone
    if (options.rewrite) options.rewrite(env);
    inline_functions(env, out_names);
    check_compute_with(env, out_names);
    if (target.has(Target::NPU)) {
        check_npu_buffer_constraints(env, out_names);
        check_npu_types(env);
    }
    std::vector<std::string> order = realization_order(out_names, env);

    Stmt s = pass("schedule functions", Stmt(), [&] { return schedule_functions(out_names, order, env); });
    s = pass("strip stop_gradient", s, [&] { return strip_stop_gradient(s); });
    // Before any simplify, which would fold 16-bit float arithmetic as float32.
    s = pass("emulate float16", s, [&] { return emulate_float16(s); });
    // Before bounds inference, so that a specialization's dead copy of a
    // producer neither widens the regions nor reaches unroll_loops.
    s = pass("decide specializations", s, [&] { return decide_specializations(s); });
    PipelineRegions regions;
    s = pass("bounds inference", s, [&] { return bounds_inference(s, out_names, order, env, regions); });
    if (checked && !target.has(Target::NoAsserts)) {
        // Added now, while the lets that define the output regions exist.
        s = pass("entry checks", s, [&] { return add_entry_checks(s, name, regions, find_parameters(env), env); });
    }
    s = pass("decide specializations", s, [&] { return decide_specializations(s); });  // the regions' selects
    SlidingReports own_sliding;
    SlidingReports &sliding = options.sliding ? *options.sliding : own_sliding;
    s = pass("sliding window", s, [&] { return sliding_window(s, env, &sliding); });
    // A store_at outside compute_at that does not slide recomputes its whole
    // region every iteration: say so (the fusion report says it too), once,
    // from the lowering that host code is generated from.
    if (checked)
        for (const auto &kv : sliding)
            if (!kv.second.not_slid.empty())
                user_warning << "Func " << kv.first << " is stored at "
                             << env.at(kv.first)->schedule.store_level.to_string() << " but not slid over "
                             << kv.second.loop << ", the loop it is computed in: " << kv.second.not_slid
                             << "; each iteration computes its whole region again";
    // Folding reads the region lets that sliding_window left in place; the
    // simplifier would substitute the trivial ones away.
    s = pass("storage folding", s, [&] { return storage_folding(s, env, &sliding); });
    s = pass("simplify", s, [&] { return simplify(s); });
    if (options.env) *options.env = env;
    if (options.regions) *options.regions = regions;
    if (!final || stopped) {
        f.body = s;
        return f;
    }
    // After bounds inference and sliding window, whose regions a prefetch
    // must not widen; before flattening, which turns it into an address.
    s = pass("inject prefetches", s, [&] { return inject_prefetches(s, env, out_names); });
    // Before flattening, which gives a realized Func an allocation and the
    // outputs their buffers, by name.
    if (!target.has(Target::NPU))
        s = pass("realize into outputs", s, [&] { return realize_into_outputs(s, out_names, env); });
    s = pass("storage flattening", s, [&] { return storage_flattening(s, env); });
    // After flattening, which names the buffers' strides, and the entry
    // checks, which its own come before: a buffer of the wrong size is
    // reported as breaking its constraint, not as too small.
    const bool constraint_checks = checked && !target.has(Target::NoAsserts);
    s = pass("buffer constraints", s, [&] { return add_buffer_constraints(s, name, env, out_names, constraint_checks); });
    s = pass("simplify", s, [&] { return simplify(s); });
    const LoopSources sources = loop_sources(env);
    // Before splitting wide vectors, which then splits the vectors it
    // makes. Not on the NPU, whose instruction selection matches the
    // loops; not when tracing, whose log lists each store as the schedule
    // makes it.
    if (!target.has(Target::NPU) && !target.has(Target::Trace))
        s = pass("vectorize unrolled stores", s, [&] { return vectorize_unrolled_stores(s); });
    // Before unrolling, which copies the one-register vector loops it makes.
    if (!target.has(Target::NPU))
        s = pass("split wide vectors", s, [&] { return split_wide_vectors(s, target.vector_bytes()); });
    s = pass("unroll loops", s, [&] { return unroll_loops(s, sources); });
    s = pass("vectorize loops", s, [&] { return vectorize_loops(s, sources); });
    s = pass("partition loops", s, [&] { return partition_loops(s, sources); });
    s = pass("simplify", s, [&] { return simplify(s); });
    if (!target.has(Target::NPU)) s = pass("bound allocations", s, [&] { return bound_allocations(s); });
    // On simplified vector code; the NPU's instruction selection matches
    // selects as they are.
    if (!target.has(Target::NPU)) {
        Stmt before = s;
        s = pass("interleave parity selects", s, [&] { return interleave_parity_selects(s); });
        // Each half tests the parity of its first lane, which the lets
        // above it may decide (align_bounds(): the residues of a region's
        // min): a simplify keeps the one side that runs.
        if (!s.same_as(before)) s = pass("simplify", s, [&] { return simplify(s); });
    }
    // After the last simplify, which would substitute the hoisted loads back.
    if (!target.has(Target::NPU))
        s = pass("unswitch dense loads", s, [&] { return unswitch_dense_loads(s); });
    s = pass("hoist invariant loads", s, [&] { return hoist_invariant_loads(s); });
    s = pass("promote accumulators", s, [&] { return promote_accumulators(s, env); });
    // Reassociates float sums: fast_math only. Not on the NPU, whose
    // instruction selection matches the serial loops; not when tracing,
    // whose log lists each store as the schedule makes it.
    if (target.has(Target::FastMath) && !target.has(Target::NPU) && !target.has(Target::Trace))
        s = pass("split float sums", s, [&] { return split_float_sums(s, target); });
    // The NPU's instruction selection matches whole store values.
    if (!target.has(Target::NPU))
        s = pass("common subexpressions", s, [&] { return eliminate_common_subexpressions(s); });
    // After common subexpressions, whose lets inside loops it moves out
    // when invariant; the NPU's instruction selection matches loop bodies.
    if (!target.has(Target::NPU))
        s = pass("hoist loop invariants", s, [&] { return hoist_loop_invariants(s); });
    internal_assert(options.stop_after.empty() || stopped) << "lower: no pass named " << options.stop_after;

    f.body = s;
    return f;
}

}  // namespace internal
}  // namespace kiln
