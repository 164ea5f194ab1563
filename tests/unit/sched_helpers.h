// Helpers shared by the schedule-file unit tests (test_schedule_file*.cpp):
// the target their .sched arguments are evaluated for, and the message of a
// CompileError from parsing or applying schedule text ("(no error)" if none).
#pragma once
#include <kiln/kiln.h>

#include <functional>
#include <string>

namespace sched_test {

inline kiln::Target avx2() { return kiln::Target("x86-64-linux-avx2"); }

inline std::string error_of(const std::function<void()> &f) {
    try {
        f();
    } catch (const kiln::CompileError &e) {
        return e.what();
    }
    return "(no error)";
}

inline std::string parse_error(const std::string &text) {
    return error_of([&] { kiln::ScheduleFile::parse(text, "t.sched"); });
}

// Applied to `p` (a Pipeline, or a Func that is its output) for avx2().
inline std::string apply_error(const std::string &text, const kiln::Pipeline &p) {
    return error_of([&] { kiln::ScheduleFile::parse(text, "t.sched").apply(p, avx2()); });
}

inline bool contains(const std::string &s, const std::string &part) { return s.find(part) != std::string::npos; }

}  // namespace sched_test
