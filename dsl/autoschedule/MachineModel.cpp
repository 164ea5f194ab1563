// MachineModel::host(): the cache sizes of this machine from sysfs, its
// thread count from the OS; the rates keep their defaults (Autoschedule.h).
#include <cstdio>
#include <fstream>
#include <string>
#include <thread>

#include "kiln/Autoschedule.h"

namespace kiln {

namespace {

// "48K", "1024K", "32M" -> bytes; 0 if unreadable.
int64_t read_size(const std::string &path) {
    std::ifstream f(path);
    std::string s;
    if (!(f >> s) || s.empty()) return 0;
    char unit = s.back();
    int64_t n = std::atoll(s.c_str());
    if (unit == 'K') n <<= 10;
    if (unit == 'M') n <<= 20;
    return n;
}

std::string read_word(const std::string &path) {
    std::ifstream f(path);
    std::string s;
    f >> s;
    return s;
}

}  // namespace

MachineModel MachineModel::host() {
    MachineModel m;
    unsigned n = std::thread::hardware_concurrency();
    if (n) m.threads = (int)n;
    for (int i = 0; i < 8; i++) {
        std::string dir = "/sys/devices/system/cpu/cpu0/cache/index" + std::to_string(i) + "/";
        std::string type = read_word(dir + "type"), level = read_word(dir + "level");
        int64_t size = read_size(dir + "size");
        if (type.empty() || !size || type == "Instruction") continue;
        if (level == "1") m.l1_bytes = size;
        if (level == "2") m.l2_bytes = size;
        if (level == "3") m.l3_bytes = size;
    }
    return m;
}

std::string MachineModel::to_string() const {
    char s[400];
    std::snprintf(s, sizeof(s),
                  "L1 %lld KiB, L2 %lld KiB, L3 %lld MiB, %d threads, %.1f GHz x %.0f ops/cycle; "
                  "bandwidth per core L1 %.0f, L2 %.0f, L3 %.0f, DRAM %.0f (all cores %.0f) bytes/ns; "
                  "parallel loop %.1f us",
                  (long long)(l1_bytes >> 10), (long long)(l2_bytes >> 10), (long long)(l3_bytes >> 20), threads, ghz,
                  ops_per_cycle, l1_bytes_per_ns, l2_bytes_per_ns, l3_bytes_per_ns, dram_bytes_per_ns,
                  dram_total_bytes_per_ns, parallel_loop_ns / 1000);
    return s;
}

std::string CostTerms::to_string() const {
    char s[160];
    std::snprintf(s, sizeof(s), "%.3f ms (compute %.3f, memory %.3f, overhead %.3f)", total() / 1e6, compute / 1e6,
                  memory / 1e6, overhead / 1e6);
    return s;
}

}  // namespace kiln
