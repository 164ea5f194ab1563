// Instruction selection for the tile-NPU target, with its legality checks.
//
// Input: the loop nest after bounds inference and simplification, before
// storage flattening (lower_loop_nest): Realize/Provide/Call per Func.
// Every stage's innermost 2-D loop nest (y outer, x inner, constant extents)
// with a single Provide is a *tile*: its value becomes vector instructions
// on R x C tiles in UB. Loops and lets around tiles stay scalar code (pipe S).
//
//   for (stage1.s0.y, stage1.s0.y.min, 16)
//    for (stage1.s0.x, stage1.s0.x.min, 64)
//     stage1(stage1.s0.x, stage1.s0.y) = exp(input(stage1.s0.x, stage1.s0.y)) * a
//   ->
//   TLOAD(stage1.t0 <- input window at (stage1.s0.x.min, stage1.s0.y.min))   MTE2
//   TEXP(stage1.t1 <- stage1.t0)                                             V
//   TMULS(stage1 <- stage1.t1, a)                                            V
//
// Reads of images and of Funcs stored in GM are staged by TLOAD into a UB
// tile (a wrapper Func `in_ub(x, y) = input(x, y)` stored in UB is exactly a
// TLOAD, which is what in() staging gives); a Func stored in GM or an output
// is computed into a UB tile and written by TSTORE. Funcs computed inside a
// loop live in UB (store_in(UB), the default there); compute_root Funcs in
// GM. Every Func reading or written by vector instructions must be in UB.
#include <algorithm>
#include <set>
#include <sstream>

#include "NpuKernel.h"
#include "ir/Error.h"
#include "ir/IRPrinter.h"
#include "ir/IRVisitor.h"
#include "lower/RealizationOrder.h"
#include "ir/Simplify.h"
#include "ir/Substitute.h"

namespace kiln {
namespace internal {

const char *npu_pipe_name(NpuPipe p) {
    static const char *names[] = {"S", "MTE2", "MTE1", "V", "M", "MTE3", "FIX"};
    return names[(int)p];
}

std::string npu_c_name(const std::string &ir) {
    std::string id = "v_";
    for (char c : ir) id += std::isalnum((unsigned char)c) ? c : '_';
    return id;
}

namespace {

std::string c_name(const std::string &ir) { return npu_c_name(ir); }

const int64_t *const_int(const Expr &e) {
    const IntImm *i = e.as<IntImm>();
    return i ? &i->value : nullptr;
}

// Scalar C++ for an expression of loop variables, lets and Params.
std::string scalar(const Expr &e) {
    if (const IntImm *i = e.as<IntImm>()) return "(int32_t)" + std::to_string(i->value);
    if (const FloatImm *f = e.as<FloatImm>()) {
        std::ostringstream s;
        s.precision(9);
        s << "(float)" << f->value;
        return s.str();
    }
    if (const Variable *v = e.as<Variable>()) return c_name(v->name);
    auto bin = [&](const Expr &a, const Expr &b, const char *op) { return "(" + scalar(a) + " " + op + " " + scalar(b) + ")"; };
    if (const Add *o = e.as<Add>()) return bin(o->a, o->b, "+");
    if (const Sub *o = e.as<Sub>()) return bin(o->a, o->b, "-");
    if (const Mul *o = e.as<Mul>()) return bin(o->a, o->b, "*");
    if (const Div *o = e.as<Div>())
        return e.type().is_float() ? bin(o->a, o->b, "/") : "kiln_npu_div(" + scalar(o->a) + ", " + scalar(o->b) + ")";
    if (const Mod *o = e.as<Mod>()) return "kiln_npu_mod(" + scalar(o->a) + ", " + scalar(o->b) + ")";
    if (const Min *o = e.as<Min>()) return "kiln_npu_min(" + scalar(o->a) + ", " + scalar(o->b) + ")";
    if (const Max *o = e.as<Max>()) return "kiln_npu_max(" + scalar(o->a) + ", " + scalar(o->b) + ")";
    if (const LT *o = e.as<LT>()) return bin(o->a, o->b, "<");
    if (const LE *o = e.as<LE>()) return bin(o->a, o->b, "<=");
    if (const GT *o = e.as<GT>()) return bin(o->a, o->b, ">");
    if (const GE *o = e.as<GE>()) return bin(o->a, o->b, ">=");
    if (const EQ *o = e.as<EQ>()) return bin(o->a, o->b, "==");
    if (const NE *o = e.as<NE>()) return bin(o->a, o->b, "!=");
    if (const And *o = e.as<And>()) return bin(o->a, o->b, "&&");
    if (const Or *o = e.as<Or>()) return bin(o->a, o->b, "||");
    if (const Not *o = e.as<Not>()) return "(!" + scalar(o->a) + ")";
    if (const Select *o = e.as<Select>())
        return "(" + scalar(o->condition) + " ? " + scalar(o->true_value) + " : " + scalar(o->false_value) + ")";
    if (const Cast *o = e.as<Cast>())
        return std::string("(") + (e.type().is_float() ? "float" : "int32_t") + ")" + scalar(o->value);
    if (const Call *c = e.as<Call>()) {
        if (c->call_type == Call::PureExtern && c->args.size() == 1) return "std::" + c->name + "(" + scalar(c->args[0]) + ")";
    }
    user_error << "NPU target: the scalar expression " << e << " has no scalar code on the NPU's S pipe";
    return "";
}

// A tile operand: a window of a buffer (UB), or a scalar.
struct Operand {
    int buffer = -1;   // -1: scalar
    std::string code;  // the Tile expression, or the scalar
};

class Selector {
public:
    Selector(const Environment &env, const std::vector<std::string> &outputs) : env(env), outputs(outputs) {}

