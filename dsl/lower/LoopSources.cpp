#include "LoopSources.h"

#include <algorithm>
#include <sstream>

#include "ir/IRPrinter.h"
#include "schedule/ScheduleOrigin.h"

namespace kiln {
namespace internal {

LoopSources loop_sources(const Environment &env) {
    LoopSources sources;
    for (const auto &kv : env) {
        const FunctionContents &f = *kv.second;
        for (int k = 0; k < f.num_stages(); k++)
            for (const Dim &d : f.stage(k).schedule.dims) {
                LoopSource s;
                s.origin = loop_origin(f, k, d.var);
                s.func = f.name;
                s.stage = k;
                s.var = d.user_name.empty() ? d.var : d.user_name;
                s.is_rvar = d.is_rvar;
                const std::string root = d.var.substr(0, d.var.find('.'));
                if (!d.is_rvar && std::count(f.args.begin(), f.args.end(), root)) s.sized_by = root;
                for (const Split &sp : f.stage(k).schedule.splits)
                    if (sp.kind == Split::SplitVar && sp.inner == d.var) s.split_factor = sp.factor;
                if (d.is_rvar && f.stage(k).rdom)
                    for (const ReductionVariable &rv : f.stage(k).rdom->vars)
                        if (rv.boundary_tail && (d.var == rv.name || d.var.rfind(rv.name + ".", 0) == 0))
                            s.boundary_tail = true;
                sources[f.stage_prefix(k) + d.var] = s;
            }
    }
    return sources;
}

std::string non_constant_extent_error(const LoopSources &sources, const std::string &loop, const Expr &extent,
                                      const std::string &directive) {
    std::ostringstream e;
    auto it = sources.find(loop);
    if (it != sources.end()) e << it->second.origin;
    e << "Loop " << loop << " is scheduled " << directive << "(), but its extent " << extent << " is not a constant";
    if (it == sources.end()) {
        e << "; use " << directive << "(var, factor) to split off a constant-size loop, or bound() the Func's size";
        return e.str();
    }
    const LoopSource &s = it->second;
    const std::string factor = directive == "vectorize" ? "8" : "4";
    const std::string stage = s.stage == 0 ? "" : ".update(" + std::to_string(s.stage - 1) + ")";
    const std::string call = directive + "(" + s.var + ", " + factor + ")";
    e << "; split off a constant-size loop with " << call << " on " << s.func << stage << " (C++: " << s.func << stage
      << "." << call << "; .sched: " << s.func << stage << ": " << call << ")";
    if (s.split_factor.defined())
        e << ", or split by a constant factor instead of " << s.split_factor;
    else if (s.is_rvar)
        e << ", or give the RDom of " << s.var << " a constant extent";
    else if (!s.sized_by.empty())
        e << ", or give " << s.func << " a constant size in " << s.sized_by << " with bound(" << s.sized_by
          << ", 0, N) on " << s.func << ", N the size it always has";
    else
        e << ", or split " << s.func << stage << "'s loops by constant factors so that " << s.var
          << " has a constant extent";
    return e.str();
}

}  // namespace internal
}  // namespace kiln
