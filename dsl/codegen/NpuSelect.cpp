// Instruction selection for the tile-NPU target, with its legality checks.
//
// Input: the loop nest after bounds inference and simplification, before
// storage flattening (lower() stopped at LowerStop::LoopNest): Realize/Provide/Call per Func.
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
// A Func or image of three or four dimensions (channels, batches) is tiled
// over its dimensions 0 and 1; its further dimensions are ordinary loops
// around the tile (or constants), and a read's plane is an offset of its GM
// window. A 3-D Func in UB holds one plane at a time:
//
//   for (output.s0.c, 0, 3) for (y, ..., 32) for (x, ..., 64)
//     output(x, y, c) = input(x, y, c) * 2
//   ->
//   TLOAD(output.t0 <- input window at (x.min, y.min) + (c - input.min.2) * input.stride.2)   MTE2
//   TMULS(output.t1 <- output.t0, 2)                                                          V
//   TSTORE(output window at (x.min, y.min) + (c - output.min.2) * output.stride.2 <- output.t1)  MTE3
//
// Reads of images and of Funcs stored in GM are staged by TLOAD into a UB
// tile (a wrapper Func `in_ub(x, y) = input(x, y)` stored in UB is exactly a
// TLOAD, which is what in() staging gives); a Func stored in GM or an output
// is computed into a UB tile and written by TSTORE. Funcs computed inside a
// loop live in UB (store_in(UB), the default there); compute_root Funcs in
// GM; a copy of an input's window stored in L1 (store_in(L1)) is one TLOAD
// into L1 (or one per k-slice of a split K), a matrix operand panel (NpuSelectMatrix.cpp). Every Func reading or written by vector instructions must be in UB.
//
// This file has the walk over the loop nest, the storage of Funcs, windows,
// loads and the tile of each stage; a tile's value is selected by
// NpuSelectVector.cpp, row and column reductions by NpuSelectReduce.cpp,
// matrix updates by NpuSelectMatrix.cpp, a stencil's halo by
// NpuSelectHalo.cpp and the checks of a tile's loops by NpuSelectChecks.cpp
// (the Selector of NpuSelect.h).
#include <algorithm>
#include <cmath>
#include <set>
#include <sstream>
#include <tuple>

#include "NpuSelect.h"
#include "CNames.h"
#include "CodeGen_C.h"
#include "ir/Error.h"
#include "ir/ExprKey.h"
#include "ir/IRPrinter.h"
#include "ir/IRVisitor.h"
#include "lower/Lower.h"
#include "lower/RealizationOrder.h"
#include "ir/Simplify.h"
#include "ir/Substitute.h"
#include "ir/Util.h"

