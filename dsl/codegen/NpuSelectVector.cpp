// The value of a tile as vector instructions on UB (pipe V): the Selector's
// select() and its helpers (NpuSelect.h). Each IR operation becomes one
// instruction on R x C f32 tiles, a tile-scalar form when one side is a
// scalar, TCMP + TSEL for a select; reads of Funcs and images become TLOADs
// (or views of UB buffers, widened by TROWEXPAND / TCOLEXPAND when 1-D). A
// tile combined with a 1-D Func (a row statistic, a per-column vector) is
// one fused TROWEXPAND* / TCOLEXPAND* that reads the column or row as it is.
//
//   output(x, y) = log(stage2(x, y)) + a         (stage2 in UB, a a Param)
//   ->
//   TLOG(output.t0 <- stage2)                    V
//   TADDS(output.t0 <- output.t0, a)             V
//
//   output(x, y) = exps(x, y) / row_sum(y)       (row_sum an R x 1 column in UB)
//   ->
//   TROWEXPANDDIV(output.t0 <- exps, row_sum)    V
//
// A subexpression the value computes more than once is computed once per
// tile, into a temporary no later instruction of the tile overwrites
// (count_repeats counts them before the value is selected; placement lets
// other buffers take its bytes after its last read):
//
//   d_input(x, y) = (d_output(x, y) / (exp(input(x, y)) + 1)) * exp(input(x, y))
//   ->                                           (d_input.t1, .t2: d_output's and input's tiles)
//   TEXP(d_input.t3 <- d_input.t2)               V
//   TADDS(d_input.t4 <- d_input.t3, 1)           V
//   TDIV(d_input.t4 <- d_input.t1, d_input.t4)   V
//   TMUL(d_input.t0 <- d_input.t4, d_input.t3)   V   (the exp read again: one TEXP, not two)
//
// A window at a column offset inside a Func's UB buffer (a stencil over a
// Func computed with its halo) is one TEXTRACT, once per loop body:
//
//   Ix(x, y) = ... + gray(x + 1, y - 1)          (Ix 34 x 66 at gray's origin + 1, gray 36 x 68 in UB)
//   ->
//   TEXTRACT(Ix.t0 <- gray at (0, 2))            V
//
// A read that is a constant outside fixed bounds of its coordinates (what
// constant_exterior writes, and propagate_adjoints' seed) is one TLOAD that
// the DMA pads, not a TCMP + TSEL over coordinates:
//
//   output_adjoint(x, y) = select(lo0 <= x && x <= hi0 && lo1 <= y && y <= hi1,
//                                 d_output(clamp(x, lo0, hi0), clamp(y, lo1, hi1)), 0.0f)
//   ->
//   TLOAD(t <- d_output_gm.at(...).padded(rows lo1..hi1, cols lo0..hi0, 0))   MTE2

#include <cmath>
#include <sstream>

#include "NpuSelect.h"
#include "ir/ExprKey.h"
#include "ir/IRPrinter.h"
#include "ir/IRVisitor.h"

