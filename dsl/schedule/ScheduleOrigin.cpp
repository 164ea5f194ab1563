// The table behind schedule_origin() (ScheduleOrigin.h): per Func (held
// weakly, so a dead Func's record never names a new one at the same
// address) and kind, the position and the level it was given.
#include "ScheduleOrigin.h"

#include <map>
#include <mutex>
#include <utility>

namespace kiln {
namespace internal {

namespace {

struct Record {
    std::weak_ptr<FunctionContents> func;
    std::string position, level;
};

std::mutex table_mutex;
std::map<std::pair<const FunctionContents *, std::string>, Record> table;

std::string level_of(const FunctionContents &f, const std::string &kind) {
    return (kind == "store" ? f.schedule.store_level : f.schedule.compute_level).to_string();
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
    for (const char *kind : {"compute", "store"}) {
        auto it = table.find({from.get(), kind});
        if (it == table.end() || it->second.func.lock() != from) continue;
        Record r = it->second;
        r.func = to;
        table[{to.get(), kind}] = r;
    }
}

std::string schedule_origin(const FunctionContents &f, const std::string &kind) {
    std::lock_guard<std::mutex> lock(table_mutex);
    auto it = table.find({&f, kind});
    if (it == table.end() || it->second.func.lock().get() != &f) return "";
    return it->second.level == level_of(f, kind) ? it->second.position + ": " : "";
}

}  // namespace internal
}  // namespace kiln
