// The table behind schedule_origin() (ScheduleOrigin.h): per Func (held
// weakly, so a dead Func's record never names a new one at the same
// address) and kind, the position and the level (or loop type) it was given.
#include "ScheduleOrigin.h"

#include <map>
#include <mutex>
#include <utility>
#include <vector>

namespace kiln {
namespace internal {

namespace {

struct Record {
    std::weak_ptr<FunctionContents> func;
    std::string position, level;
};

std::mutex table_mutex;
std::map<std::pair<const FunctionContents *, std::string>, Record> table;

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

void record_schedule_origin(const std::shared_ptr<FunctionContents> &f, const std::string &kind,
                            const std::string &position) {
    std::lock_guard<std::mutex> lock(table_mutex);
    for (auto it = table.begin(); it != table.end();) it = it->second.func.expired() ? table.erase(it) : ++it;
    table[{f.get(), kind}] = {f, position, level_of(*f, kind)};
}

void copy_schedule_origins(const std::shared_ptr<FunctionContents> &from, const std::shared_ptr<FunctionContents> &to) {
    std::lock_guard<std::mutex> lock(table_mutex);
    std::vector<std::pair<std::string, Record>> copies;
    for (auto it = table.lower_bound({from.get(), ""}); it != table.end() && it->first.first == from.get(); ++it)
        if (it->second.func.lock() == from) copies.push_back({it->first.second, it->second});
    for (auto &c : copies) {
        c.second.func = to;
        table[{to.get(), c.first}] = c.second;
    }
}

std::string schedule_origin(const FunctionContents &f, const std::string &kind) {
    std::lock_guard<std::mutex> lock(table_mutex);
    auto it = table.find({&f, kind});
    if (it == table.end() || it->second.func.lock().get() != &f) return "";
    return it->second.level == level_of(f, kind) ? it->second.position + ": " : "";
}

void record_loop_origin(const std::shared_ptr<FunctionContents> &f, int stage, const std::string &dim,
                        const std::string &position) {
    record_schedule_origin(f, loop_kind(stage, dim), position);
}

std::string loop_origin(const FunctionContents &f, int stage, const std::string &dim) {
    return schedule_origin(f, loop_kind(stage, dim));
}

}  // namespace internal
}  // namespace kiln