namespace kiln {
namespace internal {
namespace npu_select {

namespace {
using N = IRNodeType;
using npu::Op;
const NpuOpRule kRules[] = {
    // IR op  call     tile op   tile-scalar commutes  row reduce   column reduce  tile op column     tile op row
    {N::Add, nullptr, Op::TADD, Op::TADDS, true, Op::TROWSUM, Op::TCOLSUM, Op::TROWEXPANDADD, Op::TCOLEXPANDADD},
    {N::Sub, nullptr, Op::TSUB, Op::TSUBS, false, Op::TSUB, Op::TSUB, Op::TROWEXPANDSUB, Op::TCOLEXPANDSUB},
    {N::Mul, nullptr, Op::TMUL, Op::TMULS, true, Op::TMUL, Op::TMUL, Op::TROWEXPANDMUL, Op::TCOLEXPANDMUL},
    {N::Div, nullptr, Op::TDIV, Op::TDIVS, false, Op::TDIV, Op::TDIV, Op::TROWEXPANDDIV, Op::TCOLEXPANDDIV},
    {N::Max, nullptr, Op::TMAX, Op::TMAXS, true, Op::TROWMAX, Op::TCOLMAX, Op::TROWEXPANDMAX, Op::TCOLEXPANDMAX},
    {N::Min, nullptr, Op::TMIN, Op::TMINS, true, Op::TMIN, Op::TMIN, Op::TROWEXPANDMIN, Op::TCOLEXPANDMIN},
    {N::Call, "exp", Op::TEXP, Op::TEXP, false, Op::TEXP, Op::TEXP, Op::TEXP, Op::TEXP},
    {N::Call, "log", Op::TLOG, Op::TLOG, false, Op::TLOG, Op::TLOG, Op::TLOG, Op::TLOG},
    {N::Call, "sqrt", Op::TSQRT, Op::TSQRT, false, Op::TSQRT, Op::TSQRT, Op::TSQRT, Op::TSQRT},
    {N::Call, "tanh", Op::TTANH, Op::TTANH, false, Op::TTANH, Op::TTANH, Op::TTANH, Op::TTANH},
    {N::Call, "abs", Op::TABS, Op::TABS, false, Op::TABS, Op::TABS, Op::TABS, Op::TABS},
};
const std::pair<N, npu::Cmp> kCompares[] = {{N::LT, npu::Cmp::LT}, {N::LE, npu::Cmp::LE}, {N::GT, npu::Cmp::GT},
                                             {N::GE, npu::Cmp::GE}, {N::EQ, npu::Cmp::EQ}, {N::NE, npu::Cmp::NE}};
// The TCMP mode of a comparison, with its operands; false when e is none.
bool npu_compare(const Expr &e, npu::Cmp &cmp, Expr &a, Expr &b) {
    for (const auto &[node, mode] : kCompares)
        if (e->node_type == node) return cmp = mode, binary_operands(e, a, b);
    return false;
}
template<typename... T>
bool operands_of(const Expr &e, Expr &a, Expr &b) {
    return ((e.as<T>() && (a = e.as<T>()->a, b = e.as<T>()->b, true)) || ...);
}
}  // namespace

const NpuOpRule *npu_op_rule(const Expr &e) {
    const Call *c = e.as<Call>();
    for (const NpuOpRule &r : kRules)
        if (r.node == e->node_type && (!c || (c->name == r.call && c->args.size() == 1))) return &r;
    return nullptr;
}

const Call *read_of(const Expr &e) {
    const Expr *x = &e;
    if (const Cast *cv = e.as<Cast>())
        if (e.type() == Float(32) && cv->value.type().is_float16_or_bfloat16()) x = &cv->value;
    const Call *c = x->as<Call>();
    return c && (c->call_type == Call::Func || c->call_type == Call::Image) ? c : nullptr;
}

bool binary_operands(const Expr &e, Expr &a, Expr &b) {
    return operands_of<Add, Sub, Mul, Div, Min, Max, LT, LE, GT, GE, EQ, NE>(e, a, b);
}

Operand Selector::expand_to(int b, Shape s, int dst, int R, int C, std::vector<NpuItem> &out) {
    auto [r, c] = window_shape(s, R, C);
    Operand src = tile_operand(b, r, c, false);
    if (r == R && c == C) {
        if (dst < 0) return src;
        instr(out, npu::Op::TCOPY, {tile_operand(dst, R, C, false), src});
        return tile_operand(dst, R, C, false);
    }
    // One expansion per buffer and loop body; of a hoisted load, one before the loop.
    std::string key = std::to_string(b) + "|" + std::to_string((int)s) + "|" + std::to_string(R) + "x" + std::to_string(C);
    bool hoist = dst < 0 && hoisted_buffers.count(b);
    std::map<std::string, int> &cache = hoist ? hoisted_loaded : expanded;
    auto hit = cache.find(key);
    if (dst < 0 && hit != cache.end()) return tile_operand(hit->second, R, C, false);
    int t = dst >= 0 ? dst : hoist ? add_buffer(k.buffers[b].name + ".x", current, R, C, false) : temp(R, C);
    instr(hoist ? hoisted : out, s == Shape::Column ? npu::Op::TROWEXPAND : npu::Op::TCOLEXPAND,
          {tile_operand(t, R, C, false), src});
    if (dst >= 0) return tile_operand(t, R, C, false);
    if (hoist) hoisted_buffers.insert(t);
    cache[key] = t;
    return tile_operand(t, R, C, false);
}

Operand Selector::select_call(const Call *c, int dst, const Nest &n, std::vector<NpuItem> &out, bool narrow,
                              const Expr &fill) {
    const int R = n.R, C = n.C;
    if (is_column_value(c->name, c->value_index)) {
        // A Tuple value kept as a column (it does not vary along x): the column of the tile's rows,
        // whatever its coordinate 0.
        Window w = window(c->name, {c->args[1]}, n);
        Expr off = simplify(expand(w.y0) - expand(ub_mins[c->name][1]));
        user_assert(is_zero(off)) << "NPU target: Func " << current << " reads " << c->name << "[" << c->value_index
                                  << "] " << off << " rows from the rows its UB buffer holds; a tile instruction "
                                  << "reads whole aligned tiles, so read the rows being computed";
        const int b = ub_buffer.at(value_key(c->name, c->value_index));
        if (narrow) return tile_operand(b, R, 1, false);
        return expand_to(b, Shape::Column, dst, R, C, out);
    }
    Window w = window(c->name, c->args, n);
    w.fill = fill;
    auto ub = ub_buffer.find(value_key(c->name, c->value_index));
    internal_assert(!fill.defined() || ub == ub_buffer.end()) << "padded_read() accepts GM reads only";
    if (ub != ub_buffer.end()) {
        Expr off = ub_offset(c->name, w);
        const int64_t *o = const_int(off);
        const NpuBuffer &buf = k.buffers[ub->second];
        // A window whole rows down a 2-D buffer (a stencil's y offset) is an aligned tile at that row.
        int row0 = o && w.shape == Shape::Full && buf.memory == npu::Mem::UB && *o > 0 && *o % buf.cols == 0 &&
                           *o / buf.cols + R <= buf.rows
                       ? (int)(*o / buf.cols)
                       : 0;
        // A window at a column offset inside a float32 Func's buffer (a stencil
        // over a Func computed with its halo, e.g. harris's gradients of gray):
        // one TEXTRACT of the sub-tile, once per loop body, as from an input's halo.
        const int valid_cols = ub_cols.count(c->name) ? ub_cols[c->name] : 0;
        const bool column_offset = o && w.shape == Shape::Full && buf.memory == npu::Mem::UB && !w.clamped() &&
                                   *o > 0 && *o % buf.cols != 0;
        if (column_offset && buf.dtype == npu::DType::F32 && *o % buf.cols + C <= valid_cols &&
            *o / buf.cols + R <= buf.rows) {
            const int r0 = (int)(*o / buf.cols), c0 = (int)(*o % buf.cols);
            // Keyed by the buffer first: a write of it drops the extraction (instr()).
            const std::string key = std::to_string(ub->second) + "|extract|" + std::to_string(r0) + "|" +
                                    std::to_string(c0) + "|" + std::to_string(R) + "x" + std::to_string(C);
            auto hit = expanded.find(key);
            if (dst < 0 && hit != expanded.end()) return tile_operand(hit->second, R, C, false);
            int t = dst >= 0 ? dst : temp(R, C);
            instr(out, npu::Op::TEXTRACT, {tile_operand(t, R, C, false), tile_operand(ub->second, buf.rows, valid_cols, false),
                                           gm_arg(std::to_string(r0)), gm_arg(std::to_string(c0))});
            if (dst < 0) expanded[key] = t;
            return tile_operand(t, R, C, false);
        }
        // Why a window is not a tile of the buffer, for the message below.
        const char *why = !o ? "an offset that changes from one iteration to the next of a loop inside the one "
                               "where it is computed (a tile instruction's UB operand sits at a fixed address)"
                          : w.clamped()               ? "a clamped window (an edge that repeats is loaded from GM only)"
                          : w.shape != Shape::Full    ? "an offset along a 1-D buffer (a row or column of values is "
                                                        "read whole, from its start)"
                          : column_offset && buf.dtype != npu::DType::F32
                              ? "a column offset into a 16-bit Func (TEXTRACT extracts from float32 buffers here; "
                                "give the Func type float32)"
                          : column_offset ? "a column offset whose window runs past the columns computed (the "
                                            "Func's region must hold the shifted window)"
                          : *o % buf.cols != 0        ? "a column offset (a window shifted by less than a row is not "
                                                        "32-byte aligned)"
                          : buf.memory != npu::Mem::UB ? "a row offset into a buffer outside UB"
                          : *o < 0                    ? "a row offset before the start of the buffer"
                                                      : "a row offset that runs past the end of the buffer";
        user_assert(o && (*o == 0 || row0 > 0) && !w.clamped())
            << "NPU target: Func " << current << " reads " << c->name << " at an offset of " << off
            << " elements from the start of its UB buffer: " << why
            << "; tile instructions read whole aligned tiles at a constant place, so compute " << c->name
            << " over exactly the tile that reads it (same tile sizes, compute_at the same loop)";
        user_assert(buf.memory != npu::Mem::L1)
            << "NPU target: Func " << current << " reads " << c->name << ", which is stored in L1 (store_in(L1)); "
            << "the vector pipe (V) reaches only UB and L1 holds matrix operands, so read " << c->name
            << " only in a matrix update (an operand panel), or store_in(UB) it";
        if (buf.memory == npu::Mem::L0C) return from_l0c(ub->second, dst, R, C, out);
        if (buf.dtype != npu::DType::F32) {  // a 16-bit Func: widened by TCVT, once per loop body
            auto [r, cc] = window_shape(w.shape, R, C);
            std::string key = std::to_string(ub->second) + "|cvt|" + std::to_string(row0);
            auto hit = expanded.find(key);
            int t = hit != expanded.end() ? hit->second : temp(r, cc);
            if (hit == expanded.end()) {
                instr(out, npu::Op::TCVT, {tile_operand(t, r, cc, false), tile_operand(ub->second, r, cc, false, row0)});
                expanded[key] = t;
            }
            if (narrow) return tile_operand(t, r, cc, false);
            return expand_to(t, w.shape, dst, R, C, out);
        }
        if (row0) {
            Operand src = tile_operand(ub->second, R, C, false, row0);
            if (dst < 0) return src;
            instr(out, npu::Op::TCOPY, {tile_operand(dst, R, C, false), src});
            return tile_operand(dst, R, C, false);
        }
        if (narrow) {
            auto [r, cc] = window_shape(w.shape, R, C);
            return tile_operand(ub->second, r, cc, false);
        }
        return expand_to(ub->second, w.shape, dst, R, C, out);
    }
    bool gm = c->call_type == Call::Image || gm_funcs.count(c->name);
    user_assert(!is_output(c->name))
        << "NPU target: Func " << current << " reads " << c->name << ", the pipeline's output, while computing it; "
        << "the NPU code generator reads inputs and compute_root Funcs from GM but never reads an output back, so "
        << "compute the value in a Func of its own (compute_at in UB) and give the output one definition that "
           "reads it";
    // Not reachable from a schedule: every Func other than the outputs is realized before its readers run,
    // into UB or L0C (ub_buffer) or GM (gm_funcs); realize() rejects the other memories.
    internal_assert(gm) << "NPU target: Func " << current << " reads Func " << c->name
                        << ", which is neither in UB nor in GM here";
    auto [r, cc] = window_shape(w.shape, R, C);
    // A 16-bit input is loaded as it is in GM and widened to float32 by TCVT (Ascend C's Cast before compute).
    const npu::DType dt = npu_float_dtype(c->type);
    user_assert(dt != npu::DType::U8) << "NPU target: Func " << current << " reads " << c->name << " of type "
                                      << c->type.to_string()
                                      << "; NPU tiles hold float32, float16 and bfloat16 values";
    const bool small = dt != npu::DType::F32;
    // A window loaded earlier in this loop body is loaded once (inputs are never written, GM Funcs not
    // in the loop nests that read them).
    std::ostringstream key;
    key << c->name << "|" << (int)w.shape << "|" << expand(w.x0) << "|" << expand(w.y0) << w.plane_key() << "|" << r
        << "x" << cc;
    key << "|" << clamp_key(w);
    int t;
    auto hit = loaded.find(key.str());
    bool invariant = c->call_type == Call::Image && !loop_vars.empty();
    for (const std::string &v : loop_vars)
        invariant &= !expr_uses_var(expand(w.x0), v) && !expr_uses_var(expand(w.y0), v) && !w.moves_with(v);
    auto hhit = hoisted_loaded.find(key.str());
    if (invariant && hhit != hoisted_loaded.end()) {
        t = hhit->second;
    } else if (invariant) {  // loaded once, before the outermost loop
        t = add_buffer(c->name + ".in", current, r, cc, false, npu::Mem::UB, dt);
        Window we = w;
        we.x0 = expand(w.x0), we.y0 = expand(w.y0);
        instr(hoisted, npu::Op::TLOAD, {tile_operand(t, r, cc, false), gm_arg(gm_code(c->name, we))});
        hoisted_buffers.insert(t);
        if (small) {
            int wide = add_buffer(c->name + ".in32", current, r, cc, false);
            instr(hoisted, npu::Op::TCVT, {tile_operand(wide, r, cc, false), tile_operand(t, r, cc, false)});
            hoisted_buffers.insert(t = wide);
        }
        hoisted_loaded[key.str()] = t;
    } else if (hit != loaded.end()) {
        t = hit->second;
    } else if (Operand h = halo_read(c->name, w, dt, dst, R, C, out); h.buffer >= 0) {
        return h;  // a sub-tile of a stencil's halo (NpuSelectHalo.cpp)
    } else {
        bool full = r == R && cc == C;
        t = full && dst >= 0 ? dst : small ? temp(r, cc) : load_temp(r, cc);
        int l = small ? temp16(r, cc, dt) : t;
        instr(out, npu::Op::TLOAD, {tile_operand(l, r, cc, false), gm_arg(gm_code(c->name, w))});
        if (small) instr(out, npu::Op::TCVT, {tile_operand(t, r, cc, false), tile_operand(l, r, cc, false)});
        loaded[key.str()] = t;
        if (full && t == dst) return tile_operand(t, R, C, false);
    }
    if (narrow) return tile_operand(t, r, cc, false);
    return expand_to(t, w.shape, dst, R, C, out);
}

bool Selector::scalar_only(const Expr &e, const Nest &n) const {
    Expr full = expand(substitute(n.lets, e));
    for (const For *l : {n.fx, n.fy})
        if (l && expr_uses_var(full, l->name)) return false;
    struct FindCall : IRVisitor {
        bool found = false;
        using IRVisitor::visit;
        void visit(const Call *c) override {
            found |= c->call_type != Call::PureExtern;
            IRVisitor::visit(c);
        }
    } fc;
    fc.include(e);
    return !fc.found;
}

bool Selector::is_narrow(const Expr &e, const Nest &n) const {
    const Call *c = read_of(e);
    return n.fx && n.fy && c &&
           (shape_of(c->name, c->args.size()) != Shape::Full || is_column_value(c->name, c->value_index));
}

Operand Selector::select_fused_expand(const NpuOpRule &rule, const Expr &x, const Expr &y, int dst, const Nest &n,
                                     std::vector<NpuItem> &out) {
    Operand none;
    if (rule.row_expand == rule.tile || equal(x, y)) return none;
    const bool right = is_narrow(y, n) && !is_narrow(x, n);
    if (!right && !(rule.commutes && is_narrow(x, n) && !is_narrow(y, n))) return none;
    const Expr &wide = right ? x : y, &line = right ? y : x;
    if (scalar_only(wide, n)) return none;  // s op column: TROWEXPAND and a tile-scalar op
    Operand a = select(wide, -1, n, out);
    Operand b = select_call(read_of(line), -1, n, out, true);
    int t = result(dst, n.R, n.C, {&a});
    const bool rows = shape_of(read_of(line)->name, 1) == Shape::Column;
    instr(out, rows ? rule.row_expand : rule.col_expand, {tile_operand(t, n.R, n.C, false), a, b});
    release(a, t);
    return tile_operand(t, n.R, n.C, dst < 0);
}

bool Selector::shareable(const Expr &e, const Nest &n) const {
    return share_subexpressions && e.type() == Float(32) && !read_of(e) && !scalar_only(e, n);
}

void Selector::count_repeats(const Expr &value, const Nest &n) {
    if (!share_subexpressions) return;
    class Count : public IRVisitor {
    public:
        Count(Selector &s, const Nest &n) : s(s), n(n) {}
        using IRVisitor::include;
        void include(const Expr &e) override {
            if (!e.defined() || read_of(e) || s.scalar_only(e, n)) return;  // nothing inside is a vector op
            if (e.type() == Float(32) && s.repeats[*expr_key(e)]++ > 0) return;  // its operands: counted once
            Expr a, b;
            if (binary_operands(e, a, b) && equal(a, b)) return include(a);  // d * d, x < x: d selected once
            if (const Select *sel = e.as<Select>(); sel && equal(sel->true_value, sel->false_value))
                return include(sel->condition), include(sel->true_value);
            IRVisitor::include(e);
        }

    private:
        Selector &s;
        const Nest &n;
    } count(*this, n);
    count.include(value);
}

Operand Selector::select(const Expr &e, int dst, const Nest &n, std::vector<NpuItem> &out) {
    // A repeated subexpression: computed at its first selection into a
    // temporary that no later instruction of the tile overwrites (it is
    // never fresh again, nor freed for reuse: an earlier reader may still
    // be waiting for its other operands); placement lets other buffers
    // take its bytes after its last read. Never at a given dst (the
    // value's root, which occurs once).
    if (dst >= 0 || repeats.empty() || !shareable(e, n)) return select_value(e, dst, n, out);
    const ExprKey key = expr_key(e);
    auto count = repeats.find(*key);
    if (count == repeats.end() || count->second < 2) return select_value(e, dst, n, out);
    if (auto hit = shared.find(*key); hit != shared.end()) {
        // A tile computed for a full value is not a column value's operand: computed again as a column.
        if (hit->second.cols > n.C) return select_value(e, dst, n, out);
        return hit->second;
    }
    Operand o = select_value(e, dst, n, out);
    if (o.fresh && o.buffer >= 0) {
        o.fresh = false;
        shared[*key] = o;
        k.shared_subexpressions++;
    }
    return o;
}

Operand Selector::select_value(const Expr &e, int dst, const Nest &n, std::vector<NpuItem> &out) {
    const int R = n.R, C = n.C;
    if (scalar_only(e, n)) {
        Operand s{gm_arg(scalar(expand(substitute(n.lets, e)))), false};
        if (dst < 0) return s;
        instr(out, npu::Op::TDUP, {tile_operand(dst, R, C, false), s});
        return tile_operand(dst, R, C, false);
    }
    if (const Cast *cv = e.as<Cast>(); cv && e.type() == Float(32) && cv->value.type().is_float16_or_bfloat16()) {
        if (const Call *c = read_of(e)) return select_call(c, dst, n, out);  // loaded and widened
        // A float32 value rounded to 16 bits and widened again (16-bit arithmetic, as emulated): two TCVTs.
        const Cast *round = cv->value.as<Cast>();
        user_assert(round && round->value.type() == Float(32))
            << "NPU target: Func " << current << ": " << e << " widens a " << cv->value.type().to_string()
            << " value the NPU cannot compute (16-bit values are read from a Func or image, or rounded from "
               "float32); compute it in float32";
        Operand a = as_tile(select(round->value, -1, n, out), n, out);
        int h = temp16(R, C, npu_float_dtype(cv->value.type()));
        instr(out, npu::Op::TCVT, {tile_operand(h, R, C, false), a});
        int t = result(dst, R, C, {&a});
        instr(out, npu::Op::TCVT, {tile_operand(t, R, C, false), tile_operand(h, R, C, false)});
        release(a, t);
        return tile_operand(t, R, C, dst < 0);
    }
    user_assert(e.type() == Float(32)) << "NPU target: Func " << current << ": " << e << " has type " << e.type().to_string()
                                       << "; the vector instructions Kiln selects work on float32 (16-bit floats "
                                          "are converted to float32 and back by TCVT)";
    const Call *call = e.as<Call>();
    if (call && (call->call_type == Call::Func || call->call_type == Call::Image)) return select_call(call, dst, n, out);
    if (const Select *sel = e.as<Select>()) return select_select(sel, dst, n, out);
    const NpuOpRule *rule = npu_op_rule(e);
    user_assert(!call || rule)
        << "NPU target: Func " << current << " calls " << call->name
        << ", which has no NPU vector instruction; the vector unit has exp, log, sqrt, tanh, abs (and "
           "+, -, *, /, min, max); compute it on the host or rewrite it";
    if (call) {
        Operand a = select(call->args[0], -1, n, out);
        if (is_column(a, n)) return widen(column_op(*rule, a, Operand{}, n, out), dst, n, out);
        int t = result(dst, R, C, {&a});
        instr(out, rule->tile, {tile_operand(t, R, C, false), a});
        release(a, t);
        return tile_operand(t, R, C, dst < 0);
    }
    Expr x, y;
    user_assert(rule && binary_operands(e, x, y))
        << "NPU target: Func " << current << ": " << e
        << " has no NPU vector instruction (the vector unit has +, -, *, /, min, max, exp, log, "
           "sqrt, tanh, abs on float32 tiles)";
    Operand fused = select_fused_expand(*rule, x, y, dst, n, out);
    if (fused.buffer >= 0) return fused;
    Operand a = select(x, -1, n, out);
    Operand b = equal(x, y) ? again(a) : select(y, -1, n, out);  // d * d: d once
    // Columns of a 2-D tile (a Tuple's column values and their shared subexpressions, flash attention's
    // exp(m - m')): column with column (or scalar) is a column op; a tile with a column the fused
    // row-expand op, or the column widened first (TROWEXPAND) where the op has none.
    const bool ca = is_column(a, n), cb = is_column(b, n);
    if ((ca || a.buffer < 0) && (cb || b.buffer < 0) && (ca || cb)) return widen(column_op(*rule, a, b, n, out), dst, n, out);
    if (cb && rule->row_expand != rule->tile) {
        int t = result(dst, R, C, {&a});
        instr(out, rule->row_expand, {tile_operand(t, R, C, false), a, b});
        release(a, t);
        return tile_operand(t, R, C, dst < 0);
    }
    if (ca && rule->commutes && rule->row_expand != rule->tile) {
        int t = result(dst, R, C, {&b});
        instr(out, rule->row_expand, {tile_operand(t, R, C, false), b, a});
        release(b, t);
        return tile_operand(t, R, C, dst < 0);
    }
    if (ca) a = expand_to(a.buffer, Shape::Column, -1, R, C, out);
    if (cb) b = expand_to(b.buffer, Shape::Column, -1, R, C, out);
    int t = result(dst, R, C, {&a, &b});
    Operand d = tile_operand(t, R, C, false);
    if (a.buffer >= 0 && b.buffer >= 0) {
        instr(out, rule->tile, {d, a, b});
    } else if (a.buffer >= 0) {
        instr(out, rule->scalar, {d, a, b});
    } else if (rule->commutes) {
        instr(out, rule->scalar, {d, b, a});
    } else if (e.as<Sub>()) {  // s - t == (-t) + s exactly
        instr(out, npu::Op::TNEG, {d, b});
        instr(out, npu::Op::TADDS, {d, d, a});
    } else if (is_const(x, 1) || (x.as<FloatImm>() && x.as<FloatImm>()->value == 1.0)) {  // 1 / t
        instr(out, npu::Op::TRECIP, {d, b});
    } else {  // s / t: the scalar spread over a tile, then a tile division
        Operand s = tile_operand(temp(R, C), R, C, true);
        instr(out, npu::Op::TDUP, {s, a});
        instr(out, npu::Op::TDIV, {d, s, b});
        release(s, t);
    }
    release(a, t);
    release(b, t);
    return tile_operand(t, R, C, dst < 0);
}

bool Selector::is_column(const Operand &o, const Nest &n) const {
    return o.buffer >= 0 && o.cols == 1 && n.C > 1;
}

Operand Selector::column_op(const NpuOpRule &rule, const Operand &a, const Operand &b, const Nest &n,
                            std::vector<NpuItem> &out) {
    Nest column = n;
    column.fx = nullptr, column.C = 1;
    Operand ta = a.buffer >= 0 ? a : as_tile(a, column, out);  // a scalar on the left of a column
    int t = result(-1, n.R, 1, {&ta, &b});
    if (!b.code.empty() || b.buffer >= 0) {
        const bool scalar = b.buffer < 0;
        instr(out, scalar ? rule.scalar : rule.tile, {tile_operand(t, n.R, 1, false), ta, b});
    } else {
        instr(out, rule.tile, {tile_operand(t, n.R, 1, false), ta});
    }
    release(ta, t);
    release(b, t);
    return tile_operand(t, n.R, 1, true);
}

Operand Selector::widen(const Operand &col, int dst, const Nest &n, std::vector<NpuItem> &out) {
    if (dst < 0) return col;
    return expand_to(col.buffer, Shape::Column, dst, n.R, n.C, out);
}

void Selector::select_narrowed(const Expr &v, int dst, const Nest &n, std::vector<NpuItem> &out) {
    const Cast *cv = v.as<Cast>();
    Expr wide = cv && cv->value.type() == Float(32) ? cv->value : cast(Float(32), v);
    Operand a = as_tile(select(wide, -1, n, out), n, out);
    instr(out, npu::Op::TCVT, {tile_operand(dst, n.R, n.C, false), a});
    release(a, -1);
}

Operand Selector::as_tile(Operand o, const Nest &n, std::vector<NpuItem> &out) {
    if (o.buffer >= 0) return o;
    int t = temp(n.R, n.C);
    instr(out, npu::Op::TDUP, {tile_operand(t, n.R, n.C, false), o});
    return tile_operand(t, n.R, n.C, true);
}

const Call *Selector::padded_read(const Select *sel, const Nest &n, Expr &fill) {
    const Call *c = sel->true_value.as<Call>();
    const Expr &f = sel->false_value;
    if (!c || c->args.size() < 2 || !(c->call_type == Call::Image || gm_funcs.count(c->name)) ||
        ub_buffer.count(c->name) || !(f.as<FloatImm>() || f.as<IntImm>()))
        return nullptr;
    // The condition's conjuncts: each a bound on one coordinate, lo <= v or v <= hi (in any of the
    // forms the simplifier leaves: v >= lo, lo < v + 1, ...).
    std::vector<Expr> conjuncts, pending = {sel->condition};
    while (!pending.empty()) {
        Expr e = pending.back();
        pending.pop_back();
        if (const And *a = e.as<And>()) pending.push_back(a->a), pending.push_back(a->b);
        else conjuncts.push_back(expand(substitute(n.lets, e)));
    }
    std::vector<bool> used(conjuncts.size(), false);
    // Marks the conjunct saying v >= lo (lower) or v <= hi, if there is one.
    auto bound = [&](const Expr &v, const Expr &b, bool lower) {
        for (size_t i = 0; i < conjuncts.size(); i++) {
            const Expr &e = conjuncts[i];
            Expr x, y;
            if (used[i] || !(e.as<LE>() || e.as<LT>() || e.as<GE>() || e.as<GT>()) || !v.type().is_int() ||
                !binary_operands(e, x, y))
                continue;
            // In the form small <= big (strict comparisons of integers: small + 1 <= big).
            const bool up = e.as<LE>() || e.as<LT>();
            Expr small = up ? x : y, big = up ? y : x;
            if (e.as<LT>() || e.as<GT>()) small = small + 1;
            Expr want_small = lower ? b : v, want_big = lower ? v : b;
            if (is_zero(simplify((small - big) - (want_small - want_big)))) {
                used[i] = true;
                return true;
            }
        }
        return false;
    };
    bool clamped = false;
    for (size_t d = 0; d < 2; d++) {
        Expr v, lo, hi;
        if (!match_clamp(expand(substitute(n.lets, c->args[d])), v, lo, hi)) continue;
        if (!bound(v, expand(lo), true) || !bound(v, expand(hi), false)) return nullptr;
        clamped = true;
    }
    for (bool u : used)
        if (!u) return nullptr;  // a condition on something else than the clamped coordinates
    if (!clamped) return nullptr;
    fill = f;
    return c;
}

Operand Selector::select_select(const Select *sel, int dst, const Nest &n, std::vector<NpuItem> &out) {
    Expr fill;
    if (const Call *read = padded_read(sel, n, fill)) return select_call(read, dst, n, out, false, fill);
    const Expr &c = sel->condition;
    Expr ca, cb;
    npu::Cmp cmp = npu::Cmp::EQ;
    user_assert(npu_compare(c, cmp, ca, cb) && ca.type() == Float(32))
        << "NPU target: Func " << current << ": the condition " << c << " of a select has no NPU instruction; "
        << "TCMP compares two float32 tiles (<, <=, >, >=, ==, !=), so write the condition as one comparison of "
           "float32 values (nest selects instead of using && or ||)";
    Operand a = as_tile(select(ca, -1, n, out), n, out);
    Operand b = equal(ca, cb) ? again(a) : as_tile(select(cb, -1, n, out), n, out);
    Operand m = tile_operand(add_buffer(current + ".m" + std::to_string(temps++), current, n.R, n.C, current_double,
                                        npu::Mem::UB, npu::DType::U8),
                             n.R, n.C, false);
    instr(out, npu::Op::TCMP, {m, a, b}, cmp);
    release(a, -1);
    release(b, -1);
    Operand t = as_tile(select(sel->true_value, -1, n, out), n, out);
    Operand f = equal(sel->true_value, sel->false_value) ? again(t) : as_tile(select(sel->false_value, -1, n, out), n, out);
    int d = result(dst, n.R, n.C, {&t, &f});
    instr(out, npu::Op::TSEL, {tile_operand(d, n.R, n.C, false), m, t, f});
    release(t, d);
    release(f, d);
    return tile_operand(d, n.R, n.C, dst < 0);
}

}  // namespace npu_select
}  // namespace internal
}  // namespace kiln
