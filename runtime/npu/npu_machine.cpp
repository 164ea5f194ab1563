// Reading machine files (see npu_machine.h).
#include "npu_machine.h"

#include <fstream>
#include <sstream>

#include <nlohmann/json.hpp>

extern const char kiln_embedded_machine_json[];

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

}  // namespace

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

}  // namespace npu
}  // namespace kiln