namespace kiln {
namespace internal {

std::string npu_c_name(const std::string &ir) { return "v_" + c_mangle(ir); }

npu::DType npu_float_dtype(const Type &t) {
    if (t == Float(32)) return npu::DType::F32;
    if (t == Float(16)) return npu::DType::F16;
    if (t == BFloat(16)) return npu::DType::BF16;
    return npu::DType::U8;
}

npu::DType npu_dtype(const Type &t) {
    if (t == Int(8)) return npu::DType::I8;
    if (t == Int(32)) return npu::DType::I32;
    return npu_float_dtype(t);
}

namespace npu_select {

const int64_t *const_int(const Expr &e) {
    const IntImm *i = e.as<IntImm>();
    return i ? &i->value : nullptr;
}

std::string Selector::scalar(const Expr &e) const {
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
    std::string owner = scalar_owner ? *scalar_owner : std::string("a loop bound");
    user_error << "NPU target: Func " << owner.substr(0, owner.find('.')) << ": " << owner << " needs " << e
               << ", which has no scalar code on the NPU's S pipe: loop bounds and regions are computed there "
                  "from integer and float arithmetic, comparisons, select, casts and one-argument math functions "
                  "of loop variables and scalar Params, never from values read from an image or a Func (a "
                  "data-dependent bound); give the Func's loops and RDoms bounds that are constants or Params";
    return "";
}

void Selector::stmt(const Stmt &s, std::vector<NpuItem> &out) {
    if (!s.defined()) return;
    if (const Block *b = s.as<Block>()) {
        stmt(b->first, out);
        stmt(b->rest, out);
    } else if (const LetStmt *l = s.as<LetStmt>()) {
        ScalarOwner owner(*this, l->name);
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
        // A check of the regions (a bound() against what is read or asked
        // for): reported and returned by the host stub, as on the host.
        static const std::string check = "a run-time check";
        ScalarOwner owner(*this, check);
        std::string call = assert_error_call(kernel_name, a->message, [&](const Expr &e) { return "(" + scalar(e) + ")"; });
        out.push_back(NpuItem::line("if (!(" + scalar(a->condition) + ")) { " + call +
                                    " throw kiln_npu_check_failed{" + std::to_string(a->error_code) + "}; }"));
    } else if (const IfThenElse *i = s.as<IfThenElse>()) {
        // A split RVar's tail: the other tail strategies would add elements twice or read past the row.
        std::ostringstream cond;
        cond << i->condition;
        for (const auto &[f, fc] : env)
            for (size_t u = 0; u < fc->updates.size(); u++)
                for (const auto &rv : fc->updates[u].rdom ? fc->updates[u].rdom->vars : std::vector<ReductionVariable>{})
                    user_assert(cond.str().find(f + ".s" + std::to_string(u + 1) + "." + rv.name) == std::string::npos)
                        << "NPU target: Func " << f << ": its update's RDom variable " << rv.name << " of extent "
                        << rv.extent << " is split by a factor that does not divide it, which leaves a tail guarded "
                        << "by (" << i->condition << "); a reduction's parts must cover it exactly (a shifted or "
                        << "rounded-up last part would add elements twice or read past the row), so split "
                        << rv.name << " by a constant that divides its extent";
        user_error << "NPU target: the loop nest has a condition (" << i->condition
                   << "), from a GuardWithIf tail; use TailStrategy::ShiftInwards or RoundUp, or tile sizes that "
                      "divide the image";
    } else if (const Provide *p = s.as<Provide>()) {
        provide_outside_loop(p);
    } else {
        internal_error << "NPU target: unexpected statement " << s;
    }
}

const Provide *Selector::begin_stage(const std::vector<const For *> &loops, std::map<std::string, Expr> &lets) {
    std::vector<std::pair<std::string, Expr>> chain;
    const Stmt *b = nullptr;
    for (const For *l : loops)
        for (b = &l->body; const LetStmt *ls = b->as<LetStmt>(); b = &ls->body) chain.emplace_back(ls->name, ls->value);
    for (auto &c : chain) lets[c.first] = substitute(lets, c.second);
    const Provide *p = b->as<Provide>();
    current = p->name;
    temps = 0;
    free_temps.clear();
    repeats.clear();
    shared.clear();
    current_double = func(p->name).schedule.double_buffer;
    return p;
}

int Selector::add_buffer(const std::string &name, const std::string &owner, int rows, int cols, bool dbl,
                         npu::Mem memory, npu::DType dtype) {
    NpuBuffer b;
    b.name = name;
    b.owner = owner;
    b.memory = memory;
    b.dtype = dtype;
    b.rows = rows;
    int per_row = 32 / npu::dtype_size(dtype);
    b.cols = (cols + per_row - 1) / per_row * per_row;  // rows of 32 bytes
    b.copies = dbl ? 2 : 1;
    k.buffers.push_back(b);
    return (int)k.buffers.size() - 1;
}

void Selector::realize(const Realize *r, std::vector<NpuItem> &out) {
    const FunctionContents &f = func(r->name);
    ScalarOwner owner(*this, r->name);
    // A Tuple state is one UB buffer per value (value_key): a 1-D row
    // statistic (the online softmax's running maximum and rescaled sum, one
    // column per value, updated together by select_online_reduction), or a
    // 2-D tile per value (flash attention's running state, with its
    // accumulator), updated tile by tile by select_tile.
    if (r->types.size() > 1) {
        bool same = true;
        for (const Type &t : r->types) same &= t == Float(32);
        user_assert(same && (r->bounds.size() == 1 || r->bounds.size() == 2) &&
                    memory_of(r->name, f.schedule.compute_level.is_root()) == MemoryType::UB)
            << "NPU target: Func " << r->name << " returns a Tuple of " << r->types.size() << " values (computed at "
            << f.schedule.compute_level.to_string() << "); the NPU code generator handles a Tuple only as float32 "
            << "values in UB, one buffer per value, compute_at inside the loop of its consumer's tiles: a 1-D row "
               "statistic (the online softmax's running maximum and rescaled sum, one UB column per value) or a "
               "2-D tile per value (a running state updated elementwise, such as flash attention's); give each "
               "value its own Func, or compute "
            << r->name << " on the host";
    }
    user_assert(npu_dtype(r->types[0]) != npu::DType::U8)
        << "NPU target: Func " << r->name << " has type " << r->types[0].to_string()
        << "; the NPU code generator handles float32, float16 and bfloat16 Funcs (of one value) only, and int8 "
           "operand panels in L1 and int32 accumulators in L0C";
    const npu::DType dtype = npu_dtype(r->types[0]);
    const size_t dims = r->bounds.size();
    bool at_root = f.schedule.compute_level.is_root();
    MemoryType m = memory_of(r->name, at_root);
    // A 3-D or 4-D Func in UB (or L0C) is computed one plane at a time: a 2-D
    // tile at a loop inside the loops over its further dimensions (channels,
    // batches, key blocks); a planar Func a column or row of one plane.
    const size_t td = tile_dims(r->name, dims);
    for (size_t d = td; d < dims; d++) {
        const Expr e = simplify(r->bounds[d].extent);
        user_assert((m == MemoryType::UB || (m == MemoryType::L0C && td == 2)) && is_one(e))
            << "NPU target: Func " << r->name << " has " << dims << " dimensions and is stored in " << to_string(m)
            << " (computed at " << f.schedule.compute_level.to_string() << ") over " << expand(r->bounds[d].extent)
            << " values of dimension " << d << "; tiles are 2-D, so the NPU code generator computes a 3-D or 4-D "
            << "Func in UB one plane (dimensions 0 and 1) at a time: make its dimensions from 2 on loops around "
               "its consumer's tile (the consumer's channel loop outside its tile's loops) and compute_at "
            << r->name << " inside them, or write it as 2-D Funcs, one per plane";
    }
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
        // Not reachable from a schedule: root Funcs are realized before any output's loops, and an earlier
        // root Func with a parallel loop is either in GM (rejected at that loop, gm_funcs) or in UB / L0C,
        // where each stage is one tile covering its buffer with no pure loop around it (select_tile) and
        // the frontend never parallelizes an RVar.
        internal_assert(!k.multi_core) << "NPU target: Func " << r->name
                                       << " is stored in GM after a loop across cores";
        user_assert(dtype == npu::DType::F32)
            << "NPU target: Func " << r->name << " is a " << r->types[0].to_string()
            << " Func stored in GM; the NPU code generator keeps GM intermediates in float32, so compute it in "
               "float32 (convert where it is read), or compute_at it inside the loop of its consumer's tiles (UB)";
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
    // L1 holds a copy of an input's window (an operand panel, select_tile checks it is one).
    user_assert(m == MemoryType::UB || (m == MemoryType::L0C && td == 2) || (m == MemoryType::L1 && dims == 2))
        << "NPU target: Func " << r->name << " is stored in " << to_string(m)
        << ", but it is computed and read by the vector pipe (V), which reaches only UB; store_in(UB) it (L1, "
           "L0A, L0B and L0C hold matrix operands)";
    Expr x0 = expand(r->bounds[0].extent), x1 = dims >= 2 ? expand(r->bounds[1].extent) : x0;
    const int64_t *e0 = const_int(x0), *e1 = const_int(x1);
    if (!(e0 && e1)) {
        std::ostringstream region;  // with the enclosing lets expanded: in the user's terms
        region << expand(r->bounds[0].extent);
        if (dims >= 2) region << " x " << expand(r->bounds[1].extent);
        // A run-time size in the region (an input's extent) usually comes from a
        // consumer's RDom over the whole input, which bound() cannot shorten.
        struct RunTimeSize : IRVisitor {
            std::string name;
            using IRVisitor::visit;
            void visit(const Variable *v) override {
                if (name.empty() && v->name.find(".extent.") != std::string::npos) name = v->name;
            }
        } size;
        size.include(expand(x0));
        size.include(expand(x1));
        // (Not an output's own size: bound() fixes that, constant_extent_fix below.)
        bool own_size = is_output(size.name.substr(0, size.name.find(".extent.")));
        std::string rdom_hint = size.name.empty() || own_size ? std::string() :
            "; its region follows " + size.name + ", a size known only at run time: when a consumer reduces "
            "over an RDom spanning it (e.g. RDom(0, input.dim(0).extent()), a row reduction), give that RDom "
            "constant bounds instead (RDom(0, 1024), or a generator's constant width such as softmax and "
            "layernorm's width=1024), since bound() on a Func does not change an RDom's extent";
        std::string fix = constant_extent_fix(r->name, e0 ? 1 : 0);
        user_error << "NPU target: Func " << r->name << " is stored in UB over a region of " << region.str()
                   << " elements, which is not constant; on-chip buffers are allocated statically, so "
                   << (fix.empty() ? "tile its consumer's loops by constants (e.g. tile(x, y, xo, yo, xi, yi, 64, 16))"
                                   : fix)
                   << rdom_hint;
    }
    int rows = (int)*e1, cols = (int)*e0;
    if (td == 1) {
        bool column = shape_of(r->name, 1) == Shape::Column;
        rows = column ? (int)*e0 : 1;
        cols = column ? 1 : (int)*e0;
    }
    user_assert(m != MemoryType::L0C || dtype == npu::DType::F32 || dtype == npu::DType::I32)
        << "NPU target: Func " << r->name << " is stored in L0C as " << r->types[0].to_string()
        << "; the matrix unit accumulates in float32 (int32 for int8 operands), so give the accumulator type "
           "float32 and cast its result where it is read";
    user_assert(!(dtype == npu::DType::I8 || dtype == npu::DType::I32) || m == MemoryType::L0C || m == MemoryType::L1)
        << "NPU target: Func " << r->name << " has type " << r->types[0].to_string() << " and is stored in "
        << to_string(m) << "; the vector unit computes float tiles, so an integer Func on the NPU is an int8 "
        << "operand panel in L1 (store_in(L1)) or an int32 matrix accumulator in L0C (store_in(L0C)), whose "
        << "epilogue (bias, ReLU, requantization) the fix pipe applies as the output is stored; compute it in "
           "float32, or store it in L1 or L0C";
    if (r->types.size() > 1 && td == 2 && dims == 2 && m == MemoryType::UB)
        column_values[r->name] = tuple_column_values(f);
    for (size_t i = 0; i < r->types.size(); i++)
        ub_buffer[value_key(r->name, (int)i)] =
            add_buffer(value_key(r->name, (int)i), r->name, rows, is_column_value(r->name, (int)i) ? 1 : cols,
                       f.schedule.double_buffer,
                       m == MemoryType::L0C ? npu::Mem::L0C : m == MemoryType::L1 ? npu::Mem::L1 : npu::Mem::UB, dtype);
    std::vector<Expr> mins;
    for (size_t d = 0; d < dims; d++) mins.push_back(r->bounds[d].min);
    ub_mins[r->name] = mins;
    if (td == 2) ub_cols[r->name] = cols;
    stmt(r->body, out);
}

std::set<int> tuple_column_values(const FunctionContents &f) {
    std::set<int> cols;
    if (f.args.size() != 2) return cols;
    for (const Definition &d : f.updates)  // an update at another x (f(x + 1, y) = ...) moves along x
        if (d.args.size() != 2 || !d.args[0].as<Variable>() || d.args[0].as<Variable>()->name != f.args[0]) return cols;
    struct Varies : IRVisitor {
        const std::string &x, &f;
        const std::set<int> &cols;
        bool varies = false;
        Varies(const std::string &x, const std::string &f, const std::set<int> &cols) : x(x), f(f), cols(cols) {}
        using IRVisitor::visit;
        void visit(const Variable *v) override { varies |= v->name == x; }
        void visit(const Call *c) override {
            if (c->name == f && cols.count(c->value_index)) return;  // a column value: the same at every x
            varies |= c->name == f;
            IRVisitor::visit(c);
        }
    };
    for (int i = 0; i < (int)f.init.values.size(); i++) cols.insert(i);
    for (bool changed = true; changed;) {
        changed = false;
        for (int i : std::set<int>(cols)) {
            Varies v(f.args[0], f.name, cols);
            for (int s = 0; s < f.num_stages(); s++) v.include(f.stage(s).values[i]);
            if (v.varies) cols.erase(i), changed = true;
        }
    }
    if (cols.size() == f.init.values.size()) cols.clear();
    return cols;
}

void Selector::loop(const For *f, std::vector<NpuItem> &out) {
    const For *inner = skip_lets(f->body).as<For>();
    const For *third = inner ? skip_lets(inner->body).as<For>() : nullptr;
    if (const Provide *p = third ? skip_lets(third->body).as<Provide>() : nullptr) {
        // A 2-D Func in L0C, or updated from its own value, over three loops: a matrix update.
        auto ub = ub_buffer.find(p->name);
        const Add *add = p->values.size() == 1 ? p->values[0].as<Add>() : nullptr;
        const Call *self = add ? (add->a.as<Call>() ? add->a.as<Call>() : add->b.as<Call>()) : nullptr;
        if (tile_dims(p->name, p->args.size()) == 2 && ((ub != ub_buffer.end() && k.buffers[ub->second].memory == npu::Mem::L0C) ||
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
        bool row = tile_dims(p->name, p->args.size()) == 1 && shape_of(p->name, 1) == Shape::Row;
        select_tile(row ? nullptr : f, row ? f : nullptr, out);
        return;
    }
    user_assert(f->for_type == ForType::Serial || f->for_type == ForType::Parallel)
        << "NPU target: loop " << f->name << " is " << to_string(f->for_type)
        << "; on the NPU the innermost two loops of a stage become tile instructions, so vectorize and unroll "
           "have no meaning there; remove the unroll() or vectorize()";
    NpuItem l;
    l.kind = NpuItem::Loop;
    ScalarOwner owner(*this, f->name);
    std::string v = c_name(f->name), lo = scalar(f->min), ext = scalar(f->extent);
    const Expr trips = simplify(f->extent);
    if (const int64_t *n = as_const_int(trips)) l.trips = *n;
    if (f->for_type == ForType::Parallel) {
        user_assert(loop_vars.empty() && !k.multi_core && gm_funcs.empty())
            << "NPU target: loop " << f->name << " is parallel; a loop across cores must be the outermost loop "
            << "of the pipeline, with no Func stored in GM between stages";
        k.multi_core = true;
        l.text = "for (int32_t " + v + " = " + lo + " + core.index(); " + v + " < " + lo + " + " + ext + "; " + v +
                 " += core.num_cores())";
        l.var = v, l.min = lo, l.extent = ext, l.across_cores = true;
    } else {
        l.text = "for (int32_t " + v + " = " + lo + "; " + v + " < " + lo + " + " + ext + "; " + v + "++)";
        l.var = v, l.min = lo, l.extent = ext;
    }
    loop_vars.push_back(f->name);
    loop_stack.push_back(f);
    std::map<std::string, int> outer_loaded, outer_expanded;
    std::vector<Halo> outer_halos;
    outer_loaded.swap(loaded);  // a load is reused only within one loop body
    outer_expanded.swap(expanded);
    outer_halos.swap(halos);
    stmt(f->body, l.body);
    loaded.swap(outer_loaded);
    expanded.swap(outer_expanded);
    halos.swap(outer_halos);
    loop_vars.pop_back();
    loop_stack.pop_back();
    if (loop_vars.empty()) {  // the loop-invariant loads of the nest go first (their own region)
        for (NpuItem &h : hoisted) out.push_back(std::move(h));
        hoisted.clear();
        hoisted_loaded.clear();
    }
    out.push_back(std::move(l));
}

Selector::Window Selector::window(const std::string &name, const std::vector<Expr> &args, const Nest &n) {
    Window w;
    w.shape = shape_of(name, args.size());
    std::ostringstream call;
    call << name << "(";
    for (size_t d = 0; d < args.size(); d++) call << (d ? ", " : "") << args[d];
    call << ")";
    // A 3-D or 4-D read: its dimensions 0 and 1 are the tile's x and y, the
    // others fixed within the tile (constants or loops around it), which
    // pick the plane the 2-D window lies in (a channel of an image); a
    // planar Func's dimension 0 is the tile's y or x, the others its plane.
    const size_t tile_dims = this->tile_dims(name, args.size());
    for (size_t d = tile_dims; d < args.size(); d++) {
        Expr e = expand(substitute(n.lets, args[d]));
        for (const For *l : {n.fx, n.fy})
            user_assert(!l || !expr_uses_var(e, l->name))
                << "NPU target: Func " << current << " reads " << call.str() << ", whose coordinate " << d
                << " moves with the loop " << l->name << " of its tile; a tile spans dimensions 0 and 1 of a "
                << "3-D or 4-D Func or image (x innermost, y next) and its further dimensions (channels, "
                   "batches) are loops around the tile, so reorder " << current
                << "'s loops (reorder(x, y, c)) to make the loops over dimensions 0 and 1 of " << name
                << " the innermost two, or index " << name << " by constants or outer loops beyond dimension 1";
        w.outer.push_back(e);
    }
    // A coordinate of a 2-D window that no loop of the tile moves: a Func
    // indexed first by an outer loop (algorithm=online's block_max(kb, i)).
    auto fixed_hint = [&](size_t d) {
        return "; its coordinate " + std::to_string(d) + " is fixed within the tile, as a Func indexed by an outer "
               "loop (a key block kb) in dimension " + std::to_string(d) + " is: make that index the last "
               "dimension (" + name + "(i, kb) rather than " + name + "(kb, i): a Func computed at that loop then "
               "holds one plane, a tile or a column of one value per row; attention's algorithm=online_planes is "
               "its online form written so)";
    };
    for (size_t d = 0; d < tile_dims; d++) {
        bool along_x = tile_dims == 2 ? d == 0 : w.shape == Shape::Row;
        const For *l = along_x ? n.fx : n.fy, *other = along_x ? n.fy : n.fx;
        const Expr coord = expand(substitute(n.lets, args[d]));
        const bool fixed = tile_dims == 2 && !(n.fx && expr_uses_var(coord, n.fx->name)) &&
                           !(n.fy && expr_uses_var(coord, n.fy->name));
        user_assert(l || !fixed) << "NPU target: Func " << current << " reads " << call.str() << fixed_hint(d);
        user_assert(l) << "NPU target: Func " << current << " reads " << name << " along "
                       << (along_x ? "x" : "y") << " (" << name << " is a "
                       << (along_x ? "row, one value per column" : "column, one value per row") << "), but "
                       << current << "'s tile is 1-D along " << (along_x ? "y" : "x")
                       << "; a 1-D Func's tile reads only 1-D Funcs of the same orientation, so read " << name
                       << " in a 2-D tile or give this use its own Func computed along " << (along_x ? "y" : "x");
        Expr e = coord;
        Expr v, lo, hi;  // a clamped coordinate (repeat_edge) whose bounds do not move with the tile
        if (tile_dims == 2 && match_clamp(e, v, lo, hi) && !expr_uses_var(lo, l->name) &&
            !expr_uses_var(hi, l->name) && !(other && (expr_uses_var(lo, other->name) || expr_uses_var(hi, other->name)))) {
            e = v;
            w.lo[along_x ? 0 : 1] = lo;
            w.hi[along_x ? 0 : 1] = hi;
        }
        Expr off = simplify(e - Variable::make(Int(32), l->name));
        // A coordinate clamped on one side only: a blocked reduction's last block clamped to the data's end.
        const bool one_side = e.as<Min>() || e.as<Max>();
        user_assert(!expr_uses_var(off, l->name) && !(other && expr_uses_var(off, other->name)))
            << "NPU target: Func " << current << " reads " << call.str()
            << "; a tile instruction reads a window that moves with the tile, so each coordinate must be the "
               "tile's own coordinate plus a constant offset, or that clamped to fixed bounds (no scaling or "
               "transposing)"
            << (one_side ? "; its coordinate " + std::to_string(d) +
                               " is clamped on one side only, as a block of a blocked loop is where the last block "
                               "would run past the data's end (attention's algorithm=online_planes with seq not a "
                               "multiple of key_block): make the extent a multiple of the block, or clamp both "
                               "sides (repeat_edge)"
                         : std::string())
            << (fixed ? fixed_hint(d) : std::string());
        (along_x ? w.x0 : w.y0) = simplify(substitute(l->name, l->min, e));
    }
    return w;
}

Expr Selector::ub_offset(const std::string &name, const Window &w) {
    const std::vector<Expr> &mins = ub_mins[name];
    const NpuBuffer &b = k.buffers[ub_buffer[name]];
    // A 3-D Func in UB holds one plane (realize() checks its outer extents are 1): the one read.
    const size_t td = mins.size() - w.outer.size();
    for (size_t d = 0; d < w.outer.size() && d + td < mins.size(); d++) {
        Expr off = simplify(w.outer[d] - expand(mins[d + td]));
        user_assert(is_zero(off))
            << "NPU target: Func " << current << " reads " << name << " at coordinate " << d + td << " = "
            << w.outer[d] << ", " << off << " from the one plane its UB buffer holds (" << name
            << " is computed one plane at a time, at a loop inside the loop over its dimension " << d + td
            << "); read the plane being computed, or compute_at " << name
            << " outside that loop and reduce its planes to 2-D Funcs";
    }
    if (w.shape == Shape::Column) return simplify(expand(w.y0) - expand(mins[0]));
    if (w.shape == Shape::Row) return simplify(expand(w.x0) - expand(mins[0]));
    return simplify((expand(w.x0) - expand(mins[0])) + (expand(w.y0) - expand(mins[1])) * b.cols);
}

std::string Selector::gm_code(const std::string &name, const Window &w) const {
    std::string n = c_name(name);
    if (w.clamped()) {  // replicated edges, in window coordinates (an unclamped side: the whole window)
        auto side = [&](int d, const Expr &b, const char *none) {
            return b.defined() ? "(int64_t)(" + scalar(b) + " - " + scalar(d ? w.y0 : w.x0) + ")"
                               : std::string(none) + "GmRef::kNoClamp";
        };
        Window unclamped = w;
        for (int d = 0; d < 2; d++) unclamped.lo[d] = unclamped.hi[d] = Expr();
        const std::string sides = side(1, w.lo[1], "-") + ", " + side(1, w.hi[1], "") + ", " +
                                  side(0, w.lo[0], "-") + ", " + side(0, w.hi[0], "");
        if (w.fill.defined()) return gm_code(name, unclamped) + ".padded(" + sides + ", " + scalar(w.fill) + ")";
        return gm_code(name, unclamped) + ".edge(" + sides + ")";
    }
    if (w.shape == Shape::Column)  // one value per row: consecutive elements down the tile
        return n + "_gm.at((int64_t)(" + scalar(w.y0) + " - " + c_name(name + ".min.0") + "), 1)";
    if (w.shape == Shape::Row)
        return n + "_gm.at((int64_t)(" + scalar(w.x0) + " - " + c_name(name + ".min.0") + "), 0)";
    std::string plane;  // a 3-D or 4-D buffer: the plane's offset, dimension by dimension
    for (size_t d = 0; d < w.outer.size(); d++) {
        const std::string dim = "." + std::to_string(d + 2);
        plane += " + (int64_t)(" + scalar(w.outer[d]) + " - " + c_name(name + ".min" + dim) + ") * " +
                 c_name(name + ".stride" + dim);
    }
    return n + "_gm.at((int64_t)(" + scalar(w.x0) + " - " + c_name(name + ".min.0") + ") + (int64_t)(" +
           scalar(w.y0) + " - " + c_name(name + ".min.1") + ") * " + c_name(name + ".stride.1") + plane + ", " +
           c_name(name + ".stride.1") + ")";
}

void Selector::instr(std::vector<NpuItem> &out, npu::Op op, std::vector<NpuArg> args, npu::Cmp cmp, bool transpose) {
    NpuItem i;
    i.kind = NpuItem::Instr;
    i.op = op, i.cmp = cmp, i.transpose = transpose;
    for (const NpuArg &a : args)
        if (a.buffer >= 0) i.reads.push_back(a.buffer);
    if (op != npu::Op::TSTORE) i.writes = {i.reads[0]}, i.reads.erase(i.reads.begin());  // the first tile
    if (npu::accumulates(op)) i.reads.push_back(i.writes[0]);
    auto mem = [&](size_t j) { return args[j].buffer >= 0 ? k.buffers[args[j].buffer].memory : npu::Mem::GM; };
    i.pipe = npu::op_family(op) == npu::Family::DMA ? npu::dma_pipe(op, mem(1), mem(0)) : npu::compute_pipe(op);
    internal_assert(i.pipe != npu::Pipe::ALL) << "NPU target: " << npu::op_name(op) << " between these memories";
    for (int w : i.writes)  // an expansion of a buffer being rewritten is stale
        for (auto it = expanded.begin(); it != expanded.end();)
            it = it->first.rfind(std::to_string(w) + "|", 0) == 0 ? expanded.erase(it) : std::next(it);
    i.args = std::move(args);
    out.push_back(std::move(i));
}

int Selector::temp(int rows, int cols) {
    std::vector<int> &f = free_temps[{rows, (cols + 7) / 8 * 8}];
    if (!f.empty()) {
        int b = f.back();
        f.pop_back();
        return b;
    }
    return add_buffer(current + ".t" + std::to_string(temps++), current, rows, cols, current_double);
}

void Selector::release(const Operand &o, int keep) {
    if (!o.fresh || o.buffer < 0 || o.buffer == keep || k.buffers[o.buffer].dtype != npu::DType::F32) return;
    free_temps[{k.buffers[o.buffer].rows, k.buffers[o.buffer].cols}].push_back(o.buffer);
}

int Selector::result(int dst, int R, int C, std::initializer_list<const Operand *> ops) {
    if (dst >= 0) return dst;
    for (const Operand *o : ops)
        if (o->fresh && k.buffers[o->buffer].rows == R && k.buffers[o->buffer].cols == (C + 7) / 8 * 8) return o->buffer;
    return temp(R, C);
}

// The values of a Func in UB, each into its own buffer. A Tuple's update
// reads the values before it (flash attention's state: m' = max(m, v), then
// l and acc rescaled by exp(m - m')), so a value a later value reads is
// computed into a temporary and copied into its buffer after the last
// value; a value read by no later one is computed in place (the tile's
// last instruction writes it, after every read of its old value). The
// temporary also stands for the value's expression where a later value
// repeats it (m' above), as a repeated subexpression does.
//
//   state(c, i) = {max(m, v), l * exp(m - max(m, v)) + ...}   (m = state[0], l = state[1])
//   ->
//   TMAX(state.t0 <- m, v)             m', into a temporary: l reads m
//   TSUB, TEXP, TMUL, ... (l <- ...)   l in place, reading m and m' (state.t0)
//   TCOPY(m <- state.t0)
void Selector::select_values(const Provide *p, const Nest &n, npu::DType dtype, std::vector<NpuItem> &out) {
    struct ReadsValue : IRVisitor {
        std::string f;
        int index = 0;
        bool found = false;
        using IRVisitor::visit;
        void visit(const Call *c) override {
            found |= c->name == f && c->value_index == index;
            IRVisitor::visit(c);
        }
    };
    std::vector<std::tuple<int, int, int>> copies;  // (value's buffer, temporary, columns)
    for (const Expr &v : p->values) count_repeats(v, n);  // a subexpression of two values: computed once
    for (size_t i = 0; i < p->values.size(); i++) {
        ReadsValue later;
        later.f = p->name, later.index = (int)i;
        for (size_t j = i + 1; j < p->values.size(); j++) later.include(p->values[j]);
        plan_halos(p->values[i], n);
        halo_reads = true;
        // A column value is computed over the tile's column (y alone), its subexpressions as columns.
        Nest nv = n;
        if (is_column_value(p->name, (int)i)) nv.fx = nullptr, nv.C = 1;
        const int b = ub_buffer.at(value_key(p->name, (int)i));
        const int dst = later.found ? temp(nv.R, nv.C) : b;
        if (dtype == npu::DType::F32) select(p->values[i], dst, nv, out);
        else select_narrowed(p->values[i], dst, nv, out);
        halo_reads = false;
        if (!later.found) continue;
        copies.emplace_back(b, dst, nv.C);
        if (shareable(p->values[i], nv)) shared[*expr_key(p->values[i])] = tile_operand(dst, nv.R, nv.C, false);
    }
    for (const auto &[b, t, cols] : copies)
        instr(out, npu::Op::TCOPY, {tile_operand(b, n.R, cols, false), tile_operand(t, n.R, cols, false)});
}

void Selector::select_tile(const For *fy, const For *fx, std::vector<NpuItem> &out) {
    Nest n;
    n.fy = fy;
    n.fx = fx;
    const For *outer = fy ? fy : fx, *inner = fy && fx ? fx : nullptr;
    const Provide *p = begin_stage(inner ? std::vector<const For *>{outer, inner} : std::vector<const For *>{outer}, n.lets);
    // A Tuple reaches here only as a Func in UB (realize()): its pure
    // definition or update, one tile per value, or its update over a row tile.
    user_assert(p->values.size() == 1 || ub_buffer.count(p->name))
        << "NPU target: Func " << p->name
        << " returns a Tuple; the NPU code generator handles Funcs of one value only, so give each value its own Func";
    // With the enclosing lets expanded: an extent of lets that are constants is constant.
    Expr ey_e = fy ? expand(substitute(n.lets, fy->extent)) : Expr(),
         ex_e = fx ? expand(substitute(n.lets, fx->extent)) : Expr();
    const int64_t *ey = fy ? const_int(ey_e) : nullptr, *ex = fx ? const_int(ex_e) : nullptr;
    check_npu_tile(p->name, fy, fx, ey, ex);
    for (const For *l : {fy, fx})
        if (l && !is_const(simplify(substitute(n.lets, l->extent)))) check_rvar_extent(p->name, l);
    for (const For *l : {fy, fx})
        user_assert(!l || const_int(l == fy ? ey_e : ex_e))
            << "NPU target: Func " << p->name << ": loop " << l->name << " of its tile has extent "
            << expand(substitute(n.lets, l->extent)) << ", which is known only at run time; a tile has a constant "
            << "shape (its buffers are allocated before the kernel runs), so " << tile_extent_fix(p->name, l);
    for (const For *l : {fy, fx})
        user_assert(!l || l->for_type == ForType::Serial)
            << "NPU target: Func " << p->name << ": loop " << l->name
            << " forms its tile and must stay serial (no vectorize, unroll or parallel there)";
    if (fy) n.R = (int)*ey;
    if (fx) n.C = (int)*ex;
    if (tile_dims(p->name, p->args.size()) == 1 && fy && fx) {
        select_reduction(p, n, out);
        return;
    }
    for (const For *l : {fy, fx}) {  // a Tuple's elementwise update: its RDom loops around the tile
        const ReductionVariable *rv = l && p->values.size() > 1 ? rvar_of(p->name, l) : nullptr;
        user_assert(!rv) << "NPU target: Func " << p->name << " returns a Tuple of " << p->values.size()
                         << " values and its update's loop " << l->name << " over the RDom variable " << rv->name
                         << " is a loop of its tile; the NPU updates a Tuple of " << p->args.size()
                         << "-D tiles elementwise, each value one tile per iteration of the RDom (only a 1-D "
                            "Tuple is reduced along a row, as the online softmax's state), so reorder the "
                            "update's loops to put the RDom's outside the tile: reorder("
                         << join(func(p->name).args) << ", " << rv->name << ")";
    }
    Window w = window(p->name, p->args, n);
    auto ub = ub_buffer.find(p->name);
    if (ub != ub_buffer.end()) {
        const NpuBuffer &buf = k.buffers[ub->second];
        Expr offset = ub_offset(p->name, w);
        const int64_t *o = const_int(offset);
        const int value_cols = is_column_value(p->name, 0) ? 1 : n.C;  // a Tuple's value 0 may be a column
        user_assert(o && *o == 0 && buf.rows == n.R && buf.cols == padded_cols(value_cols, buf.dtype))
            << "NPU target: Func " << p->name << " is computed in " << n.R << " x " << n.C
            << " tiles into a UB buffer of " << buf.rows << " x " << buf.cols
            << "; a Func in UB is computed as one tile covering its buffer";
        if (buf.memory == npu::Mem::L1) {  // an operand panel: one TLOAD of the window it copies (or one per k-slice)
            const Call *src = p->values[0].as<Call>();
            bool copy = src && src->args.size() == 2 && (src->call_type == Call::Image || gm_funcs.count(src->name));
            for (size_t d = 0; copy && d < 2; d++) copy = equal(src->args[d], p->args[d]);
            user_assert(copy)
                << "NPU target: Func " << p->name << " is stored in L1, but it is computed and read by the vector "
                << "pipe (V), which reaches only UB: L1 holds matrix operands, which only DMA writes, so a Func in L1 "
                << "must be a copy of a window of an input or a compute_root Func of its type (" << p->name
                << "(x, y) = B(x, y), what B.in(matmul) makes), read by a matrix update; it is " << p->values[0]
                << "; store_in(UB) it";
            Window ws = window(src->name, src->args, n);
            instr(out, npu::Op::TLOAD, {tile_operand(ub->second, n.R, n.C, false), gm_arg(gm_code(src->name, ws))});
            ws.x0 = expand(ws.x0), ws.y0 = expand(ws.y0);
            for (Expr &o : ws.outer) o = expand(o);
            panel_loads[ub->second] = PanelLoad{src->name, ws, n.C, loop_stack.size()};
            return;
        }
        if (buf.memory == npu::Mem::L0C) {  // only the matrix unit writes L0C: the first TMATMUL starts from 0
            user_assert(is_zero(p->values[0]))
                << "NPU target: Func " << p->name << " is stored in L0C, which only the matrix unit writes, so its "
                << "pure definition must be 0 and its updates " << p->name << "(x, y) += A(k, y) * B(x, k); it is "
                << p->values[0] << "; store_in(UB) it";
            zeroed.insert(ub->second);
            return;
        }
        select_values(p, n, buf.dtype, out);
        return;
    }
    // Output or GM Func: compute into a UB tile (of the output's type), then TSTORE; or, when its value
    // is an epilogue of an L0C accumulator the fix pipe applies, one TSTORE from L0C.
    for (auto it = loaded.begin(); it != loaded.end();)
        it = it->first.rfind(p->name + "|", 0) == 0 ? loaded.erase(it) : std::next(it);
    halos.erase(std::remove_if(halos.begin(), halos.end(), [&](const Halo &h) { return h.name == p->name; }), halos.end());
    if (select_fix_store(p, w, n, out)) return;
    const npu::DType dt = npu_float_dtype(p->values[0].type());
    const bool narrow = dt == npu::DType::F16 || dt == npu::DType::BF16;  // other types: select() refuses them
    int t = narrow ? temp16(n.R, n.C, dt) : temp(n.R, n.C);
    plan_halos(p->values[0], n);
    count_repeats(p->values[0], n);
    halo_reads = true;
    if (narrow) select_narrowed(p->values[0], t, n, out);
    else select(p->values[0], t, n, out);
    halo_reads = false;
    instr(out, npu::Op::TSTORE, {gm_arg(gm_code(p->name, w)), tile_operand(t, n.R, n.C, false)});
}

}  // namespace npu_select

using namespace npu_select;

NpuKernel npu_select_kernel(const std::string &name, const Stmt &loop_nest, const Environment &env,
                            const std::vector<std::string> &outputs, const Target &t, bool share_subexpressions) {
    std::map<std::string, Shape> shapes;
    std::set<std::string> planar;
    find_shapes(loop_nest, shapes, planar);
    Selector s(name, env, outputs, t, std::move(shapes), std::move(planar), share_subexpressions);
    s.stmt(loop_nest, s.k.body);
    s.drop_sliced_panel_loads(s.k.body);
    for (const auto &[fname, f] : env)
        if (f->schedule.software_pipeline) s.k.pipelined.push_back(fname);
    s.make_rings(s.k.body);
    return s.k;
}

NpuKernel npu_select_and_place(const std::string &name, const Stmt &loop_nest, const Environment &env,
                               const std::vector<std::string> &outputs, const Target &t, PassLog *log) {
    auto pass = [&](const char *what, auto fn) { return log ? log->run(what, fn) : fn(); };
    NpuKernel k = pass("npu instruction selection", [&] { return npu_select_kernel(name, loop_nest, env, outputs, t, true); });
    k = pass("npu buffer placement", [&] { return npu_place_buffers(std::move(k), false); });
    if (k.overflow.empty()) return k;
    if (k.shared_subexpressions > 0) {
        // The shared tiles live longer than recomputed ones: without them the kernel may fit.
        NpuKernel again = pass("npu instruction selection, recomputing repeated subexpressions",
                               [&] { return npu_select_kernel(name, loop_nest, env, outputs, t, false); });
        again = pass("npu buffer placement", [&] { return npu_place_buffers(std::move(again), false); });
        for (auto &[mem, p] : again.placement)
            if (k.placement[mem].peak > k.placement[mem].capacity) p.sharing_peak = k.placement[mem].peak;
        k = std::move(again);
        if (k.overflow.empty()) return k;
    }
    user_error << k.overflow;
    return k;
}

}  // namespace internal
}  // namespace kiln
