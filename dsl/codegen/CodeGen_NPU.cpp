// The tile-NPU code generator (see CodeGen_NPU.h): lower() to the loop nest,
// then the NPU's passes (NpuKernel.h: instruction selection, buffer
// placement, sync insertion), then the kernel printed as C++ with its host stub.
#include "CodeGen_NPU.h"

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <sstream>

#include "CNames.h"
#include "NpuKernel.h"
#include "ir/Error.h"
#include "lower/RealizationOrder.h"

extern const char kiln_embedded_kiln_runtime_h[];
extern const char kiln_embedded_kiln_prologue_h[];
extern const char kiln_embedded_kiln_vector_math_h[];
// What every kernel and stub uses (GM binding, Kiln's integer division, tiles).
extern const char kiln_embedded_kiln_npu_helpers_h[];

namespace kiln {
namespace internal {

namespace {

// The tile of an operand: kiln_tile(core, [Mem::M, ]address, rows, cols, valid rows, valid cols, name[, DType::T]).
// With `next`, a double-buffered buffer's copy is the next iteration's (kiln_addr_ahead: software pipelining).
std::string tile_code(const NpuBuffer &buf, const NpuArg &a, bool next = false) {
    std::string addr = std::string(next ? "kiln_addr_ahead(" : "kiln_addr(") + std::to_string(a.buffer) + ")",
                type = npu::dtype_name(buf.dtype);
    if (a.row0) addr += " + " + std::to_string(a.row0 * buf.cols * npu::dtype_size(buf.dtype));
    // A run-time row offset (a k-slice of an L1 panel): the tile is the slice's rows, inside the buffer.
    if (!a.row0_code.empty())
        addr += " + (uint32_t)(" + a.row0_code + ") * " + std::to_string(buf.cols * npu::dtype_size(buf.dtype)) + "u";
    const int rows = a.row0_code.empty() ? buf.rows - a.row0 : a.rows;
    for (char &c : type) c = (char)std::toupper((unsigned char)c);  // "u8" -> DType::U8
    return "kiln_tile(core, " + (buf.memory == npu::Mem::UB ? "" : "Mem::" + std::string(npu::mem_name(buf.memory)) + ", ") +
           addr + ", " + std::to_string(rows) + ", " + std::to_string(buf.cols) + ", " +
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

// "stage1: 16 x 64 f32 x 2 at UB+0 (copy 1 at UB+8192)"
std::string describe(const NpuBuffer &b) {
    std::string mem = npu::mem_name(b.memory);
    return b.name + ": " + std::to_string(b.rows) + " x " + std::to_string(b.cols) + " " + npu::dtype_name(b.dtype) +
           (b.copies > 1 ? " x 2" : "") + " at " + mem + "+" + std::to_string(b.addr) +
           (b.copies > 1 && b.copy_stride ? " (copy 1 at " + mem + "+" + std::to_string(b.addr + b.stride()) + ")" : "");
}

std::string c_type(const Type &t) {
    if (t.is_float()) return t.bits() == 64 ? "double" : "float";
    if (t.is_bool()) return "bool";
    return std::string(t.is_uint() ? "uint" : "int") + std::to_string(t.bits()) + "_t";
}

std::string c_name(const std::string &ir) { return npu_c_name(ir); }

}  // namespace

std::string npu_instr_code(const NpuKernel &k, const NpuItem &i) {
    std::string args;
    // An `ahead` instruction of a pipelined loop uses the next iteration's copy of the loop's buffers.
    auto next = [&](const NpuBuffer &b) { return i.ahead_level >= 0 && b.copies > 1 && b.depth == i.ahead_level; };
    for (size_t j = 0; j < i.args.size(); j++) {
        const NpuArg &a = i.args[j];
        args += (j ? ", " : "") + (a.buffer >= 0 ? tile_code(k.buffers[a.buffer], a, next(k.buffers[a.buffer])) : a.code);
    }
    if (i.fix) {  // the fix pipe's epilogue: Fix().bias(tile).relu().scale(s)
        std::string fix = ", Fix()";
        if (i.args.size() > 2) {
            fix += ".bias(" + tile_code(k.buffers[i.args[2].buffer], i.args[2], next(k.buffers[i.args[2].buffer])) + ")";
            args = args.substr(0, args.rfind(", kiln_tile("));
        }
        args += fix + (i.relu ? ".relu()" : "") + (i.scale.empty() ? "" : ".scale(" + i.scale + ")");
    }
    args += (i.op == npu::Op::TCMP ? std::string(", Cmp::") + npu::cmp_name(i.cmp) : "") + ");";
    std::string s = std::string("core.") + npu::op_name(i.op) + (i.transpose ? "_T(" : "(") + args;
    // The first k-slice of a split K starts the sum from 0, the others add to it.
    if (!i.first_if.empty()) s = "if (" + i.first_if + ") core.TMATMUL(" + args + " else " + s;
    // A stage of a software-pipelined loop runs on all its trips but one.
    if (!i.guard.empty()) s = "if (" + i.guard + ") " + (i.first_if.empty() ? s : "{ " + s + " }");
    return s;
}

std::ostream &operator<<(std::ostream &s, const NpuKernel &k) {
    for (const NpuBuffer &b : k.buffers) s << "// " << describe(b) << "\n";
    print(k, k.body, 0, s);
    return s;
}

std::string codegen_npu(const std::vector<std::shared_ptr<FunctionContents>> &outputs, const std::string &name,
                        const std::vector<LoweredArgument> &args, const Target &t) {
    std::vector<std::string> out_names;
    for (const auto &o : outputs) out_names.push_back(o->name);
    LowerOptions nest_only;
    nest_only.stop = LowerStop::LoopNest;
    Stmt nest = lower(outputs, name, args, t, nest_only).body;
    // The NPU's own passes, after the common ones.
    PassLog log;
    // Selection, then placement (which may ask for selection again: npu_select_and_place).
    NpuKernel k = npu_select_and_place(name, nest, find_environment(outputs), out_names, t, &log);
    k = log.run("npu software pipelining", [&] { return npu_software_pipeline(std::move(k)); });
    k = log.run("npu sync insertion", [&] { return npu_insert_sync(std::move(k)); });

    std::ostringstream s;
    s << "// Generated by Kiln: tile-NPU kernel " << name << " and its host stub, for target " << t.to_string()
      << ".\n#pragma GCC diagnostic ignored \"-Wunused-variable\"\n#pragma GCC diagnostic ignored "
         "\"-Wunused-but-set-variable\"\n\n"
      << kiln_embedded_kiln_runtime_h << "\n"
      << kiln_embedded_kiln_prologue_h << "\n"
      << kiln_embedded_kiln_vector_math_h << "\n#include <string>\n#include \"kiln_npu.h\"\n\n"
      << kiln_embedded_kiln_npu_helpers_h << "\n";
    // The kernel.
    std::string params;
    for (const LoweredArgument &a : args)
        params += ", " + (a.is_buffer ? "const kiln_gm &" + c_name(a.name) + "_buf" : c_type(a.type) + " " + c_name(a.name));
    s << "void " << name << "_kernel(Core &core" << params << ") {\n";
    s << "    // On-chip buffers: base address, bytes from one copy to the next, copies.\n";
    for (const auto &[mem, p] : k.placement) {
        s << "    // " << mem << ": " << p.peak << " bytes at once, " << p.unshared << " without sharing.\n";
        if (p.sharing_peak)
            s << "    // " << mem << ": repeated subexpressions recomputed: computed once, their tiles kept until "
              << "their last readers, they needed " << p.sharing_peak << " bytes at once, over the machine's "
              << p.capacity << ".\n";
    }
    std::string base, stride, copies, depths;
    int max_depth = 0;
    for (const NpuBuffer &b : k.buffers) {
        s << "    //   " << describe(b) << "\n";
        base += std::to_string(b.addr) + "u, ";
        stride += std::to_string(b.stride()) + "u, ";
        copies += std::to_string(b.copies) + ", ";
        depths += std::to_string(b.copies > 1 ? b.depth : 0) + ", ";
        if (b.copies > 1) max_depth = std::max(max_depth, b.depth);
    }
    s << "    static const uint32_t kiln_base[] = {" << base << "0u}, kiln_stride[] = {" << stride << "0u};\n"
      << "    static const int kiln_copies[] = {" << copies << "0};\n"
      << "    int32_t kiln_pp = 0, kiln_iter = 0;\n";
    // The copy of the next iteration (a pipelined loop's first stage, NpuPipeline.cpp): kiln_iter has advanced.
    if (max_depth == 0) {
        s << "    auto kiln_addr = [&](int b) { return kiln_base[b] + (kiln_copies[b] > 1 ? (uint32_t)kiln_pp * "
             "kiln_stride[b] : 0u); };\n";
        if (k.has_ahead)
            s << "    auto kiln_addr_ahead = [&](int b) { return kiln_base[b] + (uint32_t)(kiln_iter & 1) * "
                 "kiln_stride[b]; };\n";
    } else {
        // Copies of buffers in nested loops (k-slices) alternate with their own loop: kiln_ppD, D the depth.
        std::string pps = "&kiln_pp", iters = "&kiln_iter";
        for (int d = 1; d <= max_depth; d++) {
            s << "    int32_t kiln_pp" << d << " = 0, kiln_iter" << d << " = 0;\n";
            pps += ", &kiln_pp" + std::to_string(d);
            iters += ", &kiln_iter" + std::to_string(d);
        }
        s << "    static const int kiln_depth[] = {" << depths << "0};\n"
          << "    int32_t *const kiln_pps[] = {" << pps << "};\n"
          << "    auto kiln_addr = [&](int b) { return kiln_base[b] + (kiln_copies[b] > 1 ? (uint32_t)*kiln_pps[kiln_depth[b]] * "
             "kiln_stride[b] : 0u); };\n";
        if (k.has_ahead)
            s << "    int32_t *const kiln_iters[] = {" << iters << "};\n"
              << "    auto kiln_addr_ahead = [&](int b) { return kiln_base[b] + (uint32_t)(*kiln_iters[kiln_depth[b]] & 1) * "
                 "kiln_stride[b]; };\n";
    }
    for (const LoweredArgument &a : args) {
        if (!a.is_buffer) continue;
        std::string n = c_name(a.name);
        s << "    const GlobalTensor " << n << "_gm = " << n << "_buf.t;\n";
        for (int d = 0; d < a.dimensions; d++)
            for (const char *f : {"min", "extent", "stride"})
                s << "    const int32_t " << c_name(a.name + "." + f + "." + std::to_string(d)) << " = " << n << "_buf."
                  << f << "[" << d << "];\n";
    }
    print(k, k.body, 1, s);
    s << "}\n\n}  // namespace\n\n";
    // The host stub.
    s << "extern \"C\" const char *" << name << "_npu_report(void) { return kiln_last_report.c_str(); }\n\n";
    // What buffer placement did, per memory (the fusion report's footprint line).
    std::string placed;
    for (const auto &[mem, p] : k.placement)
        placed += std::string(placed.empty() ? "" : ", ") + "\\\"" + mem + "\\\": {\\\"peak\\\": " + std::to_string(p.peak) +
                  ", \\\"unshared\\\": " + std::to_string(p.unshared) +
                  (p.sharing_peak ? ", \\\"sharing_peak\\\": " + std::to_string(p.sharing_peak) : "") + "}";
    s << "extern \"C\" const char *" << name << "_npu_placement(void) { return \"{" << placed << "}\"; }\n\n";
    s << "extern \"C\" int " << name << "(";
    for (size_t i = 0; i < args.size(); i++)
        s << (i ? ", " : "") << (args[i].is_buffer ? "halide_buffer_t *" : c_type(args[i].type) + " ") << c_name(args[i].name);
    s << ") {\n";
    for (const LoweredArgument &a : args) {
        if (!a.is_buffer) continue;
        user_assert(npu_dtype(a.type) != npu::DType::U8 && a.dimensions >= 1 && a.dimensions <= 4)
            << "NPU target: buffer argument " << a.name << " is a " << a.dimensions << "-D " << a.type.to_string()
            << " buffer; the NPU code generator handles 1-D to 4-D float32, float16, bfloat16, int8 and int32 "
               "buffers (tiles over dimensions 0 and 1, loops over the others), so convert it on the host or "
               "leave it out of the NPU kernel's arguments";
        s << "    if (int err = kiln_check_buffer(" << c_name(a.name) << ", \"" << name << "\", \"" << a.name << "\", "
          << halide_type_code_name(a.type.code()) << ", " << (int)a.type.bits() << ", " << a.dimensions << ")) return err;\n";
    }
    s << "    try {\n"
      << "        const char *machine_file = std::getenv(\"KILN_NPU_MACHINE\");\n"
      << "        Device dev(machine_file && *machine_file ? load_machine(machine_file) : default_machine());\n";
    std::string call;
    for (const LoweredArgument &a : args) {
        std::string n = c_name(a.name);
        if (a.is_buffer) {
            std::string dt = npu::dtype_name(npu_dtype(a.type));
            for (char &ch : dt) ch = (char)std::toupper((unsigned char)ch);
            s << "        const kiln_gm " << n << "_buf = kiln_bind(dev, \"" << a.name << "\", " << n << ", DType::" << dt
              << ");\n";
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
