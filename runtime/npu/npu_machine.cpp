// Reading machine files (see npu_machine.h).
#include "npu_machine.h"

#include <algorithm>
#include <fstream>
#include <sstream>

#include <nlohmann/json.hpp>

extern const char kiln_embedded_machine_json[];
extern const char kiln_embedded_machine_split_json[];

namespace kiln {
namespace npu {

namespace {

using nlohmann::json;

const json &field(const json &j, const char *key, const std::string &where) {
    auto it = j.find(key);
    if (it == j.end()) throw NpuError("machine file: missing field '" + where + key + "'");
    return *it;
}

uint64_t positive(const json &j, const char *key, const std::string &where, bool allow_zero = false) {
    const json &v = field(j, key, where);
    if (!v.is_number_integer() || v.get<int64_t>() < 0 || (!allow_zero && v.get<int64_t>() == 0))
        throw NpuError("machine file: field '" + where + key + "' must be a " +
                       (allow_zero ? "non-negative" : "positive") + " integer, not " + v.dump());
    return v.get<uint64_t>();
}

// The names in `list` (a JSON array of strings) as flags of `n` values named by `name_of`.
template <typename E>
void names(const json &list, const std::string &where, const char *(*name_of)(E), int n, bool *out) {
    if (!list.is_array()) throw NpuError("machine file: field '" + where + "' must be an array of names");
    for (const json &v : list) {
        int i = 0;
        while (i < n && !(v.is_string() && v.get<std::string>() == name_of((E)i))) i++;
        if (i == n) {
            std::string legal;
            for (int k = 0; k < n; k++) legal += std::string(k ? ", " : "") + name_of((E)k);
            throw NpuError("machine file: '" + where + "' names " + v.dump() + "; the names are " + legal);
        }
        out[i] = true;
    }
}

// "kinds": [{"name", "count", "per_group", "memories", "pipes"}, ...]; without it one kind has everything.
void parse_kinds(const json &j, Machine &m) {
    if (!j.contains("kinds")) {
        CoreKind k;
        k.name = "unified";
        k.count = m.cores;
        std::fill(k.mem, k.mem + kNumMems, true);
        std::fill(k.pipe, k.pipe + kNumPipes, true);
        m.kinds.push_back(k);
        return;
    }
    const json &list = j["kinds"];
    if (!list.is_array() || list.empty()) throw NpuError("machine file: field 'kinds' must be a non-empty array");
    int total = 0;
    for (size_t i = 0; i < list.size(); i++) {
        const std::string where = "kinds[" + std::to_string(i) + "].";
        CoreKind k;
        const json &name = field(list[i], "name", where);
        if (!name.is_string() || name.get<std::string>().empty())
            throw NpuError("machine file: field '" + where + "name' must be a non-empty string");
        k.name = name.get<std::string>();
        if (m.kind_index(k.name) >= 0) throw NpuError("machine file: two kinds are called '" + k.name + "'");
        k.count = (int)positive(list[i], "count", where);
        k.per_group = (int)positive(list[i], "per_group", where);
        names<Mem>(field(list[i], "memories", where), where + "memories", mem_name, kNumMems, k.mem);
        names<Pipe>(field(list[i], "pipes", where), where + "pipes", pipe_name, kNumPipes, k.pipe);
        k.mem[(int)Mem::GM] = k.pipe[(int)Pipe::S] = true;  // every core reaches GM and issues on S
        if (k.count % k.per_group != 0)
            throw NpuError("machine file: kind '" + k.name + "' has " + std::to_string(k.count) +
                           " cores, not a multiple of its per_group " + std::to_string(k.per_group));
        if (!m.kinds.empty() && k.count / k.per_group != m.groups())
            throw NpuError("machine file: kind '" + k.name + "' makes " + std::to_string(k.count / k.per_group) +
                           " groups but kind '" + m.kinds[0].name + "' makes " + std::to_string(m.groups()) +
                           "; every kind has per_group cores in each group");
        total += k.count;
        m.kinds.push_back(k);
    }
    if (total != m.cores)
        throw NpuError("machine file: 'cores' is " + std::to_string(m.cores) + " but the kinds have " +
                       std::to_string(total) + " cores together");
}

}  // namespace

int Machine::kind_index(const std::string &kind_name) const {
    for (size_t i = 0; i < kinds.size(); i++)
        if (kinds[i].name == kind_name) return (int)i;
    return -1;
}

Machine parse_machine(const std::string &text) {
    json j;
    try {
        j = json::parse(text);
    } catch (const json::exception &e) {
        throw NpuError(std::string("machine file: not valid JSON: ") + e.what());
    }
    Machine m;
    m.name = j.value("name", "unnamed");
    m.cores = (int)positive(j, "cores", "");
    m.alignment = (uint32_t)positive(j, "alignment", "");
    const json &mems = field(j, "memories", "");
    for (int i = 0; i < kNumMems; i++) {
        const char *name = mem_name((Mem)i);
        m.mem_bytes[i] = positive(field(mems, name, "memories."), "bytes", std::string("memories.") + name + ".",
                                  /*allow_zero=*/i == (int)Mem::GM);
        if (i != (int)Mem::GM && m.mem_bytes[i] % m.alignment != 0)
            throw NpuError(std::string("machine file: memories.") + name + ".bytes is not a multiple of the alignment");
    }
    m.issue_cycles = positive(j, "issue_cycles", "", true);
    m.sync_cycles = positive(j, "sync_cycles", "", true);
    if (j.contains("cross_flag_cycles"))  // optional: a split machine's cross-core flag latency
        m.cross_flag_cycles = positive(j, "cross_flag_cycles", "", true);
    parse_kinds(j, m);
    const json &dma = field(j, "dma", "");
    for (Pipe p : {Pipe::MTE2, Pipe::MTE1, Pipe::MTE3, Pipe::FIX}) {
        std::string where = std::string("dma.") + pipe_name(p) + ".";
        const json &d = field(dma, pipe_name(p), "dma.");
        m.dma[(int)p].latency = positive(d, "latency", where, true);
        m.dma[(int)p].bytes_per_cycle = positive(d, "bytes_per_cycle", where);
    }
    if (j.contains("gm"))  // optional: the GM bandwidth the cores share
        m.gm_bytes_per_cycle = positive(j["gm"], "bytes_per_cycle", "gm.");
    const json &v = field(j, "vector", "");
    m.vector_bytes_per_cycle = positive(v, "bytes_per_cycle", "vector.");
    m.transcendental_factor = positive(v, "transcendental_factor", "vector.");
    m.reduce_factor = positive(v, "reduce_factor", "vector.");
    const json &mx = field(j, "matrix", "");
    m.matrix_m = (uint32_t)positive(mx, "m", "matrix.");
    m.matrix_n = (uint32_t)positive(mx, "n", "matrix.");
    m.matrix_k_bytes = (uint32_t)positive(mx, "k_bytes", "matrix.");
    if (mx.contains("k_elements")) {  // optional: the k-step of each operand type
        const json &ke = mx["k_elements"];
        for (DType t : {DType::F32, DType::F16, DType::BF16, DType::I8})
            if (ke.contains(dtype_name(t)))
                m.matrix_k_elements[(int)t] = (uint32_t)positive(ke, dtype_name(t), "matrix.k_elements.");
    }
    return m;
}

Machine load_machine(const std::string &path) {
    std::ifstream f(path);
    if (!f) throw NpuError("machine file: cannot read '" + path + "'");
    std::stringstream ss;
    ss << f.rdbuf();
    try {
        return parse_machine(ss.str());
    } catch (const NpuError &e) {
        throw NpuError(path + ": " + e.what());
    }
}

const char *default_machine_json() { return kiln_embedded_machine_json; }

const Machine &default_machine() {
    static const Machine m = parse_machine(kiln_embedded_machine_json);
    return m;
}

const char *split_machine_json() { return kiln_embedded_machine_split_json; }

const Machine &split_machine() {
    static const Machine m = parse_machine(kiln_embedded_machine_split_json);
    return m;
}

}  // namespace npu
}  // namespace kiln
