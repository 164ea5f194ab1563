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
#include <cmath>
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
        if (std::isinf(f->value)) return f->value < 0 ? "(-INFINITY)" : "INFINITY";
        if (std::isnan(f->value)) return "NAN";
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
    int buffer = -1;     // -1: scalar
    std::string code;    // the Tile expression, or the scalar
    bool fresh = false;  // a temporary of this expression: the next instruction may overwrite it
};

// How a 1-D Func or image lies in a tile: one value per row (a column
// R x 1, indexed by the tile's y) or one value per column (a row 1 x C,
// indexed by x). 2-D Funcs are Full.
enum class Shape { Full, Column, Row };

// The loops of one tile: y outer, x inner; a 1-D tile has one of them.
struct Nest {
    const For *fy = nullptr, *fx = nullptr;
    int R = 1, C = 1;
    std::map<std::string, Expr> lets;  // lets between and inside the loops, expanded
};

// Records, for every 1-D Func and image, whether tiles read or write it
// along y (Column) or along x (Row).
class FindShapes : public IRVisitor {
public:
    std::map<std::string, Shape> shape;

private:
    using IRVisitor::visit;
    const For *fy = nullptr, *fx = nullptr;
    std::map<std::string, Expr> lets;

    void note(const std::string &name, const Expr &arg) {
        Expr a = substitute(lets, arg);
        Shape s = fx && expr_uses_var(a, fx->name) ? Shape::Row : Shape::Column;
        auto it = shape.find(name);
        user_assert(it == shape.end() || it->second == s)
            << "NPU target: the 1-D Func " << name << " is read both along the rows and along the columns of tiles; "
            << "its UB buffer is either a column (one value per row) or a row (one value per column), so give each "
               "use its own Func";
        shape[name] = s;
    }
    void visit(const For *f) override {
        const Stmt *b = &f->body;
        std::map<std::string, Expr> l;
        while (const LetStmt *ls = b->as<LetStmt>()) l[ls->name] = ls->value, b = &ls->body;
        const For *inner = b->as<For>();
        if (inner) {
            const Stmt *c = &inner->body;
            while (const LetStmt *ls = c->as<LetStmt>()) l[ls->name] = ls->value, c = &ls->body;
            if (const Provide *p = c->as<Provide>()) {
                fy = f, fx = inner;
                lets.clear();
                for (auto &kv : l) lets[kv.first] = substitute(lets, kv.second);
                if (p->args.size() == 1) note(p->name, p->args[0]);
                for (const Expr &v : p->values) include(v);
                fy = fx = nullptr;
                return;
            }
        }
        IRVisitor::visit(f);
    }
    void visit(const Call *c) override {
        if (fy && (c->call_type == Call::Func || c->call_type == Call::Image) && c->args.size() == 1) note(c->name, c->args[0]);
        IRVisitor::visit(c);
    }
};

class Selector {
public:
    Selector(const Environment &env, const std::vector<std::string> &outputs, const Target &t,
             std::map<std::string, Shape> shapes)
        : env(env), outputs(outputs), target(t), shapes(std::move(shapes)) {}

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
            user_error << "NPU target: Func " << p->name << " is computed outside a loop; every stage's innermost "
                       << "loops become one tile, so the Func needs one or two dimensions";
        } else {
            internal_error << "NPU target: unexpected statement " << s;
        }
    }

