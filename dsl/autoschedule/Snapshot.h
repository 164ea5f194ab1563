// The schedules and definitions of a pipeline's Funcs, to undo a candidate
// schedule (a schedule file may rewrite definitions, e.g. rfactor, and add
// wrappers): the autoscheduler restores it before and after each candidate,
// choose_saves() before each autoschedule.
#pragma once
#include <algorithm>
#include <map>
#include <memory>
#include <vector>

#include "ir/Function.h"
#include "ir/IRVisitor.h"
#include "kiln/Param.h"
#include "kiln/Pipeline.h"

namespace kiln {
namespace internal {

class Snapshot {
public:
    explicit Snapshot(const Pipeline &p) {
        // The input images the Funcs read: image.in(...) keeps its wrappers
        // in the image's parameter, not in a Func's schedule.
        class Images : public IRVisitor {
        public:
            std::vector<std::shared_ptr<ParameterContents>> found;
            void visit(const Call *op) override {
                IRVisitor::visit(op);
                if (op->call_type == Call::Image && op->param &&
                    std::find(found.begin(), found.end(), op->param) == found.end())
                    found.push_back(op->param);
            }
        } images;
        for (const auto &kv : p.functions()) {
            const auto &f = kv.second.contents();
            saved.push_back({f, f->schedule, f->init, f->updates});
            auto read = [&](const Definition &d) {
                for (const Expr &e : d.values) images.include(e);
                for (const Expr &e : d.args) images.include(e);
            };
            read(f->init);
            for (const Definition &u : f->updates) read(u);
        }
        for (const auto &im : images.found) saved_images.push_back({im, im->wrappers, im->derived_names});
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
        for (const SavedImage &s : saved_images) {
            s.image->wrappers = s.wrappers;
            s.image->derived_names = s.derived_names;
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
    struct SavedImage {
        std::shared_ptr<ParameterContents> image;
        std::map<std::string, std::shared_ptr<FunctionContents>> wrappers;
        std::map<std::string, int> derived_names;
    };
    std::vector<SavedImage> saved_images;
};

}  // namespace internal
}  // namespace kiln
