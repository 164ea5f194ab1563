// The time a search has taken: on the clock (what its explanation reports)
// and, for its limit, its thread's CPU time where the options ask for it
// (AutoscheduleOptions::time_limit_is_cpu: generator builds, whose outer
// safety should not stop a search earlier on a busier machine).
#pragma once
#include <chrono>
#include <ctime>

namespace kiln {
namespace internal {

class SearchClock {
public:
    explicit SearchClock(bool limit_in_cpu_time)
        : cpu(limit_in_cpu_time), wall_start(std::chrono::steady_clock::now()), cpu_start(thread_cpu_ms()) {}

    double wall_ms() const {
        return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - wall_start).count();
    }
    // What the time limit is compared with.
    double limit_ms() const { return cpu ? thread_cpu_ms() - cpu_start : wall_ms(); }

private:
    static double thread_cpu_ms() {
        timespec ts{};
        clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
        return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
    }
    bool cpu;
    std::chrono::steady_clock::time_point wall_start;
    double cpu_start;
};

}  // namespace internal
}  // namespace kiln