    NpuKernel k;

    void stmt(const Stmt &s, std::vector<NpuItem> &out) {
        if (!s.defined()) return;
        if (const Block *b = s.as<Block>()) {
            stmt(b->first, out);
            stmt(b->rest, out);
        } else if (const LetStmt *l = s.as<LetStmt>()) {
            out.push_back(NpuItem::line("const " + std::string(l->value.type().is_float() ? "float " : "int32_t ") +
                                        c_name(l->name) + " = " + scalar(l->value) + ";"));
            lets.emplace_back(l->name, l->value);
            stmt(l->body, out);
            lets.pop_back();
        } else if (const ProducerConsumer *pc = s.as<ProducerConsumer>()) {
            stmt(pc->body, out);
        } else if (const Realize *r = s.as<Realize>()) {
            realize(r, out);
        } else if (const For *f = s.as<For>()) {
            loop(f, out);
        } else if (const AssertStmt *a = s.as<AssertStmt>()) {
            (void)a;  // the simulator checks every access against its buffer
        } else if (const IfThenElse *i = s.as<IfThenElse>()) {
            user_error << "NPU target: the loop nest has a condition (" << i->condition
                       << "), from a GuardWithIf tail; use TailStrategy::ShiftInwards or RoundUp, or tile sizes that "
                          "divide the image";
        } else if (const Provide *p = s.as<Provide>()) {
            user_error << "NPU target: Func " << p->name << " is computed outside a 2-D loop nest; every stage's "
                       << "innermost two loops become one tile, so the Func needs two dimensions";
        } else {
            internal_error << "NPU target: unexpected statement " << s;
        }
    }

private:
    const Environment &env;
    const std::vector<std::string> &outputs;
    std::vector<std::pair<std::string, Expr>> lets;  // enclosing lets, outermost first
    std::map<std::string, int> ub_buffer;            // Func -> its UB buffer
    std::map<std::string, std::vector<Expr>> ub_mins;  // Func -> its realization's min per dimension
    std::string current;                               // the Func whose tile is being selected
    int temps = 0;
    bool current_double = false;

