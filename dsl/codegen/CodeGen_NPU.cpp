// The tile-NPU code generator (see CodeGen_NPU.h): loop nest -> selected
// instructions (NpuSelect.cpp) -> UB allocation with the overflow check ->
// flags (NpuSync.cpp) -> C++ kernel and host stub.
#include "CodeGen_NPU.h"

#include <cstdlib>
#include <sstream>

#include "CNames.h"
#include "NpuKernel.h"
#include "ir/Error.h"
#include "lower/RealizationOrder.h"
#include "npu_machine.h"

extern const char kiln_embedded_kiln_runtime_h[];
extern const char kiln_embedded_kiln_prologue_h[];

namespace kiln {
namespace internal {

namespace {

const npu::Machine &codegen_machine() {
    static npu::Machine m;
    const char *path = std::getenv("KILN_NPU_MACHINE");
    if (!path || !*path) return npu::default_machine();
    try {
        m = npu::load_machine(path);
    } catch (const npu::NpuError &e) {
        user_error << "NPU target: KILN_NPU_MACHINE: " << e.what();
    }
    return m;
}

// Places every buffer in its memory; an overflow is a user error with each Func's share.
void allocate(NpuKernel &k, const npu::Machine &m) {
    std::map<std::string, uint64_t> next;
    std::map<std::string, std::map<std::string, uint64_t>> share;  // memory -> Func -> bytes
    for (NpuBuffer &b : k.buffers) {
        uint64_t &addr = next[b.memory];
        b.addr = (int)addr;
        uint64_t bytes = (uint64_t)b.bytes() * b.copies;
        addr += (bytes + m.alignment - 1) / m.alignment * m.alignment;
        share[b.memory][b.owner] += bytes;
    }
    static const std::map<std::string, npu::Mem> mems = {{"UB", npu::Mem::UB}, {"L1", npu::Mem::L1},
                                                         {"L0A", npu::Mem::L0A}, {"L0B", npu::Mem::L0B},
                                                         {"L0C", npu::Mem::L0C}};
    for (const auto &kv : next) {
        uint64_t cap = m.capacity(mems.at(kv.first)), used = kv.second;
        if (used <= cap) continue;
        std::ostringstream s;
        s << "NPU target: the buffers of this schedule need " << used << " bytes of " << kv.first
          << " but the machine has " << cap << " (over by " << used - cap
          << "). Each Func's share (its buffer, staged inputs and temporaries):";
        for (const auto &f : share[kv.first]) s << " " << f.first << " " << f.second;
        s << ". Use smaller tiles (the constant extents of the tile loops), drop double_buffer() on a Func, or "
             "compute_root() a Func so that it goes through GM";
        user_error << s.str();
    }
}

void print(const std::vector<NpuItem> &items, int depth, std::ostringstream &out) {
    std::string ind(4 * depth, ' ');
    for (const NpuItem &i : items) {
        if (i.kind == NpuItem::Loop) {
            out << ind << i.text << " {\n";
            print(i.body, depth + 1, out);
            out << ind << "}\n";
        } else {
            out << ind << i.text << "\n";
        }
    }
}

std::string c_type(const Type &t) {
    if (t.is_float()) return t.bits == 64 ? "double" : "float";
    if (t.is_bool()) return "bool";
    return std::string(t.is_uint() ? "uint" : "int") + std::to_string(t.bits) + "_t";
}

std::string c_name(const std::string &ir) { return npu_c_name(ir); }

const char *const kHelpers = R"(namespace {
using namespace kiln::npu;

// A bound GM buffer with its halide_buffer_t fields.
struct kiln_gm {
    GlobalTensor t;
    int32_t min[2] = {0, 0}, extent[2] = {1, 1}, stride[2] = {1, 0};
};

kiln_gm kiln_bind(Device &dev, const char *name, const halide_buffer_t *b) {
    kiln_gm g;
    uint64_t elems = 1;
    for (int d = 0; d < b->dimensions && d < 2; d++) {
        g.min[d] = b->dim[d].min;
        g.extent[d] = b->dim[d].extent;
        g.stride[d] = b->dim[d].stride;
        elems += (uint64_t)(b->dim[d].extent > 0 ? b->dim[d].extent - 1 : 0) * b->dim[d].stride;
    }
    g.t = dev.bind(name, DType::F32, b->host, elems);
    return g;
}

// Kiln's integer division and modulo (Euclidean; x / 0 == 0), min and max.
inline int32_t kiln_npu_div(int32_t a, int32_t b) {
    if (b == 0) return 0;
    int32_t q = a / b, r = a % b;
    return r < 0 ? (b > 0 ? q - 1 : q + 1) : q;
}
inline int32_t kiln_npu_mod(int32_t a, int32_t b) { return b == 0 ? 0 : a - kiln_npu_div(a, b) * b; }
template <typename T> inline T kiln_npu_min(T a, T b) { return a < b ? a : b; }
template <typename T> inline T kiln_npu_max(T a, T b) { return a > b ? a : b; }

// A tile of UB (or of `mem`) whose instructions touch its top-left valid_rows x valid_cols.
inline Tile kiln_tile(Core &core, Mem mem, uint32_t addr, uint32_t rows, uint32_t cols, uint32_t valid_rows,
                      uint32_t valid_cols, const char *name, DType type = DType::F32) {
    Tile t = core.tile(mem, addr, type, rows, cols, name);
    t.set_valid(valid_rows, valid_cols);
    return t;
}
inline Tile kiln_tile(Core &core, uint32_t addr, uint32_t rows, uint32_t cols, uint32_t valid_rows,
                      uint32_t valid_cols, const char *name, DType type = DType::F32) {
    return kiln_tile(core, Mem::UB, addr, rows, cols, valid_rows, valid_cols, name, type);
}

std::string kiln_last_report;

// Thrown by the kernel's run-time checks (after kiln_error), returned by the stub.
struct kiln_npu_check_failed {
    int code;
};
)";

}  // namespace

std::string codegen_npu(const std::vector<std::shared_ptr<FunctionContents>> &outputs, const std::string &name,
                        const std::vector<LoweredArgument> &args, const Target &t) {
    std::vector<std::string> out_names;
    for (const auto &o : outputs) out_names.push_back(o->name);
    Environment env = find_environment(outputs);
    LowerOptions nest_only;
    nest_only.stop = LowerStop::LoopNest;
    Stmt nest = lower(outputs, name, args, t, nest_only).body;
    NpuKernel k = npu_select_kernel(name, nest, env, out_names, t);
    const npu::Machine &m = codegen_machine();
    allocate(k, m);
    npu_insert_sync(k);

    std::ostringstream s;
    s << "// Generated by Kiln: tile-NPU kernel " << name << " and its host stub, for target " << t.to_string()
      << ".\n#pragma GCC diagnostic ignored \"-Wunused-variable\"\n#pragma GCC diagnostic ignored "
         "\"-Wunused-but-set-variable\"\n\n"
      << kiln_embedded_kiln_runtime_h << "\n"
      << kiln_embedded_kiln_prologue_h << "\n#include <string>\n#include \"kiln_npu.h\"\n\n"
      << kHelpers << "\n";
    // The kernel.
    std::string params;
    for (const LoweredArgument &a : args)
        params += ", " + (a.is_buffer ? "const kiln_gm &" + c_name(a.name) + "_buf" : c_type(a.type) + " " + c_name(a.name));
    s << "void " << name << "_kernel(Core &core" << params << ") {\n";
    s << "    // UB buffers: base address, bytes of one copy, copies.\n";
    std::string base, bytes, copies;
    for (const NpuBuffer &b : k.buffers) {
        s << "    //   " << b.name << ": " << b.rows << " x " << b.cols << " " << (b.dtype == "U8" ? "u8" : "f32")
          << (b.copies > 1 ? " x 2" : "") << " at " << b.memory << "+" << b.addr << "\n";
        base += std::to_string(b.addr) + "u, ";
        bytes += std::to_string(b.bytes()) + "u, ";
        copies += std::to_string(b.copies) + ", ";
    }
    s << "    static const uint32_t kiln_base[] = {" << base << "0u}, kiln_bytes[] = {" << bytes << "0u};\n"
      << "    static const int kiln_copies[] = {" << copies << "0};\n"
      << "    int32_t kiln_pp = 0, kiln_iter = 0;\n"
      << "    auto kiln_addr = [&](int b) { return kiln_base[b] + (kiln_copies[b] > 1 ? (uint32_t)kiln_pp * "
         "kiln_bytes[b] : 0u); };\n";
    for (const LoweredArgument &a : args) {
        if (!a.is_buffer) continue;
        std::string n = c_name(a.name);
        s << "    const GlobalTensor " << n << "_gm = " << n << "_buf.t;\n";
        for (int d = 0; d < a.dimensions && d < 2; d++)
            for (const char *f : {"min", "extent", "stride"})
                s << "    const int32_t " << c_name(a.name + "." + f + "." + std::to_string(d)) << " = " << n << "_buf."
                  << f << "[" << d << "];\n";
    }
    print(k.body, 1, s);
    s << "}\n\n}  // namespace\n\n";
    // The host stub.
    s << "extern \"C\" const char *" << name << "_npu_report(void) { return kiln_last_report.c_str(); }\n\n";
    s << "extern \"C\" int " << name << "(";
    for (size_t i = 0; i < args.size(); i++)
        s << (i ? ", " : "") << (args[i].is_buffer ? "halide_buffer_t *" : c_type(args[i].type) + " ") << c_name(args[i].name);
    s << ") {\n";
    for (const LoweredArgument &a : args) {
        if (!a.is_buffer) continue;
        user_assert(a.type == Float(32) && (a.dimensions == 1 || a.dimensions == 2))
            << "NPU target: buffer argument " << a.name << " is a " << a.dimensions << "-D " << a.type.to_string()
            << " buffer; the NPU code generator handles 1-D and 2-D float32 buffers, so convert it to "
                   "float32 on the host or leave it out of the NPU kernel's arguments";
        s << "    if (int err = kiln_check_buffer(" << c_name(a.name) << ", \"" << name << "\", \"" << a.name << "\", "
          << halide_type_code_name(a.type.code) << ", " << (int)a.type.bits << ", " << a.dimensions << ")) return err;\n";
    }
    s << "    try {\n"
      << "        const char *machine_file = std::getenv(\"KILN_NPU_MACHINE\");\n"
      << "        Device dev(machine_file && *machine_file ? load_machine(machine_file) : default_machine());\n";
    std::string call;
    for (const LoweredArgument &a : args) {
        std::string n = c_name(a.name);
        if (a.is_buffer) {
            s << "        const kiln_gm " << n << "_buf = kiln_bind(dev, \"" << a.name << "\", " << n << ");\n";
            call += ", " + n + "_buf";
        } else {
            call += ", " + n;
        }
    }
    s << "        SimOptions options;\n"
      << "        options.races_are_errors = true;\n"
      << "        const char *trace = std::getenv(\"KILN_NPU_TRACE\");\n"
      << "        options.trace = trace && *trace;\n"
      << "        SimReport r = dev.run(" << (k.multi_core ? 0 : 1) << ", [&](Core &core) { " << name
      << "_kernel(core" << call << "); }, options);\n"
      << "        kiln_last_report = r.json();\n"
      << "        if (options.trace) {\n"
      << "            FILE *f = std::fopen(trace, \"w\");\n"
      << "            if (f) { std::string j = r.trace_json(); std::fwrite(j.data(), 1, j.size(), f); std::fclose(f); }\n"
      << "        }\n"
      << "    } catch (const kiln_npu_check_failed &e) {\n"
      << "        return e.code;\n"
      << "    } catch (const NpuError &e) {\n"
      << "        kiln_error(\"" << name << ": NPU: %s\", e.what());\n"
      << "        return kiln_error_npu;\n"
      << "    }\n"
      << "    return 0;\n}\n\n";
    s << "extern \"C\" int " << name << "_argv(void **args) {\n    return " << name << "(";
    for (size_t i = 0; i < args.size(); i++)
        s << (i ? ", " : "")
          << (args[i].is_buffer ? "(halide_buffer_t *)args[" + std::to_string(i) + "]"
                                : "*(const " + c_type(args[i].type) + " *)args[" + std::to_string(i) + "]");
    s << ");\n}\n";
    return s.str();
}

}  // namespace internal
}  // namespace kiln
