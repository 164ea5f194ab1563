// The simulator's report: static counts of a program, and the report as
// text, JSON and a Chrome trace.
#include <algorithm>
#include <sstream>

#include <nlohmann/json.hpp>

#include "npu_sim.h"

namespace kiln {
namespace npu {

void count_program(const CoreProgram &p, SimReport &r) {
    std::map<std::string, std::map<uint64_t, uint64_t>> ranges;  // per named buffer: tile start -> end
    auto note_tile = [&](const TileRef &t) {
        uint64_t end = (uint64_t)t.addr + t.bytes();
        uint64_t &peak = r.peak_bytes[(int)t.mem];
        peak = std::max(peak, end);
        if (t.name < 0 || t.name >= (int)p.tile_names.size()) return;
        uint64_t &e = ranges[p.tile_names[t.name]][t.addr];
        e = std::max(e, end);
    };
    for (const Instr &in : p.instrs) {
        r.op_counts[op_name(in.op)]++;
        r.family_counts[family_name(op_family(in.op))]++;
        if (op_family(in.op) == Family::DMA) {
            Mem src = in.op == Op::TLOAD ? Mem::GM : in.a.mem, dst = in.op == Op::TSTORE ? Mem::GM : in.dst.mem;
            uint64_t bytes = dma_bytes(in);
            r.dma_bytes[std::string(mem_name(src)) + "->" + mem_name(dst)] += bytes;
            if (src == Mem::GM) r.gm_read_bytes += bytes;
            if (dst == Mem::GM) r.gm_write_bytes += bytes;
        }
        if (in.op == Op::TLOAD || op_family(in.op) == Family::Vector || op_family(in.op) == Family::Matrix ||
            in.op == Op::TMOV)
            note_tile(in.dst);
        if (in.op != Op::TLOAD && op_family(in.op) != Family::Sync && in.op != Op::TDUP) note_tile(in.a);
        if (reads_b(in.op) || in.op == Op::TCMP || in.op == Op::TSEL || op_family(in.op) == Family::Matrix)
            note_tile(in.b);
        if (in.op == Op::TSEL || in.has_bias) note_tile(in.c);
    }
    for (const auto &named : ranges) {  // bytes of the union of the buffer's tiles
        uint64_t total = 0, covered = 0;
        for (const auto &range : named.second) {
            uint64_t lo = std::max(range.first, covered);
            if (range.second > lo) total += range.second - lo;
            covered = std::max(covered, range.second);
        }
        uint64_t &b = r.buffer_bytes[named.first];
        b = std::max(b, total);
    }
}

double SimReport::busy_ratio(Pipe p) const {
    return cycles == 0 || cores == 0 ? 0.0 : (double)pipes[(int)p].busy / ((double)cycles * cores);
}

std::string SimReport::json() const {
    nlohmann::ordered_json j;
    j["machine"] = machine;
    j["cores"] = cores;
    j["cycles"] = cycles;
    j["core_cycles"] = core_cycles;
    for (const CoreFigures &c : per_core) {
        nlohmann::ordered_json o;
        o["cycles"] = c.cycles;
        if (kinds.size() > 1) o["kind"] = kinds[c.kind];
        for (int p = 0; p < kNumPipes; p++)
            o["busy_ratio"][pipe_name((Pipe)p)] = c.cycles ? (double)c.busy[p] / (double)c.cycles : 0.0;
        o["gm_read_bytes"] = c.gm_read_bytes;
        o["gm_write_bytes"] = c.gm_write_bytes;
        o["instructions"] = c.instructions;
        o["gm_wait_cycles"] = c.gm_wait;
        j["per_core"].push_back(o);
    }
    for (int p = 0; p < kNumPipes; p++) {
        auto &o = j["pipes"][pipe_name((Pipe)p)];
        o["busy_cycles"] = pipes[p].busy;
        o["busy_ratio"] = busy_ratio((Pipe)p);
        o["flag_stall_cycles"] = pipes[p].stall;
        o["instructions"] = pipes[p].instrs;
    }
    j["dma_bytes"] = dma_bytes;
    j["gm_read_bytes"] = gm_read_bytes;
    j["gm_write_bytes"] = gm_write_bytes;
    j["gm_wait_cycles"] = gm_wait;
    if (kinds.size() > 1)
        j["gm_exchange_bytes"] = {{"written", exchange_write_bytes}, {"read", exchange_read_bytes}};
    j["instructions_by_family"] = family_counts;
    j["instructions_by_op"] = op_counts;
    for (int mem = 1; mem < kNumMems; mem++) j["peak_bytes"][mem_name((Mem)mem)] = peak_bytes[mem];
    j["buffer_bytes"] = buffer_bytes;
    j["race_count"] = race_count;
    for (const Race &race : races) j["races"].push_back(race.text);
    return j.dump(2);
}

std::string SimReport::text() const {
    std::ostringstream s;
    s << "machine " << machine << ", " << cores << " core(s): " << cycles << " cycles\n";
    s << "pipe    busy%   busy cycles  flag stalls  instructions\n";
    for (int p = 0; p < kNumPipes; p++) {
        char line[128];
        std::snprintf(line, sizeof line, "%-6s %6.1f %13llu %12llu %13llu\n", pipe_name((Pipe)p),
                      100.0 * busy_ratio((Pipe)p), (unsigned long long)pipes[p].busy,
                      (unsigned long long)pipes[p].stall, (unsigned long long)pipes[p].instrs);
        s << line;
    }
    if (cores > 1) {
        const bool split = kinds.size() > 1;
        s << "core  " << (split ? "kind    " : "") << "cycles      V%   MTE2%     M%   GM read  GM write   GM wait\n";
        for (size_t c = 0; c < per_core.size(); c++) {
            const CoreFigures &f = per_core[c];
            auto pct = [&](Pipe p) { return f.cycles ? 100.0 * (double)f.busy[(int)p] / (double)f.cycles : 0.0; };
            char line[160];
            std::snprintf(line, sizeof line, "%-4zu ", c);
            s << line;
            if (split) {
                std::snprintf(line, sizeof line, "%-7s ", kinds[f.kind].c_str());
                s << line;
            }
            std::snprintf(line, sizeof line, "%7llu %7.1f %7.1f %6.1f %9llu %9llu %9llu\n",
                          (unsigned long long)f.cycles, pct(Pipe::V), pct(Pipe::MTE2), pct(Pipe::M),
                          (unsigned long long)f.gm_read_bytes, (unsigned long long)f.gm_write_bytes,
                          (unsigned long long)f.gm_wait);
            s << line;
        }
    }
    if (kinds.size() > 1)
        s << "GM round trip between kinds: " << exchange_write_bytes << " bytes written, " << exchange_read_bytes
          << " read back\n";
    s << "DMA bytes:";
    for (const auto &d : dma_bytes) s << " " << d.first << " " << d.second;
    s << "\ninstructions:";
    for (const auto &f : family_counts) s << " " << f.first << " " << f.second;
    s << "\npeak bytes:";
    for (int mem = 1; mem < kNumMems; mem++) s << " " << mem_name((Mem)mem) << " " << peak_bytes[mem];
    s << "\nbuffers:";
    for (const auto &b : buffer_bytes) s << " " << b.first << " " << b.second;
    s << "\nraces: " << race_count << "\n";
    for (const Race &race : races) s << "  " << race.text << "\n";
    return s.str();
}

std::string SimReport::trace_json() const {
    // Cycles are written as microseconds: 1 us on the time axis is 1 cycle.
    nlohmann::json events_json = nlohmann::json::array();
    for (int c = 0; c < cores; c++) {
        std::string name = "core " + std::to_string(c);
        if (kinds.size() > 1 && c < (int)per_core.size()) name += " (" + kinds[per_core[c].kind] + ")";
        events_json.push_back({{"name", "process_name"}, {"ph", "M"}, {"pid", c}, {"args", {{"name", name}}}});
        for (int p = 0; p < kNumPipes; p++)
            events_json.push_back({{"name", "thread_name"}, {"ph", "M"}, {"pid", c}, {"tid", p},
                              {"args", {{"name", pipe_name((Pipe)p)}}}});
    }
    for (const TraceEvent &e : events) {
        std::string name = e.text.substr(0, e.text.find_first_of(" ("));
        events_json.push_back({{"name", name}, {"ph", "X"}, {"pid", e.core}, {"tid", (int)e.pipe},
                               {"ts", e.start}, {"dur", std::max<uint64_t>(e.end - e.start, 1)},
                               {"args", {{"instr", e.instr}, {"text", e.text}, {"busy", e.busy}}}});
    }
    return nlohmann::json{{"traceEvents", events_json}, {"displayTimeUnit", "ns"}}.dump();
}

}  // namespace npu
}  // namespace kiln