    Expr expand(Expr e) const {
        for (auto it = lets.rbegin(); it != lets.rend(); ++it) e = substitute(it->first, it->second, e);
        return simplify(e);
    }

    bool is_output(const std::string &f) const { return std::count(outputs.begin(), outputs.end(), f) > 0; }

    const FunctionContents &func(const std::string &name) const {
        auto it = env.find(name);
        internal_assert(it != env.end()) << "NPU target: no Func " << name;
        return *it->second;
    }

    MemoryType memory_of(const std::string &name, bool at_root) const {
        if (is_output(name)) return MemoryType::GM;
        MemoryType m = func(name).schedule.memory_type;
        if (m == MemoryType::Auto) return at_root ? MemoryType::GM : MemoryType::UB;
        return m;
    }

    int add_buffer(const std::string &name, const std::string &owner, int rows, int cols, bool dbl) {
        NpuBuffer b;
        b.name = name;
        b.owner = owner;
        b.rows = rows;
        b.cols = (cols + 7) / 8 * 8;  // rows of 32 bytes
        b.copies = dbl ? 2 : 1;
        k.buffers.push_back(b);
        return (int)k.buffers.size() - 1;
    }

    void realize(const Realize *r, std::vector<NpuItem> &out) {
        const FunctionContents &f = func(r->name);
        user_assert(r->types.size() == 1 && r->types[0] == Float(32))
            << "NPU target: Func " << r->name << " has type " << (r->types.size() == 1 ? r->types[0].to_string() : "Tuple")
            << "; the NPU code generator handles float32 Funcs (of one value) only";
        user_assert(r->bounds.size() == 2) << "NPU target: Func " << r->name << " has " << r->bounds.size()
                                           << " dimension(s); tiles are 2-D, so NPU Funcs have two dimensions";
        bool at_root = f.schedule.compute_level.is_root();
        MemoryType m = memory_of(r->name, at_root);
        for (int d = 0; d < 2; d++) {
            out.push_back(NpuItem::line("const int32_t " + c_name(r->name + ".min." + std::to_string(d)) + " = " +
                                        scalar(r->bounds[d].min) + ";"));
            out.push_back(NpuItem::line("const int32_t " + c_name(r->name + ".extent." + std::to_string(d)) + " = " +
                                        scalar(r->bounds[d].extent) + ";"));
        }
        if (m == MemoryType::GM) {
            user_assert(at_root) << "NPU target: Func " << r->name << " is stored in GM but computed inside a loop (at "
                                 << f.schedule.compute_level.to_string()
                                 << "); store_in(GM) is for compute_root Funcs: compute_root() it, or store_in(UB)";
            user_assert(!k.multi_core) << "NPU target: Func " << r->name
                                       << " is stored in GM between stages, but a loop runs across cores; cores do "
                                          "not synchronize, so fuse it (compute_at) into the parallel loop";
            out.push_back(NpuItem::line("const int32_t " + c_name(r->name + ".stride.1") + " = " +
                                        c_name(r->name + ".extent.0") + ";"));
            out.push_back(NpuItem::line("const GlobalTensor " + c_name(r->name) + "_gm = core.scratch_gm(\"" + r->name +
                                        "\", DType::F32, (uint64_t)" + c_name(r->name + ".extent.0") + " * " +
                                        c_name(r->name + ".extent.1") + ");"));
            gm_funcs.insert(r->name);
            k.gm_scratch.push_back(r->name);
            stmt(r->body, out);
            return;
        }
        user_assert(m == MemoryType::UB)
            << "NPU target: Func " << r->name << " is stored in " << to_string(m)
            << ", but it is computed and read by the vector pipe (V), which reaches only UB; store_in(UB) it (L1, "
               "L0A, L0B and L0C hold matrix operands)";
        const int64_t *cols = const_int(simplify(r->bounds[0].extent)), *rows = const_int(simplify(r->bounds[1].extent));
        user_assert(cols && rows) << "NPU target: Func " << r->name << " is stored in UB over a region of "
                                  << r->bounds[0].extent << " x " << r->bounds[1].extent
                                  << " elements, which is not constant; on-chip buffers are allocated statically, "
                                     "so tile its consumer's loops by constants (e.g. tile(x, y, xo, yo, xi, yi, 64, "
                                     "16)) or bound() it";
        ub_buffer[r->name] = add_buffer(r->name, r->name, (int)*rows, (int)*cols, f.schedule.double_buffer);
        ub_mins[r->name] = {r->bounds[0].min, r->bounds[1].min};
        stmt(r->body, out);
    }

