// schedule_origin() (ScheduleOrigin.h): a record is the position and the
// level (or loop type) it was given, kept while the level is unchanged.
#include "ScheduleOrigin.h"

namespace kiln {
namespace internal {

namespace {

std::string loop_kind(int stage, const std::string &dim) { return "s" + std::to_string(stage) + "." + dim; }

std::string level_of(const FunctionContents &f, const std::string &kind) {
    if (kind == "store") return f.schedule.store_level.to_string();
    if (kind == "compute") return f.schedule.compute_level.to_string();
    for (const StorageFold &fold : f.schedule.storage_folds)  // "fold.y": fold_storage(y, ...)
        if (kind == "fold." + fold.var) return to_string(fold.factor) + (fold.fold_forward ? "" : " backward");
    for (int k = 0; k < f.num_stages(); k++)
        for (const Dim &d : f.stage(k).schedule.dims)
            if (kind == loop_kind(k, d.var)) return to_string(d.for_type);
    return "";  // the loop is gone (split or fused since)
}

}  // namespace

void record_schedule_origin(FunctionContents &f, const std::string &kind, const std::string &position) {
    f.schedule.origins[kind] = {position, level_of(f, kind)};
}

std::string schedule_origin(const FunctionContents &f, const std::string &kind) {
    auto it = f.schedule.origins.find(kind);
    if (it == f.schedule.origins.end()) return "";
    return it->second.second == level_of(f, kind) ? it->second.first + ": " : "";
}

void record_loop_origin(FunctionContents &f, int stage, const std::string &dim, const std::string &position) {
    record_schedule_origin(f, loop_kind(stage, dim), position);
}

std::string loop_origin(const FunctionContents &f, int stage, const std::string &dim) {
    return schedule_origin(f, loop_kind(stage, dim));
}

}  // namespace internal
}  // namespace kiln
