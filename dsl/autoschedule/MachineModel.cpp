// MachineModel::host(): the cache sizes of this machine from sysfs, its
// thread count as the runtime counts it ($KILN_NUM_THREADS, else the cores
// the process may run on), and the rates from the machine file
// kiln-calibrate wrote, if any (else their defaults, Autoschedule.h).
#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>

#include "kiln_runtime.h"

#include "kiln/Autoschedule.h"
#include "kiln/Error.h"
#include "kiln/Target.h"

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

// Whether $KILN_NUM_THREADS sets the runtime's thread count (a positive
// number): then kernels run with it whatever a machine file says.
bool threads_set_by_environment() {
    const char *s = std::getenv("KILN_NUM_THREADS");
    return s && std::atoi(s) > 0;
}

// Whether libgomp's workers sleep between parallel loops: the passive wait
// policy, or a spin count of 0 (which is what the policy sets).
bool workers_sleep_by_environment() {
    const char *policy = std::getenv("OMP_WAIT_POLICY"), *spins = std::getenv("GOMP_SPINCOUNT");
    std::string p = policy ? policy : "";
    std::transform(p.begin(), p.end(), p.begin(), [](unsigned char c) { return (char)std::tolower(c); });
    return p == "passive" || (spins && std::string(spins) == "0");
}

std::string read_word(const std::string &path) {
    std::ifstream f(path);
    std::string s;
    f >> s;
    return s;
}

// The fields of a machine file, by name, in MachineModel's order.
struct Field {
    const char *name;
    double MachineModel::*real = nullptr;
    int64_t MachineModel::*bytes = nullptr;
    int MachineModel::*count = nullptr;
};
const std::vector<Field> &fields() {
    static const std::vector<Field> f = {
        {"l1_bytes", nullptr, &MachineModel::l1_bytes},
        {"l2_bytes", nullptr, &MachineModel::l2_bytes},
        {"l3_bytes", nullptr, &MachineModel::l3_bytes},
        {"l1_ways", nullptr, nullptr, &MachineModel::l1_ways},
        {"l2_ways", nullptr, nullptr, &MachineModel::l2_ways},
        {"line_bytes", nullptr, &MachineModel::line_bytes},
        {"vector_bytes", nullptr, &MachineModel::vector_bytes},
        {"threads", nullptr, nullptr, &MachineModel::threads},
        {"ghz", &MachineModel::ghz},
        {"ops_per_cycle", &MachineModel::ops_per_cycle},
        {"unvectorized_lanes", &MachineModel::unvectorized_lanes},
        {"div_cycles", &MachineModel::div_cycles},
        {"transcendental_cycles", &MachineModel::transcendental_cycles},
        {"l1_bytes_per_ns", &MachineModel::l1_bytes_per_ns},
        {"l2_bytes_per_ns", &MachineModel::l2_bytes_per_ns},
        {"l3_bytes_per_ns", &MachineModel::l3_bytes_per_ns},
        {"dram_bytes_per_ns", &MachineModel::dram_bytes_per_ns},
        {"dram_total_bytes_per_ns", &MachineModel::dram_total_bytes_per_ns},
        {"parallel_loop_ns", &MachineModel::parallel_loop_ns},
        {"parallel_wake_ns", &MachineModel::parallel_wake_ns},
        {"allocation_ns", &MachineModel::allocation_ns},
        {"page_ns", &MachineModel::page_ns},
    };
    return f;
}

std::string trim(const std::string &s) {
    size_t b = s.find_first_not_of(" \t\r"), e = s.find_last_not_of(" \t\r");
    return b == std::string::npos ? "" : s.substr(b, e - b + 1);
}

}  // namespace

std::string MachineModel::machine_file() {
    const char *named = std::getenv("KILN_MACHINE");
    if (named && *named) return std::string(named) == "none" ? "" : named;
    const char *config = std::getenv("XDG_CONFIG_HOME");
    const char *home = std::getenv("HOME");
    if (config && *config) return std::string(config) + "/kiln/machine.txt";
    if (home && *home) return std::string(home) + "/.config/kiln/machine.txt";
    return "";
}