    int loops = 0;
    std::set<std::string> gm_funcs;

    void loop(const For *f, std::vector<NpuItem> &out) {
        const For *inner = f->body.as<For>();
        if (!inner) {  // maybe lets, then a 2-D nest: not a tile; or a tile whose inner loop has lets first
            const Stmt *b = &f->body;
            while (const LetStmt *l = b->as<LetStmt>()) b = &l->body;
            inner = b->as<For>();
        }
        bool tile = inner && is_tile_body(inner->body);
        if (tile) {
            select_tile(f, inner, out);
            return;
        }
        user_assert(f->for_type == ForType::Serial || f->for_type == ForType::Parallel)
            << "NPU target: loop " << f->name << " is " << to_string(f->for_type)
            << "; on the NPU the innermost two loops of a stage become tile instructions, so vectorize and unroll "
               "have no meaning there";
        NpuItem l;
        l.kind = NpuItem::Loop;
        std::string v = c_name(f->name), lo = scalar(f->min), ext = scalar(f->extent);
        if (f->for_type == ForType::Parallel) {
            user_assert(loops == 0 && !k.multi_core && gm_funcs.empty())
                << "NPU target: loop " << f->name << " is parallel; a loop across cores must be the outermost loop "
                << "of the pipeline, with no Func stored in GM between stages";
            k.multi_core = true;
            l.text = "for (int32_t " + v + " = " + lo + " + core.index(); " + v + " < " + lo + " + " + ext + "; " + v +
                     " += core.num_cores())";
        } else {
            l.text = "for (int32_t " + v + " = " + lo + "; " + v + " < " + lo + " + " + ext + "; " + v + "++)";
        }
        loops++;
        stmt(f->body, l.body);
        loops--;
        out.push_back(std::move(l));
    }

    static bool is_tile_body(const Stmt &s) {
        const Stmt *b = &s;
        while (const LetStmt *l = b->as<LetStmt>()) b = &l->body;
        return b->as<Provide>() != nullptr;
    }

    // A window of Func/Image `name` at args (affine in the tile's x and y with coefficient 1).
    struct Window {
        Expr x0, y0;
    };
    Window window(const std::string &name, const std::vector<Expr> &args, const For *fy, const For *fx,
                  const std::map<std::string, Expr> &inner_lets) {
        user_assert(args.size() == 2) << "NPU target: Func " << current << " reads " << name << " with "
                                      << args.size() << " coordinate(s); tiles are 2-D";
        Expr a[2];
        for (int d = 0; d < 2; d++) {
            Expr e = expand(substitute(inner_lets, args[d]));
            const std::string &v = d == 0 ? fx->name : fy->name, &w = d == 0 ? fy->name : fx->name;
            Expr off = simplify(e - Variable::make(Int(32), v));
            user_assert(!expr_uses_var(off, v) && !expr_uses_var(off, w))
                << "NPU target: Func " << current << " reads " << name << "(" << args[0] << ", " << args[1]
                << "); a tile instruction reads a window that moves with the tile, so each coordinate must be the "
                   "tile's own coordinate plus a constant offset (no scaling, transposing or clamping)";
            a[d] = simplify(substitute(v, d == 0 ? fx->min : fy->min, e));
        }
        return Window{a[0], a[1]};
    }

