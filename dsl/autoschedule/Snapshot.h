// The schedules and definitions of a pipeline's Funcs, to undo a candidate
// schedule (a schedule file may rewrite definitions, e.g. rfactor, and add
// wrappers): the autoscheduler restores it before and after each candidate,
// choose_saves() before each autoschedule.
#pragma once
#include <memory>
#include <vector>

#include "ir/Function.h"
#include "kiln/Pipeline.h"

namespace kiln {
namespace internal {

class Snapshot {
public:
    explicit Snapshot(const Pipeline &p) {
        for (const auto &kv : p.functions()) {
            const auto &f = kv.second.contents();
            saved.push_back({f, f->schedule, f->init, f->updates});
        }
    }
    // keep_saves: leave each Func's save() (Func::save()) as it is now.
    void restore(bool keep_saves = false) const {
        for (const Saved &s : saved) {
            Residual how = s.f->schedule.residual;
            auto buffer = s.f->schedule.residual_buffer;
            s.f->schedule = s.schedule;
            if (keep_saves) {
                s.f->schedule.residual = how;
                s.f->schedule.residual_buffer = buffer;
            }
            s.f->init = s.init;
            s.f->updates = s.updates;
        }
        bump_definition_epoch();
    }

private:
    struct Saved {
        std::shared_ptr<FunctionContents> f;
        FuncSchedule schedule;
        Definition init;
        std::vector<Definition> updates;
    };
    std::vector<Saved> saved;
};

}  // namespace internal
}  // namespace kiln