MachineModel MachineModel::with_file(const std::string &path) const {
    std::ifstream in(path);
    if (!in) throw CompileError("machine file " + path + ": cannot be read");
    MachineModel m = *this;
    std::string line;
    for (int number = 1; std::getline(in, line); number++) {
        line = trim(line.substr(0, line.find('#')));
        if (line.empty()) continue;
        const std::string at = "machine file " + path + ":" + std::to_string(number) + ": ";
        size_t eq = line.find('=');
        if (eq == std::string::npos) throw CompileError(at + "expected `name = value`, got `" + line + "`");
        std::string name = trim(line.substr(0, eq)), text = trim(line.substr(eq + 1));
        const Field *field = nullptr;
        for (const Field &f : fields())
            if (name == f.name) field = &f;
        if (!field) {
            std::string known;
            for (const Field &f : fields()) known += std::string(known.empty() ? "" : ", ") + f.name;
            throw CompileError(at + "unknown name `" + name + "`; the names are " + known);
        }
        char *end = nullptr;
        double v = std::strtod(text.c_str(), &end);
        if (text.empty() || *end != '\0' || !std::isfinite(v) || v <= 0)
            throw CompileError(at + name + " must be a positive number, not `" + text + "`");
        if (field->real) m.*(field->real) = v;
        if (field->bytes) m.*(field->bytes) = (int64_t)v;
        if (field->count) m.*(field->count) = std::max(1, (int)v);
    }
    m.source = path;
    return m;
}

std::string MachineModel::file_text(const std::string &header) const {
    std::ostringstream os;
    std::istringstream h(header);
    for (std::string line; std::getline(h, line);) os << "# " << line << "\n";
    for (const Field &f : fields()) {
        os << f.name << " = ";
        if (f.real) os << *this.*(f.real);
        if (f.bytes) os << *this.*(f.bytes);
        if (f.count) os << *this.*(f.count);
        os << "\n";
    }
    return os.str();
}

MachineModel MachineModel::detected() {
    MachineModel m;
    m.threads = kiln_num_threads();  // what the parallel loops will use
    m.workers_sleep = workers_sleep_by_environment();
    // A loop the schedule leaves serial and g++ vectorizes (-O3
    // -march=native) runs at the host's full float width: the model's
    // error over the suite was least so (docs/autoschedule.md, "The model's
    // error (session 44)"). Loops through exp and the like stay scalar
    // (FuncCounts::scalar_call_stores).
    m.unvectorized_lanes = Target::host().natural_vector_size(Float(32));
    m.vector_bytes = Target::host().natural_vector_size(UInt(8));
    for (int i = 0; i < 8; i++) {
        std::string dir = "/sys/devices/system/cpu/cpu0/cache/index" + std::to_string(i) + "/";
        std::string type = read_word(dir + "type"), level = read_word(dir + "level");
        int64_t size = read_size(dir + "size");
        if (type.empty() || !size || type == "Instruction") continue;
        const int ways = std::atoi(read_word(dir + "ways_of_associativity").c_str());
        const int64_t line = std::atoll(read_word(dir + "coherency_line_size").c_str());
        if (line > 0) m.line_bytes = line;
        if (level == "1") m.l1_bytes = size, m.l1_ways = ways > 0 ? ways : m.l1_ways;
        if (level == "2") m.l2_bytes = size, m.l2_ways = ways > 0 ? ways : m.l2_ways;
        if (level == "3") m.l3_bytes = size;
    }
    return m;
}

MachineModel MachineModel::host() {
    // The machine file may set the caches and threads too (another machine's
    // figures, or a cache the kernel reports differently from sysfs).
    const std::string file = machine_file();
    MachineModel m = detected();
    if (!file.empty() && std::ifstream(file).good()) m = m.with_file(file);
    if (threads_set_by_environment()) m.threads = kiln_num_threads();
    return m;
}

std::string MachineModel::to_string() const {
    char s[600];
    std::snprintf(s, sizeof(s),
                  "L1 %lld KiB, L2 %lld KiB, L3 %lld MiB (L1 %d-way, L2 %d-way, lines of %lld bytes), %d threads, "
                  "%.1f GHz x %.0f ops/cycle; "
                  "bandwidth per core L1 %.0f, L2 %.0f, L3 %.0f, DRAM %.0f (all cores %.0f) bytes/ns; "
                  "parallel loop %.1f us%s (%s)",
                  (long long)(l1_bytes >> 10), (long long)(l2_bytes >> 10), (long long)(l3_bytes >> 20), l1_ways, l2_ways,
                  (long long)line_bytes, threads, ghz,
                  ops_per_cycle, l1_bytes_per_ns, l2_bytes_per_ns, l3_bytes_per_ns, dram_bytes_per_ns,
                  dram_total_bytes_per_ns, parallel_start_ns() / 1000,
                  workers_sleep ? ", its workers woken (OMP_WAIT_POLICY=passive)" : "",
                  source == "defaults" ? "rates: defaults" : ("calibrated: " + source).c_str());
    return s;
}

std::string CostTerms::to_string() const {
    char s[200];
    std::snprintf(s, sizeof(s), "%.3f ms (compute %.3f, memory %.3f, overhead %.3f", total() / 1e6, compute / 1e6,
                  memory / 1e6, overhead / 1e6);
    std::string r = s;
    if (aliasing > 0) {
        std::snprintf(s, sizeof(s), ", aliasing %.3f", aliasing / 1e6);
        r += s;
    }
    return r + ")";
}

}  // namespace kiln