    std::string tile_code(int b, int rows, int cols) const {
        const NpuBuffer &buf = k.buffers[b];
        std::string addr = "kiln_addr(" + std::to_string(b) + ")";
        return "kiln_tile(core, " + addr + ", " + std::to_string(buf.rows) + ", " + std::to_string(buf.cols) + ", " +
               std::to_string(rows) + ", " + std::to_string(cols) + ", \"" + buf.name + "\")";
    }

    std::string gm_code(const std::string &name, const Window &w) const {
        std::string n = c_name(name);
        return n + "_gm.at((int64_t)(" + scalar(w.x0) + " - " + c_name(name + ".min.0") + ") + (int64_t)(" +
               scalar(w.y0) + " - " + c_name(name + ".min.1") + ") * " + c_name(name + ".stride.1") + ", " +
               c_name(name + ".stride.1") + ")";
    }

    void instr(std::vector<NpuItem> &out, NpuPipe pipe, const std::string &code, std::vector<int> reads,
               std::vector<int> writes) {
        NpuItem i;
        i.kind = NpuItem::Instr;
        i.pipe = pipe;
        i.text = code;
        i.reads = std::move(reads);
        i.writes = std::move(writes);
        out.push_back(std::move(i));
    }

    int temp(int rows, int cols) {
        return add_buffer(current + ".t" + std::to_string(temps++), current, rows, cols, current_double);
    }

