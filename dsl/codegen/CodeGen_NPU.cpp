// The tile-NPU code generator (see CodeGen_NPU.h): loop nest -> selected
// instructions (NpuSelect.cpp) -> UB allocation with the overflow check ->
// flags (NpuSync.cpp) -> C++ kernel and host stub.
#include "CodeGen_NPU.h"

#include <cctype>
#include <cstdlib>
#include <sstream>

#include "CNames.h"
#include "NpuKernel.h"
#include "ir/Error.h"
#include "npu_machine.h"
#include "lower/RealizationOrder.h"

extern const char kiln_embedded_kiln_runtime_h[];
extern const char kiln_embedded_kiln_prologue_h[];
// What every kernel and stub uses (GM binding, Kiln's integer division, tiles).
extern const char kiln_embedded_kiln_npu_helpers_h[];

namespace kiln {
namespace internal {

namespace {

// Places every buffer in its memory; an overflow is a user error with each Func's share.
void allocate(NpuKernel &k) {
    const char *path = std::getenv("KILN_NPU_MACHINE");
    npu::Machine m = npu::default_machine();
    try {
        if (path && *path) m = npu::load_machine(path);
    } catch (const npu::NpuError &e) {
        user_error << "NPU target: KILN_NPU_MACHINE: " << e.what();
    }
    std::map<std::string, uint64_t> next;
    std::map<std::string, std::map<std::string, uint64_t>> share;  // memory -> Func -> bytes
    std::map<std::string, npu::Mem> mems;
    for (NpuBuffer &b : k.buffers) {
        const char *mem = npu::mem_name(b.memory);
        uint64_t &addr = next[mem];
        b.addr = (int)addr;
        uint64_t bytes = (uint64_t)b.bytes() * b.copies;
        addr += (bytes + m.alignment - 1) / m.alignment * m.alignment;
        share[mem][b.owner] += bytes;
        mems[mem] = b.memory;
    }
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

// The tile of an operand: kiln_tile(core, [Mem::M, ]address, rows, cols, valid rows, valid cols, name[, DType::T]).
std::string tile_code(const NpuBuffer &buf, const NpuArg &a) {
    std::string addr = "kiln_addr(" + std::to_string(a.buffer) + ")", type = npu::dtype_name(buf.dtype);
    if (a.row0) addr += " + " + std::to_string(a.row0 * buf.cols * npu::dtype_size(buf.dtype));
    for (char &c : type) c = (char)std::toupper((unsigned char)c);  // "u8" -> DType::U8
    return "kiln_tile(core, " + (buf.memory == npu::Mem::UB ? "" : "Mem::" + std::string(npu::mem_name(buf.memory)) + ", ") +
           addr + ", " + std::to_string(buf.rows - a.row0) + ", " + std::to_string(buf.cols) + ", " +
           std::to_string(a.rows) + ", " + std::to_string(a.cols) + ", \"" + buf.name + "\"" +
           (buf.dtype == npu::DType::F32 ? "" : ", DType::" + type) + ")";
}

void print(const NpuKernel &k, const std::vector<NpuItem> &items, int depth, std::ostream &out) {
    std::string ind(4 * depth, ' ');
    for (const NpuItem &i : items) {
        out << ind << (i.kind == NpuItem::Instr ? npu_instr_code(k, i) : i.text) << (i.kind == NpuItem::Loop ? " {\n" : "\n");
        if (i.kind != NpuItem::Loop) continue;
        print(k, i.body, depth + 1, out);
        out << ind << "}\n";
    }
}

// "stage1: 16 x 64 f32 x 2 at UB+0"
std::string describe(const NpuBuffer &b) {
    return b.name + ": " + std::to_string(b.rows) + " x " + std::to_string(b.cols) + " " + npu::dtype_name(b.dtype) +
           (b.copies > 1 ? " x 2" : "") + " at " + npu::mem_name(b.memory) + "+" + std::to_string(b.addr);
}

std::string c_type(const Type &t) {
    if (t.is_float()) return t.bits == 64 ? "double" : "float";
    if (t.is_bool()) return "bool";
    return std::string(t.is_uint() ? "uint" : "int") + std::to_string(t.bits) + "_t";
}

std::string c_name(const std::string &ir) { return npu_c_name(ir); }

}  // namespace

std::string npu_instr_code(const NpuKernel &k, const NpuItem &i) {
    std::string s = std::string("core.") + npu::op_name(i.op) + (i.transpose ? "_T(" : "(");
    for (size_t j = 0; j < i.args.size(); j++)
        s += (j ? ", " : "") + (i.args[j].buffer >= 0 ? tile_code(k.buffers[i.args[j].buffer], i.args[j]) : i.args[j].code);
    return s + (i.op == npu::Op::TCMP ? std::string(", Cmp::") + npu::cmp_name(i.cmp) : "") + ");";
}

std::string codegen_npu(const std::vector<std::shared_ptr<FunctionContents>> &outputs, const std::string &name,
                        const std::vector<LoweredArgument> &args, const Target &t) {
    std::vector<std::string> out_names;
    for (const auto &o : outputs) out_names.push_back(o->name);
    Environment env = find_environment(outputs);
    LowerOptions nest_only;
    nest_only.stop = LowerStop::LoopNest;
    Stmt nest = lower(outputs, name, args, t, nest_only).body;
    NpuKernel k = npu_select_kernel(name, nest, env, out_names, t);
    allocate(k);
    npu_insert_sync(k);

    std::ostringstream s;
    s << "// Generated by Kiln: tile-NPU kernel " << name << " and its host stub, for target " << t.to_string()
      << ".\n#pragma GCC diagnostic ignored \"-Wunused-variable\"\n#pragma GCC diagnostic ignored "
         "\"-Wunused-but-set-variable\"\n\n"
      << kiln_embedded_kiln_runtime_h << "\n"
      << kiln_embedded_kiln_prologue_h << "\n#include <string>\n#include \"kiln_npu.h\"\n\n"
      << kiln_embedded_kiln_npu_helpers_h << "\n";
    // The kernel.
    std::string params;
    for (const LoweredArgument &a : args)
        params += ", " + (a.is_buffer ? "const kiln_gm &" + c_name(a.name) + "_buf" : c_type(a.type) + " " + c_name(a.name));
    s << "void " << name << "_kernel(Core &core" << params << ") {\n";
    s << "    // UB buffers: base address, bytes of one copy, copies.\n";
    std::string base, bytes, copies;
    for (const NpuBuffer &b : k.buffers) {
        s << "    //   " << describe(b) << "\n";
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
    print(k, k.body, 1, s);
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