private:
    const Environment &env;
    const std::vector<std::string> &outputs;
    const Target &target;
    const std::map<std::string, Shape> shapes;
    std::vector<std::pair<std::string, Expr>> lets;  // enclosing lets, outermost first
    std::map<std::string, int> ub_buffer;            // Func -> its UB buffer
    std::map<std::string, std::vector<Expr>> ub_mins;  // Func -> its realization's min per dimension
    std::map<std::string, int> loaded;                 // image window -> the UB tile it is loaded in (this loop body)
    std::map<std::string, int> expanded;               // (buffer, shape) -> its TROWEXPAND/TCOLEXPAND (this loop body)
    std::vector<std::string> loop_vars;                // enclosing loops, outermost first
    std::vector<NpuItem> hoisted;                      // loop-invariant loads, emitted before the outermost loop
    std::set<int> hoisted_buffers;
    std::map<std::string, int> hoisted_loaded;         // image window or expansion -> its hoisted tile
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

    Shape shape_of(const std::string &name, size_t dims) const {
        if (dims == 2) return Shape::Full;
        auto it = shapes.find(name);
        return it == shapes.end() ? Shape::Column : it->second;
    }

    MemoryType memory_of(const std::string &name, bool at_root) const {
        if (is_output(name)) return MemoryType::GM;
        MemoryType m = func(name).schedule.memory_type;
        if (m == MemoryType::Auto) return at_root ? MemoryType::GM : MemoryType::UB;
        return m;
    }

    int add_buffer(const std::string &name, const std::string &owner, int rows, int cols, bool dbl,
                   const std::string &memory = "UB", const std::string &dtype = "F32") {
        NpuBuffer b;
        b.name = name;
        b.owner = owner;
        b.memory = memory;
        b.dtype = dtype;
        b.rows = rows;
        int per_row = 32 / b.elem_bytes();
        b.cols = (cols + per_row - 1) / per_row * per_row;  // rows of 32 bytes
        b.copies = dbl ? 2 : 1;
        k.buffers.push_back(b);
        return (int)k.buffers.size() - 1;
    }

    void realize(const Realize *r, std::vector<NpuItem> &out) {
        const FunctionContents &f = func(r->name);
        user_assert(r->types.size() == 1 && r->types[0] == Float(32))
            << "NPU target: Func " << r->name << " has type " << (r->types.size() == 1 ? r->types[0].to_string() : "Tuple")
            << "; the NPU code generator handles float32 Funcs (of one value) only";
        const size_t dims = r->bounds.size();
        user_assert(dims == 1 || dims == 2) << "NPU target: Func " << r->name << " has " << dims
                                            << " dimensions; tiles are 2-D, so NPU Funcs have one or two dimensions";
        bool at_root = f.schedule.compute_level.is_root();
        MemoryType m = memory_of(r->name, at_root);
        for (size_t d = 0; d < dims; d++) {
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
            user_assert(dims == 2) << "NPU target: Func " << r->name
                                   << " is 1-D and stored in GM; the NPU code generator keeps 1-D Funcs (row "
                                      "statistics) in UB, so compute_at it inside the loop of its consumer's tiles";
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
        user_assert(m == MemoryType::UB || (m == MemoryType::L0C && dims == 2))
            << "NPU target: Func " << r->name << " is stored in " << to_string(m)
            << ", but it is computed and read by the vector pipe (V), which reaches only UB; store_in(UB) it (L1, "
               "L0A, L0B and L0C hold matrix operands)";
        const int64_t *e0 = const_int(simplify(r->bounds[0].extent));
        const int64_t *e1 = dims == 2 ? const_int(simplify(r->bounds[1].extent)) : e0;
        user_assert(e0 && e1) << "NPU target: Func " << r->name << " is stored in UB over a region of "
                              << r->bounds[0].extent << (dims == 2 ? " x " : "")
                              << (dims == 2 ? r->bounds[1].extent : Expr())
                              << " elements, which is not constant; on-chip buffers are allocated statically, "
                                 "so tile its consumer's loops by constants (e.g. tile(x, y, xo, yo, xi, yi, 64, "
                                 "16)) or bound() it";
        int rows = (int)*e1, cols = (int)*e0;
        if (dims == 1) {
            bool column = shape_of(r->name, 1) == Shape::Column;
            rows = column ? (int)*e0 : 1;
            cols = column ? 1 : (int)*e0;
        }
        ub_buffer[r->name] = add_buffer(r->name, r->name, rows, cols, f.schedule.double_buffer,
                                        m == MemoryType::L0C ? "L0C" : "UB");
        std::vector<Expr> mins;
        for (size_t d = 0; d < dims; d++) mins.push_back(r->bounds[d].min);
        ub_mins[r->name] = mins;
        stmt(r->body, out);
    }

    int loops = 0;
    std::set<std::string> gm_funcs;

    static const Stmt &skip_lets(const Stmt &s) {
        const Stmt *b = &s;
        while (const LetStmt *l = b->as<LetStmt>()) b = &l->body;
        return *b;
    }

    void loop(const For *f, std::vector<NpuItem> &out) {
        const For *inner = skip_lets(f->body).as<For>();
        const For *third = inner ? skip_lets(inner->body).as<For>() : nullptr;
        if (const Provide *p = third ? skip_lets(third->body).as<Provide>() : nullptr) {
            // A 2-D Func in L0C, or updated from its own value, over three loops: a matrix update.
            auto ub = ub_buffer.find(p->name);
            const Add *add = p->values.size() == 1 ? p->values[0].as<Add>() : nullptr;
            const Call *self = add ? (add->a.as<Call>() ? add->a.as<Call>() : add->b.as<Call>()) : nullptr;
            if (p->args.size() == 2 && ((ub != ub_buffer.end() && k.buffers[ub->second].memory == "L0C") ||
                                        (self && self->name == p->name))) {
                select_matmul(f, inner, third, out);
                return;
            }
        }
        if (inner && skip_lets(inner->body).as<Provide>()) {
            select_tile(f, inner, out);
            return;
        }
        if (const Provide *p = skip_lets(f->body).as<Provide>()) {  // a 1-D tile
            bool row = p->args.size() == 1 && shape_of(p->name, 1) == Shape::Row;
            select_tile(row ? nullptr : f, row ? f : nullptr, out);
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
        loop_vars.push_back(f->name);
        std::map<std::string, int> outer_loaded, outer_expanded;
        outer_loaded.swap(loaded);  // a load is reused only within one loop body
        outer_expanded.swap(expanded);
        stmt(f->body, l.body);
        loaded.swap(outer_loaded);
        expanded.swap(outer_expanded);
        loop_vars.pop_back();
        loops--;
        if (loops == 0) {  // the loop-invariant loads of the nest go first (their own region)
            for (NpuItem &h : hoisted) out.push_back(std::move(h));
            hoisted.clear();
            hoisted_loaded.clear();
        }
        out.push_back(std::move(l));
    }

    // A window of Func/Image `name` at args: its coordinates at the tile's
    // origin, and how it lies in the tile. Each coordinate must be the
    // tile's own loop variable plus a constant.
    struct Window {
        Expr x0, y0;
        Shape shape = Shape::Full;
        Expr lo[2], hi[2];  // a clamped coordinate's bounds (x, y): a TLOAD with replicated edges
        bool clamped() const { return lo[0].defined() || lo[1].defined(); }
    };

    // clamp(e, lo, hi) as the boundary conditions write it: max(min(e, hi), lo) or min(max(e, lo), hi).
    static bool match_clamp(const Expr &e, Expr &v, Expr &lo, Expr &hi) {
        if (const Max *mx = e.as<Max>())
            if (const Min *mn = mx->a.as<Min>()) {
                v = mn->a, hi = mn->b, lo = mx->b;
                return true;
            }
        if (const Min *mn = e.as<Min>())
            if (const Max *mx = mn->a.as<Max>()) {
                v = mx->a, lo = mx->b, hi = mn->b;
                return true;
            }
        return false;
    }
    Window window(const std::string &name, const std::vector<Expr> &args, const Nest &n) {
        Window w;
        w.shape = shape_of(name, args.size());
        user_assert(args.size() == 1 || args.size() == 2)
            << "NPU target: Func " << current << " reads " << name << " with " << args.size()
            << " coordinates; tiles are 2-D";
        Expr a[2];
        for (size_t d = 0; d < args.size(); d++) {
            bool along_x = args.size() == 2 ? d == 0 : w.shape == Shape::Row;
            const For *l = along_x ? n.fx : n.fy, *other = along_x ? n.fy : n.fx;
            user_assert(l) << "NPU target: Func " << current << " reads " << name << " along "
                           << (along_x ? "x" : "y") << ", but its tile is 1-D along " << (along_x ? "y" : "x")
                           << "; a 1-D Func's tile reads only 1-D Funcs of the same orientation";
            Expr e = expand(substitute(n.lets, args[d]));
            Expr v, lo, hi;  // a clamped coordinate (repeat_edge) whose bounds do not move with the tile
            if (args.size() == 2 && match_clamp(e, v, lo, hi) && !expr_uses_var(lo, l->name) &&
                !expr_uses_var(hi, l->name) && !(other && (expr_uses_var(lo, other->name) || expr_uses_var(hi, other->name)))) {
                e = v;
                w.lo[along_x ? 0 : 1] = lo;
                w.hi[along_x ? 0 : 1] = hi;
            }
            Expr off = simplify(e - Variable::make(Int(32), l->name));
            user_assert(!expr_uses_var(off, l->name) && !(other && expr_uses_var(off, other->name)))
                << "NPU target: Func " << current << " reads " << name << "(" << args[0]
                << (args.size() == 2 ? ", " : "") << (args.size() == 2 ? args[1] : Expr())
                << "); a tile instruction reads a window that moves with the tile, so each coordinate must be the "
                   "tile's own coordinate plus a constant offset, or that clamped to fixed bounds (no scaling or "
                   "transposing)";
            (along_x ? w.x0 : w.y0) = simplify(substitute(l->name, l->min, e));
        }
        return w;
    }

    // The tile of `shape` a window fills in an R x C tile.
    static std::pair<int, int> window_shape(Shape s, int R, int C) {
        return {s == Shape::Row ? 1 : R, s == Shape::Column ? 1 : C};
    }

    // Elements between the window's origin and the start of Func `name`'s UB buffer.
    Expr ub_offset(const std::string &name, const Window &w) {
        const std::vector<Expr> &mins = ub_mins[name];
        const NpuBuffer &b = k.buffers[ub_buffer[name]];
        if (w.shape == Shape::Column) return simplify(expand(w.y0) - expand(mins[0]));
        if (w.shape == Shape::Row) return simplify(expand(w.x0) - expand(mins[0]));
        return simplify((expand(w.x0) - expand(mins[0])) + (expand(w.y0) - expand(mins[1])) * b.cols);
    }

    // The tile of buffer b from its row `row0` on (a stencil's row offset: rows stay 32-byte aligned).
    std::string tile_code(int b, int rows, int cols, int row0 = 0) const {
        const NpuBuffer &buf = k.buffers[b];
        std::string addr = "kiln_addr(" + std::to_string(b) + ")";
        if (row0) addr += " + " + std::to_string(row0 * buf.cols * buf.elem_bytes());
        return "kiln_tile(core, " + (buf.memory == "UB" ? "" : "Mem::" + buf.memory + ", ") + addr + ", " +
               std::to_string(buf.rows - row0) + ", " + std::to_string(buf.cols) + ", " + std::to_string(rows) + ", " +
               std::to_string(cols) + ", \"" + buf.name + "\"" + (buf.dtype == "F32" ? "" : ", DType::" + buf.dtype) + ")";
    }

    std::string gm_code(const std::string &name, const Window &w) const {
        std::string n = c_name(name);
        if (w.clamped()) {  // replicated edges, in window coordinates (an unclamped side: the whole window)
            auto side = [&](int d, const Expr &b, const char *none) {
                return b.defined() ? "(int64_t)(" + scalar(b) + " - " + scalar(d ? w.y0 : w.x0) + ")"
                                   : std::string(none) + "GmRef::kNoClamp";
            };
            return gm_code(name, Window{w.x0, w.y0, w.shape}) + ".edge(" + side(1, w.lo[1], "-") + ", " +
                   side(1, w.hi[1], "") + ", " + side(0, w.lo[0], "-") + ", " + side(0, w.hi[0], "") + ")";
        }
        if (w.shape == Shape::Column)  // one value per row: consecutive elements down the tile
            return n + "_gm.at((int64_t)(" + scalar(w.y0) + " - " + c_name(name + ".min.0") + "), 1)";
        if (w.shape == Shape::Row)
            return n + "_gm.at((int64_t)(" + scalar(w.x0) + " - " + c_name(name + ".min.0") + "), 0)";
        return n + "_gm.at((int64_t)(" + scalar(w.x0) + " - " + c_name(name + ".min.0") + ") + (int64_t)(" +
               scalar(w.y0) + " - " + c_name(name + ".min.1") + ") * " + c_name(name + ".stride.1") + ", " +
               c_name(name + ".stride.1") + ")";
    }

    void instr(std::vector<NpuItem> &out, NpuPipe pipe, const std::string &code, std::vector<int> reads,
               std::vector<int> writes) {
        for (int w : writes)  // an expansion of a buffer being rewritten is stale
            for (auto it = expanded.begin(); it != expanded.end();)
                it = it->first.rfind(std::to_string(w) + "|", 0) == 0 ? expanded.erase(it) : std::next(it);
        NpuItem i;
        i.kind = NpuItem::Instr;
        i.pipe = pipe;
        i.text = code;
        i.reads = std::move(reads);
        i.writes = std::move(writes);
        out.push_back(std::move(i));
    }

    // Temporaries of the current tile whose last reader has been selected, by shape: reused
    // (only the vector pipe touches them, in order, so reuse needs no flag).
    std::map<std::pair<int, int>, std::vector<int>> free_temps;

    int temp(int rows, int cols) {
        std::vector<int> &f = free_temps[{rows, (cols + 7) / 8 * 8}];
        if (!f.empty()) {
            int b = f.back();
            f.pop_back();
            return b;
        }
        return add_buffer(current + ".t" + std::to_string(temps++), current, rows, cols, current_double);
    }

    // `o` has been read for the last time (unless it became `keep`, the result).
    void release(const Operand &o, int keep) {
        if (!o.fresh || o.buffer < 0 || o.buffer == keep || k.buffers[o.buffer].dtype != "F32") return;
        free_temps[{k.buffers[o.buffer].rows, k.buffers[o.buffer].cols}].push_back(o.buffer);
    }

    // Where a result of R x C goes: `dst`, else a fresh operand of that shape (overwritten in place), else a new temporary.
    int result(int dst, int R, int C, std::initializer_list<const Operand *> ops) {
        if (dst >= 0) return dst;
        for (const Operand *o : ops)
            if (o->fresh && k.buffers[o->buffer].rows == R && k.buffers[o->buffer].cols == (C + 7) / 8 * 8) return o->buffer;
        return temp(R, C);
    }

    Operand tile_operand(int b, int R, int C, bool fresh) { return Operand{b, tile_code(b, R, C), fresh}; }

    // A window of shape `s` in buffer b, widened to the R x C tile by TROWEXPAND / TCOLEXPAND when it is 1-D.
    Operand expand_to(int b, Shape s, int dst, int R, int C, std::vector<NpuItem> &out) {
        auto [r, c] = window_shape(s, R, C);
        Operand src = tile_operand(b, r, c, false);
        if (r == R && c == C) {
            if (dst < 0) return src;
            instr(out, NpuPipe::V, "core.TCOPY(" + tile_code(dst, R, C) + ", " + src.code + ");", {b}, {dst});
            return tile_operand(dst, R, C, false);
        }
        // One expansion per buffer and loop body; of a hoisted load, one before the loop.
        std::string key = std::to_string(b) + "|" + std::to_string((int)s) + "|" + std::to_string(R) + "x" + std::to_string(C);
        bool hoist = dst < 0 && hoisted_buffers.count(b);
        std::map<std::string, int> &cache = hoist ? hoisted_loaded : expanded;
        auto hit = cache.find(key);
        if (dst < 0 && hit != cache.end()) return tile_operand(hit->second, R, C, false);
        int t = dst >= 0 ? dst : hoist ? add_buffer(k.buffers[b].name + ".x", current, R, C, false) : temp(R, C);
        instr(hoist ? hoisted : out, NpuPipe::V,
              std::string("core.") + (s == Shape::Column ? "TROWEXPAND(" : "TCOLEXPAND(") + tile_code(t, R, C) + ", " +
                  src.code + ");",
              {b}, {t});
        if (dst >= 0) return tile_operand(t, R, C, false);
        if (hoist) hoisted_buffers.insert(t);
        cache[key] = t;
        return tile_operand(t, R, C, false);
    }

    // A read of a Func or image inside the tile.
    Operand select_call(const Call *c, int dst, const Nest &n, std::vector<NpuItem> &out) {
        const int R = n.R, C = n.C;
        Window w = window(c->name, c->args, n);
        auto ub = ub_buffer.find(c->name);
        if (ub != ub_buffer.end()) {
            Expr off = ub_offset(c->name, w);
            const int64_t *o = const_int(off);
            const NpuBuffer &buf = k.buffers[ub->second];
            // A window whole rows down a 2-D buffer (a stencil's y offset) is an aligned tile at that row.
            int row0 = o && w.shape == Shape::Full && buf.memory == "UB" && *o > 0 && *o % buf.cols == 0 &&
                               *o / buf.cols + R <= buf.rows
                           ? (int)(*o / buf.cols)
                           : 0;
            user_assert(o && (*o == 0 || row0 > 0) && !w.clamped())
                << "NPU target: Func " << current << " reads " << c->name << " at an offset of " << off
                << " elements from the start of its UB buffer; tile instructions read whole aligned tiles (a row "
                   "offset inside the buffer is aligned, a column offset is not), so compute "
                << c->name << " over exactly the columns of the tile that reads it (same tile sizes, compute_at the "
                   "same loop)";
            if (buf.memory == "L0C") return from_l0c(ub->second, dst, R, C, out);
            if (row0) {
                Operand src = tile_operand(ub->second, R, C, false);
                src.code = tile_code(ub->second, R, C, row0);
                if (dst < 0) return src;
                instr(out, NpuPipe::V, "core.TCOPY(" + tile_code(dst, R, C) + ", " + src.code + ");", {ub->second}, {dst});
                return tile_operand(dst, R, C, false);
            }
            return expand_to(ub->second, w.shape, dst, R, C, out);
        }
        bool gm = c->call_type == Call::Image || gm_funcs.count(c->name);
        user_assert(gm) << "NPU target: Func " << current << " reads Func " << c->name
                        << ", which is neither in UB nor in GM here";
        auto [r, cc] = window_shape(w.shape, R, C);
        // A window loaded earlier in this loop body is loaded once (inputs are never written, GM Funcs not
        // in the loop nests that read them).
        std::ostringstream key;
        key << c->name << "|" << (int)w.shape << "|" << expand(w.x0) << "|" << expand(w.y0) << "|" << r << "x" << cc;
        for (int d = 0; d < 2; d++)
            if (w.lo[d].defined()) key << "|" << expand(w.lo[d]) << ".." << expand(w.hi[d]);
        int t;
        auto hit = loaded.find(key.str());
        bool invariant = c->call_type == Call::Image && !loop_vars.empty();
        for (const std::string &v : loop_vars)
            invariant &= !expr_uses_var(expand(w.x0), v) && !expr_uses_var(expand(w.y0), v);
        auto hhit = hoisted_loaded.find(key.str());
        if (invariant && hhit != hoisted_loaded.end()) {
            t = hhit->second;
        } else if (invariant) {  // loaded once, before the outermost loop
            t = add_buffer(c->name + ".in", current, r, cc, false);
            Window we = w;
            we.x0 = expand(w.x0), we.y0 = expand(w.y0);
            instr(hoisted, NpuPipe::MTE2, "core.TLOAD(" + tile_code(t, r, cc) + ", " + gm_code(c->name, we) + ");", {}, {t});
            hoisted_buffers.insert(t);
            hoisted_loaded[key.str()] = t;
        } else if (hit != loaded.end()) {
            t = hit->second;
        } else {
            bool full = r == R && cc == C;
            t = full && dst >= 0 ? dst : temp(r, cc);
            instr(out, NpuPipe::MTE2, "core.TLOAD(" + tile_code(t, r, cc) + ", " + gm_code(c->name, w) + ");", {}, {t});
            loaded[key.str()] = t;
            if (full && t == dst) return tile_operand(t, R, C, false);
        }
        return expand_to(t, w.shape, dst, R, C, out);
    }

    // Selects e into buffer `dst` (or a temporary when dst < 0) over the R x C tile; returns the operand.
    Operand select(const Expr &e, int dst, const Nest &n, std::vector<NpuItem> &out) {
        const int R = n.R, C = n.C;
        Expr full = expand(substitute(n.lets, e));
        bool varies = false;
        for (const For *l : {n.fx, n.fy}) varies |= l && expr_uses_var(full, l->name);
        struct FindCall : IRVisitor {
            bool found = false;
            using IRVisitor::visit;
            void visit(const Call *c) override {
                found |= c->call_type != Call::PureExtern;
                IRVisitor::visit(c);
            }
        } fc;
        fc.include(e);
        if (!varies && !fc.found) {
            Operand s{-1, scalar(full)};
            if (dst < 0) return s;
            instr(out, NpuPipe::V, "core.TDUP(" + tile_code(dst, R, C) + ", " + s.code + ");", {}, {dst});
            return tile_operand(dst, R, C, false);
        }
        user_assert(e.type() == Float(32)) << "NPU target: Func " << current << ": " << e << " has type " << e.type().to_string()
                                           << "; the vector instructions Kiln selects work on float32";
        if (const Call *c = e.as<Call>()) {
            if (c->call_type == Call::Func || c->call_type == Call::Image) return select_call(c, dst, n, out);
            static const std::map<std::string, std::string> unary = {
                {"exp", "TEXP"}, {"log", "TLOG"}, {"sqrt", "TSQRT"}, {"tanh", "TTANH"}, {"abs", "TABS"}};
            auto u = unary.find(c->name);
            user_assert(u != unary.end() && c->args.size() == 1)
                << "NPU target: Func " << current << " calls " << c->name
                << ", which has no NPU vector instruction; the vector unit has exp, log, sqrt, tanh, abs (and "
                   "+, -, *, /, min, max); compute it on the host or rewrite it";
            Operand a = select(c->args[0], -1, n, out);
            int t = result(dst, R, C, {&a});
            instr(out, NpuPipe::V, "core." + u->second + "(" + tile_code(t, R, C) + ", " + a.code + ");", {a.buffer}, {t});
            release(a, t);
            return tile_operand(t, R, C, dst < 0);
        }
        if (const Select *sel = e.as<Select>()) return select_select(sel, dst, n, out);
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
        Operand a = select(x, -1, n, out);
        Operand b = equal(x, y) ? Operand{a.buffer, a.code, false} : select(y, -1, n, out);  // d * d: d once
        int t = result(dst, R, C, {&a, &b});
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
        } else if (is_const(x, 1) || (x.as<FloatImm>() && x.as<FloatImm>()->value == 1.0)) {  // 1 / t
            instr(out, NpuPipe::V, "core.TRECIP(" + d + ", " + b.code + ");", {b.buffer}, {t});
        } else {  // s / t: the scalar spread over a tile, then a tile division
            int s = temp(R, C);
            instr(out, NpuPipe::V, "core.TDUP(" + tile_code(s, R, C) + ", " + a.code + ");", {}, {s});
            instr(out, NpuPipe::V, "core.TDIV(" + d + ", " + tile_code(s, R, C) + ", " + b.code + ");", {s, b.buffer}, {t});
            release(Operand{s, "", true}, t);
        }
        release(a, t);
        release(b, t);
        return tile_operand(t, R, C, dst < 0);
    }

    // A scalar operand spread over an R x C temporary (TDUP); tiles unchanged.
    Operand as_tile(Operand o, const Nest &n, std::vector<NpuItem> &out) {
        if (o.buffer >= 0) return o;
        int t = temp(n.R, n.C);
        instr(out, NpuPipe::V, "core.TDUP(" + tile_code(t, n.R, n.C) + ", " + o.code + ");", {}, {t});
        return tile_operand(t, n.R, n.C, true);
    }

    // select(a cmp b, t, f): TCMP into a u8 mask, then TSEL.
    Operand select_select(const Select *sel, int dst, const Nest &n, std::vector<NpuItem> &out) {
        const Expr &c = sel->condition;
        Expr ca, cb;
        const char *cmp = nullptr;
        if (const LT *o = c.as<LT>()) ca = o->a, cb = o->b, cmp = "LT";
        else if (const LE *o = c.as<LE>()) ca = o->a, cb = o->b, cmp = "LE";
        else if (const GT *o = c.as<GT>()) ca = o->a, cb = o->b, cmp = "GT";
        else if (const GE *o = c.as<GE>()) ca = o->a, cb = o->b, cmp = "GE";
        else if (const EQ *o = c.as<EQ>()) ca = o->a, cb = o->b, cmp = "EQ";
        else if (const NE *o = c.as<NE>()) ca = o->a, cb = o->b, cmp = "NE";
        user_assert(cmp && ca.type() == Float(32))
            << "NPU target: Func " << current << ": the condition " << c << " of a select has no NPU instruction; "
            << "TCMP compares two float32 tiles (<, <=, >, >=, ==, !=), so write the condition as one comparison of "
               "float32 values (nest selects instead of using && or ||)";
        Operand a = as_tile(select(ca, -1, n, out), n, out);
        Operand b = equal(ca, cb) ? Operand{a.buffer, a.code, false} : as_tile(select(cb, -1, n, out), n, out);
        int m = add_buffer(current + ".m" + std::to_string(temps++), current, n.R, n.C, current_double, "UB", "U8");
        instr(out, NpuPipe::V, "core.TCMP(" + tile_code(m, n.R, n.C) + ", " + a.code + ", " + b.code + ", Cmp::" + cmp + ");",
              {a.buffer, b.buffer}, {m});
        release(a, -1);
        release(b, -1);
        Operand t = as_tile(select(sel->true_value, -1, n, out), n, out);
        Operand f = equal(sel->true_value, sel->false_value) ? Operand{t.buffer, t.code, false}
                                                             : as_tile(select(sel->false_value, -1, n, out), n, out);
        int d = result(dst, n.R, n.C, {&t, &f});
        instr(out, NpuPipe::V,
              "core.TSEL(" + tile_code(d, n.R, n.C) + ", " + tile_code(m, n.R, n.C) + ", " + t.code + ", " + f.code + ");",
              {m, t.buffer, f.buffer}, {d});
        release(t, d);
        release(f, d);
        return tile_operand(d, n.R, n.C, dst < 0);
    }

    // The update f(y) = f(y) op g(r, y) over a 2-D tile (y, r): a row
    // reduction (TROWSUM / TROWMAX into f's column), or with f indexed by x
    // a column reduction (TCOLSUM / TCOLMAX into f's row).
    void select_reduction(const Provide *p, const Nest &n, std::vector<NpuItem> &out) {
        const std::string &f = p->name;
        Expr self, value;
        bool sum = false;
        auto is_self = [&](const Expr &e) {
            const Call *c = e.as<Call>();
            return c && c->name == f && c->args.size() == 1 && equal(c->args[0], p->args[0]);
        };
        if (const Add *a = p->values[0].as<Add>()) {
            sum = true;
            if (is_self(a->a)) value = a->b;
            else if (is_self(a->b)) value = a->a;
        } else if (const Max *m = p->values[0].as<Max>()) {
            if (is_self(m->a)) value = m->b;
            else if (is_self(m->b)) value = m->a;
        }
        user_assert(value.defined())
            << "NPU target: Func " << f << " is 1-D and computed over a 2-D loop nest (" << n.fy->name << ", "
            << n.fx->name << "), which the NPU maps onto a row reduction; its update must be " << f << "(y) = " << f
            << "(y) + e or max(" << f << "(y), e) (TROWSUM, TROWMAX), not " << p->values[0];
        auto ub = ub_buffer.find(f);
        user_assert(ub != ub_buffer.end()) << "NPU target: Func " << f
                                           << " is a reduction stored in GM; the NPU keeps reductions in UB, so "
                                              "compute_at it inside the loop of its consumer's tiles";
        Window w = window(f, p->args, n);
        const int64_t *o = const_int(ub_offset(f, w));
        user_assert(o && *o == 0) << "NPU target: Func " << f << " is reduced into its UB buffer at an offset; compute "
                                  << f << " at the loop of the tiles that read it, over the same rows";
        bool rows = w.shape == Shape::Column;  // one result per row: reduce along x
        const For *rl = rows ? n.fx : n.fy;
        // Bitwise agreement with the host: TROWSUM adds left to right from 0,
        // so the whole reduction must be this one instruction, from 0.
        const FunctionContents &fc = func(f);
        bool whole = false;
        if (!fc.updates.empty() && fc.updates[0].rdom)
            for (const auto &rv : fc.updates[0].rdom->vars)
                whole |= is_zero(simplify(expand(substitute(n.lets, rl->extent)) - expand(rv.extent)));
        Expr init = fc.init.values.empty() ? Expr() : fc.init.values[0];
        bool identity = init.defined() && (sum ? is_zero(init)
                                               : init.as<FloatImm>() && std::isinf(init.as<FloatImm>()->value) &&
                                                     init.as<FloatImm>()->value < 0);
        user_assert(!sum || (whole && identity) || target.has(Target::FastMath))
            << "NPU target: Func " << f << " sums over " << rl->name << " with TROWSUM, which adds a whole row left "
            << "to right starting from 0; "
            << (whole ? "its pure definition starts from " + to_string_expr(init)
                      : std::string("the tile covers only part of the reduction domain (it is split)"))
            << ", so the NPU would add in another order than the host: define it as 0 and reduce the whole row in "
               "one tile, or compile with target feature fast_math to allow the reassociation";
        const char *op = rows ? (sum ? "TROWSUM" : "TROWMAX") : (sum ? "TCOLSUM" : "TCOLMAX");
        Operand v = select(value, -1, n, out);
        auto [r, c] = window_shape(w.shape, n.R, n.C);
        if (whole && identity) {  // the instruction computes the Func's final value
            instr(out, NpuPipe::V, std::string("core.") + op + "(" + tile_code(ub->second, r, c) + ", " + v.code + ");",
                  {v.buffer}, {ub->second});
            release(v, -1);
            return;
        }
        int t = temp(r, c);
        instr(out, NpuPipe::V, std::string("core.") + op + "(" + tile_code(t, r, c) + ", " + v.code + ");", {v.buffer}, {t});
        std::string d = tile_code(ub->second, r, c);
        instr(out, NpuPipe::V, std::string("core.") + (sum ? "TADD(" : "TMAX(") + d + ", " + d + ", " + tile_code(t, r, c) + ");",
              {ub->second, t}, {ub->second});
    }

    std::set<int> zeroed;  // L0C buffers whose next TMATMUL starts from 0

    // The L0C tile of buffer b in UB (TMOV on the fix pipe), once per loop body.
    Operand from_l0c(int b, int dst, int R, int C, std::vector<NpuItem> &out) {
        std::string key = std::to_string(b) + "|fix";
        auto hit = expanded.find(key);
        if (dst < 0 && hit != expanded.end()) return tile_operand(hit->second, R, C, false);
        int t = dst >= 0 ? dst : temp(R, C);
        instr(out, NpuPipe::FIX, "core.TMOV(" + tile_code(t, R, C) + ", " + tile_code(b, R, C) + ");", {b}, {t});
        if (dst < 0) expanded[key] = t;
        return tile_operand(t, R, C, false);
    }

    // An operand of a matrix update: its window loaded GM -> L1 (TLOAD) and
    // moved L1 -> L0A/L0B (TMOV); before the outermost loop when it does
    // not move with any loop.
    int stage_operand(const Call *c, const Nest &n, const std::string &l0, std::vector<NpuItem> &out) {
        std::string base = current + (l0 == "L0A" ? ".a" : ".b");
        auto ub = ub_buffer.find(c->name);
        if (ub != ub_buffer.end() && k.buffers[ub->second].memory == "UB") {
            // A Func the vector unit computed (attention's P): UB -> L1 (TMOV, MTE3) -> L0A/L0B (TMOV, MTE1).
            Window w = window(c->name, c->args, n);
            const NpuBuffer &buf = k.buffers[ub->second];
            const int64_t *o = const_int(ub_offset(c->name, w));
            user_assert(w.shape == Shape::Full && o && *o == 0 && buf.rows == n.R && buf.cols == (n.C + 7) / 8 * 8)
                << "NPU target: Func " << current << " multiplies " << c->name << ", which is in UB as "
                << buf.rows << " x " << buf.cols << "; the matrix unit takes a UB operand through L1 whole, so "
                << "compute " << c->name << " at the loop of " << current << "'s tiles over exactly its "
                << n.R << " x " << n.C << " window";
            int l1 = add_buffer(base + "1", current, n.R, n.C, current_double, "L1");
            int t = add_buffer(base + "0", current, n.R, n.C, current_double, l0);
            instr(out, NpuPipe::MTE3, "core.TMOV(" + tile_code(l1, n.R, n.C) + ", " + tile_code(ub->second, n.R, n.C) + ");",
                  {ub->second}, {l1});
            instr(out, NpuPipe::MTE1, "core.TMOV(" + tile_code(t, n.R, n.C) + ", " + tile_code(l1, n.R, n.C) + ");", {l1}, {t});
            return t;
        }
        user_assert(c->call_type == Call::Image || gm_funcs.count(c->name))
            << "NPU target: Func " << current << " multiplies " << c->name << ", which is not in GM here; the NPU "
            << "loads matrix operands from GM (inputs or compute_root Funcs) or takes them from UB, through L1 into "
            << l0;
        // A window read transposed (B(x, k) written K(k, x), as in Q Kᵀ): loaded as the N x K window it is in
        // GM and transposed by the move into L0 (TMOV_T).
        bool transposed = false;
        if (c->args.size() == 2 && n.fx && n.fy) {
            Expr a0 = expand(substitute(n.lets, c->args[0])), a1 = expand(substitute(n.lets, c->args[1]));
            transposed = expr_uses_var(a0, n.fy->name) && expr_uses_var(a1, n.fx->name);
        }
        const Nest nt{n.fx, n.fy, n.C, n.R, n.lets};
        const Nest &gm_nest = transposed ? nt : n;
        Window w = window(c->name, c->args, gm_nest);
        bool invariant = !loop_vars.empty();
        for (const std::string &v : loop_vars)
            invariant &= !expr_uses_var(expand(w.x0), v) && !expr_uses_var(expand(w.y0), v);
        std::ostringstream key;
        key << c->name << "|" << l0 << "|" << expand(w.x0) << "|" << expand(w.y0) << "|" << n.R << "x" << n.C
            << (transposed ? "|T" : "");
        if (invariant && hoisted_loaded.count(key.str())) return hoisted_loaded[key.str()];
        std::vector<NpuItem> &dst = invariant ? hoisted : out;
        const int gr = gm_nest.R, gc = gm_nest.C;
        int l1 = add_buffer(base + "1", current, gr, gc, !invariant && current_double, "L1");
        int t = add_buffer(base + "0", current, n.R, n.C, !invariant && current_double, l0);
        Window we = w;
        we.x0 = expand(w.x0), we.y0 = expand(w.y0);
        instr(dst, NpuPipe::MTE2, "core.TLOAD(" + tile_code(l1, gr, gc) + ", " + gm_code(c->name, invariant ? we : w) + ");",
              {}, {l1});
        instr(dst, NpuPipe::MTE1,
              std::string("core.") + (transposed ? "TMOV_T(" : "TMOV(") + tile_code(t, n.R, n.C) + ", " +
                  tile_code(l1, gr, gc) + ");",
              {l1}, {t});
        if (invariant) hoisted_loaded[key.str()] = t;
        return t;
    }

    // C(x, y) = C(x, y) + A(k, y) * B(x, k) over a 3-D nest of constant
    // loops (any order), C in L0C: one TMATMUL (from 0, after C's pure
    // definition) or TMATMUL_ACC of the M x K window of A and the K x N
    // window of B. The sum runs over k in order, as the host's loop does.
    void select_matmul(const For *l0, const For *l1, const For *l2, std::vector<NpuItem> &out) {
        std::vector<std::pair<std::string, Expr>> chain;
        for (const For *l : {l0, l1, l2}) {
            const Stmt *b = &l->body;
            while (const LetStmt *ls = b->as<LetStmt>()) chain.emplace_back(ls->name, ls->value), b = &ls->body;
        }
        std::map<std::string, Expr> inner;
        for (auto &c : chain) inner[c.first] = substitute(inner, c.second);
        const Provide *p = skip_lets(l2->body).as<Provide>();
        current = p->name;
        temps = 0;
        free_temps.clear();
        current_double = func(p->name).schedule.double_buffer;
        auto shape_error = [&]() {
            user_error << "NPU target: Func " << p->name << " is computed over a 3-D loop nest (" << l0->name << ", "
                       << l1->name << ", " << l2->name << "); the NPU maps only matrix updates C(x, y) = C(x, y) + "
                       << "A(k, y) * B(x, k) onto TMATMUL, with C stored in L0C (store_in(L0C)), not " << p->values[0];
        };
        auto ub = ub_buffer.find(p->name);
        if (p->args.size() != 2 || ub == ub_buffer.end() || k.buffers[ub->second].memory != "L0C") shape_error();
        const For *loops[3] = {l0, l1, l2};
        auto loop_of = [&](const Expr &e) -> const For * {
            Expr x = expand(substitute(inner, e));
            const For *found = nullptr;
            for (const For *l : loops)
                if (expr_uses_var(x, l->name)) {
                    if (found) return nullptr;
                    found = l;
                }
            return found;
        };
        const For *fx = loop_of(p->args[0]), *fy = loop_of(p->args[1]), *fk = nullptr;
        for (const For *l : loops) if (l != fx && l != fy) fk = l;
        const Add *add = p->values[0].as<Add>();
        const Mul *mul = add ? (add->b.as<Mul>() ? add->b.as<Mul>() : add->a.as<Mul>()) : nullptr;
        const Call *self = add ? (add->b.as<Mul>() ? add->a.as<Call>() : add->b.as<Call>()) : nullptr;
        if (!fx || !fy || fx == fy || !mul || !self || self->name != p->name) shape_error();
        const Call *a = mul->a.as<Call>(), *b = mul->b.as<Call>();
        if (!a || !b || a->args.size() != 2 || b->args.size() != 2) shape_error();
        if (loop_of(a->args[1]) != fy) std::swap(a, b);  // A(k, y), B(x, k) or transposed B(k, x)
        if (loop_of(a->args[0]) != fk || loop_of(a->args[1]) != fy ||
            !((loop_of(b->args[0]) == fx && loop_of(b->args[1]) == fk) ||
              (loop_of(b->args[0]) == fk && loop_of(b->args[1]) == fx)))
            shape_error();
        const int64_t *M = const_int(simplify(fy->extent)), *N = const_int(simplify(fx->extent)),
                      *K = const_int(simplify(fk->extent));
        user_assert(M && N && K) << "NPU target: Func " << p->name << ": the matrix update's loops " << fy->name << ", "
                                 << fx->name << " and " << fk->name << " have extents " << fy->extent << ", "
                                 << fx->extent << " and " << fk->extent
                                 << "; TMATMUL has a constant shape, so tile C by constants and give the reduction a "
                                    "constant extent";
        for (const For *l : loops)
            user_assert(l->for_type == ForType::Serial) << "NPU target: Func " << p->name << ": loop " << l->name
                                                        << " forms a TMATMUL and must stay serial";
        Nest na{fy, fk, (int)*M, (int)*K, inner}, nb{fk, fx, (int)*K, (int)*N, inner}, nc{fy, fx, (int)*M, (int)*N, inner};
        Window w = window(p->name, p->args, nc);
        const int64_t *o = const_int(ub_offset(p->name, w));
        user_assert(o && *o == 0 && k.buffers[ub->second].rows == *M && k.buffers[ub->second].cols == (*N + 7) / 8 * 8)
            << "NPU target: Func " << p->name << " is updated in " << *M << " x " << *N << " tiles of its L0C buffer of "
            << k.buffers[ub->second].rows << " x " << k.buffers[ub->second].cols
            << "; a matrix update covers the whole accumulator: compute_at it at the loop of its consumer's tiles";
        int ta = stage_operand(a, na, "L0A", out), tb = stage_operand(b, nb, "L0B", out);
        bool first = zeroed.erase(ub->second) > 0;
        instr(out, NpuPipe::M,
              std::string("core.") + (first ? "TMATMUL(" : "TMATMUL_ACC(") + tile_code(ub->second, (int)*M, (int)*N) +
                  ", " + tile_code(ta, (int)*M, (int)*K) + ", " + tile_code(tb, (int)*K, (int)*N) + ");",
              first ? std::vector<int>{ta, tb} : std::vector<int>{ta, tb, ub->second}, {ub->second});
    }

    static std::string to_string_expr(const Expr &e) {
        std::ostringstream s;
        s << e;
        return s.str();
    }

    // The legality of an explicit npu_tile(x, y) on the stage whose innermost
    // loops are fy (rows) and fx (columns): they must be the loops it names,
    // of constant extents, with rows of a multiple of 32 bytes.
    void check_npu_tile(const std::string &f, const For *fy, const For *fx, const int64_t *ey, const int64_t *ex) {
        const For *any = fx ? fx : fy;
        const std::string prefix = f + ".s";
        if (any->name.rfind(prefix, 0) != 0) return;
        size_t dot = any->name.find('.', prefix.size());
        int stage = std::atoi(any->name.substr(prefix.size(), dot - prefix.size()).c_str());
        const FunctionContents &fc = func(f);
        if (stage >= fc.num_stages()) return;
        const StageSchedule &ss = fc.stage(stage).schedule;
        if (ss.npu_tile.empty()) return;
        auto user = [&](const std::string &var) {
            for (const Dim &d : ss.dims)
                if (d.var == var) return d.user_name;
            return var;
        };
        const std::string base = any->name.substr(0, dot + 1), x = user(ss.npu_tile[0]), y = user(ss.npu_tile[1]);
        const std::string directive = "npu_tile(" + x + ", " + y + ")";
        auto loop_name = [&](const For *l) { return l ? user(l->name.substr(base.size())) : std::string("(none)"); };
        user_assert(fx && fy && fx->name == base + ss.npu_tile[0] && fy->name == base + ss.npu_tile[1])
            << "NPU target: Func " << fc.stage_name(stage) << ": " << directive << " names the loops of its tile, but "
            << "the innermost two loops of the stage are " << loop_name(fy) << " (rows) and " << loop_name(fx)
            << " (columns, innermost); reorder(" << x << ", " << y << ", ...) so that " << x << " is innermost and "
            << y << " next, or name those two loops";
        user_assert(ex && ey) << "NPU target: Func " << fc.stage_name(stage) << ": " << directive << ": loop "
                              << (ex ? y : x) << " has extent " << (ex ? fy->extent : fx->extent)
                              << ", which is not a constant; a tile has a constant shape, so split it by a constant "
                                 "(tile(x, y, xo, yo, xi, yi, 64, 16)) or bound() the Func";
        user_assert(*ex * 4 % 32 == 0) << "NPU target: Func " << fc.stage_name(stage) << ": " << directive << ": a row of the tile is "
                                        << *ex << " float32 values, " << *ex * 4
                                        << " bytes, not a multiple of the machine's 32-byte alignment; make the extent "
                                           "of "
                                        << x << " a multiple of 8 (or drop npu_tile to let the tile pad its rows)";
    }

    // The tile of one stage: fy and/or fx (a 1-D tile has one), with a Provide inside.
    void select_tile(const For *fy, const For *fx, std::vector<NpuItem> &out) {
        Nest n;
        n.fy = fy;
        n.fx = fx;
        const For *outer = fy ? fy : fx, *inner = fy && fx ? fx : nullptr;
        std::vector<std::pair<std::string, Expr>> chain;
        const Stmt *b = &outer->body;
        while (const LetStmt *l = b->as<LetStmt>()) chain.emplace_back(l->name, l->value), b = &l->body;
        if (inner) {
            b = &inner->body;
            while (const LetStmt *l = b->as<LetStmt>()) chain.emplace_back(l->name, l->value), b = &l->body;
        }
        for (auto &c : chain) n.lets[c.first] = substitute(n.lets, c.second);
        const Provide *p = b->as<Provide>();
        user_assert(p->values.size() == 1) << "NPU target: Func " << p->name
                                           << " returns a Tuple; the NPU code generator handles Funcs of one value only";
        current = p->name;
        temps = 0;
        free_temps.clear();
        current_double = func(p->name).schedule.double_buffer;
        const int64_t *ey = fy ? const_int(simplify(fy->extent)) : nullptr, *ex = fx ? const_int(simplify(fx->extent)) : nullptr;
        check_npu_tile(p->name, fy, fx, ey, ex);
        if (inner)
            user_assert(ey && ex) << "NPU target: Func " << p->name << ": the innermost two loops " << fy->name << " and "
                                  << fx->name << " have extents " << fy->extent << " and " << fx->extent
                                  << "; a tile has a constant shape, so split or tile them by constants (e.g. tile(x, "
                                     "y, xo, yo, xi, yi, 64, 16)), or bound() the Func";
        else
            user_assert(ey || ex) << "NPU target: Func " << p->name << ": the innermost loop " << outer->name
                                  << " has extent " << outer->extent
                                  << "; a tile has a constant shape, so split it by a constant, or bound() the Func";
        for (const For *l : {fy, fx})
            user_assert(!l || l->for_type == ForType::Serial)
                << "NPU target: Func " << p->name << ": loop " << l->name
                << " forms its tile and must stay serial (no vectorize, unroll or parallel there)";
        if (fy) n.R = (int)*ey;
        if (fx) n.C = (int)*ex;
        if (p->args.size() == 1 && fy && fx) {
            select_reduction(p, n, out);
            return;
        }
        Window w = window(p->name, p->args, n);
        auto ub = ub_buffer.find(p->name);
        if (ub != ub_buffer.end()) {
            const NpuBuffer &buf = k.buffers[ub->second];
            const int64_t *o = const_int(ub_offset(p->name, w));
            user_assert(o && *o == 0 && buf.rows == n.R && buf.cols == (n.C + 7) / 8 * 8)
                << "NPU target: Func " << p->name << " is computed in " << n.R << " x " << n.C
                << " tiles into a UB buffer of " << buf.rows << " x " << buf.cols
                << "; a Func in UB is computed as one tile covering its buffer";
            if (buf.memory == "L0C") {  // only the matrix unit writes L0C: the first TMATMUL starts from 0
                user_assert(is_zero(p->values[0]))
                    << "NPU target: Func " << p->name << " is stored in L0C, which only the matrix unit writes, so its "
                    << "pure definition must be 0 and its updates " << p->name << "(x, y) += A(k, y) * B(x, k); it is "
                    << p->values[0] << "; store_in(UB) it";
                zeroed.insert(ub->second);
                return;
            }
            select(p->values[0], ub->second, n, out);
            return;
        }
        // Output or GM Func: compute into a UB tile, then TSTORE.
        for (auto it = loaded.begin(); it != loaded.end();)
            it = it->first.rfind(p->name + "|", 0) == 0 ? loaded.erase(it) : std::next(it);
        int t = temp(n.R, n.C);
        select(p->values[0], t, n, out);
        instr(out, NpuPipe::MTE3, "core.TSTORE(" + gm_code(p->name, w) + ", " + tile_code(t, n.R, n.C) + ");", {t}, {});
    }
};

}  // namespace

NpuKernel npu_select_kernel(const Stmt &loop_nest, const Environment &env, const std::vector<std::string> &outputs,
                            const Target &t) {
    FindShapes shapes;
    shapes.include(loop_nest);
    Selector s(env, outputs, t, shapes.shape);
    s.stmt(loop_nest, s.k.body);
    return s.k;
}

}  // namespace internal
}  // namespace kiln