    // Selects e into buffer `dst` (or a new temporary when dst < 0); returns the operand.
    Operand select(const Expr &e, int dst, int R, int C, const For *fy, const For *fx,
                   const std::map<std::string, Expr> &inner_lets, std::vector<NpuItem> &out) {
        bool varies = false;
        for (const std::string &v : {fx->name, fy->name}) varies |= expr_uses_var(expand(substitute(inner_lets, e)), v);
        bool reads_func = false;
        struct FindCall : IRVisitor {
            bool found = false;
            void visit(const Call *c) override {
                found |= c->call_type != Call::PureExtern;
                IRVisitor::visit(c);
            }
        } fc;
        fc.include(e);
        reads_func = fc.found;
        if (!varies && !reads_func) {
            Operand s{-1, scalar(expand(substitute(inner_lets, e)))};
            if (dst < 0) return s;
            instr(out, NpuPipe::V, "core.TDUP(" + tile_code(dst, R, C) + ", " + s.code + ");", {}, {dst});
            return Operand{dst, tile_code(dst, R, C)};
        }
        user_assert(e.type() == Float(32)) << "NPU target: Func " << current << ": " << e << " has type " << e.type().to_string()
                                           << "; the vector instructions Kiln selects work on float32";
        auto target = [&]() { return dst >= 0 ? dst : temp(R, C); };
        if (const Call *c = e.as<Call>()) {
            if (c->call_type == Call::Func || c->call_type == Call::Image) {
                Window w = window(c->name, c->args, fy, fx, inner_lets);
                auto ub = ub_buffer.find(c->name);
                if (ub != ub_buffer.end()) {
                    const std::vector<Expr> &mins = ub_mins[c->name];
                    const NpuBuffer &src = k.buffers[ub->second];
                    Expr off = simplify((expand(w.x0) - expand(mins[0])) + (expand(w.y0) - expand(mins[1])) * src.cols);
                    const int64_t *o = const_int(off);
                    user_assert(o && *o == 0)
                        << "NPU target: Func " << current << " reads " << c->name << " at an offset of " << off
                        << " elements from the start of its UB buffer; tile instructions read whole aligned tiles, so "
                           "compute "
                        << c->name << " over exactly the tile that reads it (same tile sizes, compute_at the same loop)";
                    Operand src_op{ub->second, tile_code(ub->second, R, C)};
                    if (dst < 0) return src_op;
                    instr(out, NpuPipe::V, "core.TCOPY(" + tile_code(dst, R, C) + ", " + src_op.code + ");",
                          {ub->second}, {dst});
                    return Operand{dst, tile_code(dst, R, C)};
                }
                bool gm = c->call_type == Call::Image || gm_funcs.count(c->name);
                user_assert(gm) << "NPU target: Func " << current << " reads Func " << c->name
                                << ", which is neither in UB nor in GM here";
                int t = target();
                instr(out, NpuPipe::MTE2, "core.TLOAD(" + tile_code(t, R, C) + ", " + gm_code(c->name, w) + ");", {}, {t});
                return Operand{t, tile_code(t, R, C)};
            }
            static const std::map<std::string, std::string> unary = {
                {"exp", "TEXP"}, {"log", "TLOG"}, {"sqrt", "TSQRT"}, {"tanh", "TTANH"}, {"abs", "TABS"}};
            auto u = unary.find(c->name);
            user_assert(u != unary.end() && c->args.size() == 1)
                << "NPU target: Func " << current << " calls " << c->name
                << ", which has no NPU vector instruction; the vector unit has exp, log, sqrt, tanh, abs (and "
                   "+, -, *, /, min, max); compute it on the host or rewrite it";
            Operand a = select(c->args[0], -1, R, C, fy, fx, inner_lets, out);
            int t = target();
            instr(out, NpuPipe::V, "core." + u->second + "(" + tile_code(t, R, C) + ", " + a.code + ");", {a.buffer}, {t});
            return Operand{t, tile_code(t, R, C)};
        }
        const char *tt = nullptr, *ts = nullptr;
        bool commutes = false;
        Expr x, y;
        if (const Add *o = e.as<Add>()) { tt = "TADD"; ts = "TADDS"; commutes = true; x = o->a; y = o->b; }
        else if (const Sub *o = e.as<Sub>()) { tt = "TSUB"; ts = "TSUBS"; x = o->a; y = o->b; }
        else if (const Mul *o = e.as<Mul>()) { tt = "TMUL"; ts = "TMULS"; commutes = true; x = o->a; y = o->b; }
        else if (const Div *o = e.as<Div>()) { tt = "TDIV"; ts = "TDIVS"; x = o->a; y = o->b; }
        else if (const Max *o = e.as<Max>()) { tt = "TMAX"; ts = "TMAXS"; commutes = true; x = o->a; y = o->b; }
        else if (const Min *o = e.as<Min>()) { tt = "TMIN"; ts = "TMINS"; commutes = true; x = o->a; y = o->b; }
        user_assert(tt) << "NPU target: Func " << current << ": " << e
                        << " has no NPU vector instruction (the vector unit has +, -, *, /, min, max, exp, log, "
                           "sqrt, tanh, abs on float32 tiles)";
        Operand a = select(x, -1, R, C, fy, fx, inner_lets, out), b = select(y, -1, R, C, fy, fx, inner_lets, out);
        int t = target();
        std::string d = tile_code(t, R, C);
        if (a.buffer >= 0 && b.buffer >= 0) {
            instr(out, NpuPipe::V, "core." + std::string(tt) + "(" + d + ", " + a.code + ", " + b.code + ");",
                  {a.buffer, b.buffer}, {t});
        } else if (a.buffer >= 0) {
            instr(out, NpuPipe::V, "core." + std::string(ts) + "(" + d + ", " + a.code + ", " + b.code + ");", {a.buffer}, {t});
        } else if (commutes) {
            instr(out, NpuPipe::V, "core." + std::string(ts) + "(" + d + ", " + b.code + ", " + a.code + ");", {b.buffer}, {t});
        } else if (e.as<Sub>()) {  // s - t == (-t) + s exactly
            instr(out, NpuPipe::V, "core.TNEG(" + d + ", " + b.code + ");", {b.buffer}, {t});
            instr(out, NpuPipe::V, "core.TADDS(" + d + ", " + d + ", " + a.code + ");", {t}, {t});
        } else {
            user_error << "NPU target: Func " << current << ": " << e
                       << " divides a scalar by a tile, which has no NPU vector instruction (TDIVS divides a tile by a "
                          "scalar); write it as a tile / tile division or on the host";
        }
        return Operand{t, d};
    }

    void select_tile(const For *fy, const For *fx, std::vector<NpuItem> &out) {
        std::map<std::string, Expr> inner_lets;
        std::vector<std::pair<std::string, Expr>> chain;
        const Stmt *b = &fx->body;
        while (const LetStmt *l = b->as<LetStmt>()) {
            chain.emplace_back(l->name, l->value);
            b = &l->body;
        }
        // Lets between the two loops too.
        const Stmt *m = &fy->body;
        while (const LetStmt *l = m->as<LetStmt>()) {
            inner_lets[l->name] = l->value;
            m = &l->body;
        }
        for (auto &c : chain) inner_lets[c.first] = substitute(inner_lets, c.second);
        const Provide *p = b->as<Provide>();
        user_assert(p->values.size() == 1) << "NPU target: Func " << p->name
                                           << " returns a Tuple; the NPU code generator handles Funcs of one value only";
        current = p->name;
        temps = 0;
        current_double = func(p->name).schedule.double_buffer;
        const int64_t *R = const_int(simplify(fy->extent)), *C = const_int(simplify(fx->extent));
        user_assert(R && C) << "NPU target: Func " << p->name << ": the innermost two loops " << fy->name << " and "
                            << fx->name << " have extents " << fy->extent << " and " << fx->extent
                            << "; a tile has a constant shape, so split or tile them by constants (e.g. tile(x, y, "
                               "xo, yo, xi, yi, 64, 16)), or bound() the Func";
        user_assert(fy->for_type == ForType::Serial && fx->for_type == ForType::Serial)
            << "NPU target: Func " << p->name << ": loops " << fy->name << " and " << fx->name
            << " form its tile and must stay serial (no vectorize, unroll or parallel there)";
        std::vector<Expr> args;
        for (const Expr &a : p->args) args.push_back(substitute(inner_lets, a));
        Window w = window(p->name, p->args, fy, fx, inner_lets);
        auto ub = ub_buffer.find(p->name);
        if (ub != ub_buffer.end()) {
            const NpuBuffer &buf = k.buffers[ub->second];
            const std::vector<Expr> &mins = ub_mins[p->name];
            Expr off = simplify((expand(w.x0) - expand(mins[0])) + (expand(w.y0) - expand(mins[1])) * buf.cols);
            const int64_t *o = const_int(off);
            user_assert(o && *o == 0 && buf.rows == *R && buf.cols == (*C + 7) / 8 * 8)
                << "NPU target: Func " << p->name << " is computed in " << *R << " x " << *C
                << " tiles into a UB buffer of " << buf.rows << " x " << buf.cols
                << "; a Func in UB is computed as one tile covering its buffer";
            select(p->values[0], ub->second, (int)*R, (int)*C, fy, fx, inner_lets, out);
            return;
        }
        // Output or GM Func: compute into a UB tile, then TSTORE.
        int t = temp((int)*R, (int)*C);
        select(p->values[0], t, (int)*R, (int)*C, fy, fx, inner_lets, out);
        instr(out, NpuPipe::MTE3, "core.TSTORE(" + gm_code(p->name, w) + ", " + tile_code(t, (int)*R, (int)*C) + ");",
              {t}, {});
    }
};

}  // namespace

NpuKernel npu_select_kernel(const Stmt &loop_nest, const Environment &env, const std::vector<std::string> &outputs) {
    Selector s(env, outputs);
    s.stmt(loop_nest, s.k.body);
    return s.k;
}

}  // namespace internal
}  // namespace kiln
